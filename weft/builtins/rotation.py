"""More vector, matrix, quaternion and spatial builtins of Warp: matrices from rows or
columns, quaternions from a rotation matrix, slerp, axis-angle, and the spatial (6-D
twist/wrench) algebra; scalar `nonzero` and `copysign`. (Angles, `quat_rpy`, `ddot`,
`get_diag`, `argmin`/`argmax`: angles.py and reductions.py.)

Each expands into IR arithmetic on components (selects where Warp branches), so none
needs a derivative rule of its own.
"""

from __future__ import annotations

from ..ir.core import Value
from ..types import Matrix, Scalar, Vector
from .arith import binary
from .math import PRIM
from .registry import builtin
from .vector import _mat, _nargs, _quat_type, _vec, cross, dot, length, normalize


def _scalar(ctx, x, name, float_only=True) -> Value:
    x = ctx.materialize(x)
    if not isinstance(x.type, Scalar) or (float_only and not x.type.is_float):
        ctx.error(f"{name}() needs a {'float' if float_only else 'number'}, got {x.type!r}")
    return x


def _any_vec(ctx, x, name) -> Value:
    if not (isinstance(x, Value) and isinstance(x.type, Vector)):
        ctx.error(f"{name}() needs a vector, got {getattr(x, 'type', x)!r}")
    return x


# Scalars -------------------------------------------------------------------------------------
@builtin("nonzero")
def nonzero(ctx, args, kwargs):
    """1 where x != 0, else 0, in x's type."""
    (x,) = _nargs(ctx, args, kwargs, 1, "nonzero")
    x = _scalar(ctx, x, "nonzero", float_only=False)
    b = ctx.b
    zero = b.const(0, x.type)
    return b.select(b.cmp("ne", x, zero), b.const(1, x.type), zero)


@builtin("copysign")
def copysign(ctx, args, kwargs):
    """|x| with the sign bit of y (so -0.0 counts as negative). Written as x or -x, so the
    derivative in x is +1 where the sign bits of x and y agree and -1 where they differ
    (at x = +-0 the one-sided derivative on the side x's sign names); none flows to y."""
    x, y = _nargs(ctx, args, kwargs, 2, "copysign")
    x = _scalar(ctx, x, "copysign")
    y = ctx.coerce(y, x.type)
    b = ctx.b
    differ = b.binary("bitxor", b.call(PRIM["signbit"], [x]), b.call(PRIM["signbit"], [y]))
    return b.select(differ, b.neg(x), x)


# Vectors and matrices ------------------------------------------------------------------------
def _from_vectors(by_rows: bool):
    def expand(ctx, args, kwargs):
        if kwargs or not args:
            ctx.error("matrix_from_rows/cols takes one or more vectors")
        vs = [_any_vec(ctx, v, "matrix_from_rows/cols") for v in args]
        if any(v.type is not vs[0].type for v in vs):
            ctx.error("matrix_from_rows/cols needs vectors of one type")
        b = ctx.b
        comps = [b.components(v) for v in vs]
        n, m = len(vs), vs[0].type.length
        if by_rows:
            return b.construct(Matrix((n, m), vs[0].type.dtype), [x for row in comps for x in row])
        return b.construct(Matrix((m, n), vs[0].type.dtype), [comps[c][r] for r in range(m) for c in range(n)])
    return expand


builtin("matrix_from_rows")(_from_vectors(True))
builtin("matrix_from_cols")(_from_vectors(False))


# Quaternions ---------------------------------------------------------------------------------
@builtin("quat_from_matrix")
def quat_from_matrix(ctx, args, kwargs):
    """The rotation of an orthonormal 3x3 matrix (or a 4x4 matrix's top-left block), by
    Warp's case split: from the trace where it is >= 0, else from the largest diagonal entry.
    The case is selected before the square root is taken, so that only the chosen formula's
    root and reciprocal are evaluated (and differentiated); the result is normalised."""
    (m,) = _nargs(ctx, args, kwargs, 1, "quat_from_matrix")
    m = _mat(ctx, m, "quat_from_matrix")
    if m.type.rows not in (3, 4):
        ctx.error(f"quat_from_matrix() needs a 3x3 or 4x4 matrix, got {m.type!r}")
    b, t = ctx.b, m.type.dtype
    e = b.components(m)
    n = m.type.cols

    def at(r, c):
        return e[r * n + c]

    one, half = b.const(1.0, t), b.const(0.5, t)
    trace = b.add(b.add(at(0, 0), at(1, 1)), at(2, 2))
    use_trace = b.cmp("ge", trace, b.const(0.0, t))
    d1 = b.cmp("gt", at(1, 1), at(0, 0))
    use2 = b.cmp("gt", at(2, 2), b.select(d1, at(1, 1), at(0, 0)))
    use1 = b.select(use2, b.const(False, d1.type), d1)

    def pick(c_trace, c0, c1, c2):
        return b.select(use_trace, c_trace, b.select(use2, c2, b.select(use1, c1, c0)))

    radicand = pick(b.add(trace, one),
                    b.add(b.sub(at(0, 0), b.add(at(1, 1), at(2, 2))), one),
                    b.add(b.sub(at(1, 1), b.add(at(2, 2), at(0, 0))), one),
                    b.add(b.sub(at(2, 2), b.add(at(0, 0), at(1, 1))), one))
    h = b.call(PRIM["sqrt"], [radicand])
    big = b.mul(half, h)
    inv = b.div(half, h)

    def term(op, r0, c0, r1, c1):
        return b.mul(b.binary(op, at(r0, c0), at(r1, c1)), inv)

    w_skew = [term("sub", 2, 1, 1, 2), term("sub", 0, 2, 2, 0), term("sub", 1, 0, 0, 1)]
    sym01, sym02, sym12 = term("add", 0, 1, 1, 0), term("add", 2, 0, 0, 2), term("add", 1, 2, 2, 1)
    q = [pick(w_skew[0], big, sym01, sym02),
         pick(w_skew[1], sym01, big, sym12),
         pick(w_skew[2], sym02, sym12, big),
         pick(big, w_skew[0], w_skew[1], w_skew[2])]
    return normalize.expand(ctx, [b.construct(_quat_type(t), q)], {})


def _normalize(ctx, v):
    b = ctx.b
    inv = b.div(b.const(1.0, v.type.dtype), b.call(PRIM["sqrt"], [dot.expand(ctx, [v, v], {})]))
    return b.construct(v.type, [b.mul(c, inv) for c in b.components(v)])


@builtin("quat_to_axis_angle", inout=(1, 2))
def quat_to_axis_angle(ctx, args, kwargs):
    """The rotation axis and angle (in [0, pi]) of quaternion q, as Warp computes them:
    axis = +-normalize(q.xyz) (the sign of q.w), angle = 2 atan2(|q.xyz|, |q.w|). The axis of
    the identity rotation is the zero vector, and no gradient flows through it there.

    Two forms: `axis, angle = quat_to_axis_angle(q)`, and Warp's `quat_to_axis_angle(q, axis,
    angle)`, which writes the local variables `axis` and `angle`."""
    if len(args) not in (1, 3) or kwargs:
        ctx.error("quat_to_axis_angle(q) takes one quaternion (returns axis, angle), or "
                  "quat_to_axis_angle(q, axis, angle) writes axis and angle")
    q = _vec(ctx, args[0], "quat_to_axis_angle", 4, "quat")
    b, t = ctx.b, q.type.dtype
    x, y, z, w = b.components(q)
    v = b.construct(Vector(3, t), [x, y, z])
    n = normalize.expand(ctx, [v], {})
    flip = b.cmp("lt", w, b.const(0.0, t))  # q and -q are one rotation: take w >= 0
    axis = b.construct(n.type, [b.select(flip, b.neg(c), c) for c in b.components(n)])
    angle = b.mul(b.const(2.0, t), b.call(PRIM["atan2"], [length.expand(ctx, [v], {}), b.call(PRIM["abs"], [w])]))
    if len(args) == 1:
        return [], (axis, angle)
    for given, want, what in ((args[1], axis.type, "axis"), (args[2], t, "angle")):
        if not (isinstance(given, Value) and given.type is want) and not (
                what == "angle" and not isinstance(given, Value) and isinstance(given, (int, float))):
            ctx.error(f"quat_to_axis_angle(): the output argument '{what}' must be a {want!r} "
                      f"(the quaternion is {q.type!r}), got {getattr(given, 'type', given)!r}")
    return [axis, angle], None


@builtin("quat_slerp")
def quat_slerp(ctx, args, kwargs):
    """Spherical linear interpolation from a (t = 0) to b (t = 1) along the shorter arc, as
    Warp defines it: a * quat_from_axis_angle(axis, t * angle), where (axis, angle) is the
    rotation quat_inverse(a) * b (so its gradient is that of this formula, also off the
    unit sphere)."""
    qa, qb, s = _nargs(ctx, args, kwargs, 3, "quat_slerp")
    qa, qb = _vec(ctx, qa, "quat_slerp", 4, "quat"), _vec(ctx, qb, "quat_slerp", 4, "quat")
    if qa.type is not qb.type:
        ctx.error(f"quat_slerp() of different types {qa.type!r} and {qb.type!r}")
    s = ctx.coerce(s, qa.type.dtype)
    from .registry import BUILTINS
    rel = binary(ctx, "mul", BUILTINS["quat_inverse"].expand(ctx, [qa], {}), qb)
    _, (axis, angle) = quat_to_axis_angle.expand(ctx, [rel], {})
    step = BUILTINS["quat_from_axis_angle"].expand(ctx, [axis, ctx.b.mul(s, angle)], {})
    return binary(ctx, "mul", qa, step)


# Spatial vectors: (angular, linear) halves of a 6-vector -------------------------------------
def _spatial(ctx, x, name):
    x = _any_vec(ctx, x, name)
    if x.type.length != 6 or not x.type.dtype.is_float:
        ctx.error(f"{name}() needs a float spatial vector (6 components), got {x.type!r}")
    return x


def _halves(ctx, v):
    b = ctx.b
    comps = b.components(v)
    v3 = Vector(3, v.type.dtype)
    return b.construct(v3, comps[:3]), b.construct(v3, comps[3:])


def _join(ctx, top, bottom):
    b = ctx.b
    return b.construct(Vector(6, top.type.dtype), b.components(top) + b.components(bottom))


@builtin("spatial_top")
def spatial_top(ctx, args, kwargs):
    (v,) = _nargs(ctx, args, kwargs, 1, "spatial_top")
    return _halves(ctx, _spatial(ctx, v, "spatial_top"))[0]


@builtin("spatial_bottom")
def spatial_bottom(ctx, args, kwargs):
    (v,) = _nargs(ctx, args, kwargs, 1, "spatial_bottom")
    return _halves(ctx, _spatial(ctx, v, "spatial_bottom"))[1]


@builtin("spatial_dot")
def spatial_dot(ctx, args, kwargs):
    a, c = _nargs(ctx, args, kwargs, 2, "spatial_dot")
    return dot.expand(ctx, [_spatial(ctx, a, "spatial_dot"), _spatial(ctx, c, "spatial_dot")], {})


@builtin("spatial_cross")
def spatial_cross(ctx, args, kwargs):
    """Twist x twist: (wa x wb, wa x vb + va x wb)."""
    a, c = _nargs(ctx, args, kwargs, 2, "spatial_cross")
    wa, va = _halves(ctx, _spatial(ctx, a, "spatial_cross"))
    wb, vb = _halves(ctx, _spatial(ctx, c, "spatial_cross"))
    top = cross.expand(ctx, [wa, wb], {})
    bottom = binary(ctx, "add", cross.expand(ctx, [wa, vb], {}), cross.expand(ctx, [va, wb], {}))
    return _join(ctx, top, bottom)


@builtin("spatial_cross_dual")
def spatial_cross_dual(ctx, args, kwargs):
    """Twist x wrench: (wa x nb + va x fb, wa x fb), with b = (torque nb, force fb)."""
    a, c = _nargs(ctx, args, kwargs, 2, "spatial_cross_dual")
    (wa, va), (nb, fb) = (_halves(ctx, _spatial(ctx, a, "spatial_cross_dual")),
                          _halves(ctx, _spatial(ctx, c, "spatial_cross_dual")))
    top = binary(ctx, "add", cross.expand(ctx, [wa, nb], {}), cross.expand(ctx, [va, fb], {}))
    return _join(ctx, top, cross.expand(ctx, [wa, fb], {}))


@builtin("spatial_adjoint")
def spatial_adjoint(ctx, args, kwargs):
    """The 6x6 matrix [[r, 0], [s, r]] from two 3x3 blocks."""
    r, s = _nargs(ctx, args, kwargs, 2, "spatial_adjoint")
    r, s = _mat(ctx, r, "spatial_adjoint"), _mat(ctx, s, "spatial_adjoint")
    if r.type.rows != 3 or s.type is not r.type:
        ctx.error(f"spatial_adjoint() needs two 3x3 matrices of one type, got {r.type!r}, {s.type!r}")
    b, t = ctx.b, r.type.dtype
    er, es = b.components(r), b.components(s)
    zero = b.const(0.0, t)
    rows = []
    for i in range(6):
        for j in range(6):
            if i < 3:
                rows.append(er[i * 3 + j] if j < 3 else zero)
            else:
                rows.append(es[(i - 3) * 3 + j] if j < 3 else er[(i - 3) * 3 + j - 3])
    return b.construct(Matrix((6, 6), t), rows)
