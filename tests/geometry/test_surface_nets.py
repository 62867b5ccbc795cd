"""IsoSurfaceNets: the derived sheet tables (every sheet a closed loop of face segments, the
36 tube codes and their complements), a sphere (vertices near the radius, closed manifold
of Euler characteristic 2, outward winding, enclosed volume near 4/3 pi r^3), quads against
a NumPy surface-nets replica written here, a two-sheet cell, a random field that stays
manifold, the open rim of a clipped surface, the vertex gradient against central differences,
and the errors."""

from collections import Counter

import numpy as np
import pytest

import weft as wp
from weft.geometry import sn_tables as T

SN = wp.geometry.IsoSurfaceNets


def sphere(n, radius, centre=None):
    c = np.full(3, n / 2.0) if centre is None else np.asarray(centre, dtype=float)
    g = np.stack(np.meshgrid(*[np.arange(n)] * 3, indexing="ij"), axis=-1)
    return (np.linalg.norm(g - c, axis=-1) - radius).astype(np.float32), c


def quad_edges(quads):
    counts = Counter()
    for q in quads:
        for a in range(4):
            u, v = int(q[a]), int(q[(a + 1) % 4])
            counts[(min(u, v), max(u, v))] += 1
    return counts


def signed_volume(verts, tris):
    t = tris.reshape(-1, 3)
    return np.einsum("ij,ij->i", verts[t[:, 0]], np.cross(verts[t[:, 1]], verts[t[:, 2]])).sum() / 6.0


def replica(f, thr=0.0):
    """Surface nets in NumPy from the tables: per cell one vertex per sheet with a crossed
    interior edge (mean of the edge crossings, float64), quads around interior crossed edges."""
    corners = np.array(T.CORNER_OFFSETS)
    ncell = tuple(n - 1 for n in f.shape)
    nbr = {1: ((0, 0, -1), 3), 2: ((1, 0, 0), 4), 3: ((0, 0, 1), 1), 4: ((-1, 0, 0), 2), 5: ((0, -1, 0), 6),
           6: ((0, 1, 0), 5)}

    def signs(c):
        return sum(1 << b for b in range(8) if f[tuple(np.add(c, corners[b]))] < thr)

    def interior(node, axis):
        return all(0 < node[a] < f.shape[a] - 1 for a in range(3) if a != axis)

    code, slot, verts = {}, {}, []
    for c in np.ndindex(*ncell):
        s = signs(c)
        if s in (0, 255):
            continue
        face = T.AMBIGUOUS_FACE[s]
        if face:
            d, other = nbr[face]
            n = tuple(np.add(c, d))
            if all(0 <= n[a] < ncell[a] for a in range(3)) and T.AMBIGUOUS_FACE[signs(n)] == other:
                s = 255 - s
        code[c] = s
        row = T.EDGE_GROUP_TABLE[13 * s: 13 * s + 13]
        for g in range(1, row[0] + 1):
            pts, keep = [], False
            for e, (a, b) in enumerate(T.EDGE_TO_CORNERS):
                if row[1 + e] == g:
                    va, vb = float(f[tuple(np.add(c, corners[a]))]), float(f[tuple(np.add(c, corners[b]))])
                    pts.append(corners[a] + (thr - va) / (vb - va) * (corners[b] - corners[a]))
                    lo = np.add(c, np.minimum(corners[a], corners[b]))
                    keep |= interior(lo, int(np.argmax(np.abs(corners[b] - corners[a]))))
            if keep:
                slot[(c, g)] = len(verts)
                verts.append(np.add(c, np.mean(pts, axis=0)))

    def v(c, e):
        return slot[(c, T.EDGE_GROUP_TABLE[13 * code[c] + 1 + e])]

    quads = []
    for c in sorted(code):
        s0 = signs(c)
        i, j, k = c
        inside = s0 & 1
        for bit, need, ring, flip in (
                (1, j > 0 and k > 0, [(c, 0), ((i, j - 1, k), 4), ((i, j - 1, k - 1), 6), ((i, j, k - 1), 2)], 0),
                (4, i > 0 and k > 0, [(c, 8), ((i, j, k - 1), 11), ((i - 1, j, k - 1), 10), ((i - 1, j, k), 9)], 0),
                (3, i > 0 and j > 0, [(c, 3), ((i, j - 1, k), 7), ((i - 1, j - 1, k), 5), ((i - 1, j, k), 1)], 1)):
            if need and inside != (s0 >> bit) & 1:
                q = [v(cc, e) for cc, e in ring]
                quads.append(q[::-1] if (inside == flip) else q)
    return np.array(verts).reshape(-1, 3), np.array(quads, dtype=np.int64).reshape(-1, 4)


def test_tables_are_loops_and_tubes():
    for s in range(256):
        row = T.EDGE_GROUP_TABLE[13 * s: 13 * s + 13]
        inside = [(s >> c) & 1 for c in range(8)]
        crossed = [inside[a] != inside[b] for a, b in T.EDGE_TO_CORNERS]
        assert [row[1 + e] != 0 for e in range(12)] == crossed
        assert set(row[1 + e] for e in range(12) if crossed[e]) == set(range(1, row[0] + 1))
        assert row[0] <= 4
        # each sheet is a closed polygon: at least 3 crossed edges
        for g in range(1, row[0] + 1):
            assert sum(1 for e in range(12) if row[1 + e] == g) >= 3
        face = T.AMBIGUOUS_FACE[s]
        if face:
            assert T.AMBIGUOUS_FACE[255 - s] == 0
    assert sum(1 for f in T.AMBIGUOUS_FACE if f) == 36
    assert T.EDGE_GROUP_TABLE[13 * 65] == 2  # corners 0 and 6 inside: two separate sheets


def test_sphere_closed_manifold_and_volume():
    f, c = sphere(40, 12.0)
    verts, quads = SN.extract(wp.array(f), topology="quad")
    v, q = verts.numpy(), quads.numpy().reshape(-1, 4)
    assert np.abs(np.linalg.norm(v - c, axis=1) - 12.0).max() < 0.5
    counts = quad_edges(q)
    assert set(counts.values()) == {2}
    assert v.shape[0] - len(counts) + q.shape[0] == 2
    tv, ti = SN.extract(wp.array(f))
    np.testing.assert_array_equal(tv.numpy(), v)
    tris = ti.numpy().reshape(-1, 6)
    np.testing.assert_array_equal(tris[:, :3], q[:, [0, 1, 2]])
    np.testing.assert_array_equal(tris[:, 3:], q[:, [0, 2, 3]])
    vol = signed_volume(v, ti.numpy())
    assert abs(vol - 4.0 / 3.0 * np.pi * 12.0 ** 3) / (4.0 / 3.0 * np.pi * 12.0 ** 3) < 0.03


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_numpy_replica(seed):
    rng = np.random.default_rng(seed)
    f = rng.uniform(-1.0, 1.0, (7, 6, 8)).astype(np.float32)
    if seed:
        f = np.sign(f).astype(np.float32) + np.float32(0.25)
    rv, rq = replica(f)
    verts, quads = SN.extract(wp.array(f), topology="quad")
    np.testing.assert_allclose(verts.numpy(), rv, atol=1e-5)
    np.testing.assert_array_equal(quads.numpy().reshape(-1, 4), rq)


def test_random_signs_stay_manifold_and_two_sheet_cell():
    rng = np.random.default_rng(5)
    f = np.sign(rng.uniform(-1.0, 1.0, (14, 14, 14))).astype(np.float32)
    _, quads = SN.extract(wp.array(f), topology="quad")
    assert max(quad_edges(quads.numpy().reshape(-1, 4)).values()) <= 2
    g = np.ones((4, 4, 4), dtype=np.float32)
    g[1, 1, 1] = g[2, 2, 2] = -1.0
    verts, quads = SN.extract(wp.array(g), topology="quad")
    assert verts.shape[0] == 16  # 15 cells with a sign change, the one between the two nodes has two sheets
    assert set(quad_edges(quads.numpy().reshape(-1, 4)).values()) == {2}


def test_open_rim_and_bounds():
    f, _ = sphere(24, 12.0, centre=(0.0, 0.0, 0.0))
    verts, quads = SN.extract(wp.array(f), topology="quad", lower=(-1.0, 0.0, 0.0), upper=(1.0, 2.0, 4.0))
    counts = quad_edges(quads.numpy().reshape(-1, 4))
    assert max(counts.values()) == 2 and min(counts.values()) == 1
    v = verts.numpy()
    assert v[:, 0].min() >= -1.0 and v[:, 2].max() <= 4.0
    iv, _ = SN.extract(wp.array(f), topology="quad")
    np.testing.assert_allclose(v, iv.numpy() * np.array([2.0, 2.0, 4.0]) / 23.0 + [-1.0, 0.0, 0.0], atol=1e-5)


@wp.kernel
def weighted_sum(verts: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, wp.dot(verts[i], w[i]))


def test_vertex_gradient_matches_central_differences():
    rng = np.random.default_rng(3)
    f = rng.uniform(-1.0, 1.0, (5, 5, 5))
    f[np.abs(f) < 0.05] = 0.3
    field = wp.array(f.astype(np.float32), requires_grad=True)
    tape = wp.Tape()
    with tape:
        verts, _ = SN.extract(field)
        w = rng.uniform(-1.0, 1.0, (verts.shape[0], 3))
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(weighted_sum, verts.shape[0], inputs=[verts, wp.array(w, dtype=wp.vec3), loss])
    tape.backward(loss)
    grad = field.grad.numpy()

    def value(g):
        rv, _ = replica(g)
        assert rv.shape[0] == w.shape[0]
        return float(np.sum(rv * w))

    eps = 1e-4
    fd = np.zeros_like(f)
    for node in np.ndindex(*f.shape):
        p, m = f.copy(), f.copy()
        p[node] += eps
        m[node] -= eps
        fd[node] = (value(p) - value(m)) / (2 * eps)
    np.testing.assert_allclose(grad, fd, rtol=1e-3, atol=1e-3)


def test_errors_and_stateful():
    f, _ = sphere(16, 4.0)
    iso = SN(16, 16, 16, topology="quad")
    assert isinstance(iso, wp.geometry.IsoSurfaceBase)
    iso.surface(wp.array(f), 0.0)
    assert iso.indices.shape[0] % 4 == 0 and iso.indices.shape[0] > 0
    empty_v, empty_i = SN.extract(wp.array(f), threshold=100.0)
    assert empty_v.shape == (0,) and empty_i.shape == (0,)
    with pytest.raises(ValueError, match="at least 2 nodes"):
        SN.extract(wp.zeros((1, 8, 8), dtype=float))
    with pytest.raises(TypeError):
        SN.extract(wp.zeros((8, 8, 8), dtype=wp.float64))
    with pytest.raises(ValueError):
        SN.extract(wp.array(f), topology="quads")
    with pytest.raises(ValueError):
        iso.surface(wp.zeros((8, 8, 8), dtype=float), 0.0)
