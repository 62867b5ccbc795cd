"""Tile views and shapes: transpose, broadcast, view, reshape, squeeze, extract, element access."""

import numpy as np
import warp as wp


@wp.kernel
def shapes(a: wp.array2d(dtype=float), row: wp.array2d(dtype=float), out_t: wp.array2d(dtype=float),
           out_b: wp.array2d(dtype=float), out_v: wp.array2d(dtype=float), out_r: wp.array2d(dtype=float),
           out_s: wp.array(dtype=float), out_e: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=(4, 6))
    wp.tile_store(out_t, wp.tile_transpose(t))
    r = wp.tile_load(row, shape=(1, 6))
    wp.tile_store(out_b, t + wp.tile_broadcast(r, shape=(4, 6)))
    v = wp.tile_view(t, offset=(1, 2), shape=(2, 3))
    wp.tile_store(out_v, v)
    wp.tile_store(out_r, wp.tile_reshape(t, shape=(3, 8)))
    col = wp.tile_view(t, offset=(0, 4), shape=(4, 1))
    wp.tile_store(out_s, wp.tile_squeeze(col))
    out_e[0] = wp.tile_extract(t, 2, 3)
    out_e[1] = t[3, 5]
    out_e[2] = wp.tile_extract(wp.tile_reshape(t, shape=(24,)), 7)
    out_e[3] = wp.tile_transpose(t)[5, 1]


@wp.kernel
def writes(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float), out_sub: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=(4, 6))
    t[0, 0] = 100.0
    t[3, 5] = t[3, 5] * 2.0 + t[0, 1]
    t[1, 2] += 5.0
    sub = wp.tile_view(t, offset=(2,))
    sub[0] = -1.0
    wp.tile_assign(t, wp.tile_full((2, 2), 7.0, dtype=float), offset=(0, 3))
    wp.tile_store(out, t)
    wp.tile_store(out_sub, sub)


@wp.kernel
def vec_extract(v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22), out: wp.array(dtype=float)):
    tv = wp.tile_load(v, shape=4)
    tm = wp.tile_load(m, shape=4)
    out[0] = wp.tile_extract(tv, 2, 1)
    out[1] = wp.tile_extract(tm, 3, 1, 0)
    out[2] = tv[1][2]
    out[3] = tm[0][1, 1]


@wp.kernel
def broadcast_cols(a: wp.array2d(dtype=float), col: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(4, 6))
    c = wp.tile_load(col, shape=(4, 1))
    scale = wp.tile_broadcast(c, shape=(4, 6))
    wp.tile_store(out, wp.tile_map(wp.mul, t, scale))


def run():
    rng = np.random.default_rng(31)
    a = wp.array(np.arange(24, dtype=np.float32).reshape(4, 6) * 0.5 - 3.0)
    row = wp.array(rng.uniform(-1, 1, (1, 6)).astype(np.float32))
    out_t = wp.zeros((6, 4), dtype=float)
    out_b = wp.zeros((4, 6), dtype=float)
    out_v = wp.zeros((2, 3), dtype=float)
    out_r = wp.zeros((3, 8), dtype=float)
    out_s = wp.zeros(4, dtype=float)
    out_e = wp.zeros(4, dtype=float)
    wp.launch_tiled(shapes, dim=1, inputs=[a, row], outputs=[out_t, out_b, out_v, out_r, out_s, out_e], block_dim=64)
    out_w = wp.zeros((4, 6), dtype=float)
    out_sub = wp.zeros(6, dtype=float)
    wp.launch_tiled(writes, dim=1, inputs=[a, out_w, out_sub], block_dim=32)
    v = wp.array(rng.uniform(-1, 1, (4, 3)).astype(np.float32), dtype=wp.vec3)
    m = wp.array(rng.uniform(-1, 1, (4, 2, 2)).astype(np.float32), dtype=wp.mat22)
    out_x = wp.zeros(4, dtype=float)
    wp.launch_tiled(vec_extract, dim=1, inputs=[v, m, out_x], block_dim=32)
    col = wp.array(rng.uniform(-1, 1, (4, 1)).astype(np.float32))
    out_c = wp.zeros((4, 6), dtype=float)
    wp.launch_tiled(broadcast_cols, dim=1, inputs=[a, col, out_c], block_dim=128)
    return {"transpose": out_t.numpy(), "broadcast": out_b.numpy(), "view": out_v.numpy(), "reshape": out_r.numpy(),
            "squeeze": out_s.numpy(), "extract": out_e.numpy(), "writes": out_w.numpy(), "sub": out_sub.numpy(),
            "vec_extract": out_x.numpy(), "cols": out_c.numpy()}
