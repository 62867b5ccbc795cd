"""Several independent worlds in one wp.HashGrid: points from a 2D array (worlds x particles)
built with per-point group ids, grouped neighbour counts in float32 and float64 grids, the
sorted order (hash_grid_point_id) of a grouped build, regrouping between builds, and an ungrouped
query on the same grid that sees every world."""

import numpy as np
import warp as wp


@wp.kernel
def count(grid: wp.uint64, x: wp.array2d(dtype=wp.vec3), r: float, grouped: wp.array2d(dtype=int),
          everyone: wp.array2d(dtype=int)):
    w, i = wp.tid()
    p = x[w, i]
    flat_self = w * x.shape[1] + i
    n = int(0)
    for j in wp.hash_grid_query(grid, p, r, w):
        if j != flat_self and wp.length(x[j // x.shape[1], j % x.shape[1]] - p) < r:
            n += 1
    grouped[w, i] = n
    m = int(0)
    q = wp.hash_grid_query(grid, p, r)
    k = int(0)
    while wp.hash_grid_query_next(q, k):
        if k != flat_self and wp.length(x[k // x.shape[1], k % x.shape[1]] - p) < r:
            m += 1
    everyone[w, i] = m


@wp.kernel
def order(grid: wp.uint64, out: wp.array(dtype=int)):
    tid = wp.tid()
    out[tid] = wp.hash_grid_point_id(grid, tid)


@wp.kernel
def count_d(grid: wp.uint64, x: wp.array(dtype=wp.vec3d), groups: wp.array(dtype=wp.int32), r: wp.float64,
            out: wp.array(dtype=int)):
    i = wp.tid()
    n = int(0)
    for j in wp.hash_grid_query(grid, x[i], r, groups[i]):
        if j != i and wp.length(x[j] - x[i]) < r:
            n += 1
    out[i] = n


def run():
    worlds, n = 3, 120
    rng = np.random.default_rng(10)
    pts = rng.uniform(0.0, 1.0, (worlds, n, 3)).astype(np.float32)
    x = wp.array(pts, dtype=wp.vec3)
    groups = wp.array(np.repeat(np.arange(worlds, dtype=np.int32), n).reshape(worlds, n), dtype=wp.int32)
    grid = wp.HashGrid(10, 10, 10)
    grid.build(x, 0.15, groups=groups)
    grouped = wp.zeros((worlds, n), dtype=int)
    everyone = wp.zeros((worlds, n), dtype=int)
    wp.launch(count, dim=(worlds, n), inputs=[grid.id, x, 0.15, grouped, everyone])
    ids = wp.zeros(worlds * n, dtype=int)
    wp.launch(order, dim=worlds * n, inputs=[grid.id, ids])
    res = {"grouped": grouped.numpy().copy(), "everyone": everyone.numpy().copy(), "order": ids.numpy().copy()}

    # regroup: worlds 0 and 1 merged (arbitrary group ids, negative allowed)
    regroup = np.where(np.arange(worlds) < 2, -5, 42).astype(np.int32)
    groups2 = wp.array(np.repeat(regroup, n).reshape(worlds, n), dtype=wp.int32)
    grid.build(x, 0.15, groups=groups2)

    @wp.kernel
    def merged(grid: wp.uint64, x: wp.array2d(dtype=wp.vec3), g: wp.array2d(dtype=wp.int32), r: float,
               out: wp.array2d(dtype=int)):
        w, i = wp.tid()
        p = x[w, i]
        n = int(0)
        for j in wp.hash_grid_query(grid, p, r, g[w, i]):
            if wp.length(x[j // x.shape[1], j % x.shape[1]] - p) < r:
                n += 1
        out[w, i] = n

    out = wp.zeros((worlds, n), dtype=int)
    wp.launch(merged, dim=(worlds, n), inputs=[grid.id, x, groups2, 0.15, out])
    res["merged"] = out.numpy()

    xd = wp.array(pts.reshape(-1, 3).astype(np.float64), dtype=wp.vec3d)
    gd = wp.array(np.repeat(np.arange(worlds, dtype=np.int32), n), dtype=wp.int32)
    grid_d = wp.HashGrid(6, 6, 6, dtype=wp.float64)
    grid_d.build(xd, 0.2, groups=gd)
    cd = wp.zeros(worlds * n, dtype=int)
    wp.launch(count_d, dim=worlds * n, inputs=[grid_d.id, xd, gd, wp.float64(0.2), cd])
    res["double_grouped"] = cd.numpy()
    return res
