"""CPU graph capture of more than kernels: warp.utils scans, radix sorts and run-length encodes with an
out array, copies with offsets and fills of a slice, all replayed after the inputs change;
capture_while and capture_if reading their condition array at
each replay. (Warp's CPU capture refuses copies between strided views, so none is captured here.)"""

import numpy as np
import warp as wp
import warp.utils


@wp.kernel
def fill_keys(seed: int, keys: wp.array(dtype=wp.int32), vals: wp.array(dtype=wp.int32)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    keys[i] = wp.randi(s, 0, 5)
    vals[i] = i


@wp.kernel
def bump_seed(seed: wp.array(dtype=int)):
    seed[0] = seed[0] + 1


@wp.kernel
def draw(seed: wp.array(dtype=int), keys: wp.array(dtype=wp.int32), vals: wp.array(dtype=wp.int32)):
    i = wp.tid()
    s = wp.rand_init(seed[0], i)
    keys[i] = wp.randi(s, 0, 5)
    vals[i] = i


@wp.kernel
def countdown(n: wp.array(dtype=wp.int32), log: wp.array(dtype=wp.int32)):
    k = n[0]
    log[k] = log[k] + 1
    n[0] = k - 1


@wp.kernel
def add(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] = b[i] + a[i]


def run():
    r = {}
    n = 12
    seed = wp.array(np.array([3], dtype=np.int64), dtype=int)
    keys = wp.zeros(2 * n, dtype=wp.int32)
    vals = wp.zeros(2 * n, dtype=wp.int32)
    scanned = wp.zeros(n, dtype=wp.int32)
    rv = wp.zeros(n, dtype=wp.int32)
    rl = wp.zeros(n, dtype=wp.int32)
    runs = wp.zeros(1, dtype=wp.int32)
    with wp.ScopedCapture() as cap:
        wp.launch(draw, dim=n, inputs=[seed, keys, vals])
        wp.utils.radix_sort_pairs(keys, vals, n)
        wp.utils.array_scan(keys[:n], scanned, inclusive=False)
        wp.utils.runlength_encode(keys[:n], rv, rl, run_count=runs)
        wp.launch(bump_seed, dim=1, inputs=[seed])
    for rep in range(3):
        wp.capture_launch(cap.graph)
        k = int(runs.numpy()[0])
        r[f"rep{rep}_keys"] = keys.numpy()[:n].copy()
        r[f"rep{rep}_vals"] = vals.numpy()[:n].copy()
        r[f"rep{rep}_scan"] = scanned.numpy().copy()
        r[f"rep{rep}_runs"] = np.concatenate([rv.numpy()[:k], rl.numpy()[:k]])
    src = wp.array(np.arange(12, dtype=np.float32))
    dst = wp.zeros(12, dtype=float)
    with wp.ScopedCapture() as cap2:
        wp.copy(dst, src, dest_offset=2, src_offset=5, count=4)
        dst[8:].fill_(-1.0)
    src.assign(np.arange(12, dtype=np.float32) * 10.0)
    wp.capture_launch(cap2.graph)
    r["offset_copy_fill"] = dst.numpy().copy()
    a = wp.ones(4, dtype=float)
    b = wp.full(4, 2.0, dtype=float)
    # (a graph launched inside another capture is left out: Warp 1.19's CPU capture drops it)
    counter = wp.array(np.array([4], dtype=np.int32))
    log = wp.zeros(6, dtype=wp.int32)
    with wp.ScopedCapture() as loop:
        wp.capture_while(counter, lambda: wp.launch(countdown, dim=1, inputs=[counter, log]))
    r["while_not_run_at_capture"] = log.numpy().copy()
    wp.capture_launch(loop.graph)
    r["while_log"] = log.numpy().copy()
    counter.fill_(2)
    wp.capture_launch(loop.graph)
    r["while_log_again"] = log.numpy().copy()
    flag = wp.zeros(1, dtype=wp.int32)
    c = wp.zeros(4, dtype=float)
    with wp.ScopedCapture() as branch:
        wp.capture_if(flag, on_true=lambda: wp.launch(add, dim=4, inputs=[a, c]),
                      on_false=lambda: wp.launch(add, dim=4, inputs=[b, c]))
    wp.capture_launch(branch.graph)
    r["if_false"] = c.numpy().copy()
    flag.fill_(1)
    wp.capture_launch(branch.graph)
    r["if_true"] = c.numpy().copy()
    return r
