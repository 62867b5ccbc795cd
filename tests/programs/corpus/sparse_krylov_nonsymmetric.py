"""Krylov solvers on a nonsymmetric convection-diffusion matrix (float64): bicgstab and gmres
with and without Jacobi preconditioners (gmres right and left preconditioned, two restart
lengths), cr on the symmetric part, results after a fixed iteration budget and converged."""

import numpy as np
import warp as wp
import warp.optim.linear as linear
import warp.sparse as sp

N = 40


@wp.kernel
def convection_diffusion(n: int, peclet: wp.float64, rows: wp.array(dtype=int), cols: wp.array(dtype=int),
                         vals: wp.array(dtype=wp.float64)):
    i = wp.tid()
    h = wp.float64(1.0) / wp.float64(n + 1)
    c = peclet * h / wp.float64(2.0)
    rows[3 * i] = i
    cols[3 * i] = i
    vals[3 * i] = wp.float64(2.0) + wp.float64(0.05) * wp.float64(i % 3)
    rows[3 * i + 1] = i
    cols[3 * i + 1] = wp.max(i - 1, 0)
    vals[3 * i + 1] = wp.where(i > 0, wp.float64(-1.0) - c, wp.float64(0.0))
    rows[3 * i + 2] = i
    cols[3 * i + 2] = wp.min(i + 1, n - 1)
    vals[3 * i + 2] = wp.where(i < n - 1, wp.float64(-1.0) + c, wp.float64(0.0))


def matrix(peclet):
    rows = wp.empty(3 * N, dtype=int)
    cols = wp.empty(3 * N, dtype=int)
    vals = wp.empty(3 * N, dtype=wp.float64)
    wp.launch(convection_diffusion, dim=N, inputs=[N, wp.float64(peclet), rows, cols, vals])
    return sp.bsr_from_triplets(N, N, rows, cols, vals)


def rhs():
    t = np.linspace(0.0, 1.0, N)
    return wp.array(np.exp(-10.0 * (t - 0.3) ** 2), dtype=wp.float64)


def run():
    A = matrix(20.0)
    b = rhs()
    out = {}

    x = wp.zeros_like(b)
    out["bicgstab_iters"], _, _ = linear.bicgstab(A, b, x, tol=1e-10, maxiter=200, check_every=1)
    out["bicgstab_x"] = x.numpy()

    x = wp.zeros_like(b)
    linear.bicgstab(A, b, x, maxiter=6, tol=0.0, M=linear.preconditioner(A, "diag"), check_every=0)
    out["bicgstab_pre_6"] = x.numpy()

    x = wp.zeros_like(b)
    out["gmres_iters"], _, _ = linear.gmres(A, b, x, tol=1e-10, restart=10, maxiter=300, check_every=10)
    out["gmres_x"] = x.numpy()

    x = wp.zeros_like(b)
    linear.gmres(A, b, x, tol=0.0, restart=4, maxiter=8, check_every=4)
    out["gmres_8"] = x.numpy()

    x = wp.zeros_like(b)
    out["gmres_3_iters"], out["gmres_3_res"], _ = linear.gmres(A, b, x, tol=1e-12, maxiter=3)  # restart 31 > 3
    out["gmres_3"] = x.numpy()

    x = wp.zeros_like(b)
    count, res_sq, atol_sq = linear.bicgstab(A, b, x, tol=0.0, maxiter=5, check_every=0)
    out["bicgstab_count"] = count.numpy()
    out["bicgstab_res_sq"] = res_sq.numpy()

    M = linear.preconditioner(A, "diag_abs")
    x = wp.zeros_like(b)
    linear.gmres(A, b, x, tol=0.0, restart=5, maxiter=5, M=M, check_every=5)
    out["gmres_right_5"] = x.numpy()
    x = wp.zeros_like(b)
    linear.gmres(A, b, x, tol=0.0, restart=5, maxiter=5, M=M, is_left_preconditioner=True, check_every=5)
    out["gmres_left_5"] = x.numpy()

    S = matrix(0.0)
    x = wp.zeros_like(b)
    out["cr_iters"], _, _ = linear.cr(S, b, x, tol=1e-10, maxiter=200, check_every=1)
    out["cr_x"] = x.numpy()
    x = wp.zeros_like(b)
    linear.cr(S, b, x, tol=0.0, maxiter=7, M=linear.preconditioner(S), check_every=0)
    out["cr_pre_7"] = x.numpy()

    dense = np.zeros((N, N))
    nnz = A.nnz_sync()
    off, col, val = A.offsets.numpy(), A.columns.numpy()[:nnz], A.values.numpy()[:nnz]
    for r in range(N):
        dense[r, col[off[r]:off[r + 1]]] = val[off[r]:off[r + 1]]
    out["direct"] = np.linalg.solve(dense, b.numpy())
    out["bicgstab_matches_direct"] = bool(np.allclose(out["bicgstab_x"], out["direct"], atol=1e-7))
    out["gmres_matches_direct"] = bool(np.allclose(out["gmres_x"], out["direct"], atol=1e-7))
    return out


TOLERANCE = {"bicgstab_x": (1e-7, 1e-9), "gmres_x": (1e-7, 1e-9), "cr_x": (1e-7, 1e-9), "direct": (1e-7, 1e-9)}
