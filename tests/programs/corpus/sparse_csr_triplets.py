"""CSR matrices from COO triplets: duplicates summed, explicit zeros pruned or kept, the
compressed arrays (offsets, columns, values, nnz), products with bsr_mv (alpha, beta,
transpose) and the `A @ x` operator, triplets assembled by a kernel with a count array."""

import numpy as np
import warp as wp
import warp.sparse as sp


@wp.kernel
def laplacian_triplets(n: int, rows: wp.array(dtype=int), cols: wp.array(dtype=int), vals: wp.array(dtype=float)):
    i = wp.tid()
    k = 3 * i
    rows[k] = i
    cols[k] = i
    vals[k] = 2.0
    rows[k + 1] = i
    cols[k + 1] = wp.max(i - 1, 0)
    vals[k + 1] = wp.where(i > 0, -1.0, 0.0)
    rows[k + 2] = i
    cols[k + 2] = wp.min(i + 1, n - 1)
    vals[k + 2] = wp.where(i < n - 1, -1.0, 0.0)


def csr_arrays(A):
    nnz = A.nnz_sync()
    return A.offsets.numpy()[: A.nrow + 1], A.columns.numpy()[:nnz], A.values.numpy()[:nnz]


def run():
    rows = wp.array([0, 2, 1, 0, 2, 3, 3, 1], dtype=int)
    cols = wp.array([1, 0, 2, 1, 2, 3, 0, 1], dtype=int)
    vals = wp.array([1.0, 2.0, 0.0, 4.0, -1.5, 3.0, 0.5, 7.0], dtype=float)
    A = sp.bsr_from_triplets(4, 5, rows, cols, vals)
    off, col, val = csr_arrays(A)

    B = sp.bsr_zeros(4, 5, block_type=float)
    sp.bsr_set_from_triplets(B, rows, cols, vals, prune_numerical_zeros=False)
    off_b, col_b, val_b = csr_arrays(B)

    x = wp.array(np.arange(1, 6, dtype=np.float32), dtype=float)
    y = wp.array(np.full(4, 10.0, dtype=np.float32), dtype=float)
    sp.bsr_mv(A, x, y, alpha=2.0, beta=0.5)
    z = sp.bsr_mv(A, wp.array(np.ones(4, dtype=np.float32), dtype=float), transpose=True)
    w = A @ x

    n = 6
    r = wp.empty(3 * n, dtype=int)
    c = wp.empty(3 * n, dtype=int)
    v = wp.empty(3 * n, dtype=float)
    wp.launch(laplacian_triplets, dim=n, inputs=[n, r, c, v])
    L = sp.bsr_zeros(n, n, float)
    count = wp.array([3 * n - 2], dtype=int)  # the last node's entries are left out
    sp.bsr_set_from_triplets(L, r, c, v, count=count)
    off_l, col_l, val_l = csr_arrays(L)
    ones = wp.array(np.linspace(0.0, 1.0, n, dtype=np.float32), dtype=float)
    lap = L @ ones

    return {
        "shape": np.array(A.shape),
        "nnz": A.nnz,
        "offsets": off,
        "columns": col,
        "values": val,
        "block_shape": np.array(A.block_shape),
        "offsets_kept": off_b,
        "columns_kept": col_b,
        "values_kept": val_b,
        "y": y.numpy(),
        "z": z.numpy(),
        "w": w.numpy(),
        "w_dtype": str(w.dtype.__name__),
        "lap_offsets": off_l,
        "lap_columns": col_l,
        "lap_values": val_l,
        "lap": lap.numpy(),
    }
