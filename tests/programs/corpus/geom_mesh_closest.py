"""Closest-point queries on a wp.Mesh (a bumpy icosphere): mesh_query_point with each sign mode,
max_dist cut-offs, furthest point, mesh_eval_position of the result, and the signed distance's gradient."""

import numpy as np
import warp as wp


def icosphere(levels):
    t = (1.0 + 5.0 ** 0.5) / 2.0
    verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
             (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    verts = [np.array(v, dtype=np.float64) / np.linalg.norm(v) for v in verts]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
             (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5),
             (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(levels):
        cache = {}

        def mid(a, b):
            key = (min(a, b), max(a, b))
            if key not in cache:
                m = verts[a] + verts[b]
                verts.append(m / np.linalg.norm(m))
                cache[key] = len(verts) - 1
            return cache[key]

        new = []
        for a, b, c in faces:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = new
    v = np.array(verts)
    bump = 1.0 + 0.15 * np.sin(3.0 * v[:, 0]) * np.cos(2.0 * v[:, 1])
    return (v * bump[:, None]).astype(np.float32), np.array(faces, dtype=np.int32).ravel()


@wp.kernel
def closest(mesh: wp.uint64, queries: wp.array(dtype=wp.vec3), max_dist: float,
            found: wp.array(dtype=wp.int32),
            points: wp.array(dtype=wp.vec3),
            sign_default: wp.array(dtype=float),
            sign_normal: wp.array(dtype=float),
            sign_winding: wp.array(dtype=float),
            sign_parity: wp.array(dtype=float),
            dist_unsigned: wp.array(dtype=float)):
    tid = wp.tid()
    p = queries[tid]
    q = wp.mesh_query_point(mesh, p, max_dist)
    if q.result:
        found[tid] = 1
        points[tid] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
        sign_default[tid] = q.sign
    qn = wp.mesh_query_point_sign_normal(mesh, p, max_dist)
    if qn.result:
        sign_normal[tid] = qn.sign
    qw = wp.mesh_query_point_sign_winding_number(mesh, p, max_dist, accuracy=2.0, threshold=0.5)
    if qw.result:
        sign_winding[tid] = qw.sign
    qp = wp.mesh_query_point_sign_parity(mesh, p, max_dist)
    if qp.result:
        sign_parity[tid] = qp.sign
    qu = wp.mesh_query_point_no_sign(mesh, p, max_dist)
    if qu.result:
        cp = wp.mesh_eval_position(mesh, qu.face, qu.u, qu.v)
        dist_unsigned[tid] = wp.length(cp - p)


@wp.kernel
def furthest(mesh: wp.uint64, queries: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    tid = wp.tid()
    p = queries[tid]
    q = wp.mesh_query_furthest_point_no_sign(mesh, p, 0.0)
    if q.result:
        out[tid] = wp.length(wp.mesh_eval_position(mesh, q.face, q.u, q.v) - p)


@wp.kernel
def sdf(mesh: wp.uint64, queries: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    tid = wp.tid()
    p = queries[tid]
    q = wp.mesh_query_point(mesh, p, 1.0e6)
    if q.result:
        cp = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
        out[tid] = q.sign * wp.length(cp - p)


def run():
    pts, idx = icosphere(2)
    mesh = wp.Mesh(points=wp.array(pts, dtype=wp.vec3), indices=wp.array(idx, dtype=wp.int32),
                   support_winding_number=True)
    rng = np.random.default_rng(4)
    n = 160
    dirs = rng.normal(size=(n, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    radii = rng.uniform(0.3, 2.0, size=n)
    queries_np = (dirs * radii[:, None]).astype(np.float32)
    queries = wp.array(queries_np, dtype=wp.vec3)
    outs = [wp.zeros(n, dtype=wp.int32), wp.zeros(n, dtype=wp.vec3)] + [wp.zeros(n, dtype=float) for _ in range(5)]
    wp.launch(closest, dim=n, inputs=[mesh.id, queries, 1.0e6], outputs=outs)
    near = [wp.zeros(n, dtype=wp.int32), wp.zeros(n, dtype=wp.vec3)] + [wp.zeros(n, dtype=float) for _ in range(5)]
    wp.launch(closest, dim=n, inputs=[mesh.id, queries, 0.25], outputs=near)
    far = wp.zeros(n, dtype=float)
    wp.launch(furthest, dim=n, inputs=[mesh.id, queries, far])

    qs = wp.array(queries_np[:40], dtype=wp.vec3, requires_grad=True)
    d = wp.zeros(40, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(sdf, dim=40, inputs=[mesh.id, qs, d])
    tape.backward(grads={d: wp.ones(40, dtype=float)})
    return {
        "found": outs[0].numpy(),
        "closest": outs[1].numpy(),
        "sign": outs[2].numpy(),
        "sign_normal": outs[3].numpy(),
        "sign_winding": outs[4].numpy(),
        "sign_parity": outs[5].numpy(),
        "dist": outs[6].numpy(),
        "near_found": near[0].numpy(),
        "near_closest": near[1].numpy(),
        "near_dist": near[6].numpy(),
        "furthest": far.numpy(),
        "sdf": d.numpy(),
        "sdf_grad": qs.grad.numpy(),
        "inside_count": int((outs[2].numpy() < 0).sum()),
    }


TOLERANCE = {"closest": (1e-5, 1e-5), "near_closest": (1e-5, 1e-5), "sdf_grad": (1e-4, 1e-4)}
