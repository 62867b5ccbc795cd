"""Gathers and scatters through index tiles: tile_load_indexed, tile_store_indexed,
tile_atomic_add_indexed (with -1 padding), and t[indices, :] on a tile."""

import numpy as np
import warp as wp


@wp.kernel
def gather_rows(x: wp.array2d(dtype=float), rows: wp.array(dtype=int), out: wp.array2d(dtype=float)):
    idx = wp.tile_load(rows, shape=5)
    t = wp.tile_load_indexed(x, indices=idx, shape=(5, 4), axis=0)
    wp.tile_store(out, t)


@wp.kernel
def gather_cols(x: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    cols = wp.tile_arange(3, dtype=int) * 2
    t = wp.tile_load_indexed(x, cols, shape=(4, 3), offset=(2, 1), axis=1)
    wp.tile_store(out, t)


@wp.kernel
def scatter_rows(src: wp.array2d(dtype=float), rows: wp.array(dtype=int), dst: wp.array2d(dtype=float),
                 acc: wp.array2d(dtype=float)):
    idx = wp.tile_load(rows, shape=4)
    t = wp.tile_load(src, shape=(4, 3))
    wp.tile_store_indexed(dst, idx, t, axis=0)
    wp.tile_atomic_add_indexed(acc, idx, t * 2.0, axis=0)


@wp.kernel
def tile_fancy(a: wp.array2d(dtype=float), sel: wp.array(dtype=int), out: wp.array2d(dtype=float),
               out_c: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(4, 4))
    i = wp.tile_load(sel, shape=3)
    wp.tile_store(out, t[i, :])
    wp.tile_store(out_c, t[:, i])


@wp.kernel
def embedding_bag(table: wp.array2d(dtype=float), ids: wp.array2d(dtype=int), out: wp.array2d(dtype=float)):
    b = wp.tid()
    idx = wp.tile_load(ids[b], shape=6)
    rows = wp.tile_load_indexed(table, idx, shape=(6, 8), axis=0)
    wp.tile_store(out[b], wp.tile_sum(rows, axis=0))


def run():
    x = wp.array(np.arange(1, 49, dtype=np.float32).reshape(8, 6))
    rows = wp.array([7, 0, -1, 3, 3], dtype=int)
    g = wp.zeros((5, 4), dtype=float)
    wp.launch_tiled(gather_rows, dim=1, inputs=[x, rows, g], block_dim=32)
    gc = wp.zeros((4, 3), dtype=float)
    wp.launch_tiled(gather_cols, dim=1, inputs=[x, gc], block_dim=32)

    src = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3) + 1.0)
    srows = wp.array([5, 1, -1, 1], dtype=int)
    dst = wp.full((6, 3), -1.0, dtype=float)
    acc = wp.zeros((6, 3), dtype=float)
    wp.launch_tiled(scatter_rows, dim=1, inputs=[src, wp.array([5, 1, 0, 3], dtype=int), dst, acc], block_dim=64)
    acc2 = wp.zeros((6, 3), dtype=float)
    dst2 = wp.zeros((6, 3), dtype=float)
    wp.launch_tiled(scatter_rows, dim=1, inputs=[src, srows, dst2, acc2], block_dim=64)

    a = wp.array(np.arange(16, dtype=np.float32).reshape(4, 4))
    sel = wp.array([3, 0, -1], dtype=int)
    fo = wp.zeros((3, 4), dtype=float)
    fc = wp.zeros((4, 3), dtype=float)
    wp.launch_tiled(tile_fancy, dim=1, inputs=[a, sel, fo, fc], block_dim=32)

    rng = np.random.default_rng(3)
    table = wp.array(rng.standard_normal((10, 8)).astype(np.float32))
    ids = wp.array(rng.integers(0, 10, (3, 6)), dtype=int)
    bag = wp.zeros((3, 8), dtype=float)
    wp.launch_tiled(embedding_bag, dim=3, inputs=[table, ids, bag], block_dim=128)
    return {"gather": g.numpy(), "gather_cols": gc.numpy(), "dst": dst.numpy(), "acc": acc.numpy(),
            "acc_pad": acc2.numpy(), "dst_pad": dst2.numpy(), "fancy_rows": fo.numpy(), "fancy_cols": fc.numpy(),
            "bag": bag.numpy()}


TOLERANCE = {"bag": (1e-5, 1e-5)}
