"""Atomics on int and float arrays: add/sub/min/max/cas/exch/and/or/xor and the old values they return."""

import numpy as np
import warp as wp


@wp.kernel
def int_atomics(vals: wp.array(dtype=wp.int32), acc: wp.array(dtype=wp.int32)):
    i = wp.tid()
    v = vals[i]
    wp.atomic_add(acc, 0, v)
    wp.atomic_sub(acc, 1, v)
    wp.atomic_min(acc, 2, v)
    wp.atomic_max(acc, 3, v)
    wp.atomic_and(acc, 4, v | 0xF0)
    wp.atomic_or(acc, 5, v)
    wp.atomic_xor(acc, 6, v)


@wp.kernel
def float_atomics(vals: wp.array(dtype=float), acc: wp.array(dtype=float)):
    i = wp.tid()
    v = vals[i]
    wp.atomic_add(acc, 0, v)
    wp.atomic_sub(acc, 1, v)
    wp.atomic_min(acc, 2, v)
    wp.atomic_max(acc, 3, v)


@wp.kernel
def claim_slots(flags: wp.array(dtype=wp.int32), owner: wp.array(dtype=wp.int32), n_slots: int):
    i = wp.tid()
    slot = i % n_slots
    old = wp.atomic_cas(flags, slot, 0, 1)
    if old == 0:
        owner[slot] = 1
    else:
        wp.atomic_add(owner, slot, 1)


@wp.kernel
def counter(count: wp.array(dtype=wp.int32), idx: wp.array(dtype=wp.int32)):
    i = wp.tid()
    if i % 3 == 0:
        slot = wp.atomic_add(count, 0, 1)
        idx[slot] = i


@wp.kernel
def exch(a: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = wp.atomic_exch(a, i, wp.float64(i) * wp.float64(2.0))


@wp.kernel
def u64_ops(a: wp.array(dtype=wp.uint64), b: wp.array(dtype=wp.int64)):
    i = wp.tid()
    wp.atomic_add(a, 0, wp.uint64(i))
    wp.atomic_max(b, 0, wp.int64(i) - wp.int64(50))
    wp.atomic_min(b, 1, wp.int64(i) - wp.int64(50))


@wp.kernel
def operator_atomics(a: wp.array(dtype=float), b: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a[i % 4] += 1.0
    a[(i + 1) % 4] -= 0.5
    b[0] += wp.vec3(1.0, float(i), -1.0)


@wp.kernel
def vec_atomics(a: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    wp.atomic_min(a, 0, v[i])
    wp.atomic_max(a, 1, v[i])


def run():
    r = {}
    rng = np.random.default_rng(5)
    iv = rng.integers(-100, 100, 64).astype(np.int32)
    acc = wp.array(np.array([0, 0, 1000, -1000, -1, 0, 0], dtype=np.int32))
    wp.launch(int_atomics, dim=64, inputs=[wp.array(iv), acc])
    r["int_acc"] = acc.numpy().copy()
    fv = rng.uniform(-1.0, 1.0, 64).astype(np.float32)
    facc = wp.array(np.array([0.0, 0.0, 1e9, -1e9], dtype=np.float32))
    wp.launch(float_atomics, dim=64, inputs=[wp.array(fv), facc])
    r["float_acc"] = facc.numpy().copy()
    flags = wp.zeros(5, dtype=wp.int32)
    owner = wp.zeros(5, dtype=wp.int32)
    wp.launch(claim_slots, dim=23, inputs=[flags, owner, 5])
    r["flags"] = flags.numpy().copy()
    r["owner"] = owner.numpy().copy()
    count = wp.zeros(1, dtype=wp.int32)
    idx = wp.zeros(40, dtype=wp.int32)
    wp.launch(counter, dim=40, inputs=[count, idx])
    r["count"] = count.numpy().copy()
    r["idx_sorted"] = np.sort(idx.numpy()[: count.numpy()[0]])
    a = wp.array(np.arange(6, dtype=np.float64) + 0.5)
    out = wp.zeros(6, dtype=wp.float64)
    wp.launch(exch, dim=6, inputs=[a, out])
    r["exch_old"] = out.numpy().copy()
    r["exch_new"] = a.numpy().copy()
    ua = wp.zeros(1, dtype=wp.uint64)
    ib = wp.zeros(2, dtype=wp.int64)
    wp.launch(u64_ops, dim=100, inputs=[ua, ib])
    r["u64"] = ua.numpy().copy()
    r["i64"] = ib.numpy().copy()
    oa = wp.zeros(4, dtype=float)
    ob = wp.zeros(1, dtype=wp.vec3)
    wp.launch(operator_atomics, dim=20, inputs=[oa, ob])
    r["op_a"] = oa.numpy().copy()
    r["op_b"] = ob.numpy().copy()
    va = wp.array([wp.vec3(1e9, 1e9, 1e9), wp.vec3(-1e9, -1e9, -1e9)], dtype=wp.vec3)
    vv = wp.array(rng.uniform(-1, 1, (10, 3)).astype(np.float32), dtype=wp.vec3)
    wp.launch(vec_atomics, dim=10, inputs=[va, vv])
    r["vec_minmax"] = va.numpy().copy()
    return r


TOLERANCE = {"float_acc": (1e-5, 1e-5)}
