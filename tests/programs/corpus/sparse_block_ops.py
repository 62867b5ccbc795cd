"""Block matrices beyond scalars: mat22 and rectangular 2x3 blocks, bsr_mm and bsr_transposed
of block matrices, bsr_copy to another scalar type and block shape, bsr_assign, bsr_set_diag,
bsr_set_identity, bsr_set_zero and bsr_set_transpose."""

import numpy as np
import warp as wp
import warp.sparse as sp

mat23 = wp.types.matrix(shape=(2, 3), dtype=float)


def block_dense(A):
    nnz = A.nnz_sync()
    off = A.offsets.numpy()
    col = A.columns.numpy()[:nnz]
    val = A.values.numpy()[:nnz].reshape(nnz, *A.block_shape)
    br, bc = A.block_shape
    out = np.zeros((A.nrow * br, A.ncol * bc), dtype=val.dtype)
    for r in range(A.nrow):
        for k in range(off[r], off[r + 1]):
            out[r * br:(r + 1) * br, col[k] * bc:(col[k] + 1) * bc] += val[k]
    return out


def run():
    rng = np.random.default_rng(9)
    rows = wp.array([0, 0, 1, 2, 2], dtype=int)
    cols = wp.array([0, 2, 1, 0, 1], dtype=int)
    vals = wp.array(rng.uniform(-1, 1, (5, 2, 3)).astype(np.float32), dtype=mat23)
    A = sp.bsr_from_triplets(3, 3, rows, cols, vals)
    At = sp.bsr_transposed(A)
    AAt = sp.bsr_mm(A, At)

    x = wp.array(rng.uniform(-1, 1, (3, 3)).astype(np.float32), dtype=wp.vec3)
    y = A @ x

    A64 = sp.bsr_copy(A, scalar_type=wp.float64)
    A_scalar = sp.bsr_copy(A, block_shape=(1, 1))
    A_split = sp.bsr_copy(A, block_shape=(2, 1))

    B = sp.bsr_zeros(3, 3, block_type=mat23)
    sp.bsr_assign(src=2.0 * A, dest=B)

    M = sp.bsr_zeros(3, 3, block_type=wp.mat22)
    sp.bsr_set_diag(M, wp.array(np.array([np.eye(2) * (i + 2) for i in range(3)], dtype=np.float32), dtype=wp.mat22))
    m_diag = block_dense(M)
    sp.bsr_set_identity(M)
    m_id = block_dense(M)
    sp.bsr_set_zero(M)
    m_zero_nnz = M.nnz_sync()

    T = sp.bsr_zeros(3, 3, block_type=wp.types.matrix(shape=(3, 2), dtype=float))
    sp.bsr_set_transpose(dest=T, src=A)

    return {
        "A": block_dense(A),
        "At": block_dense(At),
        "At_block_shape": np.array(At.block_shape),
        "AAt": block_dense(AAt),
        "AAt_block_shape": np.array(AAt.block_shape),
        "y": y.numpy(),
        "A64": block_dense(A64),
        "A64_type": A64.scalar_type.__name__,
        "A_scalar": block_dense(A_scalar),
        "A_scalar_nnz": A_scalar.nnz,
        "A_split": block_dense(A_split),
        "A_split_shape": np.array(A_split.shape),
        "B": block_dense(B),
        "m_diag": m_diag,
        "m_id": m_id,
        "m_zero_nnz": m_zero_nnz,
        "T": block_dense(T),
        "T_columns": T.columns.numpy()[: T.nnz],
    }
