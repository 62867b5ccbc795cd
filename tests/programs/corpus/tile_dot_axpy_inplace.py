"""tile_dot (scalar, vector, matrix tiles), tile_axpy, conjugate gradient on a block, and the
in-place factorizations and solves (upper fill mode)."""

import numpy as np
import warp as wp

N = 8


@wp.kernel
def dots(a: wp.array(dtype=float), b: wp.array(dtype=float), va: wp.array(dtype=wp.vec3),
         vb: wp.array(dtype=wp.vec3), ma: wp.array(dtype=wp.mat33), out: wp.array(dtype=float),
         dest: wp.array(dtype=wp.vec3)):
    ta = wp.tile_load(a, shape=16)
    tb = wp.tile_load(b, shape=16)
    wp.tile_store(out, wp.tile_dot(ta, tb), offset=0)
    tva = wp.tile_load(va, shape=8)
    tvb = wp.tile_load(vb, shape=8)
    wp.tile_store(out, wp.tile_dot(tva, tvb), offset=1)
    tm = wp.tile_load(ma, shape=4)
    wp.tile_store(out, wp.tile_dot(tm, tm), offset=2)
    wp.tile_axpy(0.5, ta, tb)
    wp.tile_store(out, wp.tile_sum(tb), offset=3)
    wp.tile_axpy(wp.float32(-2.0), tva, tvb)
    wp.tile_store(dest, tvb)


@wp.kernel
def conjugate_gradient(A: wp.array2d(dtype=float), b: wp.array2d(dtype=float), x_out: wp.array2d(dtype=float),
                       iters: int):
    a = wp.tile_load(A, shape=(N, N))
    x = wp.tile_zeros(shape=(N, 1), dtype=float)
    r = wp.tile_load(b, shape=(N, 1))
    p = r * 1.0
    rs = wp.tile_dot(r, r)[0]
    for _ in range(iters):
        ap = wp.tile_matmul(a, p)
        alpha = rs / wp.tile_dot(p, ap)[0]
        wp.tile_axpy(alpha, p, x)
        wp.tile_axpy(-alpha, ap, r)
        rs_new = wp.tile_dot(r, r)[0]
        p = r + p * (rs_new / rs)
        rs = rs_new
    wp.tile_store(x_out, x)


@wp.kernel
def inplace_solves(A: wp.array2d(dtype=wp.float64), b: wp.array(dtype=wp.float64), out: wp.array2d(dtype=wp.float64),
                   U_out: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(N, N), storage="shared")
    wp.tile_cholesky_inplace(a, fill_mode="upper")
    wp.tile_store(U_out, a)
    y = wp.tile_load(b, shape=N, storage="shared")
    wp.tile_cholesky_solve_inplace(a, y, fill_mode="upper")
    wp.tile_store(out[0], y)
    z = wp.tile_load(b, shape=N, storage="shared")
    U = wp.tile_cholesky(wp.tile_load(A, shape=(N, N)), fill_mode="upper")
    wp.tile_lower_solve_inplace(wp.tile_transpose(U), z)
    wp.tile_store(out[1], z)
    wp.tile_upper_solve_inplace(U, z)
    wp.tile_store(out[2], z)
    w = wp.tile_cholesky_solve(U, wp.tile_load(b, shape=N), fill_mode="upper")
    wp.tile_store(out[3], w)


def run():
    rng = np.random.default_rng(29)
    a = wp.array(rng.standard_normal(16).astype(np.float32))
    b = wp.array(rng.standard_normal(16).astype(np.float32))
    va = wp.array(rng.standard_normal((8, 3)).astype(np.float32), dtype=wp.vec3)
    vb = wp.array(rng.standard_normal((8, 3)).astype(np.float32), dtype=wp.vec3)
    ma = wp.array(rng.standard_normal((4, 3, 3)).astype(np.float32), dtype=wp.mat33)
    out = wp.zeros(4, dtype=float)
    dest = wp.zeros(8, dtype=wp.vec3)
    wp.launch_tiled(dots, dim=1, inputs=[a, b, va, vb, ma, out, dest], block_dim=32)

    m = rng.standard_normal((N, N))
    spd = m @ m.T + N * np.eye(N)
    A = wp.array(spd.astype(np.float32))
    rhs = wp.array(rng.standard_normal((N, 1)).astype(np.float32))
    x = wp.zeros((N, 1), dtype=float)
    wp.launch_tiled(conjugate_gradient, dim=1, inputs=[A, rhs, x, 6], block_dim=64)

    A64 = wp.array(spd, dtype=wp.float64)
    b64 = wp.array(rng.standard_normal(N), dtype=wp.float64)
    sol = wp.zeros((4, N), dtype=wp.float64)
    U = wp.zeros((N, N), dtype=wp.float64)
    wp.launch_tiled(inplace_solves, dim=1, inputs=[A64, b64, sol, U], block_dim=128)
    return {"dots": out.numpy(), "axpy_vec": dest.numpy(), "cg": x.numpy(), "solves": sol.numpy(), "U": U.numpy()}


TOLERANCE = {"dots": (1e-5, 1e-5), "axpy_vec": (1e-5, 1e-6), "cg": (1e-4, 1e-5), "solves": (1e-10, 1e-12),
             "U": (1e-10, 1e-12)}
