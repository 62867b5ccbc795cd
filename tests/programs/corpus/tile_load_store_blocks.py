"""Copy, scale and shift a 2D array block by block with tile_load/tile_store and offsets."""

import numpy as np
import warp as wp

TILE_M = wp.constant(8)
TILE_N = wp.constant(4)
BLOCK_DIM = 64


@wp.kernel
def scale_blocks(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float), s: float):
    i, j = wp.tid()
    t = wp.tile_load(src, shape=(TILE_M, TILE_N), offset=(i * TILE_M, j * TILE_N))
    wp.tile_store(dst, t * s, offset=(i * TILE_M, j * TILE_N))


@wp.kernel
def shared_copy(src: wp.array(dtype=float), dst: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(src, shape=16, offset=i * 16, storage="shared")
    wp.tile_store(dst, t + wp.tile_ones(shape=16, dtype=float), offset=i * 16)


@wp.kernel
def partial_edge(src: wp.array(dtype=float), dst: wp.array(dtype=float)):
    # the last block runs past the end: tile_load pads with zeros, tile_store skips
    i = wp.tid()
    t = wp.tile_load(src, shape=8, offset=i * 8)
    total = wp.tile_sum(t)
    wp.tile_store(dst, t + wp.tile_broadcast(total, shape=(8,)), offset=i * 8)


@wp.kernel
def int_rows(src: wp.array2d(dtype=wp.int32), dst: wp.array2d(dtype=wp.int32)):
    i = wp.tid()
    row = wp.tile_load(src[i], shape=6)
    wp.tile_store(dst[i], row * 3 - wp.tile_full(6, 7, dtype=wp.int32))


def run():
    rng = np.random.default_rng(7)
    a = wp.array(rng.standard_normal((32, 16)).astype(np.float32))
    b = wp.zeros_like(a)
    wp.launch_tiled(scale_blocks, dim=(32 // 8, 16 // 4), inputs=[a, b, 2.5], block_dim=BLOCK_DIM)

    c = wp.array(np.arange(64, dtype=np.float32) * 0.5)
    d = wp.empty(64, dtype=float)
    wp.launch_tiled(shared_copy, dim=4, inputs=[c], outputs=[d], block_dim=32)

    e = wp.array(np.linspace(-1.0, 1.0, 20, dtype=np.float32))
    f = wp.full(20, 100.0, dtype=float)
    wp.launch_tiled(partial_edge, dim=3, inputs=[e, f], block_dim=128)

    g = wp.array(rng.integers(-20, 20, size=(5, 6)).astype(np.int32))
    h = wp.zeros((5, 6), dtype=wp.int32)
    wp.launch_tiled(int_rows, dim=5, inputs=[g, h], block_dim=32)
    return {"scaled": b.numpy(), "shared": d.numpy(), "edge": f.numpy(), "int_rows": h.numpy()}
