"""Mesh: point, furthest-point, ray, box and sphere queries against float64 brute force,
inside/outside signs of every method on a closed mesh, the accessors, refit and point
updates, and errors and stale ids. Gradients are in test_mesh_grad.py."""

import numpy as np
import pytest

import weft as wp


def torus(n=24, m=12, r=1.0, s=0.35):
    u = np.linspace(0, 2 * np.pi, n, endpoint=False)[:, None]
    v = np.linspace(0, 2 * np.pi, m, endpoint=False)[None, :]
    pts = np.stack([(r + s * np.cos(v)) * np.cos(u), (r + s * np.cos(v)) * np.sin(u), s * np.sin(v) + 0 * u], -1)
    i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    a, b = i * m + j, ((i + 1) % n) * m + j
    c, d = ((i + 1) % n) * m + (j + 1) % m, i * m + (j + 1) % m
    idx = np.stack([np.stack([a, b, c], -1), np.stack([a, c, d], -1)], 2).reshape(-1)
    return pts.reshape(-1, 3).astype(np.float32), idx.astype(np.int32)


def inside_torus(p, r=1.0, s=0.35):
    q = np.hypot(p[:, 0], p[:, 1]) - r
    return q * q + p[:, 2] ** 2 < s * s


def seg_dist2(p, a, b):
    ab = b - a
    t = np.clip(((p - a) * ab).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-300), 0, 1)
    d = p - (a + t[..., None] * ab)
    return (d * d).sum(-1)


def tri_dist2(p, a, b, c):
    """Squared distance of each point p (k, 3) to each triangle (n, 3): (k, n), float64."""
    p = p[:, None, :]
    n = np.cross(b - a, c - a)
    nn = (n * n).sum(-1)
    h = ((p - a) * n).sum(-1) / nn
    x = p - h[..., None] * n
    inside = np.ones(h.shape, bool)
    for u, w in ((a, b), (b, c), (c, a)):
        inside &= (np.cross(w - u, x - u) * n).sum(-1) >= 0
    edges = np.minimum(np.minimum(seg_dist2(p, a, b), seg_dist2(p, b, c)), seg_dist2(p, c, a))
    return np.where(inside, h * h * nn, edges)


@wp.kernel
def closest(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), max_dist: float, dist: wp.array(dtype=float),
            face: wp.array(dtype=int), sign: wp.array2d(dtype=float)):
    i = wp.tid()
    p = qs[i]
    r = wp.mesh_query_point_no_sign(mesh, p, max_dist)
    dist[i] = -1.0
    face[i] = -1
    if r.result:
        dist[i] = wp.length(p - wp.mesh_eval_position(mesh, r.face, r.u, r.v))
        face[i] = r.face
    sign[i, 0] = wp.mesh_query_point(mesh, p, 1.0e6).sign
    sign[i, 1] = wp.mesh_query_point_sign_normal(mesh, p, 1.0e6).sign
    sign[i, 2] = wp.mesh_query_point_sign_winding_number(mesh, p, 1.0e6).sign
    sign[i, 3] = wp.mesh_query_point_sign_parity(mesh, p, 1.0e6, 3).sign


@wp.kernel
def furthest(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), dist: wp.array(dtype=float)):
    i = wp.tid()
    r = wp.mesh_query_furthest_point_no_sign(mesh, qs[i], 0.0)
    if r.result:
        dist[i] = wp.length(qs[i] - wp.mesh_eval_position(mesh, r.face, r.u, r.v))


@wp.kernel
def rays(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3), max_t: float,
         t: wp.array(dtype=float), counts: wp.array(dtype=int), anyhit: wp.array(dtype=int)):
    i = wp.tid()
    r = wp.mesh_query_ray(mesh, starts[i], dirs[i], max_t)
    t[i] = -1.0
    if r.result:
        t[i] = r.t
        p = wp.mesh_eval_position(mesh, r.face, r.u, r.v)
        wp.expect_near(p, starts[i] + r.t * dirs[i], 1.0e-4)
        wp.expect_near(r.normal, wp.mesh_eval_face_normal(mesh, r.face), 1.0e-6)
    counts[i] = wp.mesh_query_ray_count_intersections(mesh, starts[i], dirs[i])
    anyhit[i] = int(wp.mesh_query_ray_anyhit(mesh, starts[i], dirs[i], max_t))


def ray_brute(pts, idx, start, d):
    """Every hit parameter t >= 0 of each ray (float64 Moller-Trumbore), as a list of arrays."""
    a, b, c = (pts[idx.reshape(-1, 3)[:, k]].astype(np.float64) for k in range(3))
    out = []
    for s, dd in zip(start.astype(np.float64), d.astype(np.float64)):
        e1, e2 = b - a, c - a
        pv = np.cross(dd, e2)
        det = (e1 * pv).sum(-1)
        tv = s - a
        u = (tv * pv).sum(-1) / det
        qv = np.cross(tv, e1)
        v = (qv * dd).sum(-1) / det
        t = (e2 * qv).sum(-1) / det
        ok = (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
        out.append(np.sort(t[ok]))
    return out


@pytest.fixture(scope="module")
def mesh():
    pts, idx = torus()
    m = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(idx, dtype=wp.int32), support_winding_number=True)
    return m, pts, idx


def query_closest(m, pts, idx, n, seed):
    """n random points around the torus, the `closest` kernel's outputs for them, and their
    squared distances to every face (float64 brute force)."""
    rng = np.random.default_rng(seed)
    qs = (rng.random((n, 3)) * [3.2, 3.2, 1.2] - [1.6, 1.6, 0.6]).astype(np.float32)
    tri = pts[idx.reshape(-1, 3)].astype(np.float64)
    d2 = tri_dist2(qs.astype(np.float64), tri[:, 0], tri[:, 1], tri[:, 2])
    dist, face = wp.zeros(n, dtype=float), wp.zeros(n, dtype=int)
    sign = wp.zeros((n, 4), dtype=float)
    wp.launch(closest, n, inputs=[m.id, wp.array(qs, dtype=wp.vec3), 1.0e6, dist, face, sign])
    np.testing.assert_allclose(dist.numpy(), np.sqrt(d2.min(1)), atol=2e-6)
    return qs, d2, dist, face, sign


def test_closest_point_and_signs(mesh):
    m, pts, idx = mesh
    qs, d2, dist, face, sign = query_closest(m, pts, idx, 400, seed=0)
    got = d2[np.arange(400), face.numpy()]  # the face returned is (one of) the closest
    np.testing.assert_allclose(np.sqrt(got), np.sqrt(d2.min(1)), atol=2e-6)
    # signs: compare away from the surface, where the flat faces and the torus agree
    inside = inside_torus(qs.astype(np.float64))
    ok = np.abs(np.hypot(np.hypot(qs[:, 0], qs[:, 1]) - 1.0, qs[:, 2]) - 0.35) > 0.05
    for method in range(4):
        np.testing.assert_array_equal(sign.numpy()[ok, method] < 0, inside[ok], err_msg=f"sign method {method}")
    # max_dist: strictly closer faces only
    wp.launch(closest, 400, inputs=[m.id, wp.array(qs, dtype=wp.vec3), 0.2, dist, face, sign])
    near = np.sqrt(d2.min(1)) < 0.2
    np.testing.assert_array_equal(dist.numpy() >= 0, near)


def test_furthest_point(mesh):
    m, pts, _ = mesh
    qs = np.random.default_rng(1).normal(size=(50, 3)).astype(np.float32)
    dist = wp.zeros(50, dtype=float)
    wp.launch(furthest, 50, inputs=[m.id, wp.array(qs, dtype=wp.vec3), dist])
    expected = np.linalg.norm(qs[:, None].astype(np.float64) - pts[None], axis=-1).max(1)
    np.testing.assert_allclose(dist.numpy(), expected, rtol=1e-6)


def test_rays(mesh):
    m, pts, idx = mesh
    rng = np.random.default_rng(2)
    starts = (rng.random((200, 3)) * 4 - 2).astype(np.float32)
    dirs = rng.normal(size=(200, 3)).astype(np.float32)
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    t, counts, anyhit = wp.zeros(200, dtype=float), wp.zeros(200, dtype=int), wp.zeros(200, dtype=int)
    wp.launch(rays, 200, inputs=[m.id, wp.array(starts, dtype=wp.vec3), wp.array(dirs, dtype=wp.vec3), 1.0e6,
                                  t, counts, anyhit])
    hits = ray_brute(pts, idx, starts, dirs)
    first = np.array([h[0] if h.size else -1.0 for h in hits])
    np.testing.assert_allclose(t.numpy(), first, atol=1e-5)
    np.testing.assert_array_equal(counts.numpy(), [h.size for h in hits])
    np.testing.assert_array_equal(anyhit.numpy(), first >= 0)
    assert 20 < (first >= 0).sum() < 200
    wp.launch(rays, 200, inputs=[m.id, wp.array(starts, dtype=wp.vec3), wp.array(dirs, dtype=wp.vec3), 1.0,
                                  t, counts, anyhit])
    np.testing.assert_array_equal(anyhit.numpy(), (first >= 0) & (first < 1.0))


@wp.kernel
def box_and_sphere(mesh: wp.uint64, lo: wp.vec3, hi: wp.vec3, c: wp.vec3, r: float, hits: wp.array2d(dtype=int)):
    for f in wp.mesh_query_aabb(mesh, lo, hi):
        hits[0, f] += 1
    q = wp.mesh_query_sphere(mesh, c, r)
    f = 0
    while wp.mesh_query_next(q, f):
        hits[1, f] += 1


def test_box_and_sphere_queries(mesh):
    m, pts, idx = mesh
    tri = pts[idx.reshape(-1, 3)].astype(np.float64)
    n = tri.shape[0]
    lo, hi, c, r = np.array([0.2, -0.5, -1.0]), np.array([1.5, 0.5, 0.1]), np.array([0.0, 1.0, 0.2]), 0.4
    hits = wp.zeros((2, n), dtype=int)
    wp.launch(box_and_sphere, 1, inputs=[m.id, wp.vec3(*lo), wp.vec3(*hi), wp.vec3(*c), r, hits])
    boxes = ~((tri.min(1) > hi).any(1) | (tri.max(1) < lo).any(1))
    np.testing.assert_array_equal(hits.numpy()[0], boxes)
    d = np.sqrt(tri_dist2(c[None], tri[:, 0], tri[:, 1], tri[:, 2])[0])
    got = hits.numpy()[1].astype(bool)
    assert not (got & (d > r + 1e-5)).any() and not (~got & (d < r - 1e-5)).any()
    assert got.sum() > 3


@wp.kernel
def accessors(mesh: wp.uint64, out_p: wp.array(dtype=wp.vec3), out_v: wp.array(dtype=wp.vec3),
              out_i: wp.array(dtype=int)):
    k = wp.tid()
    out_p[k] = wp.mesh_get_point(mesh, k)
    out_v[k] = wp.mesh_get_velocity(mesh, k)
    out_i[k] = wp.mesh_get_index(mesh, k)
    m = wp.mesh_get(mesh)
    wp.expect_eq(m.points[m.indices[k]], out_p[k])
    wp.expect_eq(m.velocities[m.indices[k]], out_v[k])
    if k % 3 == 0:
        f = k // 3
        wp.expect_near(wp.mesh_eval_position(mesh, f, 0.2, 0.3),
                       0.2 * out_p[k] + 0.3 * m.points[m.indices[k + 1]] + 0.5 * m.points[m.indices[k + 2]], 1e-6)
        wp.expect_near(wp.mesh_eval_velocity(mesh, f, 1.0, 0.0), out_v[k], 1e-6)


def test_accessors():
    pts, idx = torus(6, 4)
    vel = np.random.default_rng(3).normal(size=pts.shape).astype(np.float32)
    m = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(idx, dtype=wp.int32), velocities=wp.array(vel, dtype=wp.vec3))
    n = idx.size
    out_p, out_v, out_i = wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=int)
    wp.launch(accessors, n, inputs=[m.id, out_p, out_v, out_i])
    np.testing.assert_array_equal(out_i.numpy(), idx)
    np.testing.assert_array_equal(out_p.numpy(), pts[idx])
    np.testing.assert_array_equal(out_v.numpy(), vel[idx])
    assert m.points.shape == (pts.shape[0],) and m.indices.shape == (n,)


def test_refit_and_points_setter():
    pts, idx = torus(12, 6)
    points = wp.array(pts, dtype=wp.vec3)
    m = wp.Mesh(points, wp.array(idx, dtype=wp.int32))
    qs = wp.array(np.float32([[5.35, 0.0, 0.0]]), dtype=wp.vec3)  # a vertex once moved by (4, 0, 0)
    dist, face, sign = wp.zeros(1, dtype=float), wp.zeros(1, dtype=int), wp.zeros((1, 4), dtype=float)
    wp.launch(closest, 1, inputs=[m.id, qs, 1.0, dist, face, sign])
    assert dist.numpy()[0] == -1.0  # nothing within 1
    points.assign(pts + np.float32([4.0, 0.0, 0.0]))
    m.refit()
    wp.launch(closest, 1, inputs=[m.id, qs, 1.0, dist, face, sign])
    assert 0.0 <= dist.numpy()[0] < 1e-6
    m.points = wp.array(pts, dtype=wp.vec3)  # a new array: the mesh refits itself
    wp.launch(closest, 1, inputs=[m.id, qs, 1.0, dist, face, sign])
    assert dist.numpy()[0] == -1.0


@wp.kernel
def eval_face(mesh: wp.uint64, f: int, out: wp.array(dtype=wp.vec3)):
    out[0] = wp.mesh_eval_position(mesh, f, 0.3, 0.3)


def test_errors_and_stale_ids():
    pts, idx = torus(6, 4)
    points, indices = wp.array(pts, dtype=wp.vec3), wp.array(idx, dtype=wp.int32)
    with pytest.raises(RuntimeError, match="out of range: indices\\[5\\] = 99"):
        bad = idx.copy()
        bad[5] = 99
        wp.Mesh(points, wp.array(bad, dtype=wp.int32))
    with pytest.raises(RuntimeError, match="not a multiple of 3"):
        wp.Mesh(points, wp.array(idx[:7], dtype=wp.int32))
    with pytest.raises(RuntimeError, match="points is empty"):
        wp.Mesh(wp.zeros(0, dtype=wp.vec3), indices)
    with pytest.raises(RuntimeError, match="indices is empty"):
        wp.Mesh(points, wp.zeros(0, dtype=wp.int32))
    with pytest.raises(RuntimeError, match="wp.vec3"):
        wp.Mesh(wp.array(pts, dtype=wp.vec3d), indices)
    with pytest.raises(RuntimeError, match="wp.int32"):
        wp.Mesh(points, wp.array(idx, dtype=wp.int64))
    with pytest.raises(RuntimeError, match="1d"):
        wp.Mesh(points, indices.reshape((3, -1)))
    with pytest.raises(ValueError, match="Unknown BVH constructor"):
        wp.Mesh(points, indices, bvh_constructor="cuqbl")
    m = wp.Mesh(points, indices)
    out = wp.zeros(1, dtype=wp.vec3)
    with pytest.raises(IndexError):  # a face past the end, caught by the bounds check
        wp.launch(eval_face, 1, inputs=[m.id, idx.size // 3, out])
    stale = m.id
    m.__del__()
    with pytest.raises(RuntimeError, match="destroyed"):
        m.refit()
    qs = wp.array(np.float32([[0.0, 0.0, 0.0]]), dtype=wp.vec3)
    dist, face, sign = wp.zeros(1, dtype=float), wp.zeros(1, dtype=int), wp.zeros((1, 4), dtype=float)
    with pytest.raises(AssertionError, match="names a mesh that was deleted"):
        wp.launch(closest, 1, inputs=[stale, qs, 1.0e6, dist, face, sign])
    with pytest.raises(AssertionError, match=r"mesh_eval_position\(\): the mesh id is 0"):
        wp.launch(eval_face, 1, inputs=[0, 0, out])
    wp.Mesh.__new__(wp.Mesh).__del__()


@wp.kernel
def signs(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), out: wp.array2d(dtype=float)):
    i = wp.tid()
    out[i, 0] = wp.mesh_query_point_sign_winding_number(mesh, qs[i], 1.0e6, 1.0e9, 0.5).sign  # exact sum
    out[i, 1] = wp.mesh_query_point_sign_winding_number(mesh, qs[i], 1.0e6).sign  # dipoles far away
    out[i, 2] = wp.mesh_query_point_sign_normal(mesh, qs[i], 1.0e6).sign
    out[i, 3] = wp.mesh_query_point(mesh, qs[i], 1.0e6).sign
    out[i, 4] = wp.mesh_query_point_sign_parity(mesh, qs[i], 1.0e6, 5).sign


def test_signs_agree_next_to_vertices_edges_and_faces(mesh):
    """Just off the surface, where the closest point is a vertex, on an edge or inside a
    face (the pseudo-normal's three cases), every method agrees with the exact winding number."""
    m, pts, idx = mesh
    tri = pts[idx.reshape(-1, 3)]
    base = np.concatenate([pts, 0.5 * (tri[:, 0] + tri[:, 1]), tri.mean(1)])
    qs = (base + np.random.default_rng(3).normal(size=base.shape) * 0.01).astype(np.float32)
    out = wp.zeros((len(qs), 5), dtype=float)
    wp.launch(signs, len(qs), inputs=[m.id, wp.array(qs, dtype=wp.vec3), out])
    o = out.numpy()
    assert 0.2 < (o[:, 0] < 0).mean() < 0.8
    for method in range(1, 5):
        np.testing.assert_array_equal(o[:, method], o[:, 0], err_msg=f"method {method}")


@wp.kernel
def legacy_forms(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), d: wp.vec3, bad: wp.array(dtype=int)):
    i = wp.tid()
    p = qs[i]
    sign = 0.0
    face = 0
    u = 0.0
    v = 0.0
    r = wp.mesh_query_point_sign_normal(mesh, p, 1.0e6)
    ok = wp.mesh_query_point_sign_normal(mesh, p, 1.0e6, sign, face, u, v)
    if ok != r.result or sign != r.sign or face != r.face or u != r.u or v != r.v:
        bad[i] = 1
    r = wp.mesh_query_point_no_sign(mesh, p, 1.0e6)
    ok = wp.mesh_query_point_no_sign(mesh, p, 1.0e6, face, u, v)
    if ok != r.result or face != r.face or u != r.u or v != r.v:
        bad[i] = 2
    r = wp.mesh_query_furthest_point_no_sign(mesh, p, 0.0)
    ok = wp.mesh_query_furthest_point_no_sign(mesh, p, 0.0, face, u, v)
    if ok != r.result or face != r.face or u != r.u or v != r.v:
        bad[i] = 3
    t = -1.0
    n = wp.vec3(0.0)
    face = -1
    rr = wp.mesh_query_ray(mesh, p, d, 1.0e6)
    ok = wp.mesh_query_ray(mesh, p, d, 1.0e6, t, u, v, sign, n, face)
    if ok != rr.result:
        bad[i] = 4
    if ok and (t != rr.t or u != rr.u or v != rr.v or sign != rr.sign or face != rr.face or n != rr.normal):
        bad[i] = 5
    if not ok and (t != -1.0 or face != -1):  # (as in Warp: a miss leaves the variables as they were)
        bad[i] = 6
    face = -1
    missed = wp.mesh_query_point_no_sign(mesh, p, 1.0e-9, face, u, v)  # (farther than that from any face)
    if missed or face != -1:
        bad[i] = 7


@wp.kernel
def _count_ray_hits(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), d: wp.vec3, hits: wp.array(dtype=int)):
    if wp.mesh_query_ray(mesh, qs[wp.tid()], d, 1.0e6).result:
        wp.atomic_add(hits, 0, 1)


def test_output_variable_forms_match_the_struct_forms(mesh):
    m, _, _ = mesh
    qs = (np.random.default_rng(7).random((100, 3)) * 3 - 1.5).astype(np.float32)
    bad = wp.zeros(100, dtype=int)
    wp.launch(legacy_forms, 100, inputs=[m.id, wp.array(qs, dtype=wp.vec3), wp.vec3(0.3, 0.8, 0.1), bad])
    assert not bad.numpy().any(), bad.numpy()
    hits = wp.zeros(1, dtype=int)
    wp.launch(_count_ray_hits, 100, inputs=[m.id, wp.array(qs, dtype=wp.vec3), wp.vec3(0.3, 0.8, 0.1), hits])
    assert 0 < hits.numpy()[0] < 100  # (both hits and misses were checked)


@pytest.mark.parametrize("leaf_size", [1, 4, 8])
def test_closest_point_skips_faces_without_area_and_follows_refit(leaf_size):
    """The traversal reads the triangles in leaf order with a flag for faces of no area,
    both made at build and again at refit: a face that loses its area in a refit is
    skipped, one that gets an area back is found."""
    rng = np.random.default_rng(leaf_size)
    pts = rng.random((240, 3)).astype(np.float32)
    tri = rng.integers(0, 200, (300, 3)).astype(np.int32)
    tri = tri[(tri[:, 0] != tri[:, 1]) & (tri[:, 0] != tri[:, 2]) & (tri[:, 1] != tri[:, 2])]
    own = np.arange(200, 240).reshape(-1, 2)  # 20 faces with two corners of their own
    tri = np.concatenate([tri, np.stack([tri[:20, 0], own[:, 0], own[:, 1]], 1).astype(np.int32)])
    pts[own[:10, 1]] = pts[own[:10, 0]]  # ten of them without area
    points = wp.array(pts, dtype=wp.vec3)
    m = wp.Mesh(points, wp.array(tri.reshape(-1), dtype=wp.int32), bvh_leaf_size=leaf_size)
    qs = (rng.random((300, 3)) * 1.6 - 0.3).astype(np.float32)
    qs[:20] = pts[own[:, 0]] + np.float32(0.01)  # next to those faces

    def check(p):
        a, b, c = (p[tri[:, k]].astype(np.float64) for k in range(3))
        keep = np.linalg.norm(np.cross(b - a, c - a), axis=1) > 1e-9
        d2 = tri_dist2(qs.astype(np.float64), a[keep], b[keep], c[keep])
        dist, face = wp.zeros(len(qs), dtype=float), wp.zeros(len(qs), dtype=int)
        sign = wp.zeros((len(qs), 4), dtype=float)
        wp.launch(closest, len(qs), inputs=[m.id, wp.array(qs, dtype=wp.vec3), 1.0e6, dist, face, sign])
        np.testing.assert_allclose(dist.numpy(), np.sqrt(d2.min(1)), atol=2e-6)
        assert keep[face.numpy()].all()

    check(pts)
    moved = pts.copy()
    moved[own[:10, 1]] = pts[own[:10, 0]] + np.float32(0.05)  # areas back
    moved[own[10:, 1]] = pts[own[10:, 0]]  # areas gone
    points.assign(moved)
    m.refit()
    check(moved)


@pytest.mark.parametrize("leaf_size", [1, 4])
def test_queries_on_a_tree_built_in_parallel(monkeypatch, leaf_size):
    """A mesh large enough for its tree's subtrees to be built on two threads (the serial
    top hands off nodes of at most n / 32 faces) answers as brute force does."""
    from weft.geometry import bvh_build
    monkeypatch.setattr(bvh_build, "PARALLEL_MIN", 64)
    monkeypatch.setattr(wp.config, "num_threads", 2)
    pts, idx = torus(60, 30)
    m = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(idx, dtype=wp.int32), support_winding_number=True,
                bvh_leaf_size=leaf_size)
    qs = query_closest(m, pts, idx, 300, seed=3)[0]  # (asserts the distances)
    far = wp.zeros(300, dtype=float)
    wp.launch(furthest, 300, inputs=[m.id, wp.array(qs, dtype=wp.vec3), far])
    expected = np.linalg.norm(qs[:, None].astype(np.float64) - pts[None], axis=-1).max(1)  # a vertex
    np.testing.assert_allclose(far.numpy(), expected, rtol=1e-6)
