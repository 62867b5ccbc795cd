"""warp.optim.linear beyond BSR matrices: a dense 2-D array as the operator, a user
LinearOperator whose matvec launches a kernel, aslinearoperator, and batched independent
systems through batch_offsets."""

import numpy as np
import warp as wp
import warp.optim.linear as linear
import warp.sparse as sp


@wp.kernel
def tridiag_matvec(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float),
                   alpha: float, beta: float):
    i = wp.tid()
    n = x.shape[0]
    ax = 3.0 * x[i]
    if i > 0:
        ax -= x[i - 1]
    if i < n - 1:
        ax -= x[i + 1]
    z[i] = alpha * ax + beta * y[i]


def run():
    rng = np.random.default_rng(4)
    n = 16
    Q = rng.standard_normal((n, n))
    dense_np = (Q @ Q.T + n * np.eye(n)).astype(np.float32)
    A_dense = wp.array(dense_np, dtype=float)
    b = wp.array(rng.standard_normal(n).astype(np.float32), dtype=float)
    x = wp.zeros(n, dtype=float)
    dense_iters, _, _ = linear.cg(A_dense, b, x, tol=1e-6, check_every=1)

    def matvec(xv, yv, zv, alpha, beta):
        wp.launch(tridiag_matvec, dim=xv.shape[0], inputs=[xv, yv, zv, alpha, beta], device=xv.device)

    op = linear.LinearOperator(shape=(n, n), dtype=float, device=b.device, matvec=matvec)
    x_op = wp.zeros(n, dtype=float)
    op_iters, _, _ = linear.cg(op, b, x_op, tol=1e-6, check_every=1)
    x_op4 = wp.zeros(n, dtype=float)
    linear.bicgstab(op, b, x_op4, tol=0.0, maxiter=4, check_every=0)

    rows = np.repeat(np.arange(n), 2)
    cols = np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1).ravel()
    vals = np.stack([np.full(n, 4.0), np.full(n, 1.0)], axis=1).ravel()
    S = sp.bsr_from_triplets(n, n, wp.array(rows.astype(np.int32), dtype=int),
                             wp.array(cols.astype(np.int32), dtype=int), wp.array(vals.astype(np.float32), dtype=float))
    S_op = linear.aslinearoperator(S)
    y = wp.zeros(n, dtype=float)
    S_op.matvec(b, y, y, 1.0, 0.0)

    # two independent systems in one solve: unknowns [0, 6) and [6, 16)
    offsets = wp.array([0, 6, n], dtype=int)
    batched = linear.aslinearoperator(A_dense, batch_offsets=offsets)
    xb = wp.zeros(n, dtype=float)
    linear.cg(batched, b, xb, tol=0.0, maxiter=3, check_every=0)

    return {
        "x_dense": x.numpy(),
        "dense_ref": np.linalg.solve(dense_np.astype(np.float64), b.numpy().astype(np.float64)),
        "dense_iters": dense_iters,
        "x_op": x_op.numpy(),
        "op_iters": op_iters,
        "x_op4": x_op4.numpy(),
        "op_shape": np.array(S_op.shape),
        "S_x": y.numpy(),
        "xb": xb.numpy(),
    }


TOLERANCE = {"x_dense": (1e-4, 1e-5), "dense_ref": (1e-5, 1e-6), "x_op": (1e-4, 1e-5), "x_op4": (1e-4, 1e-6),
             "xb": (1e-4, 1e-6)}
