"""Less common documented forms: default dtypes, arange with float steps, t.shape, row views
t[i], in-place element updates, int/uint reductions, duplicate sort keys (with payloads that
do not depend on the order of ties), bounds_check=False, stores past the array's edge."""

import numpy as np
import warp as wp


@wp.kernel
def defaults(out_f: wp.array2d(dtype=float), out_i: wp.array(dtype=int)):
    a = wp.tile_arange(0.0, 4.0, 0.5)
    b = wp.tile_arange(8)
    wp.tile_store(out_f[0], a)
    wp.tile_store(out_f[1], b)
    wp.tile_store(out_f[2], wp.tile_ones(8) + wp.tile_zeros(8))
    wp.tile_store(out_f[3], wp.tile_full(8, 1.5))
    c = wp.tile_full(8, 3)
    wp.tile_store(out_i, c * 2 + wp.tile_arange(8, dtype=int))


@wp.kernel
def axes_and_shapes(x: wp.array2d(dtype=float), out: wp.array3d(dtype=float), rows: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=(4, 6))
    last = wp.tile_sum(t, axis=1)
    wp.tile_store(out[0], wp.tile_broadcast(wp.tile_sum(t), shape=t.shape))
    wp.tile_store(out[1], t + wp.tile_broadcast(wp.tile_reshape(last, shape=(4, 1)), shape=t.shape))
    r = t[2]
    wp.tile_store(rows[0], r)
    wp.tile_store(rows[1], wp.tile_reduce(wp.max, t, axis=0))


@wp.kernel
def updates(x: wp.array(dtype=float), out: wp.array(dtype=float), counts: wp.array(dtype=wp.int32)):
    t = wp.tile_load(x, shape=10, storage="shared")
    t[0] += 10.0
    t[9] -= 5.0
    t[4] *= 3.0
    c = wp.tile_zeros(4, dtype=wp.int32)
    for k in range(10):
        b = int(t[k]) % 4
        if b < 0:
            b += 4
        c[b] += 1
    wp.tile_store(out, t)
    wp.tile_store(counts, c)


@wp.kernel
def int_reductions(u: wp.array(dtype=wp.uint32), s: wp.array(dtype=wp.int8), f: wp.array(dtype=wp.float64),
                   out_u: wp.array(dtype=wp.uint32), out_s: wp.array(dtype=wp.int8), out_i: wp.array(dtype=int),
                   out_f: wp.array(dtype=wp.float64)):
    tu = wp.tile_load(u, shape=8)
    out_u[0] = wp.tile_sum(tu)[0]
    out_u[1] = wp.tile_min(tu)[0]
    out_u[2] = wp.tile_max(tu)[0]
    ts = wp.tile_load(s, shape=8)
    out_s[0] = wp.tile_sum(ts)[0]
    out_s[1] = wp.tile_min(ts)[0]
    tf = wp.tile_load(f, shape=8)
    out_i[0] = wp.tile_argmin(tf)[0]
    out_i[1] = wp.tile_argmax(tu)[0]
    out_i[2] = wp.tile_argmin(ts)[0]
    out_f[0] = wp.tile_max(tf)[0]
    out_f[1] = wp.tile_min(tf)[0]


@wp.kernel
def dup_sort(k: wp.array(dtype=wp.int64), out_k: wp.array(dtype=wp.int64), out_v: wp.array(dtype=wp.int32)):
    keys = wp.tile_load(k, shape=16)
    # equal keys carry equal payloads: the sort is not stable (the order of ties is unspecified)
    vals = wp.tile_astype(keys, wp.int32) * 10 + wp.tile_full(16, 7, dtype=wp.int32)
    wp.tile_sort(keys, vals)
    wp.tile_store(out_k, keys)
    wp.tile_store(out_v, vals)


@wp.kernel
def edges(x: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    t = wp.tile_load(x, shape=(4, 4), offset=(i * 4, j * 4), bounds_check=False)
    wp.tile_store(out, t + wp.tile_ones((4, 4), dtype=float), offset=(i * 4 + 2, j * 4 + 1))


def run():
    out_f = wp.zeros((4, 8), dtype=float)
    out_i = wp.zeros(8, dtype=int)
    wp.launch_tiled(defaults, dim=1, inputs=[out_f, out_i], block_dim=32)
    rng = np.random.default_rng(67)
    x = wp.array(rng.standard_normal((4, 6)).astype(np.float32))
    ax = wp.zeros((2, 4, 6), dtype=float)
    rows = wp.zeros((2, 6), dtype=float)
    wp.launch_tiled(axes_and_shapes, dim=1, inputs=[x, ax, rows], block_dim=64)
    xu = wp.array(np.array([2.5, -3.5, 7.0, 1.25, -6.0, 0.5, 9.9, -0.5, 4.0, 11.0], dtype=np.float32))
    ou = wp.zeros(10, dtype=float)
    cu = wp.zeros(4, dtype=wp.int32)
    wp.launch_tiled(updates, dim=1, inputs=[xu, ou, cu], block_dim=32)
    u = wp.array(np.array([4000000000, 300000000, 7, 1, 900, 4000000000, 2, 5], dtype=np.uint32))
    s = wp.array(np.array([100, 50, -3, 7, -128, 0, 1, -128], dtype=np.int8))
    f = wp.array(np.array([0.5, -2.0, np.inf, 3.0, -np.inf, 1.0, -2.0, 0.0]), dtype=wp.float64)
    o_u = wp.zeros(3, dtype=wp.uint32)
    o_s = wp.zeros(2, dtype=wp.int8)
    o_i = wp.zeros(3, dtype=int)
    o_f = wp.zeros(2, dtype=wp.float64)
    wp.launch_tiled(int_reductions, dim=1, inputs=[u, s, f, o_u, o_s, o_i, o_f], block_dim=32)
    k = wp.array(np.array([3, 1, 2, 1, 3, 0, 2, 1, -1, 0, 3, 2, 1, -1, 0, 5], dtype=np.int64), dtype=wp.int64)
    ok = wp.zeros(16, dtype=wp.int64)
    ov = wp.zeros(16, dtype=wp.int32)
    wp.launch_tiled(dup_sort, dim=1, inputs=[k, ok, ov], block_dim=64)
    xe = wp.array(np.arange(64, dtype=np.float32).reshape(8, 8))
    oe = wp.zeros((8, 8), dtype=float)
    wp.launch_tiled(edges, dim=(2, 2), inputs=[xe, oe], block_dim=32)
    return {"defaults_f": out_f.numpy(), "defaults_i": out_i.numpy(), "axes": ax.numpy(), "rows": rows.numpy(),
            "updated": ou.numpy(), "counts": cu.numpy(), "u": o_u.numpy(), "s": o_s.numpy(), "args": o_i.numpy(),
            "fminmax": o_f.numpy(), "sorted_k": ok.numpy(), "sorted_v": ov.numpy(), "edges": oe.numpy()}


TOLERANCE = {"axes": (1e-5, 1e-5)}
