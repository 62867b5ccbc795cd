"""Block reductions: tile_sum (whole and per axis), tile_min/max, tile_argmin/argmax."""

import numpy as np
import warp as wp

ROWS = 6
COLS = 10


@wp.kernel
def reduce_block(a: wp.array3d(dtype=float), sums: wp.array(dtype=float), row_sums: wp.array2d(dtype=float),
                 col_sums: wp.array2d(dtype=float), mins: wp.array(dtype=float), maxs: wp.array(dtype=float),
                 argmins: wp.array(dtype=int), argmaxs: wp.array(dtype=int)):
    b = wp.tid()
    t = wp.tile_load(a[b], shape=(ROWS, COLS))
    wp.tile_store(sums, wp.tile_sum(t), offset=b)
    wp.tile_store(row_sums[b], wp.tile_sum(t, axis=1))
    wp.tile_store(col_sums[b], wp.tile_sum(t, 0))
    wp.tile_store(mins, wp.tile_min(t), offset=b)
    wp.tile_store(maxs, wp.tile_max(t), offset=b)
    wp.tile_store(argmins, wp.tile_argmin(t), offset=b)
    wp.tile_store(argmaxs, wp.tile_argmax(t), offset=b)


@wp.kernel
def int_reduce(x: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32)):
    t = wp.tile_load(x, shape=32)
    s = wp.tile_sum(t)
    lo = wp.tile_min(t)
    hi = wp.tile_max(t)
    out[0] = s[0]
    out[1] = lo[0]
    out[2] = hi[0]
    out[3] = wp.tile_argmin(t)[0]
    out[4] = wp.tile_argmax(t)[0]


@wp.kernel
def vec_sum(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), dots: wp.array(dtype=float)):
    t = wp.tile_load(v, shape=24)
    wp.tile_store(out, wp.tile_sum(t))
    w = wp.tile_load(v, shape=24, offset=24)
    f = wp.tile_map(wp.dot, t, w)
    wp.tile_store(dots, wp.tile_sum(f))


@wp.kernel
def f64_sum(x: wp.array2d(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = wp.tile_load(x, shape=(4, 16), offset=(4 * i, 0))
    wp.tile_store(out, wp.tile_sum(wp.tile_sum(t, axis=0)), offset=i)


def run():
    rng = np.random.default_rng(2)
    a = wp.array(rng.standard_normal((3, ROWS, COLS)).astype(np.float32))
    sums = wp.zeros(3, dtype=float)
    row_sums = wp.zeros((3, ROWS), dtype=float)
    col_sums = wp.zeros((3, COLS), dtype=float)
    mins = wp.zeros(3, dtype=float)
    maxs = wp.zeros(3, dtype=float)
    argmins = wp.zeros(3, dtype=int)
    argmaxs = wp.zeros(3, dtype=int)
    wp.launch_tiled(reduce_block, dim=3, inputs=[a, sums, row_sums, col_sums, mins, maxs, argmins, argmaxs],
                    block_dim=128)
    x = wp.array(rng.integers(-100, 100, 32).astype(np.int32))
    out = wp.zeros(5, dtype=wp.int32)
    wp.launch_tiled(int_reduce, dim=1, inputs=[x, out], block_dim=32)
    v = wp.array(rng.uniform(-1, 1, (48, 3)).astype(np.float32), dtype=wp.vec3)
    vs = wp.zeros(1, dtype=wp.vec3)
    dots = wp.zeros(1, dtype=float)
    wp.launch_tiled(vec_sum, dim=1, inputs=[v, vs, dots], block_dim=64)
    d = wp.array(rng.standard_normal((8, 16)), dtype=wp.float64)
    ds = wp.zeros(2, dtype=wp.float64)
    wp.launch_tiled(f64_sum, dim=2, inputs=[d, ds], block_dim=256)
    return {"sums": sums.numpy(), "row_sums": row_sums.numpy(), "col_sums": col_sums.numpy(),
            "mins": mins.numpy(), "maxs": maxs.numpy(), "argmins": argmins.numpy(), "argmaxs": argmaxs.numpy(),
            "ints": out.numpy(), "vsum": vs.numpy(), "dots": dots.numpy(), "f64": ds.numpy()}
