"""Geometry builtins: closest_point_edge_edge against a float64 brute-force minimisation,
intersect_tri_tri against hand-made cases and a float64 segment-triangle model, in single
and double precision."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def edge_edge(p: wp.array2d(dtype=wp.vec3), eps: float, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = wp.closest_point_edge_edge(p[i, 0], p[i, 1], p[i, 2], p[i, 3], eps)


@wp.kernel
def edge_edge_d(p: wp.array2d(dtype=wp.vec3d), eps: wp.float64, out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    out[i] = wp.closest_point_edge_edge(p[i, 0], p[i, 1], p[i, 2], p[i, 3], eps)


def brute_distance(p1, q1, p2, q2, k=801):
    s = np.linspace(0, 1, k)
    a = p1 + s[:, None] * (q1 - p1)
    b = p2 + s[:, None] * (q2 - p2)
    d = np.linalg.norm(a[:, None] - b[None], axis=-1)
    return d.min()


@pytest.mark.parametrize("dtype", ["f", "d"])
def test_edge_edge_distance_matches_brute_force(dtype):
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(60, 4, 3))
    pts[:10, 1] = pts[:10, 0]  # a degenerate first edge
    pts[10:20, 3] = pts[10:20, 2]  # a degenerate second edge
    pts[20:30, 3] = pts[20:30, 2] + (pts[20:30, 1] - pts[20:30, 0]) * 0.7  # parallel edges
    if dtype == "f":
        out = wp.zeros(60, dtype=wp.vec3)
        wp.launch(edge_edge, 60, inputs=[wp.array(pts.astype(np.float32), dtype=wp.vec3), 1e-6, out])
        tol = 1e-5
    else:
        out = wp.zeros(60, dtype=wp.vec3d)
        wp.launch(edge_edge_d, 60, inputs=[wp.array(pts, dtype=wp.vec3d), 1e-12, out])
        tol = 1e-12
    st = out.numpy().astype(np.float64)
    assert ((st[:, :2] >= 0) & (st[:, :2] <= 1)).all()
    for (p1, q1, p2, q2), (s, t, d) in zip(pts, st):
        c1, c2 = p1 + s * (q1 - p1), p2 + t * (q2 - p2)
        assert abs(np.linalg.norm(c1 - c2) - d) < 10 * tol  # d is the distance of the two points
        assert d <= brute_distance(p1, q1, p2, q2) + 10 * tol  # and no pair of points is closer
        assert d >= brute_distance(p1, q1, p2, q2) - 1e-2  # (the grid's resolution)
    assert (st[:10, 0] == 0).all() and (st[10:20, 1] == 0).all()  # a point edge has weight 0


@wp.kernel
def tri_tri(v: wp.array2d(dtype=wp.vec3), out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = wp.intersect_tri_tri(v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5])


@wp.kernel
def tri_tri_d(v: wp.array2d(dtype=wp.vec3d), out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = wp.intersect_tri_tri(v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5])


def crosses(p, q, a, b, c):
    n = np.cross(b - a, c - a)
    dp, dq = (p - a) @ n, (q - a) @ n
    if dp * dq > 0 or dp == dq:
        return False
    x = p + (q - p) * dp / (dp - dq)
    return all(np.cross(w - u, x - u) @ n >= 0 for u, w in ((a, b), (b, c), (c, a)))


def model(t):
    v, u = t[:3], t[3:]
    edges = lambda x: ((x[0], x[1]), (x[1], x[2]), (x[2], x[0]))  # noqa: E731
    return int(any(crosses(p, q, *v) for p, q in edges(u)) or any(crosses(p, q, *u) for p, q in edges(v)))


CASES = {  # name: (six corners, expected)
    "piercing": ([[0, 0, 0], [1, 0, 0], [0, 0, 1], [0.5, -0.5, 0], [0.5, -0.5, 1], [0.5, 0.5, 0]], 1),
    "apart": ([[0, 0, 0], [1, 0, 0], [0, 0, 1], [-0.5, -0.5, 0], [-0.5, -0.5, 1], [-0.5, 0.5, 0]], 0),
    "parallel planes": ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1]], 0),
    "shared vertex": ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 0], [-1, 0, 1], [0, -1, 1]], 1),
    "coplanar overlap": ([[0, 0, 0], [2, 0, 0], [0, 2, 0], [0.5, 0.5, 0], [3, 0.5, 0], [0.5, 3, 0]], 1),
    "coplanar inside": ([[0, 0, 0], [4, 0, 0], [0, 4, 0], [0.5, 0.5, 0], [1, 0.5, 0], [0.5, 1, 0]], 1),
    "coplanar apart": ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, 2, 0], [3, 2, 0], [2, 3, 0]], 0),
    # zero-area triangles: a segment has no plane of its own, two points meet only if equal
    "collinear sliver on the other's line, apart": (
        [[10, 0, 0], [11, 0, 0], [12, 0, 0], [0, 0, 0], [1, 0, 0], [0, 1, 0]], 0),
    "collinear sliver through the other": (
        [[-1, 0.2, 0], [0.5, 0.2, 0], [2, 0.2, 0], [0, 0, 0], [1, 0, 0], [0, 1, 0]], 1),
    "sliver piercing the other's plane": (
        [[0.2, 0.2, -1], [0.2, 0.2, 0], [0.2, 0.2, 1], [0, 0, 0], [1, 0, 0], [0, 1, 0]], 1),
    "sliver above the other": ([[0.2, 0.2, 1], [0.3, 0.2, 1], [0.4, 0.2, 1], [0, 0, 0], [1, 0, 0], [0, 1, 0]], 0),
    "two distinct points": ([[1, 1, 1]] * 3 + [[0, 0, 0]] * 3, 0),
    "two equal points": ([[1, 1, 1]] * 6, 1),
}


@pytest.mark.parametrize("dtype", ["f", "d"])
def test_tri_tri_cases_and_model(dtype):
    rng = np.random.default_rng(1)
    rand = rng.normal(size=(300, 6, 3)) * [1, 1, 1]
    rand[:, 3:] += rng.normal(size=(300, 1, 3)) * 0.8  # offset the second triangle: mixed outcomes
    cases = np.array([c for c, _ in CASES.values()], np.float64)
    tris = np.concatenate([cases, rand])
    out = wp.zeros(len(tris), dtype=int)
    if dtype == "f":
        wp.launch(tri_tri, len(tris), inputs=[wp.array(tris.astype(np.float32), dtype=wp.vec3), out])
    else:
        wp.launch(tri_tri_d, len(tris), inputs=[wp.array(tris, dtype=wp.vec3d), out])
    got = out.numpy()
    np.testing.assert_array_equal(got[:len(CASES)], [e for _, e in CASES.values()])
    expected = np.array([model(t) for t in rand])
    assert 30 < expected.sum() < 270
    np.testing.assert_array_equal(got[len(CASES):], expected)


def test_argument_errors():
    with pytest.raises(Exception, match="closest_point_edge_edge"):
        @wp.kernel
        def bad(out: wp.array(dtype=wp.vec3)):
            out[0] = wp.closest_point_edge_edge(wp.vec3(0.0), wp.vec3(1.0), wp.vec3(0.0), wp.vec3(1.0))

        wp.launch(bad, 1, inputs=[wp.zeros(1, dtype=wp.vec3)])
