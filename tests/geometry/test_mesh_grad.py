"""Gradients of the mesh queries and geometry builtins, against float64 finite differences
and closed forms. As in Warp, the mesh is a constant: gradients flow to the query point, the
ray and the barycentric coordinates, not into the mesh's points."""

import numpy as np
import pytest

import weft as wp


def torus(n, m, r=1.0, s=0.35):
    u = np.linspace(0, 2 * np.pi, n, endpoint=False)[:, None]
    v = np.linspace(0, 2 * np.pi, m, endpoint=False)[None, :]
    pts = np.stack([(r + s * np.cos(v)) * np.cos(u), (r + s * np.cos(v)) * np.sin(u), s * np.sin(v) + 0 * u], -1)
    i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    a, b = i * m + j, ((i + 1) % n) * m + j
    c, d = ((i + 1) % n) * m + (j + 1) % m, i * m + (j + 1) % m
    idx = np.stack([np.stack([a, b, c], -1), np.stack([a, c, d], -1)], 2).reshape(-1)
    return pts.reshape(-1, 3).astype(np.float32), idx.astype(np.int32)


@wp.kernel
def point_loss(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), w: wp.vec3, loss: wp.array(dtype=float)):
    i = wp.tid()
    p = qs[i]
    r = wp.mesh_query_point_no_sign(mesh, p, 1.0e6)
    q = wp.mesh_eval_position(mesh, r.face, r.u, r.v)
    wp.atomic_add(loss, 0, w[0] * wp.length_sq(p - q) + w[1] * r.u + w[2] * r.v)


@wp.kernel
def faces_of(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), face: wp.array(dtype=int)):
    i = wp.tid()
    face[i] = wp.mesh_query_point_no_sign(mesh, qs[i], 1.0e6).face


def plane_bary(p, a, b, c):
    """(u, v) of the projection of p on the plane of abc: the closest point when it is
    inside the face (Warp's convention: u weights a, v weights b)."""
    m = np.stack([a - c, b - c], 1)
    uv, *_ = np.linalg.lstsq(m, p - c, rcond=None)
    return uv


def grad_of(kernel, mesh, qs, w):
    q = wp.array(qs, dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, len(qs), inputs=[mesh.id, q, wp.vec3(*w), loss])
    tape.backward(loss)
    return q.grad.numpy().astype(np.float64)


@pytest.fixture(scope="module")
def setup():
    pts, idx = torus(16, 8)
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(idx, dtype=wp.int32))
    rng = np.random.default_rng(0)
    qs = (rng.random((300, 3)) * [3.0, 3.0, 1.2] - [1.5, 1.5, 0.6]).astype(np.float32)
    face = wp.zeros(300, dtype=int)
    wp.launch(faces_of, 300, inputs=[mesh.id, wp.array(qs, dtype=wp.vec3), face])
    tri = pts[idx.reshape(-1, 3)].astype(np.float64)
    keep = []  # queries whose closest point lies well inside its face (a smooth region)
    for i, f in enumerate(face.numpy()):
        u, v = plane_bary(qs[i].astype(np.float64), *tri[f])
        if min(u, v, 1 - u - v) > 0.05:
            keep.append(i)
    qs = qs[keep][:40]
    return mesh, qs, face.numpy()[keep][:40], tri


def test_distance_gradient_is_twice_the_offset(setup):
    mesh, qs, faces, tri = setup
    g = grad_of(point_loss, mesh, qs, (1.0, 0.0, 0.0))
    for p, f, gp in zip(qs.astype(np.float64), faces, g):
        u, v = plane_bary(p, *tri[f])
        q = tri[f, 0] * u + tri[f, 1] * v + tri[f, 2] * (1 - u - v)
        np.testing.assert_allclose(gp, 2 * (p - q), atol=2e-5)


@pytest.mark.parametrize("which", [1, 2])
def test_barycentric_gradients_match_finite_differences(setup, which):
    mesh, qs, faces, tri = setup
    w = (0.0, 1.0, 0.0) if which == 1 else (0.0, 0.0, 1.0)
    g = grad_of(point_loss, mesh, qs, w)
    h = 1e-6
    for p, f, gp in zip(qs.astype(np.float64), faces, g):
        fd = [(plane_bary(p + h * e, *tri[f])[which - 1] - plane_bary(p - h * e, *tri[f])[which - 1]) / (2 * h)
              for e in np.eye(3)]
        np.testing.assert_allclose(gp, fd, atol=2e-4)


@wp.kernel
def ray_loss(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
             loss: wp.array(dtype=float)):
    i = wp.tid()
    r = wp.mesh_query_ray(mesh, starts[i], dirs[i], 1.0e6)
    if r.result:
        wp.atomic_add(loss, 0, r.t + 0.5 * r.u)


def test_ray_gradients_match_finite_differences():
    pts, idx = torus(16, 8)
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(idx, dtype=wp.int32))
    tri = pts[idx.reshape(-1, 3)].astype(np.float64)
    starts = np.float32([[0.0, 0.0, 2.0], [1.1, 0.1, 1.5], [-2.0, 0.2, 0.05]])
    dirs = np.float32([[0.55, 0.2, -1.0], [0.05, -0.1, -1.0], [1.0, 0.05, 0.02]])
    s = wp.array(starts, dtype=wp.vec3, requires_grad=True)
    d = wp.array(dirs, dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(ray_loss, 3, inputs=[mesh.id, s, d, loss])
    tape.backward(loss)

    def value(st, di):  # float64: the first hit's t + 0.5 u over all faces
        a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
        e1, e2 = b - a, c - a
        pv = np.cross(di, e2)
        det = (e1 * pv).sum(-1)
        tv = st - a
        s1 = (tv * pv).sum(-1) / det
        qv = np.cross(tv, e1)
        s2 = (qv * di).sum(-1) / det
        t = (e2 * qv).sum(-1) / det
        ok = (s1 >= 0) & (s2 >= 0) & (s1 + s2 <= 1) & (t >= 0)
        k = np.argmin(np.where(ok, t, np.inf))
        assert ok[k]
        return t[k] + 0.5 * (1 - s1[k] - s2[k])

    h = 1e-6
    for i in range(3):
        st, di = starts[i].astype(np.float64), dirs[i].astype(np.float64)
        fd_s = [(value(st + h * e, di) - value(st - h * e, di)) / (2 * h) for e in np.eye(3)]
        fd_d = [(value(st, di + h * e) - value(st, di - h * e)) / (2 * h) for e in np.eye(3)]
        np.testing.assert_allclose(s.grad.numpy()[i], fd_s, rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(d.grad.numpy()[i], fd_d, rtol=1e-3, atol=1e-4)


@wp.kernel
def edge_loss(p: wp.array(dtype=wp.vec3d), w: wp.vec3d, loss: wp.array(dtype=wp.float64)):
    st = wp.closest_point_edge_edge(p[0], p[1], p[2], p[3], wp.float64(1.0e-12))
    loss[0] = wp.dot(st, w)


def edge_edge_np(p1, q1, p2, q2):
    """Closest points of two skew segments with an interior solution (float64)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, b, c, f = d1 @ d1, d2 @ d2, d1 @ d2, d1 @ r, d2 @ r
    s = (b * f - c * e) / (a * e - b * b)
    t = (b * s + f) / e
    return np.array([s, t, np.linalg.norm(p1 + s * d1 - p2 - t * d2)])


@pytest.mark.parametrize("w", [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)])
def test_edge_edge_gradients_match_finite_differences(w):
    pts = np.array([[0.0, 0.0, 0.0], [1.0, 0.2, 0.1], [0.3, -0.5, 0.4], [0.6, 0.8, 0.3]])
    p = wp.array(pts, dtype=wp.vec3d, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(edge_loss, 1, inputs=[p, wp.vec3d(*w), loss])
    tape.backward(loss)
    st = edge_edge_np(*pts)
    assert 0 < st[0] < 1 and 0 < st[1] < 1
    np.testing.assert_allclose(loss.numpy()[0], st @ w, rtol=1e-12)
    h = 1e-6
    fd = np.zeros((4, 3))
    for k in range(4):
        for j in range(3):
            plus, minus = pts.copy(), pts.copy()
            plus[k, j] += h
            minus[k, j] -= h
            fd[k, j] = (edge_edge_np(*plus) @ w - edge_edge_np(*minus) @ w) / (2 * h)
    np.testing.assert_allclose(p.grad.numpy(), fd, rtol=1e-6, atol=1e-8)


@wp.kernel
def eval_loss(mesh: wp.uint64, uv: wp.array(dtype=wp.vec2), loss: wp.array(dtype=float)):
    p = wp.mesh_eval_position(mesh, 3, uv[0][0], uv[0][1])
    v = wp.mesh_eval_velocity(mesh, 3, uv[0][0], uv[0][1])
    loss[0] = p[0] + 2.0 * p[1] + 3.0 * p[2] - 0.5 * v[0] + v[2]


def test_eval_position_gradient():
    pts, idx = torus(6, 4)
    vel = np.random.default_rng(5).normal(size=pts.shape).astype(np.float32)
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(idx, dtype=wp.int32), velocities=wp.array(vel, dtype=wp.vec3))
    uv = wp.array(np.float32([[0.2, 0.3]]), dtype=wp.vec2, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(eval_loss, 1, inputs=[mesh.id, uv, loss])
    tape.backward(loss)
    a, b, c = pts[idx[9:12]].astype(np.float64)
    va, vb, vc = vel[idx[9:12]].astype(np.float64)
    w, wv = np.array([1.0, 2.0, 3.0]), np.array([-0.5, 0.0, 1.0])
    expected = [(a - c) @ w + (va - vc) @ wv, (b - c) @ w + (vb - vc) @ wv]
    np.testing.assert_allclose(uv.grad.numpy()[0], expected, rtol=1e-5)


@wp.kernel
def box_loss(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    p = qs[i]
    for f in wp.mesh_query_aabb(mesh, p - wp.vec3(0.3), p + wp.vec3(0.3)):
        c = (wp.mesh_get_point(mesh, 3 * f) + wp.mesh_get_point(mesh, 3 * f + 1) + wp.mesh_get_point(mesh, 3 * f + 2))
        wp.atomic_add(loss, 0, wp.length_sq(p - c / 3.0))


def test_gradients_through_a_query_loop():
    """Reverse mode through `for f in mesh_query_aabb(...)` (a loop whose carried query
    holds the traversal stack): d/dp sum |p - c_f|^2 = sum 2 (p - c_f) over the faces found."""
    pts, idx = torus(12, 6)
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(idx, dtype=wp.int32))
    qn = np.float32([[1.0, 0.1, 0.2], [-0.9, 0.3, 0.0], [0.1, -1.2, 0.25]])
    qs = wp.array(qn, dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(box_loss, 3, inputs=[mesh.id, qs, loss])
    tape.backward(loss)
    tri = pts[idx.reshape(-1, 3)]
    lo, hi, centers = tri.min(1), tri.max(1), tri.astype(np.float64).mean(1)
    for p, g in zip(qn, qs.grad.numpy()):
        found = ~((lo > p + np.float32(0.3)).any(1) | (hi < p - np.float32(0.3)).any(1))  # float32, as the query
        assert found.sum() > 5
        np.testing.assert_allclose(g, (2 * (p.astype(np.float64) - centers[found])).sum(0), rtol=1e-5, atol=1e-5)
