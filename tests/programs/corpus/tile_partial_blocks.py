"""Cooperative CPU blocks whose launch does not fill the last block (dim=100, block_dim=32):
reductions of wp.tile(x) cover the threads that exist, and tile_store / tile_atomic_add of
it (and tile_store_indexed) write only their elements; tiles shaped from the block's threads (tile_reshape of
tile(x) to (4, 8)); per-block results written by one thread."""

import numpy as np
import warp as wp

BLOCK = 32


@wp.kernel
def block_stats(x: wp.array(dtype=float), stats: wp.array2d(dtype=float), arg: wp.array2d(dtype=int),
                centered: wp.array(dtype=float), copy: wp.array(dtype=float), acc: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    t = wp.tile(v)
    s = wp.tile_sum(t)
    lo = wp.tile_min(t)
    hi = wp.tile_max(t)
    amax = wp.tile_argmax(t)
    amin = wp.tile_argmin(t)
    centered[i] = v - hi[0]
    wp.tile_store(copy, t * 2.0, offset=(i // BLOCK) * BLOCK)
    wp.tile_atomic_add(acc, t, offset=0)
    if i % BLOCK == 0:
        b = i // BLOCK
        stats[b, 0] = s[0]
        stats[b, 1] = lo[0]
        stats[b, 2] = hi[0]
        arg[b, 0] = amax[0]
        arg[b, 1] = amin[0]


@wp.kernel
def grid_of_threads(x: wp.array(dtype=float), rows: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile(x[i] * 2.0)
    g = wp.tile_reshape(t, shape=(4, 8))
    r = wp.tile_sum(g, axis=1)
    wp.tile_store(rows[i // BLOCK], r)


@wp.kernel
def spread_out(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    t = wp.tile(v)
    idx = wp.tile_arange(BLOCK, dtype=int) * 4 + wp.tile_full(BLOCK, (i // BLOCK) % 4, dtype=int)
    wp.tile_store_indexed(out, idx, t, axis=0)


def run():
    rng = np.random.default_rng(89)
    n = 100
    xn = -rng.uniform(1.0, 5.0, n).astype(np.float32)  # all negative
    x = wp.array(xn)
    stats = wp.zeros((4, 3), dtype=float)
    arg = wp.zeros((4, 2), dtype=int)
    centered = wp.zeros(n, dtype=float)
    rows = wp.zeros((4, 4), dtype=float)
    copy = wp.full(128, -1.0, dtype=float)  # the last block's missing threads leave -1
    acc = wp.zeros(BLOCK, dtype=float)
    saved = wp.config.enable_cpu_blocks
    wp.config.enable_cpu_blocks = True
    try:
        wp.launch(block_stats, dim=n, inputs=[x, stats, arg, centered, copy, acc], block_dim=BLOCK)
        wp.launch(grid_of_threads, dim=n, inputs=[x, rows], block_dim=BLOCK)
        spread = wp.full(4 * BLOCK, 9.0, dtype=float)
        wp.launch(spread_out, dim=n, inputs=[x, spread], block_dim=BLOCK)
    finally:
        wp.config.enable_cpu_blocks = saved
    return {"stats": stats.numpy(), "arg": arg.numpy(), "centered": centered.numpy(), "rows": rows.numpy(),
            "copy": copy.numpy(), "acc": acc.numpy(), "spread": spread.numpy()}


TOLERANCE = {"stats": (1e-5, 1e-5), "rows": (1e-5, 1e-5), "acc": (1e-5, 1e-5)}
