"""Swept volume: a sphere translated along x sweeps a capsule (field against the analytic
capsule distance near the surface; the extracted envelope spans the capsule's box); two
spheres give the minimum of their distances; a rotation pose moves the envelope; NO_SIGN is
unsigned and its threshold surface is offset outward; the winding number classifies the
inside of an open box; grid sizing (voxel_size exact spacing, resolution, explicit bounds);
the errors."""

import math

import numpy as np
import pytest

import weft as wp

G = wp.geometry


def icosphere(radius, subdivisions=2, centre=(0.0, 0.0, 0.0)):
    t = (1.0 + math.sqrt(5.0)) / 2.0
    pts = [[-1, t, 0], [1, t, 0], [-1, -t, 0], [1, -t, 0], [0, -1, t], [0, 1, t], [0, -1, -t], [0, 1, -t],
           [t, 0, -1], [t, 0, 1], [-t, 0, -1], [-t, 0, 1]]
    faces = [[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4], [11, 10, 2],
             [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8], [3, 8, 9], [4, 9, 5], [2, 4, 11],
             [6, 2, 10], [8, 6, 7], [9, 8, 1]]
    pts = [list(np.array(p) / np.linalg.norm(p)) for p in pts]
    for _ in range(subdivisions):
        mid, out = {}, []

        def m(a, b):
            key = (min(a, b), max(a, b))
            if key not in mid:
                p = np.add(pts[a], pts[b])
                pts.append(list(p / np.linalg.norm(p)))
                mid[key] = len(pts) - 1
            return mid[key]
        for a, b, c in faces:
            ab, bc, ca = m(a, b), m(b, c), m(c, a)
            out += [[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]
        faces = out
    p = np.array(pts) * radius + np.array(centre)
    return wp.Mesh(wp.array(p, dtype=wp.vec3), wp.array(np.array(faces, np.int32).ravel(), dtype=wp.int32),
                   support_winding_number=True)


def translations(offsets):
    offsets = np.asarray(offsets, dtype=np.float32)
    tr = np.zeros((*offsets.shape[:-1], 7), dtype=np.float32)
    tr[..., :3] = offsets
    tr[..., 6] = 1.0
    return tr


def nodes(field, lower, upper):
    dims = np.array(field.shape)
    lo, hi = np.array(list(lower)), np.array(list(upper))
    idx = np.stack(np.meshgrid(*[np.arange(d) for d in dims], indexing="ij"), -1).reshape(-1, 3)
    return lo + idx * (hi - lo) / (dims - 1), field.numpy().reshape(-1)


def test_translated_sphere_is_a_capsule():
    r = 0.5
    tr = translations([[[x, 0.0, 0.0] for x in np.linspace(-1.0, 1.0, 11)]])
    field, lower, upper = G.swept_volume_field([icosphere(r)], tr, voxel_size=0.1)
    p, f = nodes(field, lower, upper)
    h = np.clip(p[:, 0], -1.0, 1.0)
    d = np.linalg.norm(p - np.stack([h, 0 * h, 0 * h], 1), axis=1) - r
    band = np.abs(d) < 0.3
    np.testing.assert_allclose(f[band], d[band], atol=0.04)  # icosphere facets plus the pose spacing
    np.testing.assert_allclose(np.array(list(upper)) - np.array(list(lower)),
                               (np.array(field.shape) - 1) * 0.1, rtol=1e-5)
    verts, indices = G.swept_volume_mesh([icosphere(r)], tr, voxel_size=0.1)
    v = verts.numpy()
    assert indices.shape[0] % 3 == 0 and indices.shape[0] > 0
    np.testing.assert_allclose(v.min(axis=0), [-1.5, -0.5, -0.5], atol=0.08)
    np.testing.assert_allclose(v.max(axis=0), [1.5, 0.5, 0.5], atol=0.08)


def test_two_spheres_and_rotation():
    r = 0.4
    tr = translations([[[-1.0, 0.0, 0.0]], [[1.0, 0.0, 0.0]]])
    field, lower, upper = G.swept_volume_field([icosphere(r), icosphere(r)], tr, voxel_size=0.1)
    p, f = nodes(field, lower, upper)
    d = np.minimum(np.linalg.norm(p - [-1, 0, 0], axis=1), np.linalg.norm(p - [1, 0, 0], axis=1)) - r
    band = np.abs(d) < 0.3
    np.testing.assert_allclose(f[band], d[band], atol=0.03)
    # a sphere at +x rotated a quarter turn about z reaches +y
    angles = np.linspace(0.0, np.pi / 2, 7)
    rot = np.zeros((1, 7, 7), dtype=np.float32)
    rot[0, :, 5], rot[0, :, 6] = np.sin(angles / 2), np.cos(angles / 2)
    v = G.swept_volume_mesh([icosphere(0.3, centre=(1.0, 0.0, 0.0))], rot, voxel_size=0.1)[0].numpy()
    assert v[:, 0].max() > 1.2 and v[:, 1].max() > 1.2 and v[:, 1].min() > -0.4


def test_unsigned_and_sign_modes():
    tr = translations([[[0.0, 0.0, 0.0]]])
    mesh = icosphere(0.5)
    field, _, _ = G.swept_volume_field([mesh], tr, voxel_size=0.1, sign_mode=G.SweptVolumeSignMode.NO_SIGN)
    assert field.numpy().min() >= 0.0
    v = G.swept_volume_mesh([mesh], tr, voxel_size=0.1, threshold=0.2,
                            sign_mode=G.SweptVolumeSignMode.NO_SIGN)[0].numpy()
    radii = np.linalg.norm(v, axis=1)
    assert np.any(np.abs(radii - 0.7) < 0.05) and np.any(np.abs(radii - 0.3) < 0.05)
    ref = G.swept_volume_field([mesh], tr, voxel_size=0.1)[0].numpy()
    for mode in (G.SweptVolumeSignMode.NORMAL, G.SweptVolumeSignMode.PARITY):
        np.testing.assert_allclose(G.swept_volume_field([mesh], tr, voxel_size=0.1, sign_mode=mode)[0].numpy(), ref,
                                   atol=1e-5)


def test_open_box_inside_by_winding_number():
    h = 0.5
    pts = np.array([[-h, -h, -h], [h, -h, -h], [h, h, -h], [-h, h, -h], [-h, -h, h], [h, -h, h], [h, h, h],
                    [-h, h, h]], np.float32)
    faces = np.array([0, 3, 2, 0, 2, 1, 0, 1, 5, 0, 5, 4, 2, 3, 7, 2, 7, 6, 1, 2, 6, 1, 6, 5, 3, 0, 4, 3, 4, 7],
                     np.int32)  # the +z face left out
    box = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(faces, dtype=wp.int32), support_winding_number=True)
    field, lower, upper = G.swept_volume_field([box], translations([[[0.0, 0.0, 0.0]]]), resolution=(9, 9, 9),
                                               lower=(-1.0, -1.0, -1.0), upper=(1.0, 1.0, 1.0))
    assert field.shape == (9, 9, 9)
    assert float(field.numpy()[4, 4, 4]) == pytest.approx(-0.5, abs=1e-5)


def test_bounds_and_errors():
    mesh = icosphere(0.5)
    tr = translations([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
    lower, upper = G.swept_volume_bounds([mesh], tr, padding=0.25)
    np.testing.assert_allclose(list(lower), [-0.75, -0.75, -0.75], atol=1e-5)
    np.testing.assert_allclose(list(upper), [1.75, 0.75, 0.75], atol=1e-5)
    with pytest.raises(ValueError):
        G.swept_volume_field([], tr, voxel_size=0.1)
    with pytest.raises(ValueError, match="rows"):
        G.swept_volume_field([mesh], np.concatenate([tr, tr]), voxel_size=0.1)
    with pytest.raises(ValueError):
        G.swept_volume_field([mesh], tr)
    with pytest.raises(ValueError):
        G.swept_volume_field([mesh], tr, voxel_size=0.1, resolution=(4, 4, 4))
    with pytest.raises(ValueError):
        G.swept_volume_field([mesh], tr, resolution=(4, 1, 4))
    with pytest.raises(ValueError):
        G.swept_volume_field([mesh], tr, voxel_size=0.1, lower=(0, 0, 0), upper=(1, 1, 1))
    with pytest.raises(ValueError):
        G.swept_volume_mesh([mesh], tr, voxel_size=0.1, sign_mode=G.SweptVolumeSignMode.NO_SIGN)
    plain = wp.Mesh(mesh.points, mesh.indices)
    with pytest.raises(ValueError, match="support_winding_number"):
        G.swept_volume_field([plain], tr, voxel_size=0.1)
