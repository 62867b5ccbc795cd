"""Particles falling onto a triangle mesh (as in Warp's particle/mesh examples): mesh_query_point_no_sign
for contact, mesh_eval_face_normal and mesh_eval_velocity of a moving mesh for the response, many
small steps; then the gradient of a contact-penalty loss with respect to the particles. (Its
gradient with respect to the mesh's points is zero in Warp, whose mesh accessors are constants of
differentiation; weft's is right and is checked against finite differences in
tests/geometry/test_mesh_get_grad.py.)"""

import numpy as np
import warp as wp


def bowl(n=10):
    xs = np.linspace(-1.0, 1.0, n)
    x, z = np.meshgrid(xs, xs, indexing="ij")
    y = 0.4 * (x * x + z * z)
    pts = np.stack([x, y, z], -1).reshape(-1, 3).astype(np.float32)
    idx = []
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = i * n + j, i * n + j + 1, (i + 1) * n + j, (i + 1) * n + j + 1
            idx += [a, b, d, a, d, c]
    return pts, np.array(idx, dtype=np.int32)


@wp.kernel
def simulate(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), radius: float, dt: float,
             contacts: wp.array(dtype=int)):
    tid = wp.tid()
    p = x[tid]
    vel = v[tid] + wp.vec3(0.0, -9.8, 0.0) * dt
    q = wp.mesh_query_point_no_sign(mesh, p, radius * 2.0)
    if q.result:
        cp = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
        delta = p - cp
        dist = wp.length(delta)
        if dist < radius:
            n = wp.mesh_eval_face_normal(mesh, q.face)
            if wp.dot(delta, n) < 0.0:
                n = -n
            mesh_v = wp.mesh_eval_velocity(mesh, q.face, q.u, q.v)
            rel = vel - mesh_v
            vn = wp.dot(rel, n)
            if vn < 0.0:
                vel = vel - (1.0 + 0.5) * vn * n
            p = cp + n * radius
            wp.atomic_add(contacts, tid, 1)
    x[tid] = p + vel * dt
    v[tid] = vel


@wp.kernel
def penalty(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), radius: float, loss: wp.array(dtype=float)):
    tid = wp.tid()
    p = x[tid]
    q = wp.mesh_query_point_no_sign(mesh, p, 1.0)
    if q.result:
        cp = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
        d = wp.length(p - cp)
        if d < radius:
            wp.atomic_add(loss, 0, (radius - d) * (radius - d))


def run():
    pts, idx = bowl()
    vel = np.zeros_like(pts)
    vel[:, 1] = 0.2
    mesh = wp.Mesh(points=wp.array(pts, dtype=wp.vec3), indices=wp.array(idx, dtype=wp.int32),
                   velocities=wp.array(vel, dtype=wp.vec3))
    rng = np.random.default_rng(8)
    n = 48
    x0 = np.concatenate([rng.uniform(-0.7, 0.7, (n, 1)), rng.uniform(0.5, 1.2, (n, 1)), rng.uniform(-0.7, 0.7, (n, 1))],
                        axis=1).astype(np.float32)
    x = wp.array(x0, dtype=wp.vec3)
    v = wp.zeros(n, dtype=wp.vec3)
    contacts = wp.zeros(n, dtype=int)
    for _ in range(60):
        wp.launch(simulate, dim=n, inputs=[mesh.id, x, v, 0.05, 1.0 / 120.0, contacts])
    res = {"x": x.numpy(), "v": v.numpy(), "contacts": contacts.numpy()}

    mp = wp.array(pts, dtype=wp.vec3, requires_grad=True)
    gmesh = wp.Mesh(points=mp, indices=wp.array(idx, dtype=wp.int32))
    probe = np.concatenate([rng.uniform(-0.8, 0.8, (n, 1)), np.zeros((n, 1)), rng.uniform(-0.8, 0.8, (n, 1))], axis=1)
    probe[:, 1] = 0.4 * (probe[:, 0] ** 2 + probe[:, 2] ** 2) + rng.uniform(-0.15, 0.15, n)
    xp = wp.array(probe.astype(np.float32), dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(penalty, dim=n, inputs=[gmesh.id, xp, 0.2, loss])
    tape.backward(loss)
    res.update({"loss": loss.numpy(), "x_grad": xp.grad.numpy()})
    return res


TOLERANCE = {"x": (1e-4, 1e-4), "v": (1e-3, 1e-3), "loss": (1e-5, 1e-6), "x_grad": (1e-4, 1e-5)}
