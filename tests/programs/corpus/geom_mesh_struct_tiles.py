"""Less common mesh and BVH forms: the wp.mesh_get struct (points/indices/velocities arrays),
mesh_get_bvh with the bvh_query_* builtins, the BVH constructors and leaf sizes of wp.Mesh and
wp.Bvh, rooted any-hit and count queries on a grouped mesh, bvh_query_ray with a root, and the
thread-block queries (tile_bvh_query_aabb/_ray, tile_mesh_query_aabb) launched with launch_tiled."""

import numpy as np
import warp as wp


def spheres_mesh(k=4, n=10, m=6):
    pts, idx, groups = [], [], []
    for s in range(k):
        c = np.array([1.2 * s, 0.3 * (s % 2), 0.0])
        u = np.linspace(0, 2 * np.pi, n, endpoint=False)
        v = np.linspace(0.3, np.pi - 0.3, m)
        base = len(pts)
        for vv in v:
            for uu in u:
                pts.append(c + 0.5 * np.array([np.sin(vv) * np.cos(uu), np.sin(vv) * np.sin(uu), np.cos(vv)]))
        for a in range(m - 1):
            for b in range(n):
                p0, p1 = base + a * n + b, base + a * n + (b + 1) % n
                p2, p3 = base + (a + 1) * n + (b + 1) % n, base + (a + 1) * n + b
                idx += [p0, p1, p2, p0, p2, p3]
                groups += [s, s]
    return np.array(pts, dtype=np.float32), np.array(idx, dtype=np.int32), np.array(groups, dtype=np.int32)


@wp.kernel
def struct_access(mesh: wp.uint64, face_centroids: wp.array(dtype=wp.vec3), mean_vel: wp.array(dtype=wp.vec3)):
    f = wp.tid()
    m = wp.mesh_get(mesh)
    a = m.points[m.indices[3 * f + 0]]
    b = m.points[m.indices[3 * f + 1]]
    c = m.points[m.indices[3 * f + 2]]
    face_centroids[f] = (a + b + c) / 3.0
    mean_vel[f] = (m.velocities[m.indices[3 * f]] + m.velocities[m.indices[3 * f + 2]]) * 0.5


@wp.kernel
def via_bvh(mesh: wp.uint64, lo: wp.vec3, hi: wp.vec3, start: wp.vec3, dir: wp.vec3,
            box_hits: wp.array(dtype=wp.int32), ray_hits: wp.array(dtype=wp.int32)):
    bvh = wp.mesh_get_bvh(mesh)
    q = wp.bvh_query_aabb(bvh, lo, hi)
    f = int(0)
    while wp.bvh_query_next(q, f):
        box_hits[f] = 1
    r = wp.bvh_query_ray(bvh, start, dir)
    while wp.bvh_query_next(r, f):
        ray_hits[f] = 1


@wp.kernel
def rooted(mesh: wp.uint64, start: wp.vec3, dir: wp.vec3, anyhit: wp.array(dtype=wp.int32),
           counts: wp.array(dtype=wp.int32), t: wp.array(dtype=float)):
    g = wp.tid()
    root = wp.mesh_get_group_root(mesh, g)
    anyhit[g] = wp.where(wp.mesh_query_ray_anyhit(mesh, start, dir, 100.0, root), 1, 0)
    counts[g] = wp.mesh_query_ray_count_intersections(mesh, start, dir, root)
    q = wp.mesh_query_ray(mesh, start, dir, 100.0, root)
    t[g] = wp.where(q.result, q.t, -1.0)


@wp.kernel
def bvh_rooted(bvh: wp.uint64, start: wp.vec3, dir: wp.vec3, hits: wp.array2d(dtype=wp.int32)):
    g = wp.tid()
    q = wp.bvh_query_ray(bvh, start, dir, wp.bvh_get_group_root(bvh, g))
    k = int(0)
    while wp.bvh_query_next(q, k):
        hits[g, k] = 1


@wp.kernel
def tiled_queries(bvh: wp.uint64, mesh: wp.uint64, lo: wp.vec3, hi: wp.vec3, start: wp.vec3, dir: wp.vec3,
                  box_counts: wp.array(dtype=wp.int32), ray_counts: wp.array(dtype=wp.int32),
                  face_counts: wp.array(dtype=wp.int32)):
    query = wp.tile_bvh_query_aabb(bvh, lo, hi)
    while wp.tile_query_valid(query):
        b = wp.untile(wp.tile_bvh_query_next(query))
        if b >= 0:
            wp.atomic_add(box_counts, b, 1)
    rq = wp.tile_bvh_query_ray(bvh, start, dir)
    while wp.tile_query_valid(rq):
        b = wp.untile(wp.tile_bvh_query_next(rq))
        if b >= 0:
            wp.atomic_add(ray_counts, b, 1)
    mq = wp.tile_mesh_query_aabb(mesh, lo, hi)
    while wp.tile_query_valid(mq):
        f = wp.untile(wp.tile_mesh_query_aabb_next(mq))
        if f >= 0:
            wp.atomic_add(face_counts, f, 1)


def run():
    pts, idx, groups = spheres_mesh()
    nf = len(idx) // 3
    vel = np.tile(np.linspace(0.0, 1.0, len(pts), dtype=np.float32)[:, None], (1, 3))
    res = {}
    lo, hi = wp.vec3(0.5, -0.6, -0.6), wp.vec3(1.7, 0.2, 0.6)
    start, d = wp.vec3(-1.0, 0.1, 0.05), wp.vec3(1.0, 0.02, 0.01)
    for ctor, leaf in (("sah", None), ("median", 2), ("lbvh", 1)):
        mesh = wp.Mesh(points=wp.array(pts, dtype=wp.vec3), indices=wp.array(idx, dtype=wp.int32),
                       velocities=wp.array(vel, dtype=wp.vec3), bvh_constructor=ctor, bvh_leaf_size=leaf)
        cent = wp.zeros(nf, dtype=wp.vec3)
        mv = wp.zeros(nf, dtype=wp.vec3)
        wp.launch(struct_access, dim=nf, inputs=[mesh.id, cent, mv])
        bh = wp.zeros(nf, dtype=wp.int32)
        rh = wp.zeros(nf, dtype=wp.int32)
        wp.launch(via_bvh, dim=1, inputs=[mesh.id, lo, hi, start, d, bh, rh])
        res[f"{ctor}_centroids"] = cent.numpy()
        res[f"{ctor}_mean_vel"] = mv.numpy()
        res[f"{ctor}_box_faces"] = np.nonzero(bh.numpy())[0]
        res[f"{ctor}_ray_faces"] = np.nonzero(rh.numpy())[0]

    gmesh = wp.Mesh(points=wp.array(pts, dtype=wp.vec3), indices=wp.array(idx, dtype=wp.int32),
                    groups=wp.array(groups, dtype=wp.int32))
    anyhit = wp.zeros(5, dtype=wp.int32)
    counts = wp.zeros(5, dtype=wp.int32)
    t = wp.zeros(5, dtype=float)
    wp.launch(rooted, dim=5, inputs=[gmesh.id, start, d, anyhit, counts, t])
    res.update({"group_anyhit": anyhit.numpy(), "group_counts": counts.numpy(), "group_t": t.numpy()})

    tri = pts[idx.reshape(-1, 3)]
    lowers = wp.array(tri.min(axis=1), dtype=wp.vec3)
    uppers = wp.array(tri.max(axis=1), dtype=wp.vec3)
    bvh = wp.Bvh(lowers, uppers, groups=wp.array(groups, dtype=wp.int32), leaf_size=2)
    hits = wp.zeros((4, nf), dtype=wp.int32)
    wp.launch(bvh_rooted, dim=4, inputs=[bvh.id, start, d, hits])
    res["bvh_group_ray_hits"] = hits.numpy().sum(axis=1)

    plain = wp.Bvh(lowers, uppers)
    box_counts = wp.zeros(nf, dtype=wp.int32)
    ray_counts = wp.zeros(nf, dtype=wp.int32)
    face_counts = wp.zeros(nf, dtype=wp.int32)
    mesh = wp.Mesh(points=wp.array(pts, dtype=wp.vec3), indices=wp.array(idx, dtype=wp.int32))
    wp.launch_tiled(tiled_queries, dim=1, inputs=[plain.id, mesh.id, lo, hi, start, d],
                    outputs=[box_counts, ray_counts, face_counts], block_dim=8)
    res["tiled_box"] = box_counts.numpy()
    res["tiled_ray"] = ray_counts.numpy()
    res["tiled_faces"] = face_counts.numpy()
    return res
