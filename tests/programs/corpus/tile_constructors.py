"""Tiles made in the kernel: tile_zeros/ones/full/arange with dtypes, astype, storage modes."""

import warp as wp

N = 16


@wp.kernel
def build(out_f: wp.array2d(dtype=float), out_i: wp.array2d(dtype=wp.int32), out_d: wp.array(dtype=wp.float64)):
    z = wp.tile_zeros(shape=N, dtype=float)
    o = wp.tile_ones(shape=(N,), dtype=float, storage="shared")
    f = wp.tile_full(N, 2.5, dtype=float)
    r = wp.tile_arange(N, dtype=float)
    wp.tile_store(out_f[0], z)
    wp.tile_store(out_f[1], o)
    wp.tile_store(out_f[2], f)
    wp.tile_store(out_f[3], r)
    wp.tile_store(out_f[4], r * 0.5 + f - o)
    # start/stop/step forms
    a = wp.tile_arange(3, 19, dtype=wp.int32)
    b = wp.tile_arange(-8, 120, 8, dtype=wp.int32)
    c = wp.tile_arange(15, -1, -1, dtype=wp.int32)
    wp.tile_store(out_i[0], a)
    wp.tile_store(out_i[1], b)
    wp.tile_store(out_i[2], c)
    wp.tile_store(out_i[3], wp.tile_astype(r * 1.75 - wp.tile_full(N, 9.0, dtype=float), wp.int32))
    wp.tile_store(out_i[4], wp.tile_full(N, -3, dtype=wp.int32) * c)
    wp.tile_store(out_d, wp.tile_astype(r, wp.float64) / wp.tile_full(N, wp.float64(3.0), dtype=wp.float64))


@wp.kernel
def vec_tiles(out: wp.array(dtype=wp.vec3), out_m: wp.array(dtype=wp.mat22)):
    v = wp.tile_full(shape=8, value=wp.vec3(1.0, -2.0, 0.5), dtype=wp.vec3)
    w = wp.tile_ones(8, dtype=wp.vec3)
    wp.tile_store(out, v + w * 2.0)
    m = wp.tile_zeros(8, dtype=wp.mat22) + wp.tile_full(8, wp.mat22(1.0, 2.0, 3.0, 4.0), dtype=wp.mat22)
    wp.tile_store(out_m, m)


def run():
    out_f = wp.zeros((5, N), dtype=float)
    out_i = wp.zeros((5, N), dtype=wp.int32)
    out_d = wp.zeros(N, dtype=wp.float64)
    wp.launch_tiled(build, dim=1, inputs=[], outputs=[out_f, out_i, out_d], block_dim=32)
    out_v = wp.zeros(8, dtype=wp.vec3)
    out_m = wp.zeros(8, dtype=wp.mat22)
    wp.launch_tiled(vec_tiles, dim=[1], inputs=[out_v, out_m], block_dim=64)
    return {"f": out_f.numpy(), "i": out_i.numpy(), "d": out_d.numpy(), "v": out_v.numpy(), "m": out_m.numpy()}
