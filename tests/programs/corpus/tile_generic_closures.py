"""Kernels made in Python functions (tile sizes captured from the closure), generic kernels
over dtypes with tiles, wp.static shapes, launch forms: launch_tiled with int/list dims and
a lane index, wp.launch(..., block_dim=...) of a tile kernel, wp.block_dim() on the CPU."""

from typing import Any

import numpy as np
import warp as wp


def make_row_scaler(tile_n: int, factor: float):
    @wp.kernel
    def scale_rows(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(a[i], shape=tile_n)
        wp.tile_store(out[i], t * factor + wp.tile_arange(tile_n, dtype=float))

    return scale_rows


def make_blocked_transpose(tm: int, tn: int):
    @wp.kernel
    def transpose(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
        i, j = wp.tid()
        t = wp.tile_load(a, shape=(tm, tn), offset=(i * tm, j * tn))
        wp.tile_store(out, wp.tile_transpose(t), offset=(j * tn, i * tm))

    return transpose


@wp.kernel
def generic_sum(a: wp.array2d(dtype=Any), out: wp.array(dtype=Any)):
    i = wp.tid()
    t = wp.tile_load(a[i], shape=8)
    wp.tile_store(out, wp.tile_sum(t * t.dtype(2)), offset=i)


SIZES = [4, 8]


@wp.kernel
def static_shapes(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=wp.static(SIZES[0] * SIZES[1]))
    r = wp.tile_reshape(t, shape=(wp.static(SIZES[0]), wp.static(SIZES[1])))
    wp.tile_store(out, wp.tile_sum(r, axis=wp.static(len(SIZES) - 1)))


@wp.kernel
def with_lane(out: wp.array2d(dtype=int)):
    i, j, lane = wp.tid()
    out[i, j] = i * 100 + j * 10 + lane + wp.block_dim() * 1000


@wp.kernel
def per_thread_tiles(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    t = wp.tile_load(a, shape=(1, 4), offset=(i, 4 * j))
    wp.tile_store(out, wp.tile_map(wp.sqrt, t), offset=(i, 4 * j))


def run():
    rng = np.random.default_rng(79)
    a = wp.array(rng.uniform(0, 1, (3, 8)).astype(np.float32))
    out1 = wp.zeros((3, 8), dtype=float)
    out2 = wp.zeros((3, 8), dtype=float)
    wp.launch_tiled(make_row_scaler(8, 2.0), dim=3, inputs=[a, out1], block_dim=32)
    wp.launch_tiled(make_row_scaler(8, -0.5), dim=[3], inputs=[a, out2], block_dim=64)

    m = wp.array(np.arange(96, dtype=np.float32).reshape(8, 12))
    mt = wp.zeros((12, 8), dtype=float)
    wp.launch_tiled(make_blocked_transpose(4, 3), dim=(2, 4), inputs=[m, mt], block_dim=128)

    g32 = wp.array(rng.standard_normal((2, 8)).astype(np.float32))
    o32 = wp.zeros(2, dtype=wp.float32)
    wp.launch_tiled(generic_sum, dim=2, inputs=[g32, o32], block_dim=32)
    g64 = wp.array(rng.standard_normal((2, 8)), dtype=wp.float64)
    o64 = wp.zeros(2, dtype=wp.float64)
    wp.launch_tiled(generic_sum, dim=2, inputs=[g64, o64], block_dim=32)
    gi = wp.array(rng.integers(-9, 9, (2, 8)).astype(np.int32))
    oi = wp.zeros(2, dtype=wp.int32)
    wp.launch_tiled(generic_sum, dim=2, inputs=[gi, oi], block_dim=32)

    s = wp.array(np.arange(32, dtype=np.float32))
    so = wp.zeros(4, dtype=float)
    wp.launch_tiled(static_shapes, dim=1, inputs=[s, so], block_dim=64)

    lanes = wp.zeros((2, 3), dtype=int)
    wp.launch_tiled(with_lane, dim=(2, 3), inputs=[lanes], block_dim=256)

    pa = wp.array(rng.uniform(0, 4, (4, 8)).astype(np.float32))
    po = wp.zeros((4, 8), dtype=float)
    wp.launch(per_thread_tiles, dim=(4, 2), inputs=[pa, po], block_dim=64)
    return {"scaled": out1.numpy(), "scaled2": out2.numpy(), "transpose": mt.numpy(), "g32": o32.numpy(),
            "g64": o64.numpy(), "gi": oi.numpy(), "static": so.numpy(), "lanes": lanes.numpy(), "sqrt": po.numpy()}


TOLERANCE = {"g32": (1e-5, 1e-5), "g64": (1e-12, 1e-12)}
