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
from .vector import (
    _mat,
    _nargs,
    _quat_type,
    _vec,
    cross,
    dot,
    length,
    normalize,
    quat_from_axis_angle,
    quat_inverse,
    quat_mul,
)


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
    """|x| with the sign of y (the sign bit, so -0.0 counts as negative)."""
    x, y = _nargs(ctx, args, kwargs, 2, "copysign")
    x, y = _scalar(ctx, x, "copysign"), ctx.coerce(y, _scalar(ctx, x, "copysign").type)
    b = ctx.b
    magnitude = b.call(PRIM["abs"], [x])
    # y < 0, or y is -0.0: 1/y is -inf
    negative = b.cmp("lt", b.select(b.cmp("eq", y, b.const(0.0, y.type)),
                                    b.div(b.const(1.0, y.type), y), y), b.const(0.0, y.type))
    return b.select(negative, b.neg(magnitude), magnitude)


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
    """The rotation of an orthonormal 3x3 matrix (or a 4x4 matrix's top-left block), by the
    best-conditioned of the four classic formulas (largest of trace and diagonal)."""
    (m,) = _nargs(ctx, args, kwargs, 1, "quat_from_matrix")
    m = _mat(ctx, m, "quat_from_matrix")
    if m.type.rows not in (3, 4):
        ctx.error(f"quat_from_matrix() needs a 3x3 or 4x4 matrix, got {m.type!r}")
    b, t = ctx.b, m.type.dtype
    e = b.components(m)
    n = m.type.cols

    def at(r, c):
        return e[r * n + c]

    one, quarter = b.const(1.0, t), b.const(0.25, t)

    tiny = b.const(1e-30 if t.bits > 32 else 1e-12, t)

    def sqrt(x):
        # every candidate is computed and one is selected: keep the others finite (their
        # derivatives are multiplied by zero in the adjoint, and 0 * NaN would be NaN)
        return b.call(PRIM["sqrt"], [b.call(PRIM["max"], [x, tiny])])

    trace = b.add(b.add(at(0, 0), at(1, 1)), at(2, 2))
    # the four candidates, each (x, y, z, w) from one large term s = 2 * that component
    s0 = b.mul(sqrt(b.add(trace, one)), b.const(2.0, t))  # w largest
    c0 = [b.div(b.sub(at(2, 1), at(1, 2)), s0), b.div(b.sub(at(0, 2), at(2, 0)), s0),
          b.div(b.sub(at(1, 0), at(0, 1)), s0), b.mul(quarter, s0)]
    s1 = b.mul(sqrt(b.sub(b.sub(b.add(one, at(0, 0)), at(1, 1)), at(2, 2))), b.const(2.0, t))  # x largest
    c1 = [b.mul(quarter, s1), b.div(b.add(at(0, 1), at(1, 0)), s1), b.div(b.add(at(0, 2), at(2, 0)), s1),
          b.div(b.sub(at(2, 1), at(1, 2)), s1)]
    s2 = b.mul(sqrt(b.sub(b.sub(b.add(one, at(1, 1)), at(0, 0)), at(2, 2))), b.const(2.0, t))  # y largest
    c2 = [b.div(b.add(at(0, 1), at(1, 0)), s2), b.mul(quarter, s2), b.div(b.add(at(1, 2), at(2, 1)), s2),
          b.div(b.sub(at(0, 2), at(2, 0)), s2)]
    s3 = b.mul(sqrt(b.sub(b.sub(b.add(one, at(2, 2)), at(0, 0)), at(1, 1))), b.const(2.0, t))  # z largest
    c3 = [b.div(b.add(at(0, 2), at(2, 0)), s3), b.div(b.add(at(1, 2), at(2, 1)), s3), b.mul(quarter, s3),
          b.div(b.sub(at(1, 0), at(0, 1)), s3)]
    use0 = b.cmp("gt", trace, b.const(0.0, t))
    use1 = b.select(b.cmp("gt", at(0, 0), at(1, 1)), b.cmp("gt", at(0, 0), at(2, 2)), b.const(False, use0.type))
    use2 = b.cmp("gt", at(1, 1), at(2, 2))
    out = []
    for k in range(4):
        v = b.select(use2, c2[k], c3[k])
        v = b.select(use1, c1[k], v)
        out.append(b.select(use0, c0[k], v))
    q = b.construct(_quat_type(t), out)
    return _normalize(ctx, q)


def _normalize(ctx, v):
    b = ctx.b
    inv = b.div(b.const(1.0, v.type.dtype), b.call(PRIM["sqrt"], [dot.expand(ctx, [v, v], {})]))
    return b.construct(v.type, [b.mul(c, inv) for c in b.components(v)])


@builtin("quat_to_axis_angle", inout=(1, 2))
def quat_to_axis_angle(ctx, args, kwargs):
    """(axis, angle): the unit rotation axis and the angle in [0, pi] of quaternion q
    (any length), as Warp computes them: the axis is zero for the identity rotation. Warp's form
    `quat_to_axis_angle(q, axis, angle)` writes them into those local variables."""
    if len(args) not in (1, 3) or kwargs:
        ctx.error("quat_to_axis_angle(q) takes one quaternion (returns axis, angle); "
                  "quat_to_axis_angle(q, axis, angle) writes them into local variables")
    q = _vec(ctx, args[0], "quat_to_axis_angle", 4, "quat")
    axis, angle = _axis_angle(ctx, q)
    if len(args) == 1:
        return (), (axis, angle)
    for given, value, what in ((args[1], axis, "axis"), (args[2], angle, "angle")):
        if not (isinstance(given, Value) and given.type is value.type):
            ctx.error(f"quat_to_axis_angle(): {what} must be a local {value.type!r}, got "
                      f"{getattr(given, 'type', given)!r}", kind=TypeError)
    return (axis, angle), None


def _axis_angle(ctx, q):
    """Warp's formula: axis = ±normalize(xyz) (the sign of w; q and -q are one rotation),
    angle = 2 atan2(|xyz|, |w|)."""
    b, t = ctx.b, q.type.dtype
    x, y, z, w = b.components(q)
    v = b.construct(Vector(3, t), [x, y, z])
    n = normalize.expand(ctx, [v], {})  # (zero for the identity, as in Warp)
    flip = b.cmp("lt", w, b.const(0.0, t))
    axis = b.construct(v.type, [b.select(flip, b.neg(c), c) for c in b.components(n)])
    angle = b.mul(b.const(2.0, t), b.call(PRIM["atan2"], [length.expand(ctx, [v], {}), b.call(PRIM["abs"], [w])]))
    return axis, angle


@builtin("quat_slerp")
def quat_slerp(ctx, args, kwargs):
    """Spherical linear interpolation from a (t = 0) to b (t = 1) along the shorter arc, as
    Warp defines it: a * quat_from_axis_angle(axis, t * angle), where (axis, angle) are
    those of inverse(a) * b. (For unit quaternions this is the usual slerp; the definition
    also fixes the values, and so the gradients, off the unit sphere.)"""
    qa, qb, s = _nargs(ctx, args, kwargs, 3, "quat_slerp")
    qa, qb = _vec(ctx, qa, "quat_slerp", 4, "quat"), _vec(ctx, qb, "quat_slerp", 4, "quat")
    if qa.type is not qb.type:
        ctx.error(f"quat_slerp() of different types {qa.type!r} and {qb.type!r}")
    b = ctx.b
    s = ctx.coerce(s, qa.type.dtype)
    axis, angle = _axis_angle(ctx, quat_mul(b, quat_inverse.expand(ctx, [qa], {}), qb))
    return quat_mul(b, qa, quat_from_axis_angle.expand(ctx, [axis, b.mul(s, angle)], {}))


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
