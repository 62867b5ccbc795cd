"""tile_atomic_add from many blocks into shared outputs; its return value (old contents)."""

import numpy as np
import warp as wp

BINS = 8


@wp.kernel
def block_partials(x: wp.array2d(dtype=float), col_totals: wp.array(dtype=float), grid: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=(4, 16), offset=(4 * i, 0))
    wp.tile_atomic_add(col_totals, wp.tile_sum(t, axis=0))
    wp.tile_atomic_add(grid, t * 0.5, offset=(0, 0))


@wp.kernel
def counts(labels: wp.array(dtype=wp.int32), hist: wp.array2d(dtype=wp.int32)):
    i = wp.tid()
    lab = wp.tile_load(labels, shape=32, offset=32 * i)
    local = wp.tile_zeros(BINS, dtype=wp.int32)
    for k in range(32):
        b = lab[k]
        local[b] = local[b] + 1
    wp.tile_atomic_add(hist[0], local)
    wp.tile_atomic_add(hist, wp.tile_reshape(local, shape=(1, BINS)), offset=(1, 0))


@wp.kernel
def old_values(acc: wp.array(dtype=float), before: wp.array(dtype=float)):
    t = wp.tile_ones(shape=6, dtype=float) * 3.0
    old = wp.tile_atomic_add(acc, t, offset=2)
    wp.tile_store(before, old)


@wp.kernel
def vec_accumulate(p: wp.array(dtype=wp.vec3), total: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    t = wp.tile_load(p, shape=16, offset=16 * i)
    wp.tile_atomic_add(total, wp.tile_sum(t))


def run():
    rng = np.random.default_rng(41)
    x = wp.array(rng.uniform(-1, 1, (64, 16)).astype(np.float32))
    col_totals = wp.zeros(16, dtype=float)
    grid = wp.zeros((4, 16), dtype=float)
    wp.launch_tiled(block_partials, dim=16, inputs=[x, col_totals, grid], block_dim=64)
    labels = wp.array(rng.integers(0, BINS, 256).astype(np.int32))
    hist = wp.zeros((2, BINS), dtype=wp.int32)
    wp.launch_tiled(counts, dim=8, inputs=[labels, hist], block_dim=32)
    acc = wp.array(np.arange(10, dtype=np.float32))
    before = wp.zeros(6, dtype=float)
    wp.launch_tiled(old_values, dim=1, inputs=[acc, before], block_dim=128)
    p = wp.array(rng.uniform(-1, 1, (64, 3)).astype(np.float32), dtype=wp.vec3)
    total = wp.zeros(1, dtype=wp.vec3)
    wp.launch_tiled(vec_accumulate, dim=4, inputs=[p, total], block_dim=256)
    return {"col_totals": col_totals.numpy(), "grid": grid.numpy(), "hist": hist.numpy(), "acc": acc.numpy(),
            "before": before.numpy(), "total": total.numpy()}


TOLERANCE = {"col_totals": (1e-5, 1e-5), "grid": (1e-5, 1e-5), "total": (1e-5, 1e-5)}
