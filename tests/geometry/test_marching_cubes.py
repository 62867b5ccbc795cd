"""IsoSurfaceMarchingCubes: the generated case tables (each case's triangles use exactly its
crossed edges and close up), the surface of a sphere (watertight, outward, vertices on the
iso-level, area near 4 pi r^2), a watertight surface from a random field (the ambiguous faces
resolved alike in both cells), the area's derivative in the radius (against 8 pi r and
central differences), the bounds mapping, and the errors."""

from collections import Counter

import numpy as np
import pytest

import weft as wp
from weft.geometry import mc_tables

MC = wp.geometry.IsoSurfaceMarchingCubes


@wp.kernel
def sphere_field(field: wp.array3d(dtype=float), lower: wp.vec3, h: float, centre: wp.vec3,
                 radius: wp.array(dtype=float)):
    i, j, k = wp.tid()
    p = lower + h * wp.vec3(float(i), float(j), float(k))
    field[i, j, k] = wp.length(p - centre) - radius[0]


@wp.kernel
def triangle_areas(verts: wp.array(dtype=wp.vec3), tris: wp.array(dtype=wp.int32), area: wp.array(dtype=float)):
    t = wp.tid()
    a = verts[tris[3 * t]]
    b = verts[tris[3 * t + 1]]
    c = verts[tris[3 * t + 2]]
    wp.atomic_add(area, 0, 0.5 * wp.length(wp.cross(b - a, c - a)))


def closed_and_oriented(faces):
    """Every directed edge once and its reverse once: a closed, consistently wound surface."""
    edges = Counter(map(tuple, np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])))
    return max(edges.values()) == 1 and all((b, a) in edges for a, b in edges)


def sphere(n, radius, lower=-1.0, upper=1.0):
    h = (upper - lower) / (n - 1)
    r = wp.array([radius], dtype=float, requires_grad=True)
    field = wp.zeros((n, n, n), dtype=float, requires_grad=True)
    wp.launch(sphere_field, field.shape, inputs=[field, wp.vec3(lower, lower, lower), h, wp.vec3(0.0, 0.0, 0.0), r])
    return field, r


def area_of(verts, indices):
    area = wp.zeros(1, dtype=float, requires_grad=True)
    wp.launch(triangle_areas, indices.shape[0] // 3, inputs=[verts, indices, area])
    return area


def test_tables_use_exactly_the_crossed_edges_and_close_each_case():
    assert len(mc_tables.CASE_TO_TRI_RANGE) == 257 and len(mc_tables.TRI_LOCAL_INDICES) == 2460
    for case in range(256):
        inside = [(case >> c) & 1 for c in range(8)]
        crossed = {e for e, (a, b) in enumerate(mc_tables.EDGE_TO_CORNERS) if inside[a] != inside[b]}
        tris = np.array(mc_tables.TRI_LOCAL_INDICES[mc_tables.CASE_TO_TRI_RANGE[case]:
                                                    mc_tables.CASE_TO_TRI_RANGE[case + 1]]).reshape(-1, 3)
        assert set(tris.ravel()) == crossed, case
        # inside the cube the patch's boundary lies on the faces: each edge pair between two
        # crossed edges of different faces appears once, the ones along one face once too
        edges = Counter(map(tuple, np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])))
        assert max(edges.values(), default=1) == 1, case


def test_tables_are_the_classic_ones_warp_uses():
    # a few cases of the published table (Bourke, 1994): a corner, an edge's two corners, ...
    def case(k):
        return list(mc_tables.TRI_LOCAL_INDICES[mc_tables.CASE_TO_TRI_RANGE[k]:mc_tables.CASE_TO_TRI_RANGE[k + 1]])
    assert case(1) == [0, 8, 3] and case(3) == [1, 8, 3, 9, 8, 1] and case(254) == [0, 3, 8] and case(255) == []
    warp = pytest.importorskip("warp")
    assert tuple(MC.TRI_LOCAL_INDICES) == tuple(warp.MarchingCubes.TRI_LOCAL_INDICES)
    assert tuple(MC.CASE_TO_TRI_RANGE) == tuple(warp.MarchingCubes.CASE_TO_TRI_RANGE)


def test_sphere_surface_is_closed_outward_on_the_level_and_has_the_sphere_area():
    radius, n = 0.5, 48
    field, _ = sphere(n, radius)
    iso = MC(n, n, n, lower=(-1.0, -1.0, -1.0), upper=(1.0, 1.0, 1.0))
    iso.surface(field, threshold=0.0)
    verts, faces = iso.verts.numpy(), iso.indices.numpy().reshape(-1, 3)
    assert iso.indices.dtype == wp.int32 and faces.shape[0] > 0
    assert np.array_equal(np.unique(faces), np.arange(len(verts)))  # every vertex used
    assert (faces[:, 0] != faces[:, 1]).all() and (faces[:, 1] != faces[:, 2]).all()
    assert closed_and_oriented(faces)
    assert len(verts) - len(faces) * 3 // 2 + len(faces) == 2  # Euler characteristic of a sphere
    h = 2.0 / (n - 1)
    assert np.abs(np.linalg.norm(verts, axis=1) - radius).max() < 0.05 * h  # on the level set
    tri = verts[faces]
    normals = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    assert (np.einsum("ij,ij->i", normals, tri.mean(axis=1)) > 0).all()  # wound outward
    area = 0.5 * np.linalg.norm(normals, axis=1).sum()
    assert abs(area - 4 * np.pi * radius**2) < 5e-3 * 4 * np.pi * radius**2


def test_linear_field_vertices_are_exactly_on_the_threshold():
    n = 6
    x = np.arange(n, dtype=np.float32)
    values = (0.3 * x[:, None, None] + 0.5 * x[None, :, None] - 0.2 * x[None, None, :]).astype(np.float32)
    threshold = 1.3
    verts, indices = MC.extract(wp.array(values, dtype=float), threshold)
    v = verts.numpy()
    assert len(v) > 0
    np.testing.assert_allclose(0.3 * v[:, 0] + 0.5 * v[:, 1] - 0.2 * v[:, 2], threshold, atol=1e-5)


def test_random_field_surface_is_watertight():
    rng = np.random.default_rng(3)
    values = rng.standard_normal((14, 13, 12)).astype(np.float32)
    values[[0, -1], :, :] = values[:, [0, -1], :] = values[:, :, [0, -1]] = 1.0  # closed inside the grid
    verts, indices = MC.extract(wp.array(values, dtype=float), 0.0)
    faces = indices.numpy().reshape(-1, 3)
    assert len(faces) > 100 and closed_and_oriented(faces)
    assert np.array_equal(np.unique(faces), np.arange(verts.shape[0]))


def test_area_gradient_in_the_radius_matches_8_pi_r_and_central_differences():
    radius, n = 0.5, 40

    def area(r_value):
        field, _ = sphere(n, r_value)
        return float(area_of(*MC.extract(field, 0.0, lower=(-1.0,) * 3, upper=(1.0,) * 3)).numpy()[0])

    with wp.Tape() as tape:
        field, r = sphere(n, radius)
        verts, indices = MC.extract(field, 0.0, lower=(-1.0,) * 3, upper=(1.0,) * 3)
        total = area_of(verts, indices)
    tape.backward(total)
    grad = float(r.grad.numpy()[0])
    step = 1e-3  # small enough that no vertex changes edge
    fd = (area(radius + step) - area(radius - step)) / (2 * step)
    assert abs(grad - fd) < 2e-2 * abs(fd)
    assert abs(grad - 8 * np.pi * radius) < 1e-2 * 8 * np.pi * radius


def test_bounds_map_nodes_linearly():
    field, _ = sphere(20, 0.6)
    v0, i0 = MC.extract(field, 0.0)  # nodes at integer coordinates
    v1, i1 = MC.extract(field, 0.0, lower=(1.0, 2.0, 3.0), upper=(20.0, 40.0, 60.0))
    np.testing.assert_array_equal(i0.numpy(), i1.numpy())
    np.testing.assert_allclose(v1.numpy(), np.array([1.0, 2.0, 3.0]) + v0.numpy() * [1.0, 2.0, 3.0], rtol=1e-5,
                               atol=1e-4)


def test_a_number_as_a_bound_is_that_number_on_each_axis():  # (Warp's vec3(bound))
    field, _ = sphere(9, 0.6)
    v0, i0 = MC.extract(field, 0.0, lower=(-1.0, -1.0, -1.0), upper=wp.vec3(1.0, 1.0, 1.0))
    v1, i1 = MC.extract(field, 0.0, lower=-1.0, upper=1)
    np.testing.assert_array_equal(i0.numpy(), i1.numpy())
    np.testing.assert_array_equal(v0.numpy(), v1.numpy())
    mc = wp.MarchingCubes(9, 9, 9, -1.0, 1.0)  # (positional, as Warp's signature orders them)
    mc.surface(field, 0.0)
    np.testing.assert_array_equal(mc.verts.numpy(), v0.numpy())


def test_empty_surface_and_top_level_alias(capsys):
    field = wp.zeros((5, 5, 5), dtype=float)
    verts, indices = MC.extract(field, threshold=-1.0)
    assert verts.shape == (0,) and indices.shape == (0,)
    wp.logger._warnings_seen.clear()
    alias = wp.MarchingCubes
    assert "wp.MarchingCubes is deprecated" in capsys.readouterr().err
    assert alias is MC and issubclass(MC, wp.geometry.IsoSurfaceBase)


@pytest.mark.parametrize("shape", [(1, 4, 4), (4, 4, 1), (0, 3, 3)])
def test_thin_fields_are_rejected(shape):
    with pytest.raises(ValueError, match="at least 2 nodes on each axis"):
        MC.extract(wp.zeros(shape, dtype=float))


def test_bad_fields_are_rejected():
    with pytest.raises(TypeError, match="float32"):
        MC.extract(wp.zeros((3, 3, 3), dtype=wp.float64))
    with pytest.raises(ValueError, match="3D"):
        MC.extract(wp.zeros((3, 3), dtype=float))
    with pytest.raises(ValueError, match="does not match"):
        MC(4, 4, 4).surface(wp.zeros((4, 4, 5), dtype=float), 0.0)
    with pytest.raises(TypeError, match="Cannot specify both `lower`"):
        MC(4, 4, 4, lower=(0, 0, 0), domain_bounds_lower_corner=(1, 1, 1))
