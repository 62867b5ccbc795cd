"""The fast winding number of Mesh(support_winding_number=True): far BVH nodes contribute
the second-order expansion of their solid angle (geometry/mesh_kernels.py), so the value
`mesh_query_point_sign_winding_number` thresholds is within a few thousandths of the exact
one at the default accuracy, on open surfaces too (where it is neither 0 nor 1)."""

import numpy as np

import weft as wp


def hemisphere(nu=24, nv=10):
    verts = [[0.0, 0.0, 1.0]]
    for j in range(1, nv + 1):
        th = 0.5 * np.pi * j / nv
        verts += [[np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)]
                  for ph in 2 * np.pi * np.arange(nu) / nu]
    ring = lambda j, i: 1 + (j - 1) * nu + i % nu  # noqa: E731
    idx = [[0, ring(1, i), ring(1, i + 1)] for i in range(nu)]
    for j in range(1, nv):
        for i in range(nu):
            a, b, c, d = ring(j, i), ring(j, i + 1), ring(j + 1, i), ring(j + 1, i + 1)
            idx += [[a, c, b], [b, c, d]]
    return np.array(verts, np.float32), np.array(idx, np.int32).ravel()


def exact_winding_numbers(verts, idx, points):
    tri = verts[idx.reshape(-1, 3)].astype(np.float64)
    a, b, c = (tri[None, :, k] - points[:, None] for k in range(3))
    la, lb, lc = (np.linalg.norm(x, axis=-1) for x in (a, b, c))
    det = np.einsum("pti,pti->pt", a, np.cross(b, c))
    den = la * lb * lc + (a * b).sum(-1) * lc + (b * c).sum(-1) * la + (c * a).sum(-1) * lb
    return (2 * np.arctan2(det, den)).sum(1) / (4 * np.pi)


@wp.kernel
def signs(mesh: wp.uint64, points: wp.array(dtype=wp.vec3), thresholds: wp.array(dtype=float),
          out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    out[i, j] = wp.mesh_query_point_sign_winding_number(mesh, points[i], 100.0, 2.0, thresholds[j]).sign


def test_far_nodes_are_expanded_to_the_second_order():
    verts, idx = hemisphere()
    mesh = wp.Mesh(wp.array(verts, dtype=wp.vec3), wp.array(idx, dtype=wp.int32), support_winding_number=True)
    points = np.random.default_rng(37).uniform(-1.5, 1.5, size=(400, 3))
    exact = exact_winding_numbers(verts, idx, points)
    thresholds = np.arange(-0.1, 1.1, 0.01)
    out = wp.zeros((len(points), len(thresholds)), dtype=float)
    wp.launch(signs, dim=out.shape, inputs=[mesh.id, wp.array(points, dtype=wp.vec3),
                                            wp.array(thresholds, dtype=float), out])
    inside = out.numpy() < 0  # (-1: the winding number is above the threshold)
    clear = np.abs(exact[:, None] - thresholds[None, :]) > 0.004
    # (a first-order dipole per node was off by about 0.01 here: 7 of 3000 signs wrong at 0.25)
    np.testing.assert_array_equal(inside[clear], (exact[:, None] > thresholds[None, :])[clear])
    assert 0.1 < np.mean((exact > 0.05) & (exact < 0.95)) < 0.9  # (open: many values in between)
