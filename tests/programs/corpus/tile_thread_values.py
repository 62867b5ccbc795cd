"""wp.tile(x) gathers per-thread values into a tile, wp.untile scatters them back (docs idiom)."""

import numpy as np
import warp as wp

BLOCK = 64


@wp.kernel
def block_sums(x: wp.array(dtype=float), sums: wp.array(dtype=float), centered: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i] * 2.0
    t = wp.tile(v)
    s = wp.tile_sum(t)
    # on the CPU a block is one thread, so the block's sum is accumulated atomically
    wp.tile_atomic_add(sums, s, offset=i // BLOCK)
    c = wp.untile(wp.tile_map(wp.sin, t) + t * 0.5)
    centered[i] = c + s[0]


@wp.kernel
def vec_gather(x: wp.array(dtype=wp.vec3), out_vec: wp.array(dtype=wp.vec3), out_flat: wp.array2d(dtype=float)):
    i, lane = wp.tid()
    v = x[i * 32 + lane]
    tv = wp.tile(v, preserve_type=True)
    total = wp.tile_sum(tv)
    w = wp.untile(tv * 0.5)
    out_vec[i * 32 + lane] = w + total[0]
    tf = wp.tile(v)
    wp.tile_store(out_flat, tf, offset=(3 * i, 0))


@wp.kernel
def int_tile(out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    t = wp.tile(i % 5 - 2)
    m = wp.tile_max(t)
    u = wp.untile(t * 3)
    out[i] = u + m[0]


def run():
    rng = np.random.default_rng(11)
    x = wp.array(rng.uniform(-1.0, 1.0, 256).astype(np.float32))
    sums = wp.zeros(4, dtype=float)
    centered = wp.zeros(256, dtype=float)
    wp.launch(block_sums, dim=256, inputs=[x, sums, centered], block_dim=BLOCK)

    xv = wp.array(rng.uniform(-1.0, 1.0, (64, 3)).astype(np.float32), dtype=wp.vec3)
    out_vec = wp.zeros(64, dtype=wp.vec3)
    out_flat = wp.zeros((6, 32), dtype=float)
    wp.launch_tiled(vec_gather, dim=2, inputs=[xv, out_vec, out_flat], block_dim=32)

    out_i = wp.zeros(128, dtype=wp.int32)
    wp.launch(int_tile, dim=128, inputs=[out_i], block_dim=128)
    return {"sums": sums.numpy(), "centered": centered.numpy(), "vec": out_vec.numpy(),
            "flat": out_flat.numpy(), "ints": out_i.numpy()}


TOLERANCE = {"sums": (1e-5, 1e-5), "centered": (1e-5, 1e-5), "vec": (1e-5, 1e-5)}
