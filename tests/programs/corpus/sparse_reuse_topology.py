"""Re-assembly with a fixed sparsity pattern, as a simulation loop does it: a BsrTripletMap
built once and bsr_set_from_mapped_values per step (gather and atomic), bsr_mm with
work arrays and reuse_topology, bsr_mv with alpha/beta accumulating into one vector,
and bsr_axpy into a matrix with the masked topology."""

import numpy as np
import warp as wp
import warp.sparse as sp


@wp.kernel
def step_values(t: float, vals: wp.array(dtype=wp.mat22)):
    k = wp.tid()
    s = wp.sin(t + float(k))
    vals[k] = wp.mat22(2.0 + s, 0.1 * float(k), -0.1 * float(k), 1.0 - 0.5 * s)


def dense(A):
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
    rows = wp.array([0, 1, 2, 3, 0, 1, 2, 3, 1], dtype=int)
    cols = wp.array([0, 1, 2, 3, 1, 2, 3, 0, 1], dtype=int)  # (1, 1) appears twice
    vals = wp.zeros(9, dtype=wp.mat22)
    wp.launch(step_values, dim=9, inputs=[0.0, vals])

    A = sp.bsr_zeros(4, 4, block_type=wp.mat22)
    mapping = sp.bsr_set_from_triplets(A, rows, cols, vals, prune_numerical_zeros=False, build_mapping=True)
    nnz = A.nnz_sync()
    snapshots = []
    for step in range(1, 4):
        wp.launch(step_values, dim=9, inputs=[0.3 * float(step), vals])
        sp.bsr_set_from_mapped_values(A, mapping, vals, reduction="gather" if step % 2 else "atomic")
        snapshots.append(dense(A))

    work = sp.bsr_mm_work_arrays()
    C = sp.bsr_mm(A, A, work_arrays=work)
    first = dense(C)
    wp.launch(step_values, dim=9, inputs=[2.0, vals])
    sp.bsr_set_from_mapped_values(A, mapping, vals)
    sp.bsr_mm(A, A, C, work_arrays=work, reuse_topology=True)
    second = dense(C)

    x = wp.array(np.arange(8, dtype=np.float32).reshape(4, 2), dtype=wp.vec2)
    y = wp.zeros(4, dtype=wp.vec2)
    for k in range(3):
        sp.bsr_mv(A, x, y, alpha=0.5 * (k + 1), beta=1.0)

    D = sp.bsr_copy(A)
    sp.bsr_axpy(sp.bsr_identity(4, block_type=wp.mat22), D, alpha=10.0, beta=1.0, topology="masked")

    return {
        "nnz": nnz,
        "columns": A.columns.numpy()[:nnz],
        "snapshots": np.stack(snapshots),
        "first": first,
        "second": second,
        "C_nnz": C.nnz_sync(),
        "y": y.numpy(),
        "D": dense(D),
    }


TOLERANCE = {"snapshots": (1e-5, 1e-6), "first": (1e-5, 1e-5), "second": (1e-5, 1e-5), "y": (1e-5, 1e-5),
             "D": (1e-5, 1e-6)}
