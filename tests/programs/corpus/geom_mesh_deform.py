"""A cloth-like grid mesh with velocities: accessors (mesh_get_point/_velocity/_index,
mesh_eval_face_normal, mesh_eval_velocity), box and sphere face queries collected and sorted,
points moved in place + refit(), a new points array assigned, velocities replaced."""

import numpy as np
import warp as wp


def grid(n):
    xs = np.linspace(0.0, 1.0, n)
    x, z = np.meshgrid(xs, xs, indexing="ij")
    pts = np.stack([x, 0.1 * np.sin(4.0 * x) * z, z], -1).reshape(-1, 3).astype(np.float32)
    idx = []
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = i * n + j, i * n + j + 1, (i + 1) * n + j, (i + 1) * n + j + 1
            idx += [a, c, b, b, c, d]
    return pts, np.array(idx, dtype=np.int32)


@wp.kernel
def accessors(mesh: wp.uint64, faces: wp.array(dtype=int), uv: wp.array(dtype=wp.vec2),
              corner: wp.array(dtype=wp.vec3), corner_vel: wp.array(dtype=wp.vec3), tri: wp.array(dtype=wp.vec3i),
              normal: wp.array(dtype=wp.vec3), pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    f = faces[tid]
    i0 = wp.mesh_get_index(mesh, f * 3 + 0)
    i1 = wp.mesh_get_index(mesh, f * 3 + 1)
    i2 = wp.mesh_get_index(mesh, f * 3 + 2)
    tri[tid] = wp.vec3i(i0, i1, i2)
    corner[tid] = wp.mesh_get_point(mesh, i1)
    corner_vel[tid] = wp.mesh_get_velocity(mesh, i2)
    normal[tid] = wp.mesh_eval_face_normal(mesh, f)
    pos[tid] = wp.mesh_eval_position(mesh, f, uv[tid][0], uv[tid][1])
    vel[tid] = wp.mesh_eval_velocity(mesh, f, uv[tid][0], uv[tid][1])


@wp.kernel
def box_faces(mesh: wp.uint64, lows: wp.array(dtype=wp.vec3), highs: wp.array(dtype=wp.vec3),
              hits: wp.array2d(dtype=wp.int32), counts: wp.array(dtype=int)):
    q, f = wp.tid()
    if f != 0:
        return
    query = wp.mesh_query_aabb(mesh, lows[q], highs[q])
    face = int(0)
    n = int(0)
    while wp.mesh_query_aabb_next(query, face):
        hits[q, face] = 1
        n += 1
    counts[q] = n


@wp.kernel
def sphere_faces(mesh: wp.uint64, center: wp.vec3, radius: float, hits: wp.array(dtype=wp.int32)):
    query = wp.mesh_query_sphere(mesh, center, radius)
    face = int(0)
    while wp.mesh_query_next(query, face):
        hits[face] = 1


@wp.kernel
def wave(points: wp.array(dtype=wp.vec3), velocities: wp.array(dtype=wp.vec3), t: float):
    tid = wp.tid()
    p = points[tid]
    v = wp.vec3(0.0, 0.5 * wp.cos(3.0 * p[0] + t), 0.0)
    velocities[tid] = v
    points[tid] = p + v * 0.1


@wp.kernel
def heights(mesh: wp.uint64, xz: wp.array(dtype=wp.vec2), out: wp.array(dtype=float), speed: wp.array(dtype=float)):
    tid = wp.tid()
    p = xz[tid]
    q = wp.mesh_query_ray(mesh, wp.vec3(p[0], 5.0, p[1]), wp.vec3(0.0, -1.0, 0.0), 100.0)
    if q.result:
        out[tid] = 5.0 - q.t
        speed[tid] = wp.mesh_eval_velocity(mesh, q.face, q.u, q.v)[1]
    else:
        out[tid] = -99.0


def run():
    n = 12
    pts, idx = grid(n)
    vel = np.zeros_like(pts)
    vel[:, 1] = np.linspace(-1.0, 1.0, len(pts))
    points = wp.array(pts, dtype=wp.vec3)
    velocities = wp.array(vel, dtype=wp.vec3)
    mesh = wp.Mesh(points=points, indices=wp.array(idx, dtype=wp.int32), velocities=velocities)
    nf = len(idx) // 3
    faces = wp.array(np.arange(0, nf, 7, dtype=np.int32), dtype=int)
    m = faces.shape[0]
    rng = np.random.default_rng(0)
    uvr = rng.dirichlet([1.0, 1.0, 1.0], size=m)[:, :2].astype(np.float32)
    uv = wp.array(uvr, dtype=wp.vec2)
    outs = [wp.zeros(m, dtype=wp.vec3), wp.zeros(m, dtype=wp.vec3), wp.zeros(m, dtype=wp.vec3i),
            wp.zeros(m, dtype=wp.vec3), wp.zeros(m, dtype=wp.vec3), wp.zeros(m, dtype=wp.vec3)]
    wp.launch(accessors, dim=m, inputs=[mesh.id, faces, uv], outputs=outs)
    res = {k: o.numpy() for k, o in zip(["corner", "corner_vel", "tri", "normal", "pos", "vel"], outs)}

    lows = wp.array([[0.0, -1.0, 0.0], [0.4, -1.0, 0.4], [0.9, 0.0, 0.9], [2.0, 2.0, 2.0]], dtype=wp.vec3)
    highs = wp.array([[0.2, 1.0, 0.2], [0.6, 1.0, 0.5], [1.0, 1.0, 1.0], [3.0, 3.0, 3.0]], dtype=wp.vec3)
    hits = wp.zeros((4, nf), dtype=wp.int32)
    counts = wp.zeros(4, dtype=int)
    wp.launch(box_faces, dim=(4, 1), inputs=[mesh.id, lows, highs, hits, counts])
    res["box_faces0"] = np.nonzero(hits.numpy()[0])[0]
    res["box_hits"] = hits.numpy().copy()
    res["box_counts"] = counts.numpy().copy()
    sphere_hits = wp.zeros(nf, dtype=wp.int32)
    wp.launch(sphere_faces, dim=1, inputs=[mesh.id, wp.vec3(0.5, 0.3, 0.5), 0.35, sphere_hits])
    res["sphere_hits"] = sphere_hits.numpy().copy()

    samples = wp.array(rng.uniform(0.05, 0.95, size=(20, 2)).astype(np.float32), dtype=wp.vec2)
    h = wp.zeros(20, dtype=float)
    s = wp.zeros(20, dtype=float)
    for step in range(3):
        wp.launch(wave, dim=len(pts), inputs=[mesh.points, mesh.velocities, 0.5 * step])
        mesh.refit()
    wp.launch(heights, dim=20, inputs=[mesh.id, samples, h, s])
    res["h_refit"] = h.numpy().copy()
    res["speed_refit"] = s.numpy().copy()

    lifted = wp.array(mesh.points.numpy() + np.float32([0.0, 1.0, 0.0]), dtype=wp.vec3)
    mesh.points = lifted
    mesh.velocities = wp.array(np.tile(np.float32([0.0, 2.0, 0.0]), (len(pts), 1)), dtype=wp.vec3)
    wp.launch(heights, dim=20, inputs=[mesh.id, samples, h, s])
    res["h_assigned"] = h.numpy().copy()
    res["speed_assigned"] = s.numpy().copy()
    wp.launch(box_faces, dim=(4, 1), inputs=[mesh.id, lows, highs, hits, counts])
    res["box_counts_moved"] = counts.numpy().copy()
    return res
