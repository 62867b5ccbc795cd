"""Preconditioners of weft.optim.linear: Jacobi ("diag", "diag_abs"), block Jacobi
("block_jacobi_direct" | "_sequential" | "_tile") and a factorized sparse approximate
inverse ("fsai").

Each is built once on the host (numpy: the diagonal, the inverses of the diagonal blocks,
the rows of the FSAI factor) and applied as a weft operator: a diagonal kernel, a block
diagonal `BsrMatrix` product, or two sparse products (G^T (G x)). Every construction is
zero-safe as Warp's: a zero diagonal entry, or a block that is singular (relative pivot
below a dtype-aware tolerance) or unsuitable for the factorization (non-symmetric, not
positive definite), acts as the identity.
"""

from __future__ import annotations

import numpy as np

from .. import types as _t
from ..runtime.array import array

# relative pivot tolerance below which a block counts as singular (about eps^(3/4))
_PIVOT_REL_TOL = {_t.float16: 1.0e-3, _t.float32: 1.0e-6, _t.float64: 1.0e-12}
_BLOCK_JACOBI = ("block_jacobi_direct", "block_jacobi_sequential", "block_jacobi_tile")


def _dense_diag(A):
    """The scalar diagonal of A (dense 2-D array, 1-D diagonal, or BsrMatrix), in float64."""
    from ..sparse.matrix import BsrMatrix
    from ..sparse.ops import bsr_get_diag

    if isinstance(A, BsrMatrix):
        blocks = bsr_get_diag(A).numpy().astype(np.float64)
        R = A.block_shape[0]
        d = np.zeros(A.shape[0])
        n = blocks.shape[0]
        if blocks.ndim > 1:
            d[: n * R] = blocks.reshape(n, R, -1).diagonal(axis1=1, axis2=2).reshape(-1)
        else:
            d[:n] = blocks
        return d, A.scalar_type, A.device
    if isinstance(A, array) and A.ndim == 2:
        return np.diag(A.numpy()).astype(np.float64), A.dtype, A.device
    if isinstance(A, array) and A.ndim == 1:
        return A.numpy().astype(np.float64), A.dtype, A.device
    raise ValueError(f"preconditioner: unsupported operator {A!r}")


def jacobi(A, use_abs: bool):
    from .linear import aslinearoperator

    d, s_t, dev = _dense_diag(A)
    if use_abs:
        d = np.abs(d)
    inv = np.where(d == 0.0, 1.0, 1.0 / np.where(d == 0.0, 1.0, d))
    return aslinearoperator(array(inv.astype(_t.dtype_to_numpy(s_t)), dtype=s_t, device=dev))


def _inverse_qr(B, tol):
    q, r = np.linalg.qr(B)
    piv = np.abs(np.diag(r))
    if not np.all(np.isfinite(r)) or piv.min() <= tol * max(piv.max(), np.finfo(float).tiny):
        return None
    return np.linalg.solve(r, q.T)


def _symmetric(B, tol):
    return np.abs(B - B.T).max() <= tol * max(np.abs(B).max(), np.finfo(float).tiny)


def _inverse_ldlt(B, tol):
    """The inverse through B = L D L^T, for symmetric positive definite B."""
    if not _symmetric(B, tol):
        return None
    n = B.shape[0]
    L, D = np.eye(n), np.zeros(n)
    scale = np.abs(np.diag(B)).max()
    for j in range(n):
        D[j] = B[j, j] - np.sum(L[j, :j] ** 2 * D[:j])
        if not np.isfinite(D[j]) or D[j] <= tol * scale:
            return None
        for i in range(j + 1, n):
            L[i, j] = (B[i, j] - np.sum(L[i, :j] * L[j, :j] * D[:j])) / D[j]
    Linv = np.linalg.inv(L)
    return Linv.T @ np.diag(1.0 / D) @ Linv


def _inverse_cholesky(B, tol):
    if not _symmetric(B, tol):
        return None
    try:
        c = np.linalg.cholesky(B)
    except np.linalg.LinAlgError:
        return None
    ci = np.linalg.inv(c)
    return ci.T @ ci


def block_jacobi(A, ptype: str):
    """The inverses of A's diagonal blocks, applied as a block diagonal BsrMatrix."""
    from ..sparse.matrix import BsrMatrix
    from ..sparse.ops import bsr_diag, bsr_get_diag
    from .linear import aslinearoperator

    if not isinstance(A, BsrMatrix):
        raise ValueError("Block-Jacobi preconditioner requires a weft.sparse.BsrMatrix input")
    R, C = A.block_shape
    if R != C:
        raise ValueError(f"Block-Jacobi preconditioner requires square matrix blocks, got shape {(R, C)}")
    if A.nrow != A.ncol:
        raise ValueError("Block-Jacobi preconditioner requires the same number of block rows and block columns, "
                         f"got {A.nrow} and {A.ncol} (overall shape {A.shape})")
    s_t = A.scalar_type
    if ptype == "block_jacobi_tile" and s_t not in (_t.float32, _t.float64):
        raise ValueError(f"block_jacobi_tile supports float32 and float64 matrices, not {s_t!r}")
    if R == 1:
        return jacobi(A, use_abs=False)
    tol = _PIVOT_REL_TOL.get(s_t, 1.0e-6)
    inverse = {"block_jacobi_direct": _inverse_qr, "block_jacobi_sequential": _inverse_ldlt,
               "block_jacobi_tile": _inverse_cholesky}[ptype]
    blocks = bsr_get_diag(A).numpy().astype(np.float64).reshape(-1, R, R)
    inv = np.empty_like(blocks)
    for k, B in enumerate(blocks):
        Bi = inverse(B, tol)
        inv[k] = np.eye(R) if Bi is None else Bi
    inv_arr = array(inv.astype(_t.dtype_to_numpy(s_t)), dtype=A.dtype, device=A.device)
    return aslinearoperator(bsr_diag(inv_arr))


def fsai(A):
    """Factorized sparse approximate inverse M = G^T G of an SPD BsrMatrix: row i of the lower
    triangular G has the pattern of row i of A's lower triangle (scalar entries) and solves
    A[P, P] g = e_i, scaled so that (G A G^T)_ii = 1."""
    from ..sparse.build import bsr_from_triplets
    from ..sparse.matrix import BsrMatrix
    from ..sparse.ops import bsr_copy, bsr_mv, bsr_transposed
    from .linear import LinearOperator, _flat

    if not isinstance(A, BsrMatrix):
        raise ValueError("FSAI preconditioner requires a weft.sparse.BsrMatrix input")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"FSAI preconditioner requires a square matrix, got shape {A.shape}")
    s_t = A.scalar_type
    if s_t not in (_t.float16, _t.float32, _t.float64):
        raise TypeError(f"FSAI preconditioner: unsupported scalar type {s_t!r}")
    S = bsr_copy(A, block_shape=(1, 1))  # scalar entries
    r, c, p = S._active()
    vals = S.values.numpy()[p].astype(np.float64).reshape(-1)
    n = A.shape[0]
    dense_rows: dict[int, dict[int, float]] = {i: {} for i in range(n)}
    for i, j, v in zip(r, c, vals):
        dense_rows[int(i)][int(j)] = dense_rows[int(i)].get(int(j), 0.0) + v
    g_rows, g_cols, g_vals = [], [], []
    for i in range(n):
        P = sorted(j for j, v in dense_rows[i].items() if j <= i and v != 0.0)
        if i not in P:
            P.append(i)
        sub = np.array([[dense_rows[a].get(b, 0.0) for b in P] for a in P])
        rhs = np.zeros(len(P))
        rhs[P.index(i)] = 1.0
        try:
            g = np.linalg.solve(sub, rhs)
        except np.linalg.LinAlgError:
            g = None
        gi = None if g is None else g[P.index(i)]
        if g is None or not np.all(np.isfinite(g)) or gi <= 0.0:
            aii = abs(dense_rows[i].get(i, 0.0))
            P, g = [i], np.array([1.0 / np.sqrt(aii) if aii > 0.0 else 1.0])
        else:
            g = g / np.sqrt(gi)
        g_rows += [i] * len(P)
        g_cols += P
        g_vals += list(g)
    np_t = _t.dtype_to_numpy(s_t)
    G = bsr_from_triplets(n, n, array(np.array(g_rows, np.int32), dtype=_t.int32, device=A.device),
                          array(np.array(g_cols, np.int32), dtype=_t.int32, device=A.device),
                          array(np.array(g_vals).astype(np_t), dtype=s_t, device=A.device),
                          prune_numerical_zeros=False)
    Gt = bsr_transposed(G)
    work = array(shape=(n,), dtype=s_t, device=A.device)

    def matvec(x, y, z, alpha, beta):
        zf = _flat(z, s_t)
        if beta != 0.0 and z.ptr != y.ptr:
            zf.numpy()[...] = _flat(y, s_t).numpy()
        bsr_mv(G, _flat(x, s_t), work, 1.0, 0.0)
        bsr_mv(Gt, work, zf, alpha, beta)

    return LinearOperator((n, n), s_t, A.device, matvec)
