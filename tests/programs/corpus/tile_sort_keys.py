"""tile_sort of (key, value) tiles in place: float and int keys, a rank table built from it."""

import numpy as np
import warp as wp


@wp.kernel
def sort_rows(keys: wp.array2d(dtype=float), out_keys: wp.array2d(dtype=float), out_idx: wp.array2d(dtype=int)):
    i = wp.tid()
    k = wp.tile_load(keys[i], shape=24)
    idx = wp.tile_arange(24, dtype=int)
    wp.tile_sort(k, idx)
    wp.tile_store(out_keys[i], k)
    wp.tile_store(out_idx[i], idx)


@wp.kernel
def sort_int(keys: wp.array(dtype=wp.int32), vals: wp.array(dtype=float), out_k: wp.array(dtype=wp.int32),
             out_v: wp.array(dtype=float)):
    k = wp.tile_load(keys, shape=40, storage="shared")
    v = wp.tile_load(vals, shape=40, storage="shared")
    wp.tile_sort(k, v)
    wp.tile_store(out_k, k)
    wp.tile_store(out_v, v)


@wp.kernel
def median_of_rows(x: wp.array2d(dtype=float), med: wp.array(dtype=float)):
    i = wp.tid()
    k = wp.tile_load(x[i], shape=15)
    ids = wp.tile_zeros(15, dtype=int)
    wp.tile_sort(k, ids)
    med[i] = k[7]


def run():
    rng = np.random.default_rng(21)
    keys = wp.array(rng.permutation(96).reshape(4, 24).astype(np.float32) * 0.25 - 5.0)
    out_keys = wp.zeros((4, 24), dtype=float)
    out_idx = wp.zeros((4, 24), dtype=int)
    wp.launch_tiled(sort_rows, dim=4, inputs=[keys, out_keys, out_idx], block_dim=64)
    ik = wp.array(rng.permutation(40).astype(np.int32) - 20)
    iv = wp.array(rng.uniform(0, 1, 40).astype(np.float32))
    ok = wp.zeros(40, dtype=wp.int32)
    ov = wp.zeros(40, dtype=float)
    wp.launch_tiled(sort_int, dim=1, inputs=[ik, iv, ok, ov], block_dim=32)
    x = wp.array(rng.standard_normal((5, 15)).astype(np.float32))
    med = wp.zeros(5, dtype=float)
    wp.launch_tiled(median_of_rows, dim=5, inputs=[x, med], block_dim=256)
    return {"keys": out_keys.numpy(), "idx": out_idx.numpy(), "int_keys": ok.numpy(), "int_vals": ov.numpy(),
            "median": med.numpy()}
