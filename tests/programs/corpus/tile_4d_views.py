"""Tiles of 3 and 4 dimensions: aligned shared loads, tile_squeeze (all unit axes, the docs
example), tile_view/tile_assign on 3D tiles, per-axis sums and reshapes of 4D tiles."""

import numpy as np
import warp as wp


@wp.kernel
def remove_singleton_dims(a: wp.array3d(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=(1, 4, 1))
    s = wp.tile_squeeze(t)
    wp.tile_store(out, s)


@wp.kernel
def four_d(x: wp.array4d(dtype=float), sums: wp.array3d(dtype=float), flat: wp.array2d(dtype=float),
           sub: wp.array3d(dtype=float), patched: wp.array3d(dtype=float)):
    t = wp.tile_load(x, shape=(2, 3, 4, 4), storage="shared", aligned=True)
    wp.tile_store(sums, wp.tile_sum(t, axis=3))
    wp.tile_store(flat, wp.tile_reshape(t, shape=(6, 16)))
    block = wp.tile_load(x[1], shape=(3, 4, 4))
    v = wp.tile_view(block, offset=(1, 1, 0), shape=(2, 2, 4))
    wp.tile_store(sub, v)
    wp.tile_assign(block, wp.tile_zeros(shape=(1, 4, 2), dtype=float), offset=(2, 0, 1))
    wp.tile_store(patched, block * 2.0)


def run():
    a = wp.array(np.arange(1, 5, dtype=np.float32).reshape(1, 4, 1))
    out = wp.zeros(4, dtype=float)
    wp.launch_tiled(remove_singleton_dims, dim=1, inputs=[a], outputs=[out], block_dim=32)
    x = wp.array(np.arange(96, dtype=np.float32).reshape(2, 3, 4, 4) * 0.5)
    sums = wp.zeros((2, 3, 4), dtype=float)
    flat = wp.zeros((6, 16), dtype=float)
    sub = wp.zeros((2, 2, 4), dtype=float)
    patched = wp.zeros((3, 4, 4), dtype=float)
    wp.launch_tiled(four_d, dim=1, inputs=[x, sums, flat, sub, patched], block_dim=128)
    return {"squeezed": out.numpy(), "sums": sums.numpy(), "flat": flat.numpy(), "sub": sub.numpy(),
            "patched": patched.numpy()}
