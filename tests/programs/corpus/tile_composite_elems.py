"""Tiles of vectors, matrices and structs: tile_map with vector/matrix builtins and funcs
returning another type, per-axis sums of vec3 tiles, astype across widths, struct tiles."""

import numpy as np
import warp as wp


@wp.struct
class Body:
    pos: wp.vec3
    mass: float


@wp.func
def speed(v: wp.vec3) -> float:
    return wp.length(v)


@wp.func
def to_count(x: float) -> wp.int32:
    return wp.int32(wp.floor(x * 4.0))


@wp.func
def rot(m: wp.mat33, v: wp.vec3):
    return m * v


@wp.kernel
def vec_ops(v: wp.array2d(dtype=wp.vec3), m: wp.array(dtype=wp.mat33), lens: wp.array2d(dtype=float),
            normals: wp.array2d(dtype=wp.vec3), col_sum: wp.array(dtype=wp.vec3), rotated: wp.array(dtype=wp.vec3),
            mt: wp.array(dtype=wp.mat33), counts: wp.array2d(dtype=wp.int32)):
    t = wp.tile_load(v, shape=(3, 4))
    wp.tile_store(lens, wp.tile_map(speed, t))
    wp.tile_store(normals, wp.tile_map(wp.normalize, t))
    wp.tile_store(col_sum, wp.tile_sum(t, axis=0))
    tm = wp.tile_load(m, shape=4)
    row0 = wp.tile_view(t, offset=(0, 0), shape=(1, 4))
    wp.tile_store(rotated, wp.tile_map(rot, tm, wp.tile_reshape(row0, shape=(4,))))
    wp.tile_store(mt, wp.tile_map(wp.transpose, tm) + tm * 0.5)
    wp.tile_store(counts, wp.tile_map(to_count, wp.tile_map(speed, t)))


@wp.kernel
def casts(x: wp.array(dtype=float), i32: wp.array(dtype=wp.int32), u8: wp.array(dtype=wp.uint8),
          f64: wp.array(dtype=wp.float64), h: wp.array(dtype=wp.float16), i64: wp.array(dtype=wp.int64)):
    t = wp.tile_load(x, shape=12)
    wp.tile_store(i32, wp.tile_astype(t, wp.int32))
    wp.tile_store(u8, wp.tile_astype(wp.tile_map(wp.abs, t) * 20.0, wp.uint8))
    wp.tile_store(f64, wp.tile_astype(t, wp.float64) * wp.float64(1.0e-3))
    wp.tile_store(h, wp.tile_astype(t, wp.float16))
    wp.tile_store(i64, wp.tile_astype(wp.tile_astype(t, wp.int32), wp.int64) * wp.int64(3000000000))


@wp.kernel
def bodies(b: wp.array(dtype=Body), com: wp.array(dtype=wp.vec3), total: wp.array(dtype=float)):
    t = wp.tile_load(b, shape=8)
    acc = wp.vec3(0.0)
    msum = float(0.0)  # noqa: UP018 (a Warp kernel variable updated in a loop is declared typed)
    for k in range(8):
        e = t[k]
        acc += e.pos * e.mass
        msum += e.mass
    com[0] = acc / msum
    total[0] = msum


def run():
    rng = np.random.default_rng(61)
    v = wp.array(rng.standard_normal((3, 4, 3)).astype(np.float32), dtype=wp.vec3)
    m = wp.array(rng.standard_normal((4, 3, 3)).astype(np.float32), dtype=wp.mat33)
    lens = wp.zeros((3, 4), dtype=float)
    normals = wp.zeros((3, 4), dtype=wp.vec3)
    col_sum = wp.zeros(4, dtype=wp.vec3)
    rotated = wp.zeros(4, dtype=wp.vec3)
    mt = wp.zeros(4, dtype=wp.mat33)
    counts = wp.zeros((3, 4), dtype=wp.int32)
    wp.launch_tiled(vec_ops, dim=1, inputs=[v, m, lens, normals, col_sum, rotated, mt, counts], block_dim=64)

    x = wp.array(np.array([-2.7, -1.5, -0.5, -0.2, 0.0, 0.2, 0.5, 1.5, 2.7, 3.99, -3.99, 6.3], dtype=np.float32))
    i32 = wp.zeros(12, dtype=wp.int32)
    u8 = wp.zeros(12, dtype=wp.uint8)
    f64 = wp.zeros(12, dtype=wp.float64)
    h = wp.zeros(12, dtype=wp.float16)
    i64 = wp.zeros(12, dtype=wp.int64)
    wp.launch_tiled(casts, dim=1, inputs=[x, i32, u8, f64, h, i64], block_dim=32)

    host = []
    for k in range(8):
        body = Body()
        body.pos = wp.vec3(*rng.uniform(-1, 1, 3))
        body.mass = float(1 + k % 3)
        host.append(body)
    com = wp.zeros(1, dtype=wp.vec3)
    total = wp.zeros(1, dtype=float)
    wp.launch_tiled(bodies, dim=1, inputs=[wp.array(host, dtype=Body), com, total], block_dim=32)
    return {"lens": lens.numpy(), "normals": normals.numpy(), "col_sum": col_sum.numpy(), "rotated": rotated.numpy(),
            "mt": mt.numpy(), "counts": counts.numpy(), "i32": i32.numpy(), "u8": u8.numpy(), "f64": f64.numpy(),
            "h": h.numpy(), "i64": i64.numpy(), "com": com.numpy(), "total": total.numpy()}
