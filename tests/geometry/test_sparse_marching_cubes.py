"""Sparse marching cubes: the Lipschitz octree keeps every cell a NumPy dense grid finds the
sphere crossing (and only cells within the Lipschitz band); the extracted sphere matches
dense IsoSurfaceMarchingCubes on the same (anisotropic) grid, is watertight with Euler
characteristic 2, lies on the radius, and has area near 4 pi r^2; cells given explicitly
(shifted past 2**24) give the same surface; d(area)/d(radius) agrees with 8 pi r and with
float64 central differences; the errors."""

import numpy as np
import pytest

import weft as wp

G = wp.geometry
OFFSETS = np.array(G.IsoSurfaceMarchingCubes.CUBE_CORNER_OFFSETS)


@wp.kernel
def sphere_values(points: wp.array(dtype=wp.vec3), radius: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.length(points[i]) - radius[0]


def sphere_field(radius=0.5, requires_grad=False):
    r = wp.array([radius], dtype=float, requires_grad=requires_grad)

    def evaluate(points):
        out = wp.empty(points.shape[0], dtype=float, requires_grad=requires_grad)
        wp.launch(sphere_values, points.shape[0], inputs=[points, r], outputs=[out])
        return out
    return evaluate, r


def edges_of(tris):
    e = np.sort(np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]]), axis=1)
    return np.unique(e, axis=0, return_counts=True)


def area(v, t):
    return 0.5 * np.linalg.norm(np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]]), axis=1).sum()


def test_octree_brackets_the_surface():
    evaluate, _ = sphere_field()
    cells, width = G.lipschitz_octree(evaluate, (-1.0, -1.0, -1.0), 2.0, 5)
    assert width == pytest.approx(2.0 / 32)
    kept = {tuple(c) for c in cells.numpy()}
    x = -1.0 + width * np.arange(33)
    f = np.linalg.norm(np.stack(np.meshgrid(x, x, x, indexing="ij"), -1), axis=-1) - 0.5
    inside = (f < 0).astype(int)
    s = sum(inside[a:a + 32, b:b + 32, c:c + 32] for a, b, c in OFFSETS)
    crossing = {tuple(c) for c in np.argwhere((s > 0) & (s < 8))}
    assert crossing <= kept
    centres = -1.0 + width * (np.array(sorted(kept)) + 0.5)
    assert np.abs(np.linalg.norm(centres, axis=1) - 0.5).max() <= np.sqrt(3) / 2 * width + 1e-6
    assert len(kept) < 33 ** 3 // 8


@pytest.mark.parametrize("shape", [(33, 33, 33), (11, 15, 21)])
def test_matches_dense_and_is_watertight(shape):
    lower, upper = (-1.0, -1.1, -0.9), (1.0, 1.2, 1.05)
    evaluate, _ = sphere_field()
    verts, indices, stats = G.sparse_marching_cubes(evaluate, *shape, lower=lower, upper=upper, return_stats=True)
    assert stats["field_evaluations"] < np.prod(shape)
    axes = [np.linspace(lower[a], upper[a], shape[a], dtype=np.float32) for a in range(3)]
    dense = np.linalg.norm(np.stack(np.meshgrid(*axes, indexing="ij"), -1), axis=-1) - 0.5
    dv, di = G.IsoSurfaceMarchingCubes.extract(wp.array(dense.astype(np.float32)), lower=lower, upper=upper)
    v, t = verts.numpy(), indices.numpy().reshape(-1, 3)
    dv, dt = dv.numpy(), di.numpy().reshape(-1, 3)
    assert v.shape == dv.shape and t.shape == dt.shape
    # the same vertices (in some order) and the same triangles on them
    d2 = ((v[:, None, :] - dv[None, :, :]) ** 2).sum(axis=-1)
    match = d2.argmin(axis=1)
    assert np.sqrt(d2[np.arange(len(v)), match].max()) < 1e-4
    assert np.unique(match).shape[0] == len(v)
    mapped = match[t]
    canon = {tuple(np.roll(r, -np.argmin(r))) for r in mapped}
    assert canon == {tuple(np.roll(r, -np.argmin(r))) for r in dt}
    _, counts = edges_of(t)
    assert set(counts) == {2}
    assert v.shape[0] - counts.shape[0] + t.shape[0] == 2
    assert np.abs(np.linalg.norm(v, axis=1) - 0.5).max() < 0.07
    assert area(v, t) == pytest.approx(np.pi, rel=0.05)  # the coarse grid has cells of ~0.2


def test_from_cells_large_subscripts_and_threshold():
    evaluate, _ = sphere_field()
    verts, indices = G.sparse_marching_cubes(evaluate, 33, 33, 33, lower=(-1.5,) * 3, upper=(1.5,) * 3,
                                             threshold=0.25)
    assert np.abs(np.linalg.norm(verts.numpy(), axis=1) - 0.75).max() < 3.0 / 32
    cells, width = G.lipschitz_octree(evaluate, (-1.0,) * 3, 2.0, 4)
    c = cells.numpy()
    values = (np.linalg.norm(-1.0 + width * (c[:, None, :] + OFFSETS[None]), axis=2) - 0.5).astype(np.float32)
    v0, i0 = G.sparse_marching_cubes_from_cells(cells, values, origin=(-1.0,) * 3, cell_width=width)
    shift = 1 << 25
    v1, i1 = G.sparse_marching_cubes_from_cells(c + shift, values, origin=(-1.0 - shift * width,) * 3,
                                                cell_width=width)
    np.testing.assert_array_equal(i1.numpy(), i0.numpy())
    np.testing.assert_allclose(v1.numpy(), v0.numpy(), atol=1e-4)
    _, counts = edges_of(i0.numpy().reshape(-1, 3))
    assert set(counts) == {2}


@wp.kernel
def corner_values(cells: wp.array(dtype=wp.vec3i), h: float, radius: wp.array(dtype=float),
                  out: wp.array2d(dtype=float)):
    c = wp.tid()
    for k in range(8):
        o = wp.vec3i(wp.where(k == 1 or k == 2 or k == 5 or k == 6, 1, 0),
                     wp.where(k == 2 or k == 3 or k == 6 or k == 7, 1, 0), wp.where(k >= 4, 1, 0))
        p = wp.vec3(-1.0, -1.0, -1.0) + h * wp.vec3(float(cells[c][0] + o[0]), float(cells[c][1] + o[1]),
                                                    float(cells[c][2] + o[2]))
        out[c, k] = wp.length(p) - radius[0]


@wp.kernel
def total_area(verts: wp.array(dtype=wp.vec3), tris: wp.array(dtype=wp.int32), out: wp.array(dtype=float)):
    t = wp.tid()
    a = verts[tris[3 * t]]
    wp.atomic_add(out, 0, 0.5 * wp.length(wp.cross(verts[tris[3 * t + 1]] - a, verts[tris[3 * t + 2]] - a)))


def test_area_gradient_in_the_radius():
    assert OFFSETS.tolist() == [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]]
    n = 24
    h = 2.0 / n
    g = np.arange(n)
    cells = wp.array(np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3), dtype=wp.vec3i)

    def area_and_grad(radius):
        r = wp.array([radius], dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            vals = wp.empty((cells.shape[0], 8), dtype=float, requires_grad=True)
            wp.launch(corner_values, cells.shape[0], inputs=[cells, h, r], outputs=[vals])
            verts, tris = G.sparse_marching_cubes_from_cells(cells, vals, origin=(-1.0,) * 3, cell_width=h)
            out = wp.zeros(1, dtype=float, requires_grad=True)
            wp.launch(total_area, tris.shape[0] // 3, inputs=[verts, tris], outputs=[out])
        tape.backward(out)
        return area(verts.numpy().astype(np.float64), tris.numpy().reshape(-1, 3)), float(r.grad.numpy()[0])

    # a radius no grid node lies on (a vertex on a node makes zero-area triangles)
    radius = 0.47
    a, grad = area_and_grad(radius)
    assert a == pytest.approx(4 * np.pi * radius ** 2, rel=0.03)
    assert grad == pytest.approx(8 * np.pi * radius, rel=0.05)
    eps = 1e-3
    fd = (area_and_grad(radius + eps)[0] - area_and_grad(radius - eps)[0]) / (2 * eps)
    assert grad == pytest.approx(fd, rel=0.02)

    # through the octree path: the evaluator's output carries the gradient
    evaluate, r = sphere_field(radius, requires_grad=True)
    tape = wp.Tape()
    with tape:
        verts, tris = G.sparse_marching_cubes(evaluate, n + 1, n + 1, n + 1, lower=(-1.0,) * 3, upper=(1.0,) * 3)
        out = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(total_area, tris.shape[0] // 3, inputs=[verts, tris], outputs=[out])
    tape.backward(out)
    assert float(r.grad.numpy()[0]) == pytest.approx(grad, rel=0.02)


@wp.func
def bare(p: wp.vec3):
    return wp.length(p) - 0.5


def test_errors():
    evaluate, _ = sphere_field()
    with pytest.raises(ValueError):
        G.sparse_marching_cubes(evaluate, 1, 17, 17)
    with pytest.raises(ValueError):
        G.sparse_marching_cubes(evaluate, 17, 17, 17, lipschitz_bound=-1.0)
    with pytest.raises(TypeError, match="single-point"):
        G.sparse_marching_cubes(bare, 17, 17, 17)
    with pytest.raises(TypeError):
        G.lipschitz_octree(42, (0.0,) * 3, 1.0, 3)
    with pytest.raises(ValueError):
        G.sparse_marching_cubes_from_cells(np.zeros((1, 3), np.int32), np.zeros((1, 8), np.float32), cell_width=0.0)
    with pytest.raises(ValueError, match="8 entries"):
        G.sparse_marching_cubes_from_cells(np.zeros((1, 3), np.int32), np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="returned 1 values"):
        G.sparse_marching_cubes(lambda p: wp.zeros(1, dtype=float), 9, 9, 9)
    v, i = G.sparse_marching_cubes(evaluate, 17, 17, 17, lower=(-1.0,) * 3, upper=(1.0,) * 3, threshold=-10.0)
    assert v.shape == (0,) and i.shape == (0,)
