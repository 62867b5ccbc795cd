"""Small SPD systems per block: tile_cholesky, tile_cholesky_solve, lower/upper triangular solves."""

import numpy as np
import warp as wp

N = 6


@wp.kernel
def solve_batch(A: wp.array3d(dtype=float), b: wp.array2d(dtype=float), L_out: wp.array3d(dtype=float),
                x_out: wp.array2d(dtype=float), y_out: wp.array2d(dtype=float), z_out: wp.array2d(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(A[i], shape=(N, N))
    rhs = wp.tile_load(b[i], shape=N)
    L = wp.tile_cholesky(a)
    wp.tile_store(L_out[i], L)
    x = wp.tile_cholesky_solve(L, rhs)
    wp.tile_store(x_out[i], x)
    # the same two steps by hand: L y = b, then L^T z = y
    y = wp.tile_lower_solve(L, rhs)
    wp.tile_store(y_out[i], y)
    z = wp.tile_upper_solve(wp.tile_transpose(L), y)
    wp.tile_store(z_out[i], z)


@wp.kernel
def solve_f64(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64), X: wp.array2d(dtype=wp.float64),
              shift: wp.float64):
    a = wp.tile_load(A, shape=(N, N))
    d = wp.tile_full(N, shift, dtype=wp.float64)
    a2 = wp.tile_diag_add(a, d)
    L = wp.tile_cholesky(a2)
    rhs = wp.tile_load(B, shape=(N, 3))
    wp.tile_store(X, wp.tile_cholesky_solve(L, rhs))


@wp.kernel
def least_squares(J: wp.array2d(dtype=float), r: wp.array2d(dtype=float), step: wp.array2d(dtype=float)):
    # Gauss-Newton step: (J^T J + I) dx = J^T r
    j = wp.tile_load(J, shape=(12, 4))
    res = wp.tile_load(r, shape=(12, 1))
    jt = wp.tile_transpose(j)
    h = wp.tile_matmul(jt, j)
    h = wp.tile_diag_add(h, wp.tile_ones(4, dtype=float))
    g = wp.tile_matmul(jt, res)
    L = wp.tile_cholesky(h)
    wp.tile_store(step, wp.tile_cholesky_solve(L, g))


def run():
    rng = np.random.default_rng(13)
    mats = []
    for _ in range(3):
        m = rng.standard_normal((N, N))
        mats.append(m @ m.T + N * np.eye(N))
    A = wp.array(np.array(mats, dtype=np.float32))
    b = wp.array(rng.standard_normal((3, N)).astype(np.float32))
    L = wp.zeros((3, N, N), dtype=float)
    x = wp.zeros((3, N), dtype=float)
    y = wp.zeros((3, N), dtype=float)
    z = wp.zeros((3, N), dtype=float)
    wp.launch_tiled(solve_batch, dim=3, inputs=[A, b], outputs=[L, x, y, z], block_dim=64)

    m = rng.standard_normal((N, N))
    A64 = wp.array(m @ m.T, dtype=wp.float64)
    B64 = wp.array(rng.standard_normal((N, 3)), dtype=wp.float64)
    X64 = wp.zeros((N, 3), dtype=wp.float64)
    wp.launch_tiled(solve_f64, dim=1, inputs=[A64, B64, X64, 2.0], block_dim=32)

    J = wp.array(rng.standard_normal((12, 4)).astype(np.float32))
    r = wp.array(rng.standard_normal((12, 1)).astype(np.float32))
    step = wp.zeros((4, 1), dtype=float)
    wp.launch_tiled(least_squares, dim=1, inputs=[J, r, step], block_dim=128)
    return {"L": L.numpy(), "x": x.numpy(), "y": y.numpy(), "z": z.numpy(), "x64": X64.numpy(),
            "step": step.numpy()}


TOLERANCE = {"L": (1e-5, 1e-5), "x": (1e-4, 1e-5), "y": (1e-4, 1e-5), "z": (1e-4, 1e-5), "x64": (1e-10, 1e-12),
             "step": (1e-4, 1e-5)}
