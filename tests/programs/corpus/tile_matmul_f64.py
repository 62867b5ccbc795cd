"""float64 tile products: a Gram matrix per block, a matrix-vector product, accumulate form."""

import numpy as np
import warp as wp


@wp.kernel
def gram(X: wp.array3d(dtype=wp.float64), G: wp.array3d(dtype=wp.float64)):
    b = wp.tid()
    x = wp.tile_load(X[b], shape=(12, 5))
    g = wp.tile_matmul(wp.tile_transpose(x), x)
    wp.tile_store(G[b], g)


@wp.kernel
def matvec(A: wp.array2d(dtype=wp.float64), v: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(10, 10))
    x = wp.tile_load(v, shape=(10, 1))
    y = wp.tile_zeros(shape=(10, 1), dtype=wp.float64)
    wp.tile_matmul(a, x, y)
    wp.tile_matmul(a, x, y, alpha=wp.float64(-0.25))
    wp.tile_store(out, y)


@wp.kernel
def power_iteration(A: wp.array2d(dtype=wp.float64), v: wp.array2d(dtype=wp.float64), steps: int):
    a = wp.tile_load(A, shape=(8, 8))
    x = wp.tile_load(v, shape=(8, 1))
    for _ in range(steps):
        y = wp.tile_matmul(a, x)
        n = wp.sqrt(wp.tile_sum(wp.tile_map(wp.mul, y, y))[0])
        x = y * (wp.float64(1.0) / n)
    wp.tile_store(v, x)


def run():
    rng = np.random.default_rng(17)
    X = wp.array(rng.standard_normal((3, 12, 5)), dtype=wp.float64)
    G = wp.zeros((3, 5, 5), dtype=wp.float64)
    wp.launch_tiled(gram, dim=3, inputs=[X, G], block_dim=64)
    A = wp.array(rng.standard_normal((10, 10)), dtype=wp.float64)
    v = wp.array(rng.standard_normal((10, 1)), dtype=wp.float64)
    y = wp.zeros((10, 1), dtype=wp.float64)
    wp.launch_tiled(matvec, dim=1, inputs=[A, v, y], block_dim=32)
    S = rng.standard_normal((8, 8))
    S = S + S.T + np.diag(np.arange(8.0) * 2.0)
    As = wp.array(S, dtype=wp.float64)
    vs = wp.array(np.ones((8, 1)), dtype=wp.float64)
    wp.launch_tiled(power_iteration, dim=1, inputs=[As, vs, 30], block_dim=128)
    return {"gram": G.numpy(), "matvec": y.numpy(), "eigvec": vs.numpy()}


TOLERANCE = {"gram": (1e-10, 1e-12), "matvec": (1e-10, 1e-12), "eigvec": (1e-9, 1e-11)}
