"""Small matrix decompositions written as `@func`s: the bodies of the builtins `eig3`, `qr3`,
`svd3` and `svd2` (builtins/decompositions.py). Being ordinary kernel code, they compile for
every float type and are differentiable through their arithmetic; their gradients are
those of these algorithms, which match the analytic ones where the decomposition is smooth
(distinct eigenvalues or singular values, full-rank matrices).

- eig3: cyclic Jacobi rotations on a symmetric 3x3 matrix (6 sweeps; quadratic convergence
  reaches working precision in 3 or 4).
- qr3: modified Gram-Schmidt (R has a positive diagonal for a full-rank matrix).
- svd3, svd2: the eigenvectors V of A^T A, sorted by decreasing singular value, then
  U = A V diag(1 / sigma), so that U diag(sigma) V^T reproduces A to rounding; where a
  singular value vanishes (a singular matrix), U is completed to an orthonormal basis.
"""

from typing import Any

from .builtins import BUILTINS
from .lang.decorators import func
from .types import matrix, vector

_abs, _sqrt, _transpose, _outer = (BUILTINS[n] for n in ("abs", "sqrt", "transpose", "outer"))
_identity, _length, _dot, _select = (BUILTINS[n] for n in ("identity", "length", "dot", "select"))
_cross = BUILTINS["cross"]
wp_min, wp_max = BUILTINS["min"], BUILTINS["max"]

SWEEPS = 6


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


@func
def qr3_gram_schmidt(a: Any):
    """(Q, R) with a = Q R, Q orthonormal, R upper triangular (modified Gram-Schmidt)."""
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
def _unit_or(x: Any, fallback: Any):
    """x / |x|, or `fallback` (a unit vector) where |x| is zero."""
    n = _length(x)
    zero = type(n)(0.0)
    return _select(n > zero, fallback, x / _select(n > zero, type(n)(1.0), n))


@func
def _orthogonal_to(u: Any):
    """A unit vector orthogonal to unit vector u (Gram-Schmidt on the axis least like u)."""
    one = type(u[0])(1.0)
    zero = type(u[0])(0.0)
    e = _select(_abs(u[0]) < type(u[0])(0.6), vector(zero, one, zero), vector(one, zero, zero))
    return _unit_or(e - _dot(e, u) * u, e)


@func
def svd3_eig(a: Any):
    """(U, sigma, V) with a = U diag(sigma) V^T, sigma decreasing and nonnegative. U's
    columns are the directions of A v (Gram-Schmidt), completed to an orthonormal basis
    where A v vanishes (a singular matrix): u2 = ±u0 x u1, the sign making sigma2 =
    u2 . A v2 >= 0. sigma is |A v| (small singular values keep their digits)."""
    v, lam = eig3_jacobi(_transpose(a) @ a)
    lam, v = _sort_pair(lam, v, 0)  # three compare-and-swaps sort three values
    lam, v = _sort_pair(lam, v, 1)
    lam, v = _sort_pair(lam, v, 0)
    zero = type(a[0, 0])(0.0)
    one = type(a[0, 0])(1.0)
    av = a @ v
    c0 = vector(av[0, 0], av[1, 0], av[2, 0])
    c1 = vector(av[0, 1], av[1, 1], av[2, 1])
    c2 = vector(av[0, 2], av[1, 2], av[2, 2])
    u0 = _unit_or(c0, vector(one, zero, zero))
    u1 = _unit_or(c1 - _dot(c1, u0) * u0, _orthogonal_to(u0))  # (Gram-Schmidt keeps U orthonormal)
    u2 = _cross(u0, u1)
    s2 = _dot(u2, c2)
    u2 = _select(s2 < zero, u2, -u2)
    sigma = vector(_length(c0), _abs(_dot(u1, c1)), _abs(s2))  # |A v|: no precision lost to squaring
    u = matrix(u0[0], u1[0], u2[0], u0[1], u1[1], u2[1], u0[2], u1[2], u2[2], shape=(3, 3))
    return u, sigma, v


@func
def svd2_eig(a: Any):
    """(U, sigma, V) of a 2x2 matrix, as svd3_eig (one Jacobi rotation is exact)."""
    one = type(a[0, 0])(1.0)
    zero = type(a[0, 0])(0.0)
    m = _transpose(a) @ a
    apq = m[0, 1]
    small = _abs(apq) <= type(a[0, 0])(1.0e-30)
    safe = _select(small, apq, one)
    theta = (m[1, 1] - m[0, 0]) / (type(a[0, 0])(2.0) * safe)
    sign = _select(theta < zero, one, -one)
    t = sign / (_abs(theta) + _sqrt(theta * theta + one))
    c = _select(small, one / _sqrt(t * t + one), one)
    s = _select(small, t * c, zero)
    v = matrix(c, s, -s, c, shape=(2, 2))
    d = _transpose(v) @ m @ v
    l0 = d[0, 0]
    l1 = d[1, 1]
    if l0 < l1:
        tmp = l0
        l0 = l1
        l1 = tmp
        v = matrix(v[0, 1], v[0, 0], v[1, 1], v[1, 0], shape=(2, 2))
    av = a @ v
    c0 = vector(av[0, 0], av[1, 0])
    c1 = vector(av[0, 1], av[1, 1])
    u0 = _unit_or(c0, vector(one, zero))
    u1 = vector(-u0[1], u0[0])  # (as svd3: orthonormal also when a is singular)
    s1 = _dot(u1, c1)
    u1 = _select(s1 < zero, u1, -u1)
    sigma = vector(_length(c0), _abs(s1))
    u = matrix(u0[0], u1[0], u0[1], u1[1], shape=(2, 2))
    return u, sigma, v
