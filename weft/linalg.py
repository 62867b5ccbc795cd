"""Small matrix decompositions written as `@func`s: the bodies of the builtins `eig3`, `qr3`,
`svd3` and `svd2` (builtins/decompositions.py). Being ordinary kernel code, they compile for
every float type.

eig3, svd3 and qr3 compute what Warp computes, by the same algorithms (McAdams et al.'s
quaternion Jacobi sweeps and Givens QR), so that a program gets Warp's eigenvalue order and
Warp's signs of the singular vectors, not only an equivalent decomposition:
- eig3: 4 approximate Jacobi sweeps (8 in float64) on the lower triangle of a symmetric 3x3
  matrix; eigenvalues unsorted. Gradient: the analytic one (`_eig3_grad`).
- qr3: three Givens rotations; Q a rotation. Differentiable through its arithmetic.
- svd3: the Jacobi rotation V of A^T A, columns sorted by decreasing |A v|, then the
  Givens QR of A V gives U and sigma: U and V rotations, sigma[2] signed. Gradient: the
  analytic one (`_svd3_grad`).
- svd2: closed form (Warp's), with the analytic gradient (`_svd2_grad`); U stays
  orthonormal for a singular A.
"""

from typing import Any

import weft as wp  # (only for `wp.adjoint[...]` in the func_grads, rewritten before compilation)

from .builtins import BUILTINS
from .lang.custom_grad import func_grad
from .lang.decorators import func
from .types import matrix, vector

_abs, _sqrt, _transpose, _select = (BUILTINS[n] for n in ("abs", "sqrt", "transpose", "select"))
_identity, _adjugate_inverse = BUILTINS["identity"], BUILTINS["_adjugate_inverse"]
_matmul = BUILTINS["_matmul_unfused"]  # (the forward products, as Warp's svd.h rounds them)
wp_max, _cw_mul = BUILTINS["max"], BUILTINS["cw_mul"]


@func
def matrix_inverse(a: Any):
    """The inverse of square `a` by the adjugate (the zero matrix where `a` is singular): the
    builtin `inverse`."""
    return _adjugate_inverse(a)


@func_grad(matrix_inverse)
def _inverse_grad(a: Any, adj_inv: Any):
    """adj_A = -inv^T adj_inv inv^T, Warp's adj_inverse: exact where differentiating the
    adjugate's products loses the small entries (a badly scaled matrix)."""
    inv_t = _transpose(matrix_inverse(a))
    wp.adjoint[a] += -(inv_t @ adj_inv @ inv_t)  # (wp.adjoint: rewritten by func_grad)


def _epsilon(dtype) -> float:
    """The machine epsilon of a float type (a plain function: folded at compile time)."""
    return {16: 2.0 ** -10, 32: 2.0 ** -23}.get(dtype.bits, 2.0 ** -52)


def _jacobi_sweeps(dtype) -> int:
    """Warp's number of Jacobi sweeps: 4 in float16 and float32, 8 in float64."""
    return 8 if dtype.bits == 64 else 4


def _givens_epsilon(dtype) -> float:
    """Below this length a QR Givens rotation is the identity (Warp's QR_GIVENS_EPSILON)."""
    return 1.0e-12 if dtype.bits == 64 else 1.0e-6


@func
def _safe_sqrt(x: Any):
    """sqrt(x) for x > 0, else 0, with gradient 0 there (not sqrt's infinite slope)."""
    pos = x > type(x)(0.0)
    return _select(pos, type(x)(0.0), _sqrt(_select(pos, type(x)(1.0), x)))


@func
def _approximate_givens(a11: Any, a21: Any, a22: Any):
    """(cos, sin) of half the angle of the rotation that (nearly) zeroes a21 of the
    symmetric 2x2 block [[a11, a21], [a21, a22]]: McAdams et al.'s approximate Givens
    angle, or pi/8 where the exact angle would be larger."""
    ch = type(a11)(2.0) * (a11 - a22)
    sh = a21
    small_angle = type(a11)(5.82842712474619) * sh * sh < ch * ch  # (3 + sqrt(8))
    w = type(a11)(1.0) / _sqrt(ch * ch + sh * sh)
    return (_select(small_angle, type(a11)(0.9238795325112867), w * ch),
            _select(small_angle, type(a11)(0.3826834323650898), w * sh))


@func
def _jacobi_quaternion(s11: Any, s21: Any, s22: Any, s31: Any, s32: Any, s33: Any):
    """The rotation, a quaternion (x, y, z, w), that diagonalises the symmetric matrix with
    lower triangle s: cyclic approximate Jacobi sweeps over the pairs (0, 1), (1, 2), (0, 2)
    (McAdams et al., "Computing the singular value decomposition of 3x3 matrices with
    minimal branching", 2011), as Warp's eig3 and svd3 run them, so that the eigenvectors
    come out in Warp's order and with Warp's signs. The block being rotated is always the
    leading 2x2 one: after each rotation the matrix's rows and columns are renamed
    cyclically."""
    zero = type(s11)(0.0)
    two = type(s11)(2.0)
    q = vector(zero, zero, zero, type(s11)(1.0))
    for _sweep in range(_jacobi_sweeps(type(s11))):
        for x in range(3):
            y = (x + 1) % 3
            z = (x + 2) % 3
            ch, sh = _approximate_givens(s11, s21, s22)
            scale = ch * ch + sh * sh
            a = (ch * ch - sh * sh) / scale
            b = (two * sh * ch) / scale
            t11 = a * (a * s11 + b * s21) + b * (a * s21 + b * s22)
            t21 = a * (-b * s11 + a * s21) + b * (-b * s21 + a * s22)
            t22 = -b * (-b * s11 + a * s21) + a * (-b * s21 + a * s22)
            t31 = a * s31 + b * s32
            t32 = -b * s31 + a * s32
            # q <- q * (the rotation's quaternion about axis z)
            tx = q[x] * sh
            ty = q[y] * sh
            tz = q[z] * sh
            sw = sh * q[3]
            q = q * ch
            q[z] = q[z] + sw
            q[3] = q[3] - tz
            q[x] = q[x] + ty
            q[y] = q[y] - tx
            s11, s21, s22, s31, s32, s33 = t22, t32, s33, t21, t31, t11
    return q


@func
def _quaternion_matrix(q: Any):
    """The rotation matrix of quaternion q = (x, y, z, w) (not renormalised, as Warp's)."""
    one = type(q[0])(1.0)
    two = type(q[0])(2.0)
    x = q[0]
    y = q[1]
    z = q[2]
    w = q[3]
    return matrix(one - two * (y * y + z * z), two * (x * y - w * z), two * (x * z + w * y),
                  two * (x * y + w * z), one - two * (x * x + z * z), two * (y * z - w * x),
                  two * (x * z - w * y), two * (y * z + w * x), one - two * (x * x + y * y), shape=(3, 3))


@func
def eig3_jacobi(a: Any):
    """(Q, d): the eigenvectors (columns of Q) and eigenvalues d = diag(Q^T A Q) of
    symmetric 3x3 `a` (its lower triangle is read), in Warp's (unsorted) order."""
    q = _quaternion_matrix(_jacobi_quaternion(a[0, 0], a[1, 0], a[1, 1], a[2, 0], a[2, 1], a[2, 2]))
    d = _matmul(_matmul(_transpose(q), a), q)
    return q, vector(d[0, 0], d[1, 1], d[2, 2])


@func
def _coincidence(scale: Any):
    """The gap below which two eigenvalues (or squared singular values) of a spectrum of
    magnitude `scale` count as equal: a few ulps of it (at least 1e-30)."""
    return wp_max(scale, type(scale)(1.0e-30)) * type(scale)(64.0 * _epsilon(type(scale)))


@func
def _divide_apart(x: Any, gap: Any, tiny: Any):
    """x / gap where |gap| > tiny, else 0 (values that coincide: their vectors are not
    unique), with no division by the small gap, so no infinite gradient either."""
    apart = _abs(gap) > tiny
    return _select(apart, type(x)(0.0), x / _select(apart, type(x)(1.0), gap))


@func_grad(eig3_jacobi)
def _eig3_grad(a: Any, adj_q: Any, adj_d: Any):
    """The adjoint of (Q, d) = eig3(A) for symmetric A (Giles, "An extended collection of
    matrix derivative results", 2008, sec. 3.1, as Warp's adj_eig3):

        adj_A = Q (diag(adj_d) + F o (Q^T adj_Q)) Q^T,   F[i, j] = 1 / (d[j] - d[i]) (i != j).

    Where two eigenvalues coincide (to within a few ulps of the spectrum's scale) their
    eigenvectors are not unique and F's entry is taken as 0: a loss that depends only on the
    eigenspace gets its exact gradient (eigenvalue-only losses: Q diag(adj_d) Q^T, which is
    right at repeated eigenvalues too, where differentiating the rotations is not)."""
    q, d = eig3_jacobi(a)
    zero = type(a[0, 0])(0.0)
    tiny = _coincidence(wp_max(wp_max(_abs(d[0]), _abs(d[1])), _abs(d[2])))
    g = _transpose(q) @ adj_q
    inner = matrix(adj_d[0], zero, zero, zero, adj_d[1], zero, zero, zero, adj_d[2], shape=(3, 3))
    for i in range(3):
        for j in range(3):
            if i != j:
                inner[i, j] = _divide_apart(g[i, j], d[j] - d[i], tiny)
    wp.adjoint[a] += q @ inner @ _transpose(q)  # (wp.adjoint: rewritten by func_grad)


@func
def _qr_givens_rotation(a1: Any, a2: Any):
    """(cos, sin) of half the angle of the Givens rotation that zeroes a2 against the
    pivot a1 (the identity where |(a1, a2)| is below Warp's epsilon)."""
    eps = type(a1)(_givens_epsilon(type(a1)))
    rho = _safe_sqrt(a1 * a1 + a2 * a2)
    sh = _select(rho > eps, type(a1)(0.0), a2)
    ch = _abs(a1) + wp_max(rho, eps)
    negative = a1 < type(a1)(0.0)
    sh, ch = _select(negative, sh, ch), _select(negative, ch, sh)
    w = type(a1)(1.0) / _sqrt(ch * ch + sh * sh)
    return ch * w, sh * w


@func
def qr3_givens(m: Any):
    """(Q, R) with m = Q R by three Givens rotations (zeroing m[1, 0], m[2, 0], then
    m[2, 1]), as Warp's qr3: Q a rotation (determinant +1), R upper triangular."""
    one = type(m[0, 0])(1.0)
    two = type(m[0, 0])(2.0)
    m1 = type(m[0, 0])(-1.0)
    ch1, sh1 = _qr_givens_rotation(m[0, 0], m[1, 0])
    a = one - two * sh1 * sh1
    b = two * ch1 * sh1
    r = matrix(a * m[0, 0] + b * m[1, 0], a * m[0, 1] + b * m[1, 1], a * m[0, 2] + b * m[1, 2],
               -b * m[0, 0] + a * m[1, 0], -b * m[0, 1] + a * m[1, 1], -b * m[0, 2] + a * m[1, 2],
               m[2, 0], m[2, 1], m[2, 2], shape=(3, 3))
    ch2, sh2 = _qr_givens_rotation(r[0, 0], r[2, 0])
    a = one - two * sh2 * sh2
    b = two * ch2 * sh2
    c = matrix(a * r[0, 0] + b * r[2, 0], a * r[0, 1] + b * r[2, 1], a * r[0, 2] + b * r[2, 2],
               r[1, 0], r[1, 1], r[1, 2],
               -b * r[0, 0] + a * r[2, 0], -b * r[0, 1] + a * r[2, 1], -b * r[0, 2] + a * r[2, 2], shape=(3, 3))
    ch3, sh3 = _qr_givens_rotation(c[1, 1], c[2, 1])
    a = one - two * sh3 * sh3
    b = two * ch3 * sh3
    r = matrix(c[0, 0], c[0, 1], c[0, 2],
               a * c[1, 0] + b * c[2, 0], a * c[1, 1] + b * c[2, 1], a * c[1, 2] + b * c[2, 2],
               -b * c[1, 0] + a * c[2, 0], -b * c[1, 1] + a * c[2, 1], -b * c[1, 2] + a * c[2, 2], shape=(3, 3))
    # Q = Q1 Q2 Q3, multiplied out
    sh12 = sh1 * sh1
    sh22 = sh2 * sh2
    sh32 = sh3 * sh3
    q = matrix((m1 + two * sh12) * (m1 + two * sh22),
               type(m[0, 0])(4.0) * ch2 * ch3 * (m1 + two * sh12) * sh2 * sh3 + two * ch1 * sh1 * (m1 + two * sh32),
               type(m[0, 0])(4.0) * ch1 * ch3 * sh1 * sh3 - two * ch2 * (m1 + two * sh12) * sh2 * (m1 + two * sh32),
               two * ch1 * sh1 * (one - two * sh22),
               type(m[0, 0])(-8.0) * ch1 * ch2 * ch3 * sh1 * sh2 * sh3 + (m1 + two * sh12) * (m1 + two * sh32),
               type(m[0, 0])(-2.0) * ch3 * sh3
               + type(m[0, 0])(4.0) * sh1 * (ch3 * sh1 * sh3 + ch1 * ch2 * sh2 * (m1 + two * sh32)),
               two * ch2 * sh2,
               two * ch3 * (one - two * sh22) * sh3,
               (m1 + two * sh22) * (m1 + two * sh32), shape=(3, 3))
    return q, r


@func
def _swap_negated(m: Any, i: int, j: int):
    """m with column i replaced by column j and column j by minus column i (a rotation of
    the pair, which keeps a rotation matrix a rotation)."""
    for r in range(3):
        x = m[r, i]
        m[r, i] = m[r, j]
        m[r, j] = -x
    return m


@func
def svd3_jacobi(a: Any):
    """(U, sigma, V) with a = U diag(sigma) V^T, computed as Warp computes it (McAdams et
    al.): V from the Jacobi rotation of A^T A, its columns sorted by decreasing |A v|
    (swaps that negate one column, so V stays a rotation), then U and sigma from the QR
    decomposition of A V by Givens rotations. U and V are rotations, |sigma| decreases,
    sigma[0] and sigma[1] are nonnegative and sigma[2] has the sign of det(A)."""
    ata = _matmul(_transpose(a), a)
    v = _quaternion_matrix(_jacobi_quaternion(ata[0, 0], ata[1, 0], ata[1, 1], ata[2, 0], ata[2, 1], ata[2, 2]))
    b = _matmul(a, v)
    rho0 = b[0, 0] * b[0, 0] + b[1, 0] * b[1, 0] + b[2, 0] * b[2, 0]
    rho1 = b[0, 1] * b[0, 1] + b[1, 1] * b[1, 1] + b[2, 1] * b[2, 1]
    rho2 = b[0, 2] * b[0, 2] + b[1, 2] * b[1, 2] + b[2, 2] * b[2, 2]
    if rho0 < rho1:
        b = _swap_negated(b, 0, 1)
        v = _swap_negated(v, 0, 1)
        rho0, rho1 = rho1, rho0
    if rho0 < rho2:
        b = _swap_negated(b, 0, 2)
        v = _swap_negated(v, 0, 2)
        rho0, rho2 = rho2, rho0
    if rho1 < rho2:
        b = _swap_negated(b, 1, 2)
        v = _swap_negated(v, 1, 2)
    u, r = qr3_givens(b)
    return u, vector(r[0, 0], r[1, 1], r[2, 2]), v


@func_grad(svd3_jacobi)
def _svd3_grad(a: Any, adj_u: Any, adj_sigma: Any, adj_v: Any):
    """The adjoint of (U, sigma, V) = svd3(A) (Townsend, "Differentiating the singular value
    decomposition", 2016, for a square A; Warp's adj_svd3):

        adj_A = U (diag(adj_sigma) + (F o (U^T adj_U - adj_U^T U)) S + S (F o (V^T adj_V - adj_V^T V))) V^T

    with F[i, j] = 1 / (sigma[j]^2 - sigma[i]^2), taken as 0 where the two singular values
    coincide (the singular vectors are not unique there; see _eig3_grad)."""
    u, sigma, v = svd3_jacobi(a)
    zero = type(a[0, 0])(0.0)
    tiny = _coincidence(sigma[0] * sigma[0])
    f = matrix(zero, zero, zero, zero, zero, zero, zero, zero, zero, shape=(3, 3))
    for i in range(3):
        for j in range(3):
            if i != j:
                f[i, j] = _divide_apart(type(a[0, 0])(1.0), sigma[j] * sigma[j] - sigma[i] * sigma[i], tiny)
    s = matrix(sigma[0], zero, zero, zero, sigma[1], zero, zero, zero, sigma[2], shape=(3, 3))
    ds = matrix(adj_sigma[0], zero, zero, zero, adj_sigma[1], zero, zero, zero, adj_sigma[2], shape=(3, 3))
    wp.adjoint[a] += _svd_adjoint(u, s, v, f, adj_u, ds, adj_v)  # (wp.adjoint: rewritten by func_grad)


@func
def _svd_adjoint(u: Any, s: Any, v: Any, f: Any, adj_u: Any, ds: Any, adj_v: Any):
    """U (dS + (F o (U^T adj_U - adj_U^T U)) S + S (F o (V^T adj_V - adj_V^T V))) V^T: the
    adjoint of A = U S V^T (S and dS diagonal matrices), for svd2 and svd3."""
    vt = _transpose(v)
    skew_u = _cw_mul(f, _transpose(u) @ adj_u - _transpose(adj_u) @ u)
    skew_v = _cw_mul(f, vt @ adj_v - _transpose(adj_v) @ v)
    return u @ (ds + skew_u @ s + s @ skew_v) @ vt


@func
def svd2_eig(a: Any):
    """(U, sigma, V) of a 2x2 matrix in closed form (the eigenvectors of A^T A, as Warp's
    svd2): sigma decreasing, V a rotation, U's second column completed orthogonally (so U
    stays orthonormal when sigma[1] is 0). Where A^T A = s^2 I (A is s times an orthogonal
    matrix, or 0), V = I, sigma = (s, s) and U = A / s (I for A = 0)."""
    one = type(a[0, 0])(1.0)
    zero = type(a[0, 0])(0.0)
    half = type(a[0, 0])(0.5)
    m11 = a[0, 0] * a[0, 0] + a[1, 0] * a[1, 0]
    m12 = a[0, 0] * a[0, 1] + a[1, 0] * a[1, 1]
    m22 = a[0, 1] * a[0, 1] + a[1, 1] * a[1, 1]
    trace = m11 + m22
    diff = m11 - m22
    disc = diff * diff + type(a[0, 0])(4.0) * m12 * m12
    if disc == zero:
        s = _sqrt(half * trace)
        inv = _select(s > zero, one, one / _select(s > zero, one, s))
        u = _select(s > zero, _identity(n=2, dtype=type(a[0, 0])), a * inv)
        return u, vector(s, s), _identity(n=2, dtype=type(a[0, 0]))
    root = _sqrt(disc)
    sigma1 = _sqrt((trace + root) * half)
    lower = (trace - root) * half
    sigma2 = _sqrt(_select(lower < zero, lower, zero))  # (rounding below zero: 0; NaN stays NaN)
    vx = diff + root - type(a[0, 0])(2.0) * m12
    vy = diff - root + type(a[0, 0])(2.0) * m12
    len_sq = vx * vx + vy * vy
    v11 = type(a[0, 0])(0.7071067811865476)
    v21 = v11
    if len_sq != zero:
        inv_len = one / _sqrt(len_sq)
        v11 = vx * inv_len
        v21 = vy * inv_len
    inv1 = one / sigma1
    u11 = (a[0, 0] * v11 + a[0, 1] * v21) * inv1
    u21 = (a[1, 0] * v11 + a[1, 1] * v21) * inv1
    det_sign = _select(a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0] < zero, one, -one)
    u = matrix(u11, -u21 * det_sign, u21, u11 * det_sign, shape=(2, 2))
    v = matrix(v11, -v21, v21, v11, shape=(2, 2))
    return u, vector(sigma1, sigma2), v


@func_grad(svd2_eig)
def _svd2_grad(a: Any, adj_u: Any, adj_sigma: Any, adj_v: Any):
    """The adjoint of (U, sigma, V) = svd2(A): as `_svd3_grad` (Warp's adj_svd2)."""
    u, sigma, v = svd2_eig(a)
    zero = type(a[0, 0])(0.0)
    tiny = _coincidence(sigma[0] * sigma[0])
    f01 = _divide_apart(type(a[0, 0])(1.0), sigma[1] * sigma[1] - sigma[0] * sigma[0], tiny)
    f = matrix(zero, f01, -f01, zero, shape=(2, 2))
    s = matrix(sigma[0], zero, zero, sigma[1], shape=(2, 2))
    ds = matrix(adj_sigma[0], zero, zero, adj_sigma[1], shape=(2, 2))
    wp.adjoint[a] += _svd_adjoint(u, s, v, f, adj_u, ds, adj_v)  # (wp.adjoint: rewritten by func_grad)
