"""Conjugate gradients on a 2-D Poisson problem assembled into a CSR matrix by a kernel:
a converged solve (iteration count, residual, tolerance), a fixed number of iterations
(tol=0), a Jacobi preconditioner, a callback recording residuals, a reused CG functor."""

import numpy as np
import warp as wp
import warp.optim.linear as linear
import warp.sparse as sp

N = 12


@wp.kernel
def assemble_poisson(n: int, rows: wp.array(dtype=int), cols: wp.array(dtype=int), vals: wp.array(dtype=float)):
    i, j = wp.tid()
    row = i * n + j
    base = 5 * row
    rows[base] = row
    cols[base] = row
    vals[base] = 4.0 + 0.01 * float(i)
    offsets = wp.matrix(-1, 0, 1, 0, 0, -1, 0, 1, shape=(2, 4), dtype=int)
    for k in range(4):
        ni = i + offsets[0, k]
        nj = j + offsets[1, k]
        inside = ni >= 0 and ni < n and nj >= 0 and nj < n
        rows[base + 1 + k] = row
        cols[base + 1 + k] = wp.where(inside, ni * n + nj, row)
        vals[base + 1 + k] = wp.where(inside, -1.0, 0.0)


@wp.kernel
def source(n: int, b: wp.array(dtype=float)):
    i, j = wp.tid()
    x = (float(i) + 0.5) / float(n)
    y = (float(j) + 0.5) / float(n)
    b[i * n + j] = wp.sin(3.0 * x) * wp.cos(2.0 * y) + 0.1


def build():
    m = 5 * N * N
    rows = wp.empty(m, dtype=int)
    cols = wp.empty(m, dtype=int)
    vals = wp.empty(m, dtype=float)
    wp.launch(assemble_poisson, dim=(N, N), inputs=[N, rows, cols, vals])
    A = sp.bsr_zeros(N * N, N * N, block_type=float)
    sp.bsr_set_from_triplets(A, rows, cols, vals)
    b = wp.empty(N * N, dtype=float)
    wp.launch(source, dim=(N, N), inputs=[N, b])
    return A, b


def residual(A, x, b):
    r = wp.clone(b)
    sp.bsr_mv(A, x, r, alpha=-1.0, beta=1.0)
    return float(np.linalg.norm(r.numpy()))


def run():
    A, b = build()

    x = wp.zeros_like(b)
    iters, res, atol = linear.cg(A, b, x, tol=1.0e-6)

    x5 = wp.zeros_like(b)
    iters5, res5, _ = linear.cg(A, b, x5, tol=0.0, maxiter=5, check_every=1)

    history = []
    x_pre = wp.zeros_like(b)
    M = linear.preconditioner(A, ptype="diag")
    iters_pre, res_pre, _ = linear.cg(A, b, x_pre, tol=1.0e-6, M=M, check_every=2,
                                      callback=lambda i, r, t: history.append((i, r)))

    solver = linear.cg(A, b, wp.zeros_like(b), tol=1.0e-4, run=False)
    x_reuse = wp.zeros_like(b)
    b2 = wp.clone(b)
    b2.assign(2.0 * b.numpy())
    reuse_iters, _, _ = solver(b=b2, x=x_reuse)

    return {
        "x": x.numpy(),
        "iters": iters,
        "res_small": bool(res <= atol),
        "atol": atol,
        "true_residual": residual(A, x, b),
        "x5": x5.numpy(),
        "iters5": iters5,
        "res5": res5,
        "x_pre": x_pre.numpy(),
        "iters_pre": iters_pre,
        "history_iters": np.array([h[0] for h in history]),
        "history_res": np.array([h[1] for h in history]),
        "x_reuse": x_reuse.numpy(),
        "reuse_iters": reuse_iters,
        "nnz_bound": A.nnz,
        "nnz": A.nnz_sync(),
    }


TOLERANCE = {"x": (1e-4, 1e-5), "x5": (1e-4, 1e-6), "res5": (1e-4, 1e-6), "x_pre": (1e-4, 1e-5),
             "history_res": (1e-3, 1e-6), "x_reuse": (1e-3, 1e-4), "true_residual": (0.5, 1e-4), "atol": (1e-5, 1e-8)}
