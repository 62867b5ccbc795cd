"""Small matrix decompositions written as `@func`s: the bodies of the builtins `eig3`, `qr3`,
`svd3` and `svd2` (builtins/decompositions.py). Being ordinary kernel code, they compile for
every float type and are differentiable through their arithmetic; their gradients are
those of these algorithms, which match the analytic ones where the decomposition is smooth
(distinct eigenvalues or singular values, full-rank matrices).

- eig3: cyclic Jacobi rotations on a symmetric 3x3 matrix (6 sweeps; quadratic convergence
  reaches working precision in 3 or 4). Its gradient is the analytic one (`_eig3_grad`),
  not that of the rotations, which is wrong where eigenvalues repeat.
- qr3: modified Gram-Schmidt (R has a positive diagonal for a full-rank matrix).
- svd3: the eigenvectors V of A^T A, sorted by decreasing singular value, then U from
  A V (Gram-Schmidt), in Warp's convention: U and V rotations, sigma[2] signed.
- svd2: closed form (Warp's), with the analytic gradient (`_svd2_grad`); U stays
  orthonormal for a singular A.
"""

from typing import Any

import weft as wp  # (only for `wp.adjoint[...]` in the func_grads, rewritten before compilation)

from .builtins import BUILTINS
from .lang.custom_grad import func_grad
from .lang.decorators import func
from .types import matrix, vector

_abs, _sqrt, _transpose, _outer = (BUILTINS[n] for n in ("abs", "sqrt", "transpose", "outer"))
_identity, _length, _dot, _select = (BUILTINS[n] for n in ("identity", "length", "dot", "select"))
_adjugate_inverse = BUILTINS["_adjugate_inverse"]
wp_min, wp_max, _cw_mul = BUILTINS["min"], BUILTINS["max"], BUILTINS["cw_mul"]

SWEEPS = 6


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


@func
def _rotation(a: Any, p: int, q: int):
    """The Jacobi rotation (a 3x3 matrix of a's type) that zeroes a[p, q] of symmetric a."""
    one = type(a[0, 0])(1.0)
    apq = a[p, q]
    small = _abs(apq) <= type(a[0, 0])(1.0e-30)
    safe = _select(small, apq, one)  # (keeps the unused branch finite: no NaN gradients)
    theta = (a[q, q] - a[p, p]) / (type(a[0, 0])(2.0) * safe)
    sign = _select(theta < type(a[0, 0])(0.0), one, -one)
    t = sign / (_abs(theta) + _sqrt(theta * theta + one))
    c = one / _sqrt(t * t + one)
    s = t * c
    c = _select(small, c, one)
    s = _select(small, s, type(a[0, 0])(0.0))
    j = _identity(n=3, dtype=type(a[0, 0]))
    j[p, p] = c
    j[q, q] = c
    j[p, q] = s
    j[q, p] = -s
    return j


@func
def eig3_jacobi(a: Any):
    """(Q, d): the eigenvectors (columns of Q) and eigenvalues d of symmetric 3x3 `a`."""
    v = _identity(n=3, dtype=type(a[0, 0]))
    for _sweep in range(SWEEPS):
        for k in range(3):
            p = wp_min(k, (k + 1) % 3)
            q = wp_max(k, (k + 1) % 3)
            j = _rotation(a, p, q)
            a = _transpose(j) @ a @ j
            v = v @ j
    return v, vector(a[0, 0], a[1, 1], a[2, 2])


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
    scale = wp_max(wp_max(_abs(d[0]), _abs(d[1])), wp_max(_abs(d[2]), type(a[0, 0])(1.0e-30)))
    tiny = scale * type(a[0, 0])(64.0 * _epsilon(type(a[0, 0])))
    g = _transpose(q) @ adj_q
    inner = matrix(adj_d[0], zero, zero, zero, adj_d[1], zero, zero, zero, adj_d[2], shape=(3, 3))
    for i in range(3):
        for j in range(3):
            if i != j:
                gap = d[j] - d[i]
                ok = _abs(gap) > tiny
                inner[i, j] = _select(ok, zero, g[i, j] / _select(ok, type(a[0, 0])(1.0), gap))
    wp.adjoint[a] += q @ inner @ _transpose(q)  # (wp.adjoint: rewritten by func_grad)


@func
def qr3_gram_schmidt(a: Any):
    """(Q, R) with a = Q R, Q a rotation (determinant +1, as Warp documents), R upper
    triangular with r00, r11 >= 0 and r22 of the sign of det(a) (modified Gram-Schmidt)."""
    zero = type(a[0, 0])(0.0)
    c0 = vector(a[0, 0], a[1, 0], a[2, 0])
    c1 = vector(a[0, 1], a[1, 1], a[2, 1])
    c2 = vector(a[0, 2], a[1, 2], a[2, 2])
    r00 = _length(c0)
    q0 = c0 / r00
    r01 = _dot(q0, c1)
    c1 = c1 - q0 * r01
    r02 = _dot(q0, c2)
    c2 = c2 - q0 * r02
    r11 = _length(c1)
    q1 = c1 / r11
    r12 = _dot(q1, c2)
    c2 = c2 - q1 * r12
    r22 = _length(c2)
    q2 = c2 / r22
    if _dot(q0, BUILTINS["cross"](q1, q2)) < zero:  # Warp's convention: det(Q) = +1, r22 takes the sign
        q2 = -q2
        r22 = -r22
    qm = BUILTINS["matrix_from_cols"](q0, q1, q2)
    rm = matrix(r00, r01, r02, zero, r11, r12, zero, zero, r22, shape=(3, 3))
    return qm, rm


@func
def _sort_pair(lam: Any, v: Any, i: int):
    """Eigenpairs i and i + 1 in decreasing order of eigenvalue."""
    if lam[i] < lam[i + 1]:
        tmp = lam[i]
        lam[i] = lam[i + 1]
        lam[i + 1] = tmp
        for r in range(3):
            x = v[r, i]
            v[r, i] = v[r, i + 1]
            v[r, i + 1] = x
    return lam, v


@func
def _safe_sqrt(x: Any):
    """sqrt(x) for x > 0, else 0, with gradient 0 there (not sqrt's infinite slope)."""
    pos = x > type(x)(0.0)
    return _select(pos, type(x)(0.0), _sqrt(_select(pos, type(x)(1.0), x)))


@func
def svd3_eig(a: Any):
    """(U, sigma, V) with a = U diag(sigma) V^T in Warp's convention: U and V rotations
    (determinant +1), sigma sorted by decreasing magnitude, sigma[0] and sigma[1]
    nonnegative and sigma[2] of the sign of det(A). V: the eigenvectors of A^T A; U's
    columns: A v0 / sigma0, A v1 made orthogonal to u0 and normalised, then u0 x u1, so
    that U stays orthonormal where A is singular (a column with sigma ~ 0 completes it)."""
    v, lam = eig3_jacobi(_transpose(a) @ a)
    lam, v = _sort_pair(lam, v, 0)  # three compare-and-swaps sort three values
    lam, v = _sort_pair(lam, v, 1)
    lam, v = _sort_pair(lam, v, 0)
    zero = type(a[0, 0])(0.0)
    one = type(a[0, 0])(1.0)
    # V re-orthonormalised (the product of rotations drifts from unit length by a few ulps,
    # which sigma = |A v| would inherit) and made a rotation
    v0 = BUILTINS["normalize"](vector(v[0, 0], v[1, 0], v[2, 0]))
    v1 = vector(v[0, 1], v[1, 1], v[2, 1])
    v1 = BUILTINS["normalize"](v1 - _dot(v0, v1) * v0)
    v2 = BUILTINS["cross"](v0, v1)
    v = BUILTINS["matrix_from_cols"](v0, v1, v2)
    tol = _safe_sqrt(lam[0]) * type(a[0, 0])(64.0 * _epsilon(type(a[0, 0])))
    s0 = _length(a @ v0)
    rank0 = s0 <= zero
    u0 = _select(rank0, (a @ v0) / _select(rank0, s0, one), vector(one, zero, zero))
    w = a @ v1
    w = w - _dot(u0, w) * u0
    n1 = _length(w)
    # where A has rank 1 (or 0): any unit vector orthogonal to u0, from the axis u0 leans on least
    ax = _abs(u0)
    e = vector(one, zero, zero)
    if ax[1] < ax[0] and ax[1] <= ax[2]:
        e = vector(zero, one, zero)
    elif ax[2] < ax[0] and ax[2] < ax[1]:
        e = vector(zero, zero, one)
    spare = BUILTINS["normalize"](BUILTINS["cross"](u0, e))
    full = n1 > tol and not rank0
    u1 = _select(full, spare, w / _select(full, one, n1))
    u2 = BUILTINS["cross"](u0, u1)
    u = BUILTINS["matrix_from_cols"](u0, u1, u2)
    # sigma as R's diagonal of A V = U R (Warp's QR step): small singular values keep their
    # digits, which sqrt(eigenvalue of A^T A) loses; the last one carries det(A)'s sign
    sigma = vector(s0, _select(full, zero, n1), _dot(a @ v2, u2))
    return u, sigma, v


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
    sigma2 = _sqrt(wp_max((trace - root) * half, zero))
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
    """The adjoint of (U, sigma, V) = svd2(A) (Townsend, "Differentiating the singular value
    decomposition", 2016, for a square A; Warp's adj_svd2):

        adj_A = U (diag(adj_sigma) + (F o (U^T adj_U - adj_U^T U)) S + S (F o (V^T adj_V - adj_V^T V))) V^T

    with F[i, j] = 1 / (sigma[j]^2 - sigma[i]^2), taken as 0 where the two singular values
    coincide (the singular vectors are not unique there; see _eig3_grad)."""
    u, sigma, v = svd2_eig(a)
    zero = type(a[0, 0])(0.0)
    gap = sigma[1] * sigma[1] - sigma[0] * sigma[0]
    scale = wp_max(sigma[0] * sigma[0], type(a[0, 0])(1.0e-30))
    ok = _abs(gap) > scale * type(a[0, 0])(64.0 * _epsilon(type(a[0, 0])))
    f01 = _select(ok, zero, type(a[0, 0])(1.0) / _select(ok, type(a[0, 0])(1.0), gap))
    f = matrix(zero, f01, -f01, zero, shape=(2, 2))
    s = matrix(sigma[0], zero, zero, sigma[1], shape=(2, 2))
    ds = matrix(adj_sigma[0], zero, zero, adj_sigma[1], shape=(2, 2))
    ut = _transpose(u)
    vt = _transpose(v)
    skew_u = _cw_mul(f, ut @ adj_u - _transpose(adj_u) @ u)
    skew_v = _cw_mul(f, vt @ adj_v - _transpose(adj_v) @ v)
    wp.adjoint[a] += u @ (ds + skew_u @ s + s @ skew_v) @ vt  # (wp.adjoint: rewritten by func_grad)
