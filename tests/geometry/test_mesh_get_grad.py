"""Gradients through `mesh_get(id).points[i]` and `.velocities[i]`: as in Warp, the arrays
a kernel reads through mesh_get differentiate into the mesh's own arrays' `.grad`."""

import numpy as np

import weft as wp

TETRA = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
FACES = np.array([0, 1, 2, 0, 2, 3, 0, 3, 1, 1, 3, 2], np.int32)


@wp.func
def triangle_area(mesh_id: wp.uint64, t: int):
    mesh = wp.mesh_get(mesh_id)
    i, j, k = mesh.indices[t * 3], mesh.indices[t * 3 + 1], mesh.indices[t * 3 + 2]
    a = mesh.points[i]
    return wp.length(wp.cross(mesh.points[j] - a, mesh.points[k] - a)) * 0.5


@wp.kernel
def total_area(mesh_id: wp.uint64, out: wp.array(dtype=wp.float32)):
    wp.atomic_add(out, 0, triangle_area(mesh_id, wp.tid()))


@wp.kernel
def weighted_speed(mesh_id: wp.uint64, w: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    wp.atomic_add(out, 0, wp.dot(wp.mesh_get(mesh_id).velocities[i], w[i]))


def area64(p):
    t = p[FACES.reshape(-1, 3)]
    return 0.5 * np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1).sum()


def area_gradient(points):
    mesh = wp.Mesh(points=points, indices=wp.array(FACES, dtype=wp.int32))
    out = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(total_area, 4, inputs=[mesh.id], outputs=[out])
    tape.backward(loss=out)
    return float(out.numpy()[0]), mesh


def test_area_gradient_reaches_the_mesh_points():
    rng = np.random.default_rng(3)
    p0 = TETRA + 0.1 * rng.standard_normal(TETRA.shape)
    points = wp.array(p0, dtype=wp.vec3, requires_grad=True)
    area, mesh = area_gradient(points)
    np.testing.assert_allclose(area, area64(p0), rtol=1e-6)
    h = 1e-6
    fd = np.zeros_like(p0)
    for i in range(4):
        for j in range(3):
            d = np.zeros_like(p0)
            d[i, j] = h
            fd[i, j] = (area64(p0 + d) - area64(p0 - d)) / (2 * h)
    assert mesh.points is points
    np.testing.assert_allclose(points.grad.numpy(), fd, atol=1e-5)
    assert np.abs(fd).min() > 1e-3  # every component carries gradient


def test_points_without_gradient_take_none():
    points = wp.array(TETRA, dtype=wp.vec3)
    area, _ = area_gradient(points)  # the adjoint runs and writes nowhere
    np.testing.assert_allclose(area, area64(TETRA), rtol=1e-6)
    assert points.grad is None


def test_new_points_bring_their_gradient():
    mesh = wp.Mesh(points=wp.array(TETRA, dtype=wp.vec3), indices=wp.array(FACES, dtype=wp.int32))
    moved = wp.array(2.0 * TETRA, dtype=wp.vec3, requires_grad=True)
    mesh.points = moved
    out = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(total_area, 4, inputs=[mesh.id], outputs=[out])
    tape.backward(loss=out)
    # area scales with the square of the size: the gradient at 2x is twice that at 1x
    _, ref = area_gradient(wp.array(TETRA, dtype=wp.vec3, requires_grad=True))
    np.testing.assert_allclose(moved.grad.numpy(), 2.0 * ref.points.grad.numpy(), rtol=1e-5)


def test_velocity_gradient():
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((4, 3))
    vel = wp.array(rng.standard_normal((4, 3)), dtype=wp.vec3, requires_grad=True)
    mesh = wp.Mesh(points=wp.array(TETRA, dtype=wp.vec3), indices=wp.array(FACES, dtype=wp.int32), velocities=vel)
    w = wp.array(w0, dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(weighted_speed, 4, inputs=[mesh.id, w], outputs=[out])
    tape.backward(loss=out)
    np.testing.assert_allclose(vel.grad.numpy(), w0, rtol=1e-6)  # d sum(v . w) / dv = w
    np.testing.assert_allclose(w.grad.numpy(), vel.numpy(), rtol=1e-6)


# The accessors differentiate into the points and velocities too (Warp's give zero) ----------
@wp.kernel
def accessor_loss(mesh_id: wp.uint64, uv: wp.array(dtype=wp.vec2), w: wp.array(dtype=wp.vec3),
                  out: wp.array(dtype=wp.float32)):
    t = wp.tid()
    p = wp.mesh_eval_position(mesh_id, t, uv[t][0], uv[t][1])
    v = wp.mesh_eval_velocity(mesh_id, t, uv[t][0], uv[t][1])
    n = wp.mesh_eval_face_normal(mesh_id, t)
    corner = wp.mesh_get_point(mesh_id, 3 * t + 1)
    speed = wp.mesh_get_velocity(mesh_id, 3 * t + 2)
    wp.atomic_add(out, 0, wp.dot(p, w[t]) + wp.dot(v, w[t]) * 2.0 + wp.dot(n, w[t]) * 3.0
                  + wp.length_sq(corner) + wp.dot(speed, corner))


def accessor_loss64(p, vel, uv, w):
    total = 0.0
    for t, (i, j, k) in enumerate(FACES.reshape(-1, 3)):
        u, v = uv[t]
        pos = p[i] * u + p[j] * v + p[k] * (1 - u - v)
        speed = vel[i] * u + vel[j] * v + vel[k] * (1 - u - v)
        normal = np.cross(p[j] - p[i], p[k] - p[i])
        normal /= np.linalg.norm(normal)
        total += pos @ w[t] + 2 * speed @ w[t] + 3 * normal @ w[t] + p[j] @ p[j] + vel[k] @ p[j]
    return total


def test_accessors_differentiate_into_the_points_and_velocities():
    """mesh_eval_position, mesh_eval_velocity, mesh_eval_face_normal, mesh_get_point and
    mesh_get_velocity: gradients with respect to the points and velocities against central
    differences of a float64 evaluation."""
    rng = np.random.default_rng(8)
    p0 = TETRA + 0.1 * rng.standard_normal(TETRA.shape)
    v0 = rng.standard_normal((4, 3))
    uv0 = rng.uniform(0.1, 0.4, (4, 2))
    w0 = rng.standard_normal((4, 3))
    points = wp.array(p0, dtype=wp.vec3, requires_grad=True)
    vel = wp.array(v0, dtype=wp.vec3, requires_grad=True)
    mesh = wp.Mesh(points=points, indices=wp.array(FACES, dtype=wp.int32), velocities=vel)
    out = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(accessor_loss, 4, inputs=[mesh.id, wp.array(uv0, dtype=wp.vec2), wp.array(w0, dtype=wp.vec3)],
                  outputs=[out])
    tape.backward(loss=out)
    p64, v64 = np.asarray(points.numpy(), np.float64), np.asarray(vel.numpy(), np.float64)
    uv64 = np.asarray(wp.array(uv0, dtype=wp.vec2).numpy(), np.float64)
    w64 = np.asarray(wp.array(w0, dtype=wp.vec3).numpy(), np.float64)
    np.testing.assert_allclose(out.numpy()[0], accessor_loss64(p64, v64, uv64, w64), rtol=1e-5)
    h = 1e-6
    for array, base in ((points, p64), (vel, v64)):
        fd = np.zeros_like(base)
        for i in range(4):
            for j in range(3):
                d = np.zeros_like(base)
                d[i, j] = h
                if array is points:
                    plus, minus = accessor_loss64(p64 + d, v64, uv64, w64), accessor_loss64(p64 - d, v64, uv64, w64)
                else:
                    plus, minus = accessor_loss64(p64, v64 + d, uv64, w64), accessor_loss64(p64, v64 - d, uv64, w64)
                fd[i, j] = (plus - minus) / (2 * h)
        np.testing.assert_allclose(array.grad.numpy(), fd, rtol=1e-4, atol=1e-4)
        assert np.abs(fd).max() > 0.5


def test_accessors_of_points_without_gradient():
    mesh = wp.Mesh(points=wp.array(TETRA, dtype=wp.vec3), indices=wp.array(FACES, dtype=wp.int32))
    uv = wp.array(np.full((4, 2), 0.25), dtype=wp.vec2, requires_grad=True)
    w = wp.array(np.ones((4, 3)), dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(accessor_loss, 4, inputs=[mesh.id, uv, w], outputs=[out])
    tape.backward(loss=out)  # (the points' adjoint goes nowhere; the others' are there)
    assert mesh.points.grad is None and np.abs(w.grad.numpy()).max() > 0


@wp.kernel
def plane_penalty(mesh_id: wp.uint64, x: wp.array(dtype=wp.vec3), radius: float, loss: wp.array(dtype=wp.float32)):
    i = wp.tid()
    q = wp.mesh_query_point_no_sign(mesh_id, x[i], 1.0)
    if q.result:
        d = wp.length(x[i] - wp.mesh_eval_position(mesh_id, q.face, q.u, q.v))
        if d < radius:
            wp.atomic_add(loss, 0, (radius - d) * (radius - d))


def test_a_contact_penalty_differentiates_into_the_mesh_points():
    """The closest point's coordinates are constants of differentiation, and rightly so: they
    minimise the distance, so the distance's derivative with respect to them is zero, and the
    gradient with respect to the corners through mesh_eval_position is the whole gradient
    (points over the inside of one triangle: the distance to its plane, in float64)."""
    corners = np.array([[0.0, 0.0, 0.0], [2.0, 0.1, 0.0], [0.0, -0.1, 2.0]])
    probes = np.array([[0.4, 0.15, 0.5], [0.8, -0.1, 0.3], [0.3, 0.12, 1.0]])
    radius = 0.3

    def loss64(c):
        n = np.cross(c[1] - c[0], c[2] - c[0])
        n /= np.linalg.norm(n)
        d = np.abs((probes - c[0]) @ n)
        return float(np.sum((radius - d) ** 2))

    points = wp.array(corners, dtype=wp.vec3, requires_grad=True)
    mesh = wp.Mesh(points=points, indices=wp.array([0, 1, 2], dtype=wp.int32))
    loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(plane_penalty, 3, inputs=[mesh.id, wp.array(probes, dtype=wp.vec3), radius, loss])
    tape.backward(loss=loss)
    c64 = np.asarray(points.numpy(), np.float64)
    np.testing.assert_allclose(loss.numpy()[0], loss64(c64), rtol=1e-5)
    h, fd = 1e-6, np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            d = np.zeros((3, 3))
            d[i, j] = h
            fd[i, j] = (loss64(c64 + d) - loss64(c64 - d)) / (2 * h)
    np.testing.assert_allclose(points.grad.numpy(), fd, rtol=1e-3, atol=1e-4)
    assert np.abs(fd).max() > 0.05
