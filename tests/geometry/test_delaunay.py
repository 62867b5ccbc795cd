"""weft.geometry.delaunay: the float64 predicates against exact rational arithmetic,
adjacency against a dictionary of edges, edge flipping against scipy's Delaunay
triangulation (unique for points in general position), graph capture, and errors."""

from fractions import Fraction

import numpy as np
import pytest

import weft as wp
import weft.geometry
from weft._src import geometry as src_geometry

scipy_spatial = pytest.importorskip("scipy.spatial")


@wp.kernel
def predicates(p: wp.array(dtype=wp.vec2), area: wp.array(dtype=float), inside: wp.array(dtype=int)):
    i = wp.tid()
    a = p[4 * i]
    b = p[4 * i + 1]
    c = p[4 * i + 2]
    d = p[4 * i + 3]
    area[i] = src_geometry.signed_area(a, b, c)
    inside[i] = int(src_geometry.in_circle(a, b, c, d))


def exact_orient(a, b, c):
    a, b, c = ([Fraction(float(x)) for x in v] for v in (a, b, c))
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def exact_in_circle(a, b, c, d):
    rows = []
    for v in (a, b, c):
        x, y = Fraction(float(v[0])) - Fraction(float(d[0])), Fraction(float(v[1])) - Fraction(float(d[1]))
        rows.append((x, y, x * x + y * y))
    (a0, a1, a2), (b0, b1, b2), (c0, c1, c2) = rows
    return a0 * (b1 * c2 - b2 * c1) - a1 * (b0 * c2 - b2 * c0) + a2 * (b0 * c1 - b1 * c0)


def test_predicates_signs_match_exact_arithmetic():
    rng = np.random.default_rng(3)
    quads = []
    for _ in range(200):
        a, b = rng.uniform(-100, 100, 2), rng.uniform(-100, 100, 2)
        c = a + (b - a) * rng.uniform(-2, 2) + rng.normal(0, 1e-4, 2)  # nearly collinear with a, b
        centre, r = rng.uniform(-10, 10, 2), rng.uniform(1, 50)
        ang = rng.uniform(0, 2 * np.pi, 3)
        d = centre + (r * (1 + rng.normal(0, 1e-6))) * np.array([np.cos(ang[2]), np.sin(ang[2])])  # nearly on it
        a2, b2 = (centre + r * np.array([np.cos(t), np.sin(t)]) for t in ang[:2])
        quads.append([a, b, c, d])
        quads.append([a2, b2, centre + r * np.array([np.cos(ang[0] + 1), np.sin(ang[0] + 1)]), d])
    pts = np.asarray(quads, np.float32).reshape(-1, 2)
    n = len(quads)
    area, inside = wp.zeros(n, dtype=float), wp.zeros(n, dtype=int)
    wp.launch(predicates, n, inputs=[wp.array(pts, dtype=wp.vec2), area, inside])
    area, inside = area.numpy(), inside.numpy()
    q = pts.reshape(n, 4, 2)
    for i in range(n):
        o = exact_orient(*q[i, :3])
        assert np.sign(area[i]) == np.sign(float(o)) or abs(float(o)) < 1e-30, i
        np.testing.assert_allclose(area[i], float(o) / 2, rtol=1e-6, atol=1e-30)
        if o > 0:  # in_circle is defined for counterclockwise triangles
            assert bool(inside[i]) == (exact_in_circle(*q[i]) > 0), i


def jittered_grid(nx, ny, jitter, seed):
    rng = np.random.default_rng(seed)
    xs, ys = np.meshgrid(np.arange(nx + 1), np.arange(ny + 1), indexing="ij")
    pts = np.stack([xs.ravel(), ys.ravel()], 1).astype(np.float64)
    inner = (xs.ravel() % nx != 0) & (ys.ravel() % ny != 0)
    pts[inner] += rng.uniform(-jitter, jitter, (inner.sum(), 2))
    tris = []
    for i in range(nx):
        for j in range(ny):
            v = i * (ny + 1) + j
            tris += [[v, v + ny + 1, v + ny + 2], [v, v + ny + 2, v + 1]]
    return pts.astype(np.float32), np.array(tris, np.int32)


def reference_adjacency(tris):
    owner = {}
    for t, tri in enumerate(tris):
        for j in range(3):
            owner.setdefault(frozenset((tri[(j + 1) % 3], tri[(j + 2) % 3])), []).append((t, j))
    nbr, edge = -np.ones_like(tris), -np.ones_like(tris)
    for pair in owner.values():
        if len(pair) == 2:
            (t, j), (s, i) = pair
            nbr[t, j], edge[t, j], nbr[s, i], edge[s, i] = s, i, t, j
    return nbr, edge


def test_adjacency_matches_edge_dictionary():
    _, tris = jittered_grid(7, 5, 0.2, 1)
    tris = tris[np.random.default_rng(0).permutation(len(tris))]  # (no help from the numbering)
    nbr, edge = weft.geometry.tri_tri_adjacency(wp.array(tris, dtype=wp.int32))
    ref_nbr, ref_edge = reference_adjacency(tris)
    np.testing.assert_array_equal(nbr.numpy(), ref_nbr)
    np.testing.assert_array_equal(edge.numpy(), ref_edge)
    only = weft.geometry.tri_tri_adjacency(wp.array(tris, dtype=wp.int32), vertex_count=48,
                                           return_neighbor_edge_indices=False)
    np.testing.assert_array_equal(only.numpy(), ref_nbr)


def canonical(tris):
    """Triangles as rotation-normalised tuples (each keeps its winding), as a set."""
    out = set()
    for t in np.asarray(tris):
        k = int(np.argmin(t))
        out.add(tuple(int(t[(k + i) % 3]) for i in range(3)))
    return out


def counterclockwise(tris, pts):
    p = pts.astype(np.float64)[tris]
    e1, e2 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]
    cw = e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0] < 0
    tris = tris.copy()
    tris[cw] = tris[cw][:, [0, 2, 1]]
    return tris


def test_flip_fan_of_convex_polygon():
    ang = np.sort(np.random.default_rng(7).uniform(0, 2 * np.pi, 60))
    pts = np.stack([3 * np.cos(ang), np.sin(ang)], 1).astype(np.float32)  # an ellipse: no four cocircular
    fan = np.array([[0, i, i + 1] for i in range(1, 59)], np.int32)
    idx = wp.array(fan, dtype=wp.int32)
    weft.geometry.delaunay_edge_flip(wp.array(pts, dtype=wp.vec2), idx)
    ref = scipy_spatial.Delaunay(pts.astype(np.float64)).simplices
    assert canonical(idx.numpy()) == canonical(counterclockwise(ref, pts))


@pytest.mark.parametrize("seed", [0, 1])
def test_flip_reaches_scipys_delaunay_triangulation(seed):
    pts, tris = jittered_grid(12, 9, 0.35, seed)
    idx = wp.array(tris, dtype=wp.int32)
    flips = weft.geometry.delaunay_edge_flip(wp.array(pts, dtype=wp.vec2), idx)
    assert flips.shape == (1,) and flips.numpy()[0] > 0
    ref = scipy_spatial.Delaunay(pts.astype(np.float64)).simplices  # (its triangles may be clockwise)
    assert canonical(idx.numpy()) == canonical(counterclockwise(ref, pts))
    assert weft.geometry.delaunay_edge_flip(wp.array(pts, dtype=wp.vec2), idx).numpy()[0] == 0


def test_flip_respects_max_passes_and_capture():
    pts, tris = jittered_grid(10, 10, 0.3, 5)
    one = wp.array(tris, dtype=wp.int32)
    first = weft.geometry.delaunay_edge_flip(wp.array(pts, dtype=wp.vec2), one, max_passes=1).numpy()[0]
    full = wp.array(tris, dtype=wp.int32)
    total = weft.geometry.delaunay_edge_flip(wp.array(pts, dtype=wp.vec2), full).numpy()[0]
    assert 0 < first <= total
    wp.load_module(weft.geometry, device="cpu")
    pos, idx = wp.array(pts, dtype=wp.vec2), wp.array(tris, dtype=wp.int32)
    with wp.ScopedCapture() as capture:
        count = weft.geometry.delaunay_edge_flip(pos, idx)
    np.testing.assert_array_equal(idx.numpy(), tris)  # recorded, not run
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(idx.numpy(), full.numpy())
    assert count.numpy()[0] == total
    wp.capture_launch(capture.graph)
    assert count.numpy()[0] == 0


def test_errors():
    pts, tris = jittered_grid(2, 2, 0.1, 0)
    pos, idx = wp.array(pts, dtype=wp.vec2), wp.array(tris, dtype=wp.int32)
    with pytest.raises(ValueError, match="max_passes"):
        weft.geometry.delaunay_edge_flip(pos, idx, max_passes=0)
    with pytest.raises(ValueError, match="area_epsilon"):
        weft.geometry.delaunay_edge_flip(pos, idx, area_epsilon=float("nan"))
    with pytest.raises(ValueError, match=r"\(num_tris, 3\)"):
        weft.geometry.tri_tri_adjacency(wp.zeros(6, dtype=wp.int32))
    with pytest.raises(ValueError, match="int32"):
        weft.geometry.tri_tri_adjacency(wp.zeros((2, 3), dtype=wp.int64))
    np.testing.assert_array_equal(idx.numpy(), tris)
    bad = tris.copy()
    bad[3, 1] = 9  # (9 points: indices 0..8)
    with pytest.raises(ValueError, match=r"in \[0, 9\) \(the number of positions\), got indices from 0 to 9"):
        weft.geometry.delaunay_edge_flip(pos, wp.array(bad, dtype=wp.int32))
    with pytest.raises(ValueError, match=r"in \[0, 5\) \(vertex_count\)"):
        weft.geometry.tri_tri_adjacency(idx, vertex_count=5)
    with wp.ScopedCapture():
        with pytest.raises(RuntimeError, match="vertex_count"):
            weft.geometry.tri_tri_adjacency(idx)


def test_a_flip_rewrites_two_corner_slots_in_place():
    """Warp's layout: of a flipped pair only the two corners opposite the new diagonal's ends
    change, so per-corner data and the edge-indexed adjacency stay where they were."""
    x = wp.array(np.array([[0.0, 0.0], [1.0, -0.3], [2.0, 0.0], [1.0, 0.3]], np.float32), dtype=wp.vec2)
    tris = wp.array(np.array([[0, 1, 2], [0, 2, 3]], np.int32), dtype=wp.int32)
    assert wp.geometry.delaunay_edge_flip(x, tris).numpy().tolist() == [1]
    assert tris.numpy().tolist() == [[3, 1, 2], [0, 1, 3]]  # (Warp 1.19's rows)
    neighbors, edges = wp.geometry.tri_tri_adjacency(tris, vertex_count=4)
    assert neighbors.numpy().tolist() == [[-1, -1, 1], [0, -1, -1]]
    assert edges.numpy().tolist() == [[-1, -1, 0], [2, -1, -1]]
