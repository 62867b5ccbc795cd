"""Queries wrapped in @wp.func helpers as users factor them: for-loops over mesh_query_aabb,
mesh_query_sphere and hash_grid_query iterators, query results (MeshQueryPoint, MeshQueryRay)
returned from and passed to funcs, a BvhQuery advanced inside a func, and funcs that take the
mesh / grid / volume ids."""

import numpy as np
import warp as wp


@wp.func
def closest_on(mesh: wp.uint64, p: wp.vec3):
    return wp.mesh_query_point_no_sign(mesh, p, 1.0e6)


@wp.func
def position_of(mesh: wp.uint64, q: wp.MeshQueryPoint):
    return wp.mesh_eval_position(mesh, q.face, q.u, q.v)


@wp.func
def first_hit(mesh: wp.uint64, o: wp.vec3, d: wp.vec3) -> wp.MeshQueryRay:
    return wp.mesh_query_ray(mesh, o, d, 1.0e3)


@wp.func
def faces_in_box(mesh: wp.uint64, lo: wp.vec3, hi: wp.vec3):
    n = int(0)
    for _face in wp.mesh_query_aabb(mesh, lo, hi):
        n += 1
    return n


@wp.func
def faces_near(mesh: wp.uint64, c: wp.vec3, r: float, hits: wp.array(dtype=wp.int32)):
    for f in wp.mesh_query_sphere(mesh, c, r):
        hits[f] = 1


@wp.func
def count_boxes(query: wp.BvhQuery):
    k = int(0)
    n = int(0)
    while wp.bvh_query_next(query, k):
        n += 1
    return n


@wp.func
def density(grid: wp.uint64, x: wp.array(dtype=wp.vec3d), p: wp.vec3d, h: wp.float64):
    s = wp.float64(0.0)
    for j in wp.hash_grid_query(grid, p, h):
        r = wp.length(x[j] - p)
        if r < h:
            s += (h - r) * (h - r)
    return s


@wp.kernel
def use_helpers(mesh: wp.uint64, bvh: wp.uint64, pts: wp.array(dtype=wp.vec3), closest: wp.array(dtype=wp.vec3),
                ray_t: wp.array(dtype=float), ray_face_normal: wp.array(dtype=wp.vec3), box_counts: wp.array(dtype=int),
                bvh_counts: wp.array(dtype=int), near: wp.array(dtype=wp.int32)):
    tid = wp.tid()
    p = pts[tid]
    q = closest_on(mesh, p)
    if q.result:
        closest[tid] = position_of(mesh, q)
    r = first_hit(mesh, p, wp.vec3(0.0, -1.0, 0.1))
    ray_t[tid] = wp.where(r.result, r.t, -1.0)
    if r.result:
        ray_face_normal[tid] = wp.mesh_eval_face_normal(mesh, r.face)
    box_counts[tid] = faces_in_box(mesh, p - wp.vec3(0.2), p + wp.vec3(0.2))
    bvh_counts[tid] = count_boxes(wp.bvh_query_aabb(bvh, p - wp.vec3(0.3), p + wp.vec3(0.3)))
    if tid == 0:
        faces_near(mesh, p, 0.5, near)


@wp.kernel
def sph(grid: wp.uint64, x: wp.array(dtype=wp.vec3d), h: wp.float64, rho: wp.array(dtype=wp.float64)):
    i = wp.tid()
    rho[i] = density(grid, x, x[i], h)


def run():
    n = 12
    xs = np.linspace(-1.0, 1.0, n)
    gx, gz = np.meshgrid(xs, xs, indexing="ij")
    pts = np.stack([gx, 0.3 * np.cos(2.0 * gx) * np.sin(gz), gz], -1).reshape(-1, 3).astype(np.float32)
    idx = []
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = i * n + j, i * n + j + 1, (i + 1) * n + j, (i + 1) * n + j + 1
            idx += [a, b, d, a, d, c]
    idx = np.array(idx, dtype=np.int32)
    mesh = wp.Mesh(points=wp.array(pts, dtype=wp.vec3), indices=wp.array(idx, dtype=wp.int32))
    tri = pts[idx.reshape(-1, 3)]
    bvh = wp.Bvh(wp.array(tri.min(1), dtype=wp.vec3), wp.array(tri.max(1), dtype=wp.vec3))
    rng = np.random.default_rng(3)
    m = 40
    q = wp.array(rng.uniform([-0.9, 0.2, -0.9], [0.9, 1.0, 0.9], (m, 3)).astype(np.float32), dtype=wp.vec3)
    nf = len(idx) // 3
    outs = [wp.zeros(m, dtype=wp.vec3), wp.zeros(m, dtype=float), wp.zeros(m, dtype=wp.vec3), wp.zeros(m, dtype=int),
            wp.zeros(m, dtype=int), wp.zeros(nf, dtype=wp.int32)]
    wp.launch(use_helpers, dim=m, inputs=[mesh.id, bvh.id, q], outputs=outs)
    res = {k: o.numpy() for k, o in zip(["closest", "ray_t", "ray_normal", "box_counts", "bvh_counts", "near"], outs)}

    xd = wp.array(rng.uniform(0.0, 1.0, (300, 3)), dtype=wp.vec3d)
    grid = wp.HashGrid(8, 8, 8, dtype=wp.float64)
    grid.build(xd, 0.15)
    rho = wp.zeros(300, dtype=wp.float64)
    wp.launch(sph, dim=300, inputs=[grid.id, xd, wp.float64(0.15), rho])
    res["rho"] = rho.numpy()
    return res


TOLERANCE = {"ray_t": (1e-5, 1e-5), "rho": (1e-12, 1e-12)}
