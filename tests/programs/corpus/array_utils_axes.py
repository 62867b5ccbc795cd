"""warp.utils reductions along an axis, on vector/matrix and float64 arrays; scans of several dtypes;
radix sorts of negative and unsigned keys; segmented sorts of float keys; run-length encoding of a prefix."""

import numpy as np
import warp as wp
import warp.utils


def run():
    r = {}
    grid = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    r["sum_axis0"] = wp.utils.array_sum(grid, axis=0).numpy().copy()
    r["sum_axis1"] = wp.utils.array_sum(grid, axis=1).numpy().copy()
    out = wp.zeros(4, dtype=float)
    wp.utils.array_sum(grid, out=out.reshape((1, 4)), axis=0)
    r["sum_axis0_out"] = out.numpy().copy()
    r["sum_all_2d"] = wp.utils.array_sum(grid)
    r["sum_prefix"] = wp.utils.array_sum(wp.array(np.arange(10, dtype=np.float32)), value_count=4)
    vol = wp.array(np.arange(24, dtype=np.float64).reshape(2, 3, 4))
    r["sum_3d_axis1"] = wp.utils.array_sum(vol, axis=1).numpy().copy()
    v2 = wp.array(np.arange(12, dtype=np.float32).reshape(2, 3, 2), dtype=wp.vec2)
    r["vec_sum_axis1"] = wp.utils.array_sum(v2, axis=1).numpy().copy()
    r["vec_sum"] = np.array(wp.utils.array_sum(v2))
    ones = wp.array(np.ones((2, 4), np.float32))
    r["inner_axis0"] = wp.utils.array_inner(grid[:2], ones, axis=0).numpy().copy()
    r["inner_axis1"] = wp.utils.array_inner(grid[:2], ones, axis=1).numpy().copy()
    r["inner_count"] = wp.utils.array_inner(wp.array(np.arange(10, dtype=np.float32)),
                                            wp.array(np.arange(10, dtype=np.float32)), count=3)
    m = wp.array(np.arange(8, dtype=np.float32).reshape(2, 2, 2), dtype=wp.mat22)
    r["inner_mat"] = wp.utils.array_inner(m, m)
    for dt, npdt in ((wp.int64, np.int64), (wp.float64, np.float64)):
        src = wp.array(np.arange(1, 7).astype(npdt))
        dst = wp.zeros(6, dtype=dt)
        wp.utils.array_scan(src, dst, inclusive=False)
        r["scan_" + dt.__name__] = dst.numpy().copy()
    k = wp.array(np.array([3, -5, 2, -1, 7, -5, 0, 0, 0, 0, 0, 0], dtype=np.int32))
    v = wp.array(np.arange(12, dtype=np.int32))
    wp.utils.radix_sort_pairs(k, v, 6)
    r["neg_keys"] = k.numpy()[:6]
    r["neg_vals"] = v.numpy()[:6]
    ku = wp.array(np.array([3, 2**31 + 5, 2, 4000000000, 0, 0, 0, 0], dtype=np.uint32))
    vu = wp.array(np.arange(8, dtype=np.int32))
    wp.utils.radix_sort_pairs(ku, vu, 4)
    r["u32_keys"] = ku.numpy()[:4]
    r["u32_vals"] = vu.numpy()[:4]
    kl = wp.array(np.array([2**40, -3, 2**33, 5, 0, 0, 0, 0], dtype=np.int64))
    vl = wp.array(np.arange(8, dtype=np.int32))
    wp.utils.radix_sort_pairs(kl, vl, 4)
    r["i64_keys"] = kl.numpy()[:4]
    r["i64_vals"] = vl.numpy()[:4]
    kf = wp.array(np.array([3.5, -1.0, 2.0, 9.0, -7.0, 0.5, 0, 0, 0, 0, 0, 0], dtype=np.float32))
    vf = wp.array(np.arange(12, dtype=np.int32))
    wp.utils.segmented_sort_pairs(kf, vf, 6, wp.array(np.array([0, 3], dtype=np.int32)),
                                  wp.array(np.array([3, 6], dtype=np.int32)))
    r["seg_f_keys"] = kf.numpy()[:6]
    r["seg_f_vals"] = vf.numpy()[:6]
    vals = wp.array(np.array([4, 4, 4, 1, 2, 2, 2, 9], dtype=np.int32))
    rv = wp.zeros(8, dtype=wp.int32)
    rl = wp.zeros(8, dtype=wp.int32)
    count = wp.utils.runlength_encode(vals, rv, rl, value_count=5)
    r["rle_count"] = count
    r["rle_values"] = rv.numpy()[:count]
    r["rle_lengths"] = rl.numpy()[:count]
    for dt in (wp.float16, wp.int8, wp.uint16, wp.float64):
        dst = wp.zeros(4, dtype=dt)
        wp.utils.array_cast(wp.array(np.array([1.25, -2.5, 100.75, 7.0], dtype=np.float32)), dst)
        r["cast_" + dt.__name__] = dst.numpy().copy()
    mc = wp.zeros(2, dtype=wp.mat22d)
    wp.utils.array_cast(m, mc)
    r["cast_mat"] = mc.numpy().copy()
    strided = wp.zeros(3, dtype=wp.int32)
    wp.utils.array_cast(wp.array(np.arange(6, dtype=np.float32) + 0.5)[::2], strided)
    r["cast_strided"] = strided.numpy().copy()
    return r
