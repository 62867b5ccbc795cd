"""warp.utils at its edges: radix sorts with ties (stable order of values), float keys with -0.0, +0.0,
infinities and denormals, count 0 and 1, keys already sorted and reversed; sums and inner products of
float64 arrays (result types; int arrays are refused) and of empty arrays; scans of one element and
int32 scans that overflow (uint32 is refused); run-length encoding of a single run and of all-distinct
values (float values are refused); array_cast from int32 to narrower ints, int64 and float16."""

import numpy as np
import warp as wp
import warp.utils


def refused(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "ok"


def sort_pairs(keys, dtype=np.int32):
    n = len(keys)
    k = wp.array(np.concatenate([np.array(keys, dtype=dtype), np.zeros(n, dtype=dtype)]))
    v = wp.array(np.arange(2 * n, dtype=np.int32))
    wp.utils.radix_sort_pairs(k, v, n)
    return k.numpy()[:n].copy(), v.numpy()[:n].copy()


def run():
    r = {}
    r["ties_keys"], r["ties_vals"] = sort_pairs([2, 1, 2, 1, 0, 2, 1, 0])
    fk, fv = sort_pairs([0.0, -0.0, np.inf, -np.inf, 1e-40, -1e-40, 3.0, -3.0, 0.0], np.float32)
    r["float_special_keys"] = fk
    r["float_special_vals"] = fv
    r["float_signbits"] = np.signbit(fk)
    r["sorted_keys"], r["sorted_vals"] = sort_pairs([0, 1, 2, 3, 4])
    r["reversed_keys"], r["reversed_vals"] = sort_pairs([4, 3, 2, 1, 0])
    r["one_keys"], r["one_vals"] = sort_pairs([7])
    k0 = wp.array(np.array([3, 1], dtype=np.int32))
    v0 = wp.array(np.array([0, 1], dtype=np.int32))
    wp.utils.radix_sort_pairs(k0, v0, 0)
    r["count0"] = np.concatenate([k0.numpy(), v0.numpy()])
    r["int_sum_refused"] = refused(lambda: wp.utils.array_sum(wp.array(np.arange(-5, 10, dtype=np.int32))))
    d = wp.array(np.linspace(0.0, 1.0, 11, dtype=np.float64))
    r["f64_sum"] = wp.utils.array_sum(d)
    r["f64_inner"] = wp.utils.array_inner(d, d)
    r["f64_sum_type"] = type(wp.utils.array_sum(d)).__name__
    e = wp.zeros(0, dtype=float)
    r["empty_sum"] = wp.utils.array_sum(e)
    # (array_inner of empty arrays is left out: Warp 1.19 returns a Python float there, a float32 otherwise)
    # (whole-array sums of strided views are left out: Warp 1.19 reads them as if contiguous)
    one = wp.array(np.array([5], dtype=np.int32))
    o1 = wp.zeros(1, dtype=wp.int32)
    wp.utils.array_scan(one, o1, inclusive=False)
    r["scan_one_exclusive"] = o1.numpy().copy()
    wp.utils.array_scan(one, o1, inclusive=True)
    r["scan_one_inclusive"] = o1.numpy().copy()
    u = wp.array(np.array([4000000000, 100, 200000000, 7], dtype=np.uint32))
    uo = wp.zeros(4, dtype=wp.uint32)
    r["scan_u32_refused"] = refused(lambda: wp.utils.array_scan(u, uo))
    big = wp.array(np.array([2**31 - 10, 5, 10], dtype=np.int32))
    bo = wp.zeros(3, dtype=wp.int32)
    wp.utils.array_scan(big, bo)
    r["scan_i32_wraps"] = bo.numpy().copy()
    rv = wp.zeros(6, dtype=wp.int32)
    rl = wp.zeros(6, dtype=wp.int32)
    n1 = wp.utils.runlength_encode(wp.array(np.full(6, 3, dtype=np.int32)), rv, rl)
    r["rle_single"] = np.concatenate([[n1], rv.numpy()[:n1], rl.numpy()[:n1]])
    n2 = wp.utils.runlength_encode(wp.array(np.arange(6, dtype=np.int32)[::-1].copy()), rv, rl)
    r["rle_distinct"] = np.concatenate([[n2], rv.numpy()[:n2], rl.numpy()[:n2]])
    fvals = wp.array(np.array([0.5, 0.5, -1.0, -1.0, -1.0, 0.5], dtype=np.float32))
    frv = wp.zeros(6, dtype=float)
    frl = wp.zeros(6, dtype=wp.int32)
    r["rle_float_refused"] = refused(lambda: wp.utils.runlength_encode(fvals, frv, frl))
    src = wp.array(np.array([-1, 0, 1, 300, -200, 70000], dtype=np.int32))
    for dt in (wp.int8, wp.uint8, wp.int16, wp.int64, wp.float16):
        dst = wp.zeros(6, dtype=dt)
        wp.utils.array_cast(src, dst)
        r["cast_i32_to_" + dt.__name__] = dst.numpy().copy()
    return r
