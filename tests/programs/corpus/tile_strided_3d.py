"""Tiles of strided array views (slices, transposes) and 3D/4D arrays; reductions with ties;
reshape/squeeze with axes; tile arithmetic on ints and float16."""

import numpy as np
import warp as wp


@wp.kernel
def strided(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float), out2: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(3, 4), offset=(1, 0))
    wp.tile_store(out, t * 2.0)
    wp.tile_store(out2, wp.tile_transpose(t), offset=(1, 1))


@wp.kernel
def volume(v: wp.array3d(dtype=float), planes: wp.array2d(dtype=float), lines: wp.array3d(dtype=float),
           flat: wp.array(dtype=float), sq: wp.array2d(dtype=float)):
    b = wp.tid()
    t = wp.tile_load(v, shape=(2, 3, 4), offset=(2 * b, 0, 0))
    s2 = wp.tile_sum(t, axis=2)
    s0 = wp.tile_sum(t, axis=0)
    wp.tile_store(planes, wp.tile_reshape(s2, shape=(1, 6)), offset=(b, 0))
    wp.tile_store(lines[b], s0)
    r = wp.tile_reshape(t, shape=(24,))
    wp.tile_store(flat, r, offset=24 * b)
    one = wp.tile_view(t, offset=(1, 2), shape=(1, 1, 4))
    wp.tile_store(sq, wp.tile_squeeze(one, axis=(0,)), offset=(b, 0))


@wp.kernel
def ties(x: wp.array(dtype=float), n: wp.array(dtype=wp.int32), out: wp.array(dtype=int), vals: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=12)
    out[0] = wp.tile_argmax(t)[0]
    out[1] = wp.tile_argmin(t)[0]
    ti = wp.tile_load(n, shape=12)
    out[2] = wp.tile_argmax(ti)[0]
    out[3] = wp.tile_argmin(ti)[0]
    vals[0] = wp.tile_max(t)[0]
    vals[1] = wp.tile_min(t)[0]


@wp.kernel
def int_math(a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32), out: wp.array2d(dtype=wp.int32),
             h: wp.array(dtype=wp.float16), hout: wp.array(dtype=wp.float16), u: wp.array(dtype=wp.uint32),
             uout: wp.array(dtype=wp.uint32)):
    ta = wp.tile_load(a, shape=10)
    tb = wp.tile_load(b, shape=10)
    wp.tile_store(out[0], ta / tb)
    wp.tile_store(out[1], -ta * 2)
    wp.tile_store(out[2], ta - tb)
    wp.tile_store(out[3], wp.tile_scan_inclusive(ta))
    th = wp.tile_load(h, shape=10)
    wp.tile_store(hout, th * wp.float16(2.0) + th)
    tu = wp.tile_load(u, shape=10)
    wp.tile_store(uout, wp.tile_scan_exclusive(tu) + tu * wp.uint32(3))


def run():
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    arr = wp.array(base)
    view = arr[:, 1::2]  # strided columns
    out = wp.zeros((3, 4), dtype=float)
    out2 = wp.zeros((6, 5), dtype=float)
    wp.launch_tiled(strided, dim=1, inputs=[view, out, out2], block_dim=32)
    tview = wp.array(base.T.copy())[2:7].transpose()  # a transposed view of rows 2..6
    out_t = wp.zeros((3, 4), dtype=float)
    out2_t = wp.zeros((6, 5), dtype=float)
    wp.launch_tiled(strided, dim=1, inputs=[tview, out_t, out2_t], block_dim=64)

    rng = np.random.default_rng(43)
    v = wp.array(rng.standard_normal((4, 3, 4)).astype(np.float32))
    planes = wp.zeros((2, 6), dtype=float)
    lines = wp.zeros((2, 3, 4), dtype=float)
    flat = wp.zeros(48, dtype=float)
    sq = wp.zeros((2, 4), dtype=float)
    wp.launch_tiled(volume, dim=2, inputs=[v, planes, lines, flat, sq], block_dim=128)

    x = wp.array(np.array([1, 5, 2, 5, -3, 0, -3, 5, 1, 2, -3, 4], dtype=np.float32))
    n = wp.array(np.array([7, 1, 7, 0, 0, 3, 7, 0, 2, 1, 0, 7], dtype=np.int32))
    o = wp.zeros(4, dtype=int)
    vals = wp.zeros(2, dtype=float)
    wp.launch_tiled(ties, dim=1, inputs=[x, n, o, vals], block_dim=32)

    a = wp.array(np.array([7, -7, 9, -9, 5, -5, 100, -1, 0, 13], dtype=np.int32))
    b = wp.array(np.array([2, 2, -4, -4, 3, 3, 7, 2, 5, -5], dtype=np.int32))
    oi = wp.zeros((4, 10), dtype=wp.int32)
    h = wp.array(rng.uniform(-2, 2, 10).astype(np.float16), dtype=wp.float16)
    ho = wp.zeros(10, dtype=wp.float16)
    u = wp.array(np.array([1, 2, 3, 4000000000, 5, 6, 7, 8, 9, 10], dtype=np.uint32))
    uo = wp.zeros(10, dtype=wp.uint32)
    wp.launch_tiled(int_math, dim=1, inputs=[a, b, oi, h, ho, u, uo], block_dim=32)
    return {"out": out.numpy(), "out2": out2.numpy(), "out_t": out_t.numpy(), "out2_t": out2_t.numpy(),
            "planes": planes.numpy(), "lines": lines.numpy(), "flat": flat.numpy(), "sq": sq.numpy(),
            "ties": o.numpy(), "vals": vals.numpy(), "ints": oi.numpy(), "half": ho.numpy(), "uint": uo.numpy()}


TOLERANCE = {"half": (1e-3, 1e-3)}
