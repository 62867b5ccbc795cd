"""HashGrid: neighbour counts against brute force (all precisions, groups, wrapped cells),
the visit order of a query against a direct model of Warp's traversal, the loop forms,
and errors and stale ids."""

from typing import Any

import numpy as np
import pytest

import weft as wp


@wp.kernel
def count_neighbors(grid: wp.uint64, radius: Any, points: wp.array(dtype=Any), counts: wp.array(dtype=int)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = points[i]
    count = 0
    for index in wp.hash_grid_query(grid, p, radius):
        if wp.length(p - points[index]) <= radius:
            count += 1
    counts[i] = count


def brute_force(points, radius, groups=None):
    p = points.astype(np.float64)
    near = np.linalg.norm(p[:, None] - p[None, :], axis=-1) <= radius
    if groups is not None:
        near &= groups[:, None] == groups[None, :]
    return near.sum(1)


@pytest.mark.parametrize("dims, cell", [((16, 16, 16), 1.5), ((3, 5, 2), 1.0), ((64, 1, 64), 0.7)])
def test_counts_match_brute_force(dims, cell):
    rng = np.random.default_rng(0)
    pts = (rng.random((1500, 3)) * 30.0 - 15.0).astype(np.float32)  # grids smaller than the cloud wrap
    grid = wp.HashGrid(*dims)
    points = wp.array(pts, dtype=wp.vec3)
    grid.build(points, cell)
    for radius in (cell, 0.5 * cell, 2.5 * cell):
        counts = wp.zeros(len(pts), dtype=int)
        wp.launch(count_neighbors, len(pts), inputs=[wp.uint64(grid.id), np.float32(radius), points, counts])
        np.testing.assert_array_equal(counts.numpy(), brute_force(pts, np.float32(radius)))


@pytest.mark.parametrize("dtype, vec", [(wp.float16, wp.vec3h), (wp.float64, wp.vec3d)])
def test_half_and_double_grids(dtype, vec):
    rng = np.random.default_rng(1)
    pts = (rng.random((400, 3)) * 8.0).astype(dtype.np_dtype if hasattr(dtype, "np_dtype") else np.float64)
    grid = wp.HashGrid(8, 8, 8, dtype=dtype)
    points = wp.array(pts, dtype=vec)
    grid.build(points, 1.0)
    counts = wp.zeros(len(pts), dtype=int)
    radius = dtype(0.75)  # a numpy scalar of the grid's precision picks the kernel's overload
    wp.launch(count_neighbors, len(pts), inputs=[wp.uint64(grid.id), radius, points, counts])
    if dtype is wp.float64:
        np.testing.assert_array_equal(counts.numpy(), brute_force(pts, 0.75))
    else:  # distances computed in half precision: compare away from the boundary
        d = np.linalg.norm(pts[:, None].astype(np.float64) - pts[None].astype(np.float64), axis=-1)
        lo, hi = (d <= 0.75 - 0.01).sum(1), (d <= 0.75 + 0.01).sum(1)
        assert np.all((lo <= counts.numpy()) & (counts.numpy() <= hi))


@wp.kernel
def count_grouped(grid: wp.uint64, radius: float, points: wp.array(dtype=wp.vec3), groups: wp.array(dtype=int),
                  counts: wp.array(dtype=int)):
    tid = wp.tid()
    p = points[tid]
    count = 0
    for index in wp.hash_grid_query(grid, p, radius, groups[tid]):
        if wp.length(p - points[index]) <= radius:
            count += 1
    counts[tid] = count


def test_groups_restrict_queries_to_their_members():
    rng = np.random.default_rng(2)
    pts = (rng.random((800, 3)) * 6.0).astype(np.float32)
    groups = rng.choice(np.array([-2147483648, -1, 0, 3, 2147483647], np.int32), size=800)
    grid = wp.HashGrid(4, 4, 4)
    points, g = wp.array(pts, dtype=wp.vec3), wp.array(groups, dtype=int)
    grid.build(points, 1.0, groups=g)
    counts = wp.zeros(800, dtype=int)
    wp.launch(count_grouped, 800, inputs=[wp.uint64(grid.id), 1.0, points, g, counts])
    np.testing.assert_array_equal(counts.numpy(), brute_force(pts, np.float32(1.0), groups))
    everyone = wp.zeros(800, dtype=int)  # a query without a group still sees every point
    wp.launch(count_neighbors, 800, inputs=[wp.uint64(grid.id), np.float32(1.0), points, everyone])
    np.testing.assert_array_equal(everyone.numpy(), brute_force(pts, np.float32(1.0)))


@wp.func
def first_k(query: wp.HashGridQuery[wp.float32], out: wp.array2d(dtype=int), row: int):
    index = 0
    k = 0
    while wp.hash_grid_query_next(query, index):
        if k < out.shape[1]:
            out[row, k] = index
        k += 1
    return k


@wp.kernel
def visit_order(grid: wp.uint64, radius: float, points: wp.array(dtype=wp.vec3), out: wp.array2d(dtype=int),
                n: wp.array(dtype=int)):
    tid = wp.tid()
    n[tid] = first_k(wp.hash_grid_query(grid, points[tid], radius), out, tid)


def model_order(pts, dims, cell, radius, p):
    """Warp's traversal written out: cells of the query box x fastest (at most one period
    per axis), each cell's points in index order."""
    f32 = np.float32
    inv = f32(1.0) / f32(cell)
    cell_of = [tuple(int(np.floor(c * inv)) % d for c, d in zip(q, dims)) for q in pts]
    lo = [int(np.floor((f32(c) - f32(radius)) * inv)) for c in p]
    hi = [int(np.floor((f32(c) + f32(radius)) * inv)) for c in p]
    hi = [min(h, s + d - 1) for s, h, d in zip(lo, hi, dims)]
    order = []
    for z in range(lo[2], hi[2] + 1):
        for y in range(lo[1], hi[1] + 1):
            for x in range(lo[0], hi[0] + 1):
                key = (x % dims[0], y % dims[1], z % dims[2])
                order += [i for i, c in enumerate(cell_of) if c == key]
    return order


# (16, 16, 16): rows of cells that wrap around x and rows that do not (weft visits those as
# one run of points), queries of one to four cells per axis
@pytest.mark.parametrize("dims, cell, radius", [((4, 3, 5), 1.25, 1.1), ((16, 16, 16), 1.0, 1.6),
                                                ((16, 16, 16), 1.0, 0.3)])
def test_visit_order_is_warps_traversal(dims, cell, radius):
    rng = np.random.default_rng(3)
    pts = (rng.random((300, 3)) * 10.0 - 5.0).astype(np.float32)
    grid = wp.HashGrid(*dims)
    points = wp.array(pts, dtype=wp.vec3)
    grid.build(points, cell)
    out, n = wp.full((300, 300), -1, dtype=int), wp.zeros(300, dtype=int)
    wp.launch(visit_order, 300, inputs=[wp.uint64(grid.id), radius, points, out, n])
    for t in range(0, 300, 7):
        expected = model_order(pts, dims, cell, radius, pts[t])
        assert n.numpy()[t] == len(expected)
        np.testing.assert_array_equal(out.numpy()[t, : len(expected)], expected)


@wp.kernel
def point_ids(grid: wp.uint64, n: int, out: wp.array(dtype=int)):
    tid = wp.tid()
    out[tid] = wp.hash_grid_point_id(grid, tid - 1)  # positions -1 .. n


def test_point_ids_are_the_cell_sorted_permutation():
    rng = np.random.default_rng(4)
    pts = (rng.random((500, 3)) * 8.0).astype(np.float32)
    grid = wp.HashGrid(8, 8, 8)
    grid.build(wp.array(pts, dtype=wp.vec3), 1.0)
    out = wp.zeros(502, dtype=int)
    wp.launch(point_ids, 502, inputs=[wp.uint64(grid.id), 500, out])
    ids = out.numpy()
    assert ids[0] == -1 and ids[-1] == -1
    perm = ids[1:-1]
    np.testing.assert_array_equal(np.sort(perm), np.arange(500))
    c = np.floor(pts[perm] * np.float32(1.0)).astype(int) % 8
    key = c[:, 2] * 64 + c[:, 1] * 8 + c[:, 0]
    assert np.all(np.diff(key) >= 0)  # sorted by cell
    same = np.diff(key) == 0
    assert np.all(np.diff(perm)[same] > 0)  # and by index within a cell (a stable sort)


@wp.kernel
def loop_forms(grid: wp.uint64, points: wp.array(dtype=wp.vec3), out: wp.array2d(dtype=int)):
    tid = wp.tid()
    p = points[tid]
    odd = 0
    seen = 0
    last = -1
    for index in wp.hash_grid_query(grid, p, 1.0):
        seen += 1
        if index % 2 == 0:
            continue
        odd += 1
        last = index
        if odd == 3:
            break
    out[tid, 0] = odd
    out[tid, 1] = seen
    out[tid, 2] = last


def test_continue_and_break_in_a_query_loop():
    rng = np.random.default_rng(5)
    pts = (rng.random((200, 3)) * 3.0).astype(np.float32)
    grid = wp.HashGrid(4, 4, 4)
    points = wp.array(pts, dtype=wp.vec3)
    grid.build(points, 1.0)
    out = wp.zeros((200, 3), dtype=int)
    wp.launch(loop_forms, 200, inputs=[wp.uint64(grid.id), points, out])
    for t in range(0, 200, 11):
        order = model_order(pts, (4, 4, 4), 1.0, 1.0, pts[t])
        odd = [i for i in order if i % 2]
        stop = order.index(odd[2]) + 1 if len(odd) >= 3 else len(order)
        assert list(out.numpy()[t]) == [min(len(odd), 3), stop, odd[:3][-1] if odd else -1]


def test_empty_unbuilt_and_deleted_grids_find_nothing():
    pts = wp.array(np.zeros((4, 3), np.float32), dtype=wp.vec3)
    counts = wp.full(4, -1, dtype=int)
    grid = wp.HashGrid(4, 4, 4)
    wp.launch(count_grouped, 4, inputs=[wp.uint64(grid.id), 1.0, pts, wp.zeros(4, dtype=int), counts])
    np.testing.assert_array_equal(counts.numpy(), 0)  # never built
    grid.build(wp.empty(0, dtype=wp.vec3), 1.0)
    wp.launch(count_grouped, 4, inputs=[wp.uint64(grid.id), 1.0, pts, wp.zeros(4, dtype=int), counts])
    np.testing.assert_array_equal(counts.numpy(), 0)
    grid.build(pts, 1.0)
    stale = grid.id
    del grid  # the descriptor stays readable, with no points
    wp.launch(count_grouped, 4, inputs=[wp.uint64(stale), 1.0, pts, wp.zeros(4, dtype=int), counts])
    np.testing.assert_array_equal(counts.numpy(), 0)


def test_build_inside_a_capture_replays_on_current_points():
    grid = wp.HashGrid(16, 16, 16)
    points = wp.array(np.array([[0, 0, 0], [5, 0, 0]], np.float32), dtype=wp.vec3)
    counts = wp.zeros(2, dtype=int)
    with wp.ScopedCapture() as capture:
        grid.build(points, 0.5)
        wp.launch(count_neighbors, 2, inputs=[wp.uint64(grid.id), np.float32(0.5), points, counts])
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(counts.numpy(), [1, 1])
    points.assign(np.array([[0, 0, 0], [0.2, 0, 0]], np.float32))
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(counts.numpy(), [2, 2])


def test_host_side_errors():
    with pytest.raises(TypeError, match="Unsupported dtype"):
        wp.HashGrid(4, 4, 4, dtype=wp.int32)
    with pytest.raises(RuntimeError, match="must be positive"):
        wp.HashGrid(4, 0, 4)
    with pytest.raises(RuntimeError, match="cell count exceeds"):
        wp.HashGrid(2048, 2048, 2048)
    grid = wp.HashGrid(4, 4, 4)
    with pytest.raises(ValueError, match="cell width must be positive"):
        grid.build(wp.zeros(3, dtype=wp.vec3), 0.0)
    with pytest.raises(TypeError, match="should have type vec3f"):
        grid.build(wp.zeros(3, dtype=wp.vec3d), 1.0)
    with pytest.raises(RuntimeError, match="same length"):
        grid.build(wp.zeros(3, dtype=wp.vec3), 1.0, groups=wp.zeros(2, dtype=int))


@wp.kernel
def query_with_a_vec2(grid: wp.uint64, out: wp.array(dtype=int)):
    for index in wp.hash_grid_query(grid, wp.vec2(0.0, 0.0), 1.0):
        out[0] = index


@wp.kernel
def iterate_a_number(out: wp.array(dtype=int)):
    n = 3
    for index in n:
        out[0] = index


def test_kernel_errors_name_the_problem():
    with pytest.raises(wp.CompileError, match="vec3 of float16, float32 or float64"):
        wp.launch(query_with_a_vec2, 1, inputs=[wp.uint64(0), wp.zeros(1, dtype=int)])
    with pytest.raises(wp.CompileError, match="or a query"):
        wp.launch(iterate_a_number, 1, inputs=[wp.zeros(1, dtype=int)])


def test_build_refuses_a_saveable_capture():
    grid = wp.HashGrid(4, 4, 4)
    with pytest.raises(NotImplementedError, match="serialization is not yet supported"):
        with wp.ScopedCapture(apic=True):
            grid.build(wp.zeros(2, dtype=wp.vec3), 1.0)
    with pytest.raises(NotImplementedError, match="reserve before capture"):
        with wp.ScopedCapture():
            grid.reserve(8)


@pytest.mark.parametrize("n", [60, 400])  # runs sorted by one thread per cell, and the stable-sort fallback
def test_crowded_cells_keep_group_and_index_order(n):
    rng = np.random.default_rng(6)
    pts = (rng.random((n, 3)) * 0.9).astype(np.float32)  # all in cell (0, 0, 0)
    groups = rng.integers(0, 3, n).astype(np.int32)
    grid = wp.HashGrid(4, 4, 4)
    points, g = wp.array(pts, dtype=wp.vec3), wp.array(groups, dtype=int)
    grid.build(points, 1.0, groups=g)
    counts = wp.zeros(n, dtype=int)
    wp.launch(count_grouped, n, inputs=[wp.uint64(grid.id), 0.5, points, g, counts])
    np.testing.assert_array_equal(counts.numpy(), brute_force(pts, np.float32(0.5), groups))
    out = wp.zeros(n + 2, dtype=int)
    wp.launch(point_ids, n + 2, inputs=[wp.uint64(grid.id), n, out])
    order = out.numpy()[1:-1]
    np.testing.assert_array_equal(order, np.lexsort((np.arange(n), groups)))


@wp.kernel
def pair_energy(grid: wp.uint64, radius: float, points: wp.array(dtype=wp.vec3), e: wp.array(dtype=float)):
    tid = wp.tid()
    p = points[tid]
    for index in wp.hash_grid_query(grid, p, radius):
        if index != tid:
            r = wp.length(p - points[index])
            if r < radius:
                wp.atomic_add(e, 0, (radius - r) * (radius - r))


def test_gradients_flow_through_query_loops():
    """sum over neighbour pairs of (h - r)^2: the reverse pass through the query loop
    against the analytic gradient in float64."""
    rng = np.random.default_rng(7)
    pts = (rng.random((300, 3)) * 4.0).astype(np.float32)
    h = 0.5
    grid = wp.HashGrid(8, 8, 8)
    points = wp.array(pts, dtype=wp.vec3, requires_grad=True)
    grid.build(points, h)
    e = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(pair_energy, 300, inputs=[wp.uint64(grid.id), h, points, e])
    tape.backward(loss=e)
    p = pts.astype(np.float64)
    d = p[:, None] - p[None]
    r = np.linalg.norm(d, axis=-1)
    near = (r < h) & ~np.eye(len(p), dtype=bool)
    np.testing.assert_allclose(e.numpy()[0], np.where(near, (h - r) ** 2, 0.0).sum(), rtol=1e-5)
    coef = np.where(near, -2.0 * (h - r) / np.where(near, r, 1.0), 0.0)
    expected = 2.0 * (coef[:, :, None] * d).sum(1)  # each pair appears from both ends
    np.testing.assert_allclose(points.grad.numpy(), expected, atol=2e-5)


@wp.kernel
def _overlap_energy(grid: wp.uint64, points: wp.array(dtype=wp.vec3), x: wp.array(dtype=wp.vec3),
                    radius: float, energy: wp.array(dtype=float)):
    i = wp.tid()
    p = x[i]
    for j in wp.hash_grid_query(grid, p, radius):
        d = wp.length(p - points[j])
        if d < radius:
            wp.atomic_add(energy, 0, (radius - d) * (radius - d))


def test_build_inside_a_tape_is_not_recorded():
    # as Warp's native build: a grid rebuilt every step inside the Tape (PhysTwin) leaves
    # the Tape's launches the user's own, and the gradient is the energy's
    rng = np.random.default_rng(0)
    points_np = rng.random((20, 3)).astype(np.float32)
    x_np = rng.random((10, 3)).astype(np.float32)
    points = wp.array(points_np, dtype=wp.vec3)
    x = wp.array(x_np, dtype=wp.vec3, requires_grad=True)
    energy = wp.zeros(1, dtype=float, requires_grad=True)
    grid = wp.HashGrid(8, 8, 8)
    radius = 0.4
    tape = wp.Tape()
    with tape:
        grid.build(points, radius)
        wp.launch(_overlap_energy, 10, [grid.id, points, x, radius, energy])
    assert [launch[0].key for launch in tape.launches] == [_overlap_energy.key]
    tape.backward(energy)
    delta = x_np[:, None, :].astype(np.float64) - points_np[None, :, :]
    d = np.linalg.norm(delta, axis=2)
    near = d < radius
    assert near.sum() > 5
    expected = (np.where(near, -2.0 * (radius - d) / d, 0.0)[:, :, None] * delta).sum(axis=1)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-4, atol=1e-5)
