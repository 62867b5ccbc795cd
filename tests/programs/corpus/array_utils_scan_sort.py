"""warp.utils: array_sum, array_inner, array_scan (inclusive/exclusive), radix_sort_pairs,
segmented_sort_pairs, runlength_encode, array_cast."""

import numpy as np
import warp as wp
import warp.utils


def run():
    r = {}
    rng = np.random.default_rng(11)
    x = wp.array(rng.uniform(-1.0, 1.0, 100).astype(np.float32))
    y = wp.array(rng.uniform(-1.0, 1.0, 100).astype(np.float32))
    r["sum"] = wp.utils.array_sum(x)
    out = wp.zeros(1, dtype=float)
    wp.utils.array_sum(x, out=out)
    r["sum_out"] = out.numpy().copy()
    r["inner"] = wp.utils.array_inner(x, y)
    v = wp.array(rng.uniform(-1.0, 1.0, (20, 3)).astype(np.float32), dtype=wp.vec3)
    r["vsum"] = np.array(wp.utils.array_sum(v))
    r["vinner"] = wp.utils.array_inner(v, v)
    ints = wp.array(rng.integers(0, 10, 50).astype(np.int32))
    inc = wp.zeros(50, dtype=wp.int32)
    exc = wp.zeros(50, dtype=wp.int32)
    wp.utils.array_scan(ints, inc, inclusive=True)
    wp.utils.array_scan(ints, exc, inclusive=False)
    r["inc"] = inc.numpy().copy()
    r["exc"] = exc.numpy().copy()
    fs = wp.array(np.ones(16, dtype=np.float32) * 0.5)
    fsc = wp.zeros(16, dtype=float)
    wp.utils.array_scan(fs, fsc)
    r["fscan"] = fsc.numpy().copy()
    n = 40
    keys = wp.array(np.concatenate([rng.permutation(n).astype(np.int32), np.zeros(n, np.int32)]))
    vals = wp.array(np.concatenate([np.arange(n, dtype=np.int32), np.zeros(n, np.int32)]))
    wp.utils.radix_sort_pairs(keys, vals, n)
    r["sorted_keys"] = keys.numpy()[:n]
    r["sorted_vals"] = vals.numpy()[:n]
    fk = wp.array(np.concatenate([rng.uniform(-5, 5, 10).astype(np.float32), np.zeros(10, np.float32)]))
    fv = wp.array(np.concatenate([np.arange(10, dtype=np.int32), np.zeros(10, np.int32)]))
    wp.utils.radix_sort_pairs(fk, fv, 10)
    r["fk"] = fk.numpy()[:10]
    r["fv"] = fv.numpy()[:10]
    sk = wp.array(np.array([3, 1, 2, 9, 7, 8, 5, 0, 0, 0, 0, 0, 0, 0], dtype=np.int32))
    sv = wp.array(np.array([0, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0, 0], dtype=np.int32))
    starts = wp.array(np.array([0, 3, 6], dtype=np.int32))
    ends = wp.array(np.array([3, 6, 7], dtype=np.int32))
    wp.utils.segmented_sort_pairs(sk, sv, 7, starts, ends)
    r["seg_keys"] = sk.numpy()[:7]
    r["seg_vals"] = sv.numpy()[:7]
    runs_in = wp.array(np.array([1, 1, 2, 2, 2, 5, 1, 1, 7], dtype=np.int32))
    rv = wp.zeros(9, dtype=wp.int32)
    rl = wp.zeros(9, dtype=wp.int32)
    nruns = wp.zeros(1, dtype=wp.int32)
    wp.utils.runlength_encode(runs_in, rv, rl, run_count=nruns)
    k = int(nruns.numpy()[0])
    r["nruns"] = k
    r["run_values"] = rv.numpy()[:k]
    r["run_lengths"] = rl.numpy()[:k]
    k2 = wp.utils.runlength_encode(runs_in, rv, rl)
    r["nruns_host"] = k2
    src = wp.array(np.array([1.7, -2.5, 3.2], dtype=np.float32))
    dst = wp.zeros(3, dtype=wp.float64)
    wp.utils.array_cast(src, dst)
    r["cast64"] = dst.numpy().copy()
    di = wp.zeros(3, dtype=wp.int32)
    wp.utils.array_cast(src, di)
    r["cast_int"] = di.numpy().copy()
    vs = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=wp.vec3)
    vd = wp.zeros(2, dtype=wp.vec3d)
    wp.utils.array_cast(vs, vd)
    r["cast_vec"] = vd.numpy().copy()
    return r


TOLERANCE = {"sum": (1e-5, 1e-5), "sum_out": (1e-5, 1e-5), "inner": (1e-5, 1e-5),
             "vsum": (1e-5, 1e-5), "vinner": (1e-5, 1e-5)}
