"""wp.HashGrid neighbour loops as in an SPH step: density and pressure-force sums over
hash_grid_query / hash_grid_query_next, threads walked in the grid's sorted order through
hash_grid_point_id, grouped queries, a float64 grid, reserve(), and a rebuild after moving."""

import numpy as np
import warp as wp


@wp.func
def poly6(r2: float, h: float):
    if r2 >= h * h:
        return 0.0
    d = h * h - r2
    return 315.0 / (64.0 * wp.pi * wp.pow(h, 9.0)) * d * d * d


@wp.kernel
def density(grid: wp.uint64, x: wp.array(dtype=wp.vec3), h: float, rho: wp.array(dtype=float),
            neighbours: wp.array(dtype=int), order: wp.array(dtype=int)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    order[tid] = i
    p = x[i]
    total = float(0.0)
    n = int(0)
    for j in wp.hash_grid_query(grid, p, h):
        r2 = wp.length_sq(x[j] - p)
        if r2 < h * h:
            n += 1
            total += poly6(r2, h)
    rho[i] = total
    neighbours[i] = n


@wp.kernel
def pressure_force(grid: wp.uint64, x: wp.array(dtype=wp.vec3), rho: wp.array(dtype=float), h: float,
                   f: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = x[i]
    pi = 10.0 * (rho[i] - 1000.0)
    acc = wp.vec3()
    query = wp.hash_grid_query(grid, p, h)
    j = int(0)
    while wp.hash_grid_query_next(query, j):
        if j != i:
            d = p - x[j]
            r = wp.length(d)
            if r < h and r > 1.0e-6:
                pj = 10.0 * (rho[j] - 1000.0)
                acc += d / r * (pi + pj) * (h - r) * (h - r)
    f[i] = acc


@wp.kernel
def grouped_count(grid: wp.uint64, x: wp.array(dtype=wp.vec3), groups: wp.array(dtype=wp.int32), h: float,
                  same: wp.array(dtype=int)):
    i = wp.tid()
    query = wp.hash_grid_query(grid, x[i], h, groups[i])
    j = int(0)
    n = int(0)
    while wp.hash_grid_query_next(query, j):
        if wp.length(x[j] - x[i]) < h:
            n += 1
    same[i] = n


@wp.kernel
def count_double(grid: wp.uint64, x: wp.array(dtype=wp.vec3d), h: wp.float64, out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    p = x[i]
    s = wp.float64(0.0)
    for j in wp.hash_grid_query(grid, p, h):
        d = wp.length(x[j] - p)
        if d < h:
            s += h - d
    out[i] = s


def run():
    rng = np.random.default_rng(12)
    n = 600
    h = 0.1
    pts = rng.uniform(0.0, 0.6, size=(n, 3)).astype(np.float32)
    x = wp.array(pts, dtype=wp.vec3)
    grid = wp.HashGrid(16, 16, 16)
    grid.reserve(n)
    grid.build(x, h)
    rho = wp.zeros(n, dtype=float)
    nb = wp.zeros(n, dtype=int)
    order = wp.zeros(n, dtype=int)
    wp.launch(density, dim=n, inputs=[grid.id, x, h, rho, nb, order])
    f = wp.zeros(n, dtype=wp.vec3)
    wp.launch(pressure_force, dim=n, inputs=[grid.id, x, rho, h, f])
    res = {"rho": rho.numpy().copy(), "neighbours": nb.numpy().copy(), "force": f.numpy(),
           "order": order.numpy().copy(),
           "order_is_permutation": bool(np.array_equal(np.sort(order.numpy()), np.arange(n)))}

    groups = wp.array((np.arange(n) % 4).astype(np.int32), dtype=wp.int32)
    grid.build(x, h, groups=groups)
    same = wp.zeros(n, dtype=int)
    wp.launch(grouped_count, dim=n, inputs=[grid.id, x, groups, h, same])
    res["same_group_neighbours"] = same.numpy()

    # move the particles (some outside the grid's periodic extent) and rebuild with a larger cell
    x.assign(pts * np.float32(3.0) - np.float32(0.5))
    grid.build(x, 0.25)
    wp.launch(density, dim=n, inputs=[grid.id, x, 0.25, rho, nb, order])
    res["rho_moved"] = rho.numpy()
    res["neighbours_moved"] = nb.numpy()

    xd = wp.array(pts.astype(np.float64), dtype=wp.vec3d)
    grid_d = wp.HashGrid(8, 8, 8, dtype=wp.float64)
    grid_d.build(xd, 0.08)
    out = wp.zeros(n, dtype=wp.float64)
    wp.launch(count_double, dim=n, inputs=[grid_d.id, xd, wp.float64(0.08), out])
    res["double_sum"] = out.numpy()
    return res


TOLERANCE = {"rho": (1e-5, 1e-3), "force": (1e-4, 1e-2), "rho_moved": (1e-5, 1e-3), "double_sum": (1e-12, 1e-12)}
