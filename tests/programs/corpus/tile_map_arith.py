"""tile_map with builtins, user funcs and several tiles; tile arithmetic operators."""

import numpy as np
import warp as wp

TM = 4
TN = 8


@wp.func
def smooth_relu(x: float):
    return wp.log(1.0 + wp.exp(x))


@wp.func
def lerp3(a: float, b: float, t: float):
    return a + (b - a) * t


@wp.func
def clamp_i(x: wp.int32):
    return wp.clamp(x, -5, 5)


@wp.func
def to_vec(x: float, y: float):
    return wp.vec2(x, x * y)


@wp.kernel
def elementwise(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), out: wp.array3d(dtype=float)):
    i = wp.tid()
    ta = wp.tile_load(a, shape=(TM, TN), offset=(i * TM, 0))
    tb = wp.tile_load(b, shape=(TM, TN), offset=(i * TM, 0))
    wp.tile_store(out[0], wp.tile_map(wp.sin, ta), offset=(i * TM, 0))
    wp.tile_store(out[1], wp.tile_map(smooth_relu, ta), offset=(i * TM, 0))
    wp.tile_store(out[2], wp.tile_map(wp.mul, ta, tb), offset=(i * TM, 0))
    wp.tile_store(out[3], wp.tile_map(lerp3, ta, tb, wp.tile_full((TM, TN), 0.25, dtype=float)), offset=(i * TM, 0))
    wp.tile_store(out[4], ta + tb * 2.0 - ta * tb, offset=(i * TM, 0))
    wp.tile_store(out[5], -ta + 3.0 * tb, offset=(i * TM, 0))
    wp.tile_store(out[6], ta / tb, offset=(i * TM, 0))
    wp.tile_store(out[7], wp.tile_map(wp.max, ta, tb), offset=(i * TM, 0))
    wp.tile_store(out[8], wp.tile_map(wp.abs, ta - tb), offset=(i * TM, 0))


@wp.kernel
def int_and_vec(x: wp.array(dtype=wp.int32), y: wp.array(dtype=float), out_i: wp.array2d(dtype=wp.int32),
                out_v: wp.array(dtype=wp.vec2)):
    tx = wp.tile_load(x, shape=16)
    wp.tile_store(out_i[0], wp.tile_map(clamp_i, tx))
    wp.tile_store(out_i[1], tx * 3 + tx)
    wp.tile_store(out_i[2], wp.tile_map(wp.mod, tx, wp.tile_full(16, 3, dtype=wp.int32)))
    wp.tile_store(out_i[3], wp.tile_map(wp.div, tx, wp.tile_full(16, 4, dtype=wp.int32)))
    ty = wp.tile_load(y, shape=16)
    wp.tile_store(out_v, wp.tile_map(to_vec, ty, wp.tile_astype(tx, float)))


def run():
    rng = np.random.default_rng(5)
    a = wp.array(rng.uniform(-2.0, 2.0, (12, TN)).astype(np.float32))
    b = wp.array(rng.uniform(0.5, 2.0, (12, TN)).astype(np.float32))
    out = wp.zeros((9, 12, TN), dtype=float)
    wp.launch_tiled(elementwise, dim=3, inputs=[a, b], outputs=[out], block_dim=64)
    x = wp.array(rng.integers(-20, 20, 16).astype(np.int32))
    y = wp.array(rng.uniform(-1.0, 1.0, 16).astype(np.float32))
    out_i = wp.zeros((4, 16), dtype=wp.int32)
    out_v = wp.zeros(16, dtype=wp.vec2)
    wp.launch_tiled(int_and_vec, dim=1, inputs=[x, y], outputs=[out_i, out_v], block_dim=32)
    return {"out": out.numpy(), "ints": out_i.numpy(), "vecs": out_v.numpy()}
