"""Vector, matrix, quaternion and transform builtins, written in terms of scalar ops.

None of these needs a derivative rule: each expands into IR arithmetic on components.
"""

from __future__ import annotations

from ..ir.core import Value
from ..types import Matrix, Scalar, Vector, float16, float64, resolve
from .arith import binary, dot_list
from .math import PRIM
from .registry import builtin

_ANY_SCALAR = ("dot", "cw_mul", "cw_div", "outer", "cross", "skew", "length_sq", "diag")  # (int vectors too)


def _vec(ctx, x, name, length=None, flavor=None):
    if not (isinstance(x, Value) and isinstance(x.type, Vector)):
        ctx.error(f"{name}() needs a vector, got {getattr(x, 'type', x)!r}")
    if length is not None and x.type.length != length:
        ctx.error(f"{name}() needs a vector of length {length}, got {x.type!r}")
    if flavor is not None and x.type.flavor != flavor:
        ctx.error(f"{name}() needs a {flavor}, got {x.type!r}")
    if not x.type.dtype.is_float and name not in _ANY_SCALAR:
        ctx.error(f"{name}() needs a float vector, got {x.type!r}")
    return x


def _mat(ctx, x, name, square=True):
    if not (isinstance(x, Value) and isinstance(x.type, Matrix)):
        ctx.error(f"{name}() needs a matrix, got {getattr(x, 'type', x)!r}")
    if square and x.type.rows != x.type.cols:
        ctx.error(f"{name}() needs a square matrix, got {x.type!r}")
    return x


def _nargs(ctx, args, kwargs, n, name):
    if len(args) != n or kwargs:
        ctx.error(f"{name}() takes {n} argument(s)")
    return args


def _dot(b, xs, ys):
    acc = b.mul(xs[0], ys[0])
    for x, y in zip(xs[1:], ys[1:]):
        acc = b.add(acc, b.mul(x, y))
    return acc


@builtin("dot")
def dot(ctx, args, kwargs):
    """Inner product of two vectors of one type (quaternions too)."""
    a, c = _nargs(ctx, args, kwargs, 2, "dot")
    a, c = _vec(ctx, a, "dot"), _vec(ctx, c, "dot")
    if a.type is not c.type:
        ctx.error(f"dot() of different types {a.type!r} and {c.type!r}")
    return _dot(ctx.b, ctx.b.components(a), ctx.b.components(c))


@builtin("cross")
def cross(ctx, args, kwargs):
    a, c = _nargs(ctx, args, kwargs, 2, "cross")
    a, c = _vec(ctx, a, "cross", 3), _vec(ctx, c, "cross", 3)
    b = ctx.b
    (ax, ay, az), (bx, by, bz) = b.components(a), b.components(c)
    return b.construct(a.type, [b.sub(b.mul(ay, bz), b.mul(az, by)),
                                b.sub(b.mul(az, bx), b.mul(ax, bz)),
                                b.sub(b.mul(ax, by), b.mul(ay, bx))])


@builtin("length_sq")
def length_sq(ctx, args, kwargs):
    (a,) = _nargs(ctx, args, kwargs, 1, "length_sq")
    comps = ctx.b.components(_vec(ctx, a, "length_sq"))
    return _dot(ctx.b, comps, comps)


@builtin("length")
def length(ctx, args, kwargs):
    """sqrt(length_sq(v)). At the zero vector the length is 0 and its gradient is 0, as in
    Warp (whose adj_length adds nothing when the length is not above kEps = 0): the square
    root is taken of a stand-in 1 there, so that no 0 * inf from sqrt's derivative turns the
    adjoint into NaN."""
    (a,) = _nargs(ctx, args, kwargs, 1, "length")
    return _length(ctx, _vec(ctx, a, "length"))


def _length(ctx, a: Value) -> Value:
    b = ctx.b
    comps = b.components(a)
    sq = _dot(b, comps, comps)
    zero = b.const(0.0, sq.type)
    nonzero = b.cmp("ne", sq, zero)  # unordered: NaN stays NaN
    root = b.call(PRIM["sqrt"], [b.select(nonzero, sq, b.const(1.0, sq.type))])
    return b.select(nonzero, root, zero)


@builtin("normalize")
def normalize(ctx, args, kwargs):
    """v / length(v), componentwise as Warp divides (a quaternion times 1 / length, as Warp
    multiplies). Where the length is not above 0 (the zero vector, or NaN) the result is the
    zero vector, the identity (0, 0, 0, 1) for a quaternion, and no gradient flows, as in Warp."""
    (a,) = _nargs(ctx, args, kwargs, 1, "normalize")
    b = ctx.b
    n = _length(ctx, _vec(ctx, a, "normalize"))
    zero = b.const(0.0, n.type)
    pos = b.cmp("gt", n, zero)
    safe = b.select(pos, n, b.const(1.0, n.type))
    comps = b.components(a)
    fallback = [zero] * len(comps)
    quat = isinstance(a.type, Vector) and a.type.flavor == "quat"
    if quat:
        fallback[3] = b.const(1.0, n.type)
        inv = b.div(b.const(1.0, n.type), safe)
        return b.construct(a.type, [b.select(pos, b.mul(c, inv), f) for c, f in zip(comps, fallback)])
    return b.construct(a.type, [b.select(pos, b.div(c, safe), f) for c, f in zip(comps, fallback)])


def _componentwise(op):
    def expand(ctx, args, kwargs):
        a, c = _nargs(ctx, args, kwargs, 2, f"cw_{op}")
        if not (isinstance(a, Value) and isinstance(c, Value) and a.type is c.type
                and isinstance(a.type, (Vector, Matrix))):
            ctx.error(f"cw_{op}() needs two vectors or matrices of one type")
        b = ctx.b
        return b.construct(a.type, [b.binary(op, x, y) for x, y in zip(b.components(a), b.components(c))])
    return expand


builtin("cw_mul")(_componentwise("mul"))
builtin("cw_div")(_componentwise("div"))


@builtin("outer")
def outer(ctx, args, kwargs):
    a, c = _nargs(ctx, args, kwargs, 2, "outer")
    a, c = _vec(ctx, a, "outer"), _vec(ctx, c, "outer")
    b = ctx.b
    xs, ys = b.components(a), b.components(c)
    return b.construct(Matrix((len(xs), len(ys)), a.type.dtype), [b.mul(x, y) for x in xs for y in ys])


@builtin("_matmul_unfused")
def matmul_unfused(ctx, args, kwargs):
    """a @ b with each entry summed as `a0 b0 + a1 b1 + ...`, no fused multiply-add: the
    products inside Warp's svd3 and eig3 (svd.h's multAB / multAtB are scalar expressions;
    its `a @ b` accumulates with fmaf, arith.muladd_list)."""
    a, c = _nargs(ctx, args, kwargs, 2, "_matmul_unfused")
    a, c = _mat(ctx, a, "_matmul_unfused", square=False), _mat(ctx, c, "_matmul_unfused", square=False)
    b = ctx.b
    ta, tc = a.type, c.type
    out = [dot_list(ctx, [b.extract(a, r * ta.cols + j) for j in range(ta.cols)],
                    [b.extract(c, j * tc.cols + k) for j in range(ta.cols)])
           for r in range(ta.rows) for k in range(tc.cols)]
    return b.construct(Matrix((ta.rows, tc.cols), ta.dtype), out)


@builtin("transpose")
def transpose(ctx, args, kwargs):
    (m,) = _nargs(ctx, args, kwargs, 1, "transpose")
    m = _mat(ctx, m, "transpose", square=False)
    t = m.type
    b = ctx.b
    return b.construct(Matrix((t.cols, t.rows), t.dtype),
                       [b.extract(m, r * t.cols + c) for c in range(t.cols) for r in range(t.rows)])


def _entries(b, m):
    t = m.type
    return [[b.extract(m, r * t.cols + c) for c in range(t.cols)] for r in range(t.rows)]


def _det(b, e):
    n = len(e)
    if n == 1:
        return e[0][0]
    if n == 2:
        return b.sub(b.mul(e[0][0], e[1][1]), b.mul(e[0][1], e[1][0]))
    acc = None
    for c in range(n):  # cofactor expansion along the first row
        minor = [row[:c] + row[c + 1:] for row in e[1:]]
        term = b.mul(e[0][c], _det(b, minor))
        acc = term if acc is None else (b.add(acc, term) if c % 2 == 0 else b.sub(acc, term))
    return acc


@builtin("determinant")
def determinant(ctx, args, kwargs):
    """Cofactor expansion along the first row; a 4x4 determinant by Warp's own sequence
    (`_warp_4x4`: the same roundings, so an exactly singular matrix gives exactly 0)."""
    (m,) = _nargs(ctx, args, kwargs, 1, "determinant")
    b = ctx.b
    e = _entries(b, _mat(ctx, m, "determinant"))
    if len(e) == 4:
        return _warp_4x4(b, e, m.type.dtype, cofactors=False)[0]
    return _det(b, e)


# Warp's 4x4 cofactors (mat.h, after USD), term by term: z_rc is x_r* times the 2x2 minors
# y of two other columns (rows r0 r1), summed left to right. The first eight use the minors
# of columns 2 and 3 and are rounded to the matrix's type; the last eight, for the inverse
# only, use those of columns 0 and 1 and stay float64. The inverse's entry (i, j) is z_ji.
_Z_COLUMNS_23 = {
    "z30": "x11*y02 - x21*y01 - x01*y12", "z20": "x01*y13 - x11*y03 + x31*y01",
    "z10": "x21*y03 - x31*y02 - x01*y23", "z00": "x11*y23 - x21*y13 + x31*y12",
    "z31": "x00*y12 - x10*y02 + x20*y01", "z21": "x10*y03 - x30*y01 - x00*y13",
    "z11": "x00*y23 - x20*y03 + x30*y02", "z01": "x20*y13 - x30*y12 - x10*y23",
}
_Z_COLUMNS_01 = {
    "z33": "x02*y12 - x12*y02 + x22*y01", "z23": "x12*y03 - x32*y01 - x02*y13",
    "z13": "x02*y23 - x22*y03 + x32*y02", "z03": "x22*y13 - x32*y12 - x12*y23",
    "z32": "x13*y02 - x23*y01 - x03*y12", "z22": "x03*y13 - x13*y03 + x33*y01",
    "z12": "x23*y03 - x33*y02 - x03*y23", "z02": "x13*y23 - x23*y13 + x33*y12",
}


def _warp_4x4(b, x, t, cofactors: bool):
    """(determinant, {name: cofactor} or None) of the 4x4 entries `x` of type `t`,
    with Warp's roundings: the 2x2 minors in `t`, widened; the cofactors in float64 (in
    float16 for float16 matrices, whose products with a double are halves in Warp); the
    determinant x30 z30 + x20 z20 + x10 z10 + x00 z00 summed in `t`. So an exactly singular
    matrix (a row twice another) has determinant 0, as in Warp."""
    def wide(v):
        return v if v.type is float64 else b.cast(v, float64)

    def minors(c0, c1):  # y_{r0 r1} = x_{r0 c0} x_{r1 c1} - x_{r1 c0} x_{r0 c1}, in t
        return {f"y{r0}{r1}": wide(b.sub(b.mul(x[r0][c0], x[r1][c1]), b.mul(x[r1][c0], x[r0][c1])))
                for r0, r1 in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))}

    def evaluate(formula, y):  # "xRC*yAB - xRC*yAB + ...", left to right, in float64
        acc, sign = None, "+"
        for token in formula.split():
            if token in "+-":
                sign = token
                continue
            xs, ys = token.split("*")
            term = b.mul(wide(x[int(xs[1])][int(xs[2])]), y[ys])
            if t is float16:  # (Warp's half * double is a half: every term and sum rounds)
                term = b.cast(term, t)
            acc = term if acc is None else (b.add(acc, term) if sign == "+" else b.sub(acc, term))
        return acc

    y = minors(2, 3)
    wanted = _Z_COLUMNS_23 if cofactors else {k: _Z_COLUMNS_23[k] for k in ("z30", "z20", "z10", "z00")}
    z = {name: b.cast(evaluate(f, y), t) for name, f in wanted.items()}
    det = None
    for r in (3, 2, 1, 0):
        term = b.mul(x[r][0], z[f"z{r}0"])
        det = term if det is None else b.add(det, term)
    if not cofactors:
        return det, None
    y = minors(0, 1)
    z.update({name: evaluate(f, y) for name, f in _Z_COLUMNS_01.items()})
    return det, z


@builtin("inverse", aliases=("inverse_approx",))
def inverse(ctx, args, kwargs):
    """The inverse of a square matrix: weft/linalg.py's `matrix_inverse`, whose gradient is
    Warp's exact -inv^T adj inv^T (differentiating the adjugate cancelled, and overflowed for
    badly scaled matrices). `inverse_approx` is the same on the CPU (Warp's is faster and less
    exact only on GPUs)."""
    (m,) = _nargs(ctx, args, kwargs, 1, "inverse")
    m = _mat(ctx, m, "inverse")
    from .. import linalg  # (funcs: compiled by the frontend that calls this builtin)
    return linalg.matrix_inverse.emit_call(ctx, [m], {}, None)


def _singular(b, det):
    """det == 0 or NaN: Warp's test `det > 0 or det < 0` fails (2x2 and 4x4)."""
    zero = b.cmp("eq", det, b.const(0.0, det.type))
    return b.select(zero, zero, b.cmp("ne", det, det))


@builtin("_adjugate_inverse")
def adjugate_inverse(ctx, args, kwargs):
    """Inverse by the adjugate (the body of `inverse`). As in Warp, a singular matrix gives
    the zero matrix: determinant 0, or for 2x2 and 4x4 matrices NaN too (Warp tests `det > 0
    or det < 0` there, `det != 0` for 3x3); a 4x4 matrix by Warp's own sequence
    (`_warp_4x4_inverse`)."""
    (m,) = _nargs(ctx, args, kwargs, 1, "inverse")
    m = _mat(ctx, m, "inverse")
    b = ctx.b
    e = _entries(b, m)
    n = len(e)
    t = m.type.dtype
    if n == 4:
        return _warp_4x4_inverse(b, e, m.type)
    det = _det(b, e)
    zero = b.const(0.0, t)
    singular = _singular(b, det) if n == 2 and t.is_float else b.cmp("eq", det, zero)
    inv_det = b.div(b.const(1.0, t), b.select(singular, b.const(1.0, t), det))
    out = []
    for r in range(n):
        for c in range(n):
            # adj[r][c] = cofactor[c][r]
            minor = [row[:r] + row[r + 1:] for k, row in enumerate(e) if k != c]
            if n == 3 and (r + c) % 2:  # (Warp subtracts the other way round: a zero is +0)
                cof = b.sub(b.mul(minor[0][1], minor[1][0]), b.mul(minor[0][0], minor[1][1]))
            else:
                cof = _det(b, minor) if n > 1 else b.const(1.0, t)
                cof = b.neg(cof) if (r + c) % 2 else cof
            out.append(b.select(singular, zero, b.mul(cof, inv_det)))
    return b.construct(m.type, out)


def _warp_4x4_inverse(b, e, mt):
    """Warp's 4x4 inverse: its cofactors (`_warp_4x4`) times 1 / det in float64, each
    product rounded once to the matrix's type; the zero matrix where det is 0 or NaN."""
    t = mt.dtype
    det, z = _warp_4x4(b, e, t, cofactors=True)
    det = b.cast(det, float64)  # (Warp's `double det`)
    singular = _singular(b, det)
    rcp = b.div(b.const(1.0, float64), b.select(singular, b.const(1.0, float64), det))
    zero = b.const(0.0, t)
    out = []
    for i in range(4):
        for j in range(4):
            entry = b.cast(b.mul(b.cast(z[f"z{j}{i}"], float64), rcp), t)
            out.append(b.select(singular, zero, entry))
    return b.construct(mt, out)


@builtin("trace")
def trace(ctx, args, kwargs):
    (m,) = _nargs(ctx, args, kwargs, 1, "trace")
    e = _entries(ctx.b, _mat(ctx, m, "trace"))
    acc = e[0][0]
    for k in range(1, len(e)):
        acc = ctx.b.add(acc, e[k][k])
    return acc


@builtin("diag")
def diag(ctx, args, kwargs):
    (v,) = _nargs(ctx, args, kwargs, 1, "diag")
    v = _vec(ctx, v, "diag")
    b = ctx.b
    n = v.type.length
    zero = b.const(0.0, v.type.dtype)
    comps = b.components(v)
    return b.construct(Matrix((n, n), v.type.dtype),
                       [comps[r] if r == c else zero for r in range(n) for c in range(n)])


@builtin("identity")
def identity(ctx, args, kwargs):
    """identity(n, dtype): the n x n identity matrix."""
    n = kwargs.pop("n", args[0] if args else None)
    dtype = resolve(kwargs.pop("dtype", args[1] if len(args) > 1 else None))
    if not isinstance(n, int) or not isinstance(dtype, Scalar):
        ctx.error("identity(n, dtype) needs a constant size and a scalar type")
    b = ctx.b
    one, zero = b.const(1, dtype), b.const(0, dtype)
    return b.construct(Matrix((n, n), dtype), [one if r == c else zero for r in range(n) for c in range(n)])


@builtin("skew")
def skew(ctx, args, kwargs):
    """The matrix S with S @ x == cross(v, x)."""
    (v,) = _nargs(ctx, args, kwargs, 1, "skew")
    b = ctx.b
    x, y, z = b.components(_vec(ctx, v, "skew", 3))
    zero = b.const(0, v.type.dtype)
    return b.construct(Matrix((3, 3), v.type.dtype),
                       [zero, b.neg(z), y, z, zero, b.neg(x), b.neg(y), x, zero])


# Quaternions (x, y, z, w layout, as Warp) ----------------------------------------------------
def _quat_type(dtype):
    return Vector(4, dtype, "quat")


def quat_mul(b, p, q):
    (px, py, pz, pw), (qx, qy, qz, qw) = b.components(p), b.components(q)

    def s(*terms):
        acc = None
        for sign, x, y in terms:
            t = b.mul(x, y)
            acc = t if acc is None else (b.add(acc, t) if sign > 0 else b.sub(acc, t))
        return acc
    return b.construct(p.type, [  # (the terms in Warp's order: its roundings)
        s((1, pw, qx), (1, qw, px), (1, py, qz), (-1, qy, pz)),
        s((1, pw, qy), (1, qw, py), (1, pz, qx), (-1, qz, px)),
        s((1, pw, qz), (1, qw, pz), (1, px, qy), (-1, qx, py)),
        s((1, pw, qw), (-1, px, qx), (-1, py, qy), (-1, pz, qz)),
    ])


def _float_dtype(ctx, args, kwargs, name):
    """The optional `dtype` argument of a constructor builtin (float32 if not given)."""
    dtype = kwargs.pop("dtype", args[0] if args else None)
    dtype = resolve(float if dtype is None else dtype)  # (None: float32, as when not given)
    if not (isinstance(dtype, Scalar) and dtype.is_float):
        ctx.error(f"{name}(dtype) needs a float type")
    return dtype


@builtin("quat_identity")
def quat_identity(ctx, args, kwargs):
    dtype = _float_dtype(ctx, args, kwargs, "quat_identity")
    b = ctx.b
    z, o = b.const(0.0, dtype), b.const(1.0, dtype)
    return b.construct(_quat_type(dtype), [z, z, z, o])


@builtin("quat_from_axis_angle")
def quat_from_axis_angle(ctx, args, kwargs):
    axis, angle = _nargs(ctx, args, kwargs, 2, "quat_from_axis_angle")
    axis = _vec(ctx, axis, "quat_from_axis_angle", 3)
    b = ctx.b
    half = b.mul(ctx.coerce(angle, axis.type.dtype), b.const(0.5, axis.type.dtype))
    s = b.call(PRIM["sin"], [half])
    return b.construct(_quat_type(axis.type.dtype),
                       [b.mul(c, s) for c in b.components(axis)] + [b.call(PRIM["cos"], [half])])


@builtin("quat_inverse")
def quat_inverse(ctx, args, kwargs):
    (q,) = _nargs(ctx, args, kwargs, 1, "quat_inverse")
    b = ctx.b
    x, y, z, w = b.components(_vec(ctx, q, "quat_inverse", 4, "quat"))
    return b.construct(q.type, [b.neg(x), b.neg(y), b.neg(z), w])


def _rotate(ctx, q, v, inverse):
    """v' = v (2 w^2 - 1) + u 2 (u . v) +- (u x v) w 2 for q = (u, w) (- for the inverse), in
    Warp's order of operations (its roundings)."""
    b = ctx.b
    x, y, z, w = b.components(q)
    u = b.construct(v.type, [x, y, z])
    two = b.const(2.0, v.type.dtype)
    c = b.sub(b.mul(b.mul(two, w), w), b.const(1.0, v.type.dtype))
    d = b.mul(two, dot.expand(ctx, [u, v], {}))
    out = []
    for vi, ui, ci in zip(b.components(v), (x, y, z), b.components(cross.expand(ctx, [u, v], {}))):
        turn = b.mul(b.mul(ci, w), two)
        out.append((b.sub if inverse else b.add)(b.add(b.mul(vi, c), b.mul(ui, d)), turn))
    return b.construct(v.type, out)


@builtin("quat_rotate")
def quat_rotate(ctx, args, kwargs):
    q, v = _nargs(ctx, args, kwargs, 2, "quat_rotate")
    return _rotate(ctx, _vec(ctx, q, "quat_rotate", 4, "quat"), _vec(ctx, v, "quat_rotate", 3), False)


@builtin("quat_rotate_inv")
def quat_rotate_inv(ctx, args, kwargs):
    q, v = _nargs(ctx, args, kwargs, 2, "quat_rotate_inv")
    return _rotate(ctx, _vec(ctx, q, "quat_rotate_inv", 4, "quat"), _vec(ctx, v, "quat_rotate_inv", 3), True)


@builtin("quat_to_matrix")
def quat_to_matrix(ctx, args, kwargs):
    (q,) = _nargs(ctx, args, kwargs, 1, "quat_to_matrix")
    q = _vec(ctx, q, "quat_to_matrix", 4, "quat")
    b = ctx.b
    cols = []
    v3 = Vector(3, q.type.dtype)
    for k in range(3):
        e = [b.const(1.0 if i == k else 0.0, q.type.dtype) for i in range(3)]
        cols.append(b.components(_rotate(ctx, q, b.construct(v3, e), False)))
    return b.construct(Matrix((3, 3), q.type.dtype), [cols[c][r] for r in range(3) for c in range(3)])


# Transforms: position (3) then rotation (4) --------------------------------------------------
def _transform_type(dtype):
    return Vector(7, dtype, "transform")


def transform_part(ctx, t, name):
    b = ctx.b
    comps = b.components(t)
    if name == "p":
        return b.construct(Vector(3, t.type.dtype), comps[:3])
    return b.construct(_quat_type(t.type.dtype), comps[3:])


@builtin("transform_get_translation")
def transform_get_translation(ctx, args, kwargs):
    (t,) = _nargs(ctx, args, kwargs, 1, "transform_get_translation")
    return transform_part(ctx, _vec(ctx, t, "transform_get_translation", 7, "transform"), "p")


@builtin("transform_get_rotation")
def transform_get_rotation(ctx, args, kwargs):
    (t,) = _nargs(ctx, args, kwargs, 1, "transform_get_rotation")
    return transform_part(ctx, _vec(ctx, t, "transform_get_rotation", 7, "transform"), "q")


@builtin("transform_identity")
def transform_identity(ctx, args, kwargs):
    dtype = _float_dtype(ctx, args, kwargs, "transform_identity")
    b = ctx.b
    z, o = b.const(0.0, dtype), b.const(1.0, dtype)
    return b.construct(_transform_type(dtype), [z, z, z, z, z, z, o])


def make_transform(ctx, p, q):
    p = _vec(ctx, p, "transform", 3)
    q = _vec(ctx, q, "transform", 4, "quat")
    return ctx.b.construct(_transform_type(p.type.dtype), ctx.b.components(p) + ctx.b.components(q))


def _affine(ctx, m, p, w: float):
    """The first three components of 4x4 matrix m times (p, w) (no perspective divide)."""
    m = _mat(ctx, m, "transform_point/vector")
    p = _vec(ctx, p, "transform_point/vector", 3)
    if m.type.rows != 4 or m.type.dtype is not p.type.dtype:
        ctx.error(f"transform_point/vector() needs a 4x4 matrix of {p.type.dtype!r}, got {m.type!r}")
    b = ctx.b
    e, xs = b.components(m), b.components(p)
    out = []
    for r in range(3):
        acc = _dot(b, e[r * 4: r * 4 + 3], xs)
        out.append(b.add(acc, e[r * 4 + 3]) if w else acc)
    return b.construct(p.type, out)


@builtin("transform_point")
def transform_point(ctx, args, kwargs):
    t, p = _nargs(ctx, args, kwargs, 2, "transform_point")
    if isinstance(t, Value) and isinstance(t.type, Matrix):
        return _affine(ctx, t, p, 1.0)
    t = _vec(ctx, t, "transform_point", 7, "transform")
    r = _rotate(ctx, transform_part(ctx, t, "q"), _vec(ctx, p, "transform_point", 3), False)
    return binary(ctx, "add", r, transform_part(ctx, t, "p"))


@builtin("transform_vector")
def transform_vector(ctx, args, kwargs):
    t, v = _nargs(ctx, args, kwargs, 2, "transform_vector")
    if isinstance(t, Value) and isinstance(t.type, Matrix):
        return _affine(ctx, t, v, 0.0)
    t = _vec(ctx, t, "transform_vector", 7, "transform")
    return _rotate(ctx, transform_part(ctx, t, "q"), _vec(ctx, v, "transform_vector", 3), False)


@builtin("transform_multiply")
def transform_multiply(ctx, args, kwargs):
    a, c = _nargs(ctx, args, kwargs, 2, "transform_multiply")
    return transform_mul(ctx, _vec(ctx, a, "transform_multiply", 7, "transform"),
                         _vec(ctx, c, "transform_multiply", 7, "transform"))


def transform_mul(ctx, a, c):
    qa, qc = transform_part(ctx, a, "q"), transform_part(ctx, c, "q")
    p = binary(ctx, "add", _rotate(ctx, qa, transform_part(ctx, c, "p"), False), transform_part(ctx, a, "p"))
    return make_transform(ctx, p, quat_mul(ctx.b, qa, qc))


@builtin("transform_inverse")
def transform_inverse(ctx, args, kwargs):
    (t,) = _nargs(ctx, args, kwargs, 1, "transform_inverse")
    t = _vec(ctx, t, "transform_inverse", 7, "transform")
    q_inv = quat_inverse.expand(ctx, [transform_part(ctx, t, "q")], {})
    p = _rotate(ctx, q_inv, transform_part(ctx, t, "p"), False)
    return make_transform(ctx, binary(ctx, "mul", p, -1.0), q_inv)
