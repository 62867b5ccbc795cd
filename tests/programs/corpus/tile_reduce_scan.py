"""tile_reduce with builtins and user funcs (whole tile and per axis), tile_scan_* prefix sums."""

import numpy as np
import warp as wp


@wp.func
def absmax(a: float, b: float):
    return wp.max(wp.abs(a), wp.abs(b))


@wp.func
def vmax(a: wp.vec2, b: wp.vec2):
    return wp.vec2(wp.max(a[0], b[0]), wp.max(a[1], b[1]))


@wp.func
def merge_bits(a: wp.int32, b: wp.int32):
    return a | b


@wp.kernel
def reduce_kernel(x: wp.array2d(dtype=float), v: wp.array(dtype=wp.vec2), bits: wp.array(dtype=wp.int32),
                  out: wp.array(dtype=float), out_axis: wp.array2d(dtype=float), out_v: wp.array(dtype=wp.vec2),
                  out_bits: wp.array(dtype=wp.int32)):
    t = wp.tile_load(x, shape=(4, 8))
    out[0] = wp.tile_reduce(wp.add, t)[0]
    out[1] = wp.tile_reduce(wp.mul, t * 0.5)[0]
    out[2] = wp.tile_reduce(absmax, t)[0]
    out[3] = wp.tile_reduce(wp.min, t)[0]
    wp.tile_store(out_axis[0], wp.tile_reduce(wp.max, t, axis=1))
    wp.tile_store(out_axis[1], wp.tile_reduce(absmax, t, axis=1))
    tv = wp.tile_load(v, shape=12)
    wp.tile_store(out_v, wp.tile_reduce(vmax, tv))
    tb = wp.tile_load(bits, shape=8)
    wp.tile_store(out_bits, wp.tile_reduce(merge_bits, tb))


@wp.kernel
def scan_kernel(x: wp.array2d(dtype=float), n: wp.array2d(dtype=wp.int32), out_f: wp.array3d(dtype=float),
                out_i: wp.array3d(dtype=wp.int32)):
    i = wp.tid()
    t = wp.tile_load(x[i], shape=20)
    wp.tile_store(out_f[i, 0], wp.tile_scan_inclusive(t))
    wp.tile_store(out_f[i, 1], wp.tile_scan_exclusive(t))
    wp.tile_store(out_f[i, 2], wp.tile_scan_max_inclusive(t))
    wp.tile_store(out_f[i, 3], wp.tile_scan_min_inclusive(t))
    c = wp.tile_load(n[i], shape=20)
    wp.tile_store(out_i[i, 0], wp.tile_scan_inclusive(c))
    wp.tile_store(out_i[i, 1], wp.tile_scan_exclusive(c))
    wp.tile_store(out_i[i, 2], wp.tile_scan_max_inclusive(c))
    wp.tile_store(out_i[i, 3], wp.tile_scan_min_inclusive(c))


@wp.kernel
def compact(flags: wp.array(dtype=wp.int32), values: wp.array(dtype=float), out: wp.array(dtype=float),
            count: wp.array(dtype=wp.int32)):
    # stream compaction: exclusive scan of the flags gives each kept value its slot
    f = wp.tile_load(flags, shape=32)
    slots = wp.tile_scan_exclusive(f)
    vals = wp.tile_load(values, shape=32)
    for k in range(32):
        if f[k] != 0:
            out[slots[k]] = vals[k]
    count[0] = wp.tile_sum(f)[0]


def run():
    rng = np.random.default_rng(9)
    x = wp.array(rng.uniform(-1.5, 1.5, (4, 8)).astype(np.float32))
    v = wp.array(rng.uniform(-1, 1, (12, 2)).astype(np.float32), dtype=wp.vec2)
    bits = wp.array((1 << rng.integers(0, 12, 8)).astype(np.int32))
    out = wp.zeros(4, dtype=float)
    out_axis = wp.zeros((2, 4), dtype=float)
    out_v = wp.zeros(1, dtype=wp.vec2)
    out_bits = wp.zeros(1, dtype=wp.int32)
    wp.launch_tiled(reduce_kernel, dim=1, inputs=[x, v, bits], outputs=[out, out_axis, out_v, out_bits], block_dim=64)

    xs = wp.array(rng.uniform(-1, 1, (3, 20)).astype(np.float32))
    ns = wp.array(rng.integers(-5, 10, (3, 20)).astype(np.int32))
    out_f = wp.zeros((3, 4, 20), dtype=float)
    out_i = wp.zeros((3, 4, 20), dtype=wp.int32)
    wp.launch_tiled(scan_kernel, dim=3, inputs=[xs, ns, out_f, out_i], block_dim=32)

    flags = wp.array((rng.uniform(0, 1, 32) > 0.6).astype(np.int32))
    values = wp.array(np.arange(32, dtype=np.float32) * 1.5)
    kept = wp.full(32, -1.0, dtype=float)
    count = wp.zeros(1, dtype=wp.int32)
    wp.launch_tiled(compact, dim=1, inputs=[flags, values, kept, count], block_dim=128)
    return {"reduce": out.numpy(), "reduce_axis": out_axis.numpy(), "reduce_vec": out_v.numpy(),
            "reduce_bits": out_bits.numpy(), "scan_f": out_f.numpy(), "scan_i": out_i.numpy(),
            "kept": kept.numpy(), "count": count.numpy()}
