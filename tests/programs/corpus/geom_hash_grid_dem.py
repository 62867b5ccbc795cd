"""A DEM step on a wp.HashGrid (Warp's DEM example pattern): contact forces from neighbour loops in
the grid's sorted order, several integration steps with a rebuild each step, a half-precision grid
(vec3h points), and neighbour lists written to a fixed-size 2D array then sorted on the host."""

import numpy as np
import warp as wp


@wp.func
def contact_force(n: wp.vec3, v: wp.vec3, c: float, k_n: float, k_d: float, k_f: float, k_mu: float):
    vn = wp.dot(n, v)
    jn = c * k_n
    jd = wp.min(vn, 0.0) * k_d
    fn = jn + jd
    vt = v - n * vn
    vs = wp.length(vt)
    if vs > 0.0:
        vt = vt / vs
    ft = wp.min(vs * k_f, k_mu * wp.abs(fn))
    return -n * fn - vt * ft


@wp.kernel
def apply_forces(grid: wp.uint64, x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3),
                 f: wp.array(dtype=wp.vec3), radius: float):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    xi = x[i]
    vi = v[i]
    total = wp.vec3()
    c = wp.dot(xi, wp.vec3(0.0, 1.0, 0.0)) - radius
    if c < 0.0:
        total += contact_force(wp.vec3(0.0, 1.0, 0.0), vi, c, 1.0e3, 10.0, 10.0, 0.5)
    for j in wp.hash_grid_query(grid, xi, radius * 5.0):
        if j != i:
            d = xi - x[j]
            dist = wp.length(d)
            err = dist - radius * 2.0
            if err <= 0.0:
                n = d / dist
                total += contact_force(n, vi - v[j], err, 1.0e3, 10.0, 10.0, 0.5)
    f[i] = total


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3), dt: float):
    tid = wp.tid()
    v_new = v[tid] + (f[tid] + wp.vec3(0.0, -9.8, 0.0)) * dt
    x[tid] = x[tid] + v_new * dt
    v[tid] = v_new


@wp.kernel
def neighbour_lists(grid: wp.uint64, x: wp.array(dtype=wp.vec3h), r: wp.float16, lists: wp.array2d(dtype=int),
                    counts: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.hash_grid_query(grid, x[i], r)
    j = int(0)
    n = int(0)
    while wp.hash_grid_query_next(q, j):
        if j != i and wp.length(x[j] - x[i]) < r:
            if n < lists.shape[1]:
                lists[i, n] = j
            n += 1
    counts[i] = n


def run():
    radius = 0.05
    side = 6
    g = np.arange(side) * radius * 1.95
    gx, gy, gz = np.meshgrid(g, g + 0.055, g, indexing="ij")
    rng = np.random.default_rng(5)
    pts = np.stack([gx, gy, gz], -1).reshape(-1, 3) + rng.uniform(-0.01, 0.01, size=(side ** 3, 3))
    n = len(pts)
    x = wp.array(pts.astype(np.float32), dtype=wp.vec3)
    v = wp.zeros(n, dtype=wp.vec3)
    f = wp.zeros(n, dtype=wp.vec3)
    grid = wp.HashGrid(32, 32, 32)
    dt = 1.0 / 600.0
    for _ in range(40):
        grid.build(x, radius * 2.0)
        wp.launch(apply_forces, dim=n, inputs=[grid.id, x, v, f, radius])
        wp.launch(integrate, dim=n, inputs=[x, v, f, dt])
    res = {"x": x.numpy(), "v": v.numpy(), "min_height": float(x.numpy()[:, 1].min())}

    xh = wp.array(pts.astype(np.float16), dtype=wp.vec3h)
    grid_h = wp.HashGrid(16, 16, 16, dtype=wp.float16)
    grid_h.build(xh, 0.12)
    lists = wp.full((n, 32), -1, dtype=int)
    counts = wp.zeros(n, dtype=int)
    wp.launch(neighbour_lists, dim=n, inputs=[grid_h.id, xh, wp.float16(0.12), lists, counts])
    res["half_counts"] = counts.numpy()
    res["half_lists"] = np.sort(lists.numpy(), axis=1)
    return res


TOLERANCE = {"x": (1e-4, 1e-4), "v": (1e-3, 1e-3), "min_height": (1e-4, 1e-4)}
