"""Edge cases of the geometry types: a single-triangle mesh, a mesh with degenerate (zero-area)
faces that closest-point queries skip, query points exactly on the surface and on vertices,
max_dist cut-offs at the exact distance, furthest points with tied corners, the fields of a query
that finds nothing, a one-box BVH, rays along box faces, a hash grid built from one point and from points far outside
its cell range, and an empty query box."""

import numpy as np
import warp as wp


@wp.kernel
def point_queries(mesh: wp.uint64, pts: wp.array(dtype=wp.vec3), max_dist: wp.array(dtype=float),
                  found: wp.array(dtype=wp.int32), face: wp.array(dtype=wp.int32), dist: wp.array(dtype=float),
                  sign: wp.array(dtype=float)):
    tid = wp.tid()
    q = wp.mesh_query_point_no_sign(mesh, pts[tid], max_dist[tid])
    found[tid] = wp.where(q.result, 1, 0)
    if q.result:
        face[tid] = q.face
        dist[tid] = wp.length(wp.mesh_eval_position(mesh, q.face, q.u, q.v) - pts[tid])
    qn = wp.mesh_query_point_sign_normal(mesh, pts[tid], max_dist[tid])
    if qn.result:
        sign[tid] = qn.sign


@wp.kernel
def furthest(mesh: wp.uint64, pts: wp.array(dtype=wp.vec3), min_dist: wp.array(dtype=float),
             out: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    q = wp.mesh_query_furthest_point_no_sign(mesh, pts[tid], min_dist[tid])
    out[tid] = wp.vec3(wp.where(q.result, 1.0, 0.0), float(q.face), q.u + q.v)


@wp.kernel
def rays(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3), t: wp.array(dtype=float),
         face: wp.array(dtype=wp.int32)):
    tid = wp.tid()
    q = wp.mesh_query_ray(mesh, starts[tid], dirs[tid], 10.0)
    t[tid] = wp.where(q.result, q.t, -1.0)
    face[tid] = q.face  # read without checking q.result


@wp.kernel
def one_box(bvh: wp.uint64, lows: wp.array(dtype=wp.vec3), highs: wp.array(dtype=wp.vec3), out: wp.array(dtype=int)):
    tid = wp.tid()
    q = wp.bvh_query_aabb(bvh, lows[tid], highs[tid])
    k = int(0)
    n = int(0)
    while wp.bvh_query_next(q, k):
        n += 1
    out[tid] = n


@wp.kernel
def box_rays(bvh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
             max_dist: wp.array(dtype=float), hits: wp.array2d(dtype=int)):
    i = wp.tid()
    q = wp.bvh_query_ray(bvh, starts[i], dirs[i])
    b = int(0)
    while wp.bvh_query_next(q, b, max_dist[i]):
        hits[i, b] = 1


@wp.kernel
def grid_counts(grid: wp.uint64, x: wp.array(dtype=wp.vec3), qs: wp.array(dtype=wp.vec3), r: float,
                out: wp.array(dtype=int)):
    tid = wp.tid()
    n = int(0)
    for j in wp.hash_grid_query(grid, qs[tid], r):
        if wp.length(x[j] - qs[tid]) <= r:
            n += 1
    out[tid] = n


def run():
    res = {}
    # one triangle, plus a mesh with two degenerate faces (a repeated vertex and collinear points)
    tri = wp.Mesh(points=wp.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=wp.vec3),
                  indices=wp.array([0, 1, 2], dtype=wp.int32))
    pts = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [0, 1, 0], [1, 1, 0]], dtype=np.float32)
    deg = wp.Mesh(points=wp.array(pts, dtype=wp.vec3),
                  indices=wp.array([0, 0, 1, 1, 2, 3, 0, 1, 4, 1, 5, 4], dtype=wp.int32))
    qs = np.array([[0.25, 0.25, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.25, 0.25, 0.5], [0.25, 0.25, -0.5],
                   [2.5, 0.0, 0.3], [2.5, 0.0, 0.0], [3.0, 0.5, 0.0], [0.2, 0.2, 1.0]], dtype=np.float32)
    md = np.array([1.0, 1.0, 1.0, 0.5, 0.500001, 10.0, 10.0, 0.5, 0.99], dtype=np.float32)
    m = len(qs)
    for name, mesh in (("tri", tri), ("deg", deg)):
        outs = [wp.zeros(m, dtype=wp.int32), wp.full(m, -1, dtype=wp.int32), wp.zeros(m, dtype=float),
                wp.zeros(m, dtype=float)]
        wp.launch(point_queries, dim=m, inputs=[mesh.id, wp.array(qs, dtype=wp.vec3), wp.array(md, dtype=float)],
                  outputs=outs)
        res[f"{name}_found"] = outs[0].numpy()
        res[f"{name}_dist"] = outs[2].numpy()
        res[f"{name}_sign"] = outs[3].numpy()
        far = wp.zeros(m, dtype=wp.vec3)
        wp.launch(furthest, dim=m, inputs=[mesh.id, wp.array(qs, dtype=wp.vec3), wp.array(md * 3.0, dtype=float), far])
        res[f"{name}_furthest"] = far.numpy()
        if name == "deg":
            res["deg_face"] = outs[1].numpy()
    starts = wp.array([[0.2, 0.2, 1.0], [0.5, 0.5, 1.0], [0.0, 0.0, 1.0], [2.5, 0.0, 1.0], [0.3, 0.3, 0.0]],
                      dtype=wp.vec3)
    dirs = wp.array([[0, 0, -1], [0, 0, -1], [0, 0, -1], [0, 0, -1], [1, 0, 0]], dtype=wp.vec3)
    t = wp.zeros(5, dtype=float)
    f = wp.zeros(5, dtype=wp.int32)
    wp.launch(rays, dim=5, inputs=[deg.id, starts, dirs, t, f])
    res["deg_ray_t"] = t.numpy()
    res["deg_ray_face"] = f.numpy()

    bvh = wp.Bvh(wp.array([[0, 0, 0]], dtype=wp.vec3), wp.array([[1, 1, 1]], dtype=wp.vec3))
    lows = wp.array([[0.5, 0.5, 0.5], [1.0, 1.0, 1.0], [1.01, 0, 0], [-1, -1, -1], [0.6, 0.6, 0.6]], dtype=wp.vec3)
    highs = wp.array([[0.6, 0.6, 0.6], [2.0, 2.0, 2.0], [2.0, 1, 1], [-0.5, 2, 2], [0.4, 0.4, 0.4]], dtype=wp.vec3)
    out = wp.zeros(5, dtype=int)
    wp.launch(one_box, dim=5, inputs=[bvh.id, lows, highs, out])
    res["one_box"] = out.numpy()

    # rays along grid lines touching box faces, and boxes entered exactly at max_dist
    boxes = wp.Bvh(wp.array([[-3, -0.5, -0.5], [-0.5, -0.5, -0.5], [2, -0.5, -0.5], [5, 0.5, -0.5]], dtype=wp.vec3),
                   wp.array([[-2, 0.5, 0.5], [0.5, 0.5, 0.5], [3, 0.5, 0.5], [6, 1.5, 0.5]], dtype=wp.vec3))
    rs = wp.array([[0, 0, 0], [0, 0, 0], [0, 0.5, 0], [0, 0.5, 0.5], [0, -0.5, 0], [1, 0, 0]], dtype=wp.vec3)
    rd = wp.array([[1, 0, 0], [2, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0]], dtype=wp.vec3)
    rm = wp.array([1e9, 1.0, 1e9, 1e9, 1e9, 1.0], dtype=float)
    rh = wp.zeros((6, 4), dtype=int)
    wp.launch(box_rays, dim=6, inputs=[boxes.id, rs, rd, rm, rh])
    res["box_ray_hits"] = rh.numpy()

    single = wp.array([[0.5, 0.5, 0.5]], dtype=wp.vec3)
    grid = wp.HashGrid(4, 4, 4)
    grid.build(single, 0.25)
    qg = wp.array([[0.5, 0.5, 0.5], [0.7, 0.5, 0.5], [0.76, 0.5, 0.5], [1.5, 0.5, 0.5]], dtype=wp.vec3)
    cnt = wp.zeros(4, dtype=int)
    wp.launch(grid_counts, dim=4, inputs=[grid.id, single, qg, 0.25, cnt])
    res["single_grid"] = cnt.numpy()
    far = wp.array(np.array([[100.0, -50.0, 7.0], [100.1, -50.0, 7.0], [-300.0, 2.0, 1.0], [1.0, 2.0, 1.0]],
                            dtype=np.float32), dtype=wp.vec3)
    grid.build(far, 0.25)
    cnt2 = wp.zeros(4, dtype=int)
    wp.launch(grid_counts, dim=4, inputs=[grid.id, far, far, 0.25, cnt2])
    res["far_grid"] = cnt2.numpy()
    return res
