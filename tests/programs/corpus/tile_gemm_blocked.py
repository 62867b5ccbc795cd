"""Blocked GEMM as in Warp's tile docs: loop over K tiles, accumulate with tile_matmul(a, b, out)."""

import numpy as np
import warp as wp

TILE_M = wp.constant(8)
TILE_N = wp.constant(4)
TILE_K = wp.constant(8)


@wp.kernel
def tile_gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TILE_M, TILE_N), dtype=float)
    count = int(A.shape[1] / TILE_K)
    for k in range(0, count):
        a = wp.tile_load(A, shape=(TILE_M, TILE_K), offset=(i * TILE_M, k * TILE_K))
        b = wp.tile_load(B, shape=(TILE_K, TILE_N), offset=(k * TILE_K, j * TILE_N))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * TILE_M, j * TILE_N))


@wp.kernel
def gemm_alpha_beta(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float),
                    alpha: float, beta: float):
    i, j = wp.tid()
    c = wp.tile_load(C, shape=(TILE_M, TILE_N), offset=(i * TILE_M, j * TILE_N))
    a = wp.tile_load(A, shape=(TILE_M, 16), offset=(i * TILE_M, 0))
    b = wp.tile_load(B, shape=(16, TILE_N), offset=(0, j * TILE_N))
    wp.tile_matmul(a, b, c, alpha=alpha, beta=beta)
    wp.tile_store(C, c, offset=(i * TILE_M, j * TILE_N))


@wp.kernel
def returning(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float),
              D: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(16, 16))
    b = wp.tile_load(B, shape=(16, 12))
    c = wp.tile_matmul(a, b)
    wp.tile_store(C, c)
    # alpha scales the returned product; a transposed operand through tile_transpose
    d = wp.tile_matmul(wp.tile_transpose(a), b, alpha=0.5)
    wp.tile_store(D, d)


def run():
    rng = np.random.default_rng(4)
    M, N, K = 32, 16, 24
    A = wp.array(rng.uniform(-1, 1, (M, K)).astype(np.float32))
    B = wp.array(rng.uniform(-1, 1, (K, N)).astype(np.float32))
    C = wp.zeros((M, N), dtype=float)
    wp.launch_tiled(tile_gemm, dim=(M // 8, N // 4), inputs=[A, B, C], block_dim=64)

    A2 = wp.array(rng.uniform(-1, 1, (M, 16)).astype(np.float32))
    B2 = wp.array(rng.uniform(-1, 1, (16, N)).astype(np.float32))
    C2 = wp.array(rng.uniform(-1, 1, (M, N)).astype(np.float32))
    wp.launch_tiled(gemm_alpha_beta, dim=(M // 8, N // 4), inputs=[A2, B2, C2, 2.0, -0.5], block_dim=128)

    A3 = wp.array(rng.uniform(-1, 1, (16, 16)).astype(np.float32))
    B3 = wp.array(rng.uniform(-1, 1, (16, 12)).astype(np.float32))
    C3 = wp.zeros((16, 12), dtype=float)
    D3 = wp.zeros((16, 12), dtype=float)
    wp.launch_tiled(returning, dim=1, inputs=[A3, B3, C3, D3], block_dim=32)
    return {"gemm": C.numpy(), "alpha_beta": C2.numpy(), "product": C3.numpy(), "at_b": D3.numpy()}


TOLERANCE = {"gemm": (1e-5, 1e-5), "alpha_beta": (1e-5, 1e-5), "product": (1e-5, 1e-5), "at_b": (1e-5, 1e-5)}
