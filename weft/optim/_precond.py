"""Preconditioners of weft.optim.linear: Jacobi ("diag", "diag_abs") and block Jacobi
("block_jacobi_direct" | "_sequential" | "_tile"); the factorized sparse approximate
inverse ("fsai") is the `FSAI` class of weft/optim/fsai.py.

Each is built once on the host (numpy: the diagonal, the inverses of the diagonal blocks)
and applied as a weft operator: a diagonal kernel or a block diagonal `BsrMatrix`
product. Every construction is
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
