"""BSR matrices passed to user kernels as `warp.sparse.bsr_matrix_t(dtype)` struct arguments:
a hand-written SpMV over offsets/columns/values, Jacobi sweeps that find diagonal blocks
with bsr_block_index, 3x3 blocks, and a padded matrix whose row_counts the kernel reads."""

import numpy as np
import warp as wp
import warp.sparse as sp

CsrF = sp.bsr_matrix_t(wp.float32)
Bsr33 = sp.bsr_matrix_t(wp.mat33)


@wp.kernel
def spmv(A: CsrF, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    r = wp.tid()
    end = A.offsets[r + 1]
    if A.row_counts:
        end = A.offsets[r] + A.row_counts[r]
    s = float(0.0)  # noqa: UP018 - a variable (a literal would be a constant)
    for k in range(A.offsets[r], end):
        s += A.values[k] * x[A.columns[k]]
    y[r] = s


@wp.kernel
def jacobi_sweep(A: CsrF, b: wp.array(dtype=float), x: wp.array(dtype=float), x_new: wp.array(dtype=float)):
    r = wp.tid()
    d = sp.bsr_block_index(r, r, A.offsets, A.columns)
    s = b[r]
    for k in range(A.offsets[r], A.offsets[r + 1]):
        if k != d:
            s -= A.values[k] * x[A.columns[k]]
    x_new[r] = s / A.values[d]


@wp.kernel
def block_energy(A: Bsr33, u: wp.array(dtype=wp.vec3), e: wp.array(dtype=float)):
    k = wp.tid()
    if k >= A.nnz:
        return
    r = sp.bsr_row_index(A.offsets, A.nrow, k)
    c = A.columns[k]
    wp.atomic_add(e, 0, wp.dot(u[r], A.values[k] @ u[c]))


def run():
    n = 8
    rows = np.concatenate([np.arange(n), np.arange(n - 1), np.arange(1, n)]).astype(np.int32)
    cols = np.concatenate([np.arange(n), np.arange(1, n), np.arange(n - 1)]).astype(np.int32)
    vals = np.concatenate([np.full(n, 4.0), np.full(n - 1, -1.0), np.full(n - 1, -1.5)]).astype(np.float32)
    A = sp.bsr_from_triplets(n, n, wp.array(rows, dtype=int), wp.array(cols, dtype=int), wp.array(vals, dtype=float))
    x = wp.array(np.linspace(-1.0, 1.0, n, dtype=np.float32))
    y = wp.zeros(n)
    wp.launch(spmv, dim=n, inputs=[A, x, y])
    y_ref = (A @ x).numpy()

    b = wp.array(np.ones(n, dtype=np.float32))
    xa, xb = wp.zeros(n), wp.zeros(n)
    for _ in range(10):
        wp.launch(jacobi_sweep, dim=n, inputs=[A, b, xa, xb])
        xa, xb = xb, xa

    P = sp.bsr_zeros(4, 4, float, row_capacity=3)
    sp.bsr_set_from_triplets(P, wp.array([0, 0, 2, 3, 3], dtype=int), wp.array([0, 3, 1, 3, 2], dtype=int),
                             wp.array([1.0, 2.0, 3.0, 4.0, 5.0], dtype=float))
    yp = wp.zeros(4)
    wp.launch(spmv, dim=4, inputs=[P, wp.array(np.arange(1, 5, dtype=np.float32)), yp])

    K = sp.bsr_diag(wp.array(np.stack([np.diag([1.0, 2.0, 3.0]) * (i + 1) for i in range(3)]).astype(np.float32),
                             dtype=wp.mat33))
    sp.bsr_axpy(sp.bsr_from_triplets(3, 3, wp.array([0, 1], dtype=int), wp.array([1, 0], dtype=int),
                                     wp.array(np.full((2, 3, 3), 0.5, dtype=np.float32), dtype=wp.mat33)), K)
    u = wp.array(np.arange(9, dtype=np.float32).reshape(3, 3) / 4.0, dtype=wp.vec3)
    e = wp.zeros(1)
    wp.launch(block_energy, dim=K.nnz, inputs=[K, u, e])

    return {
        "y": y.numpy(),
        "y_ref": y_ref,
        "jacobi": xa.numpy(),
        "padded_y": yp.numpy(),
        "padded_nnz": P.nnz_sync(),
        "energy": e.numpy(),
    }


TOLERANCE = {"energy": (1e-5, 1e-5)}
