"""Tile views alias their source, as in Warp: a write into the source shows in the views
taken before it (in straight code, branches and loops), and a write through a view reaches
the source whatever the route: a view of a view, `row += tile`, a row passed to a func that
updates it, `tile_assign(t[1], ...)`. Rebinding the source to a new tile (`t = t * 2`) leaves
the views on the old one, as Warp's views keep the old storage. Gradients follow."""

import numpy as np
import pytest

import weft as wp

X = np.arange(6, dtype=np.float64).reshape(2, 3)


def _run(kernel, x=X):
    out = wp.zeros((3, 3), dtype=wp.float64)
    wp.launch_tiled(kernel, dim=1, inputs=[wp.array(x, dtype=wp.float64), out], block_dim=8)
    return out.numpy()


@wp.kernel
def source_written_after_views(x: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64)):
    t = wp.tile_load(x, shape=(2, 3))
    v = wp.tile_view(t, offset=(1, 0), shape=(1, 3))
    row = t[1]
    col = wp.tile_squeeze(wp.tile_view(t, offset=(0, 2), shape=(2, 1)))
    t[1, 1] = wp.float64(100.0)
    t[1, 2] = wp.float64(-7.0)
    wp.tile_store(out, t)
    wp.tile_store(out, v, offset=(2, 0))
    wp.tile_store(out, wp.tile_reshape(row, shape=(1, 3)), offset=(0, 0))
    wp.tile_store(out, wp.tile_reshape(col, shape=(1, 2)), offset=(2, 0))


def test_views_see_later_writes_into_their_source():
    np.testing.assert_array_equal(_run(source_written_after_views),
                                  [[3, 100, -7], [3, 100, -7], [2, -7, -7]])


@wp.kernel
def source_rebound(x: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64)):
    t = wp.tile_load(x, shape=(2, 3))
    row = t[1]
    t = t * wp.float64(2.0)  # a new tile: the view stays on the old one
    t[1, 0] = wp.float64(50.0)
    wp.tile_store(out, t)
    wp.tile_store(out, wp.tile_reshape(row, shape=(1, 3)), offset=(2, 0))


def test_a_view_stays_on_the_old_tile_when_the_source_variable_is_rebound():
    np.testing.assert_array_equal(_run(source_rebound), [[0, 2, 4], [50, 8, 10], [3, 4, 5]])


@wp.kernel
def source_written_in_branch_and_loop(x: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64)):
    t = wp.tile_load(x, shape=(2, 3))
    row = t[0]
    if x[0, 0] < wp.float64(1.0):
        t[0, 0] = wp.float64(10.0)
    for j in range(3):
        t[0, j] = t[0, j] + wp.float64(1.0)
        out[2, j] = row[j]  # read in the loop, after the write
    wp.tile_store(out, wp.tile_reshape(row, shape=(1, 3)), offset=(0, 0))


def test_views_see_writes_made_in_branches_and_loops():
    np.testing.assert_array_equal(_run(source_written_in_branch_and_loop)[[0, 2]], [[11, 2, 3], [11, 2, 3]])


@wp.func
def _fill(r: wp.tile(dtype=wp.float64, shape=(3,)), value: wp.float64):
    for j in range(3):
        r[j] = value


@wp.kernel
def writes_through_views(x: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64)):
    t = wp.tile_load(x, shape=(2, 3))
    v = wp.tile_view(t, offset=(0, 1), shape=(2, 2))
    v2 = wp.tile_view(v, offset=(1, 0), shape=(1, 2))
    v2[0, 1] = wp.float64(-99.0)  # a view of a view: t[1, 2]
    r = t[0]
    r += wp.tile_ones(shape=3, dtype=wp.float64)  # in place, as in Warp: t[0, :] + 1
    wp.tile_store(out, t)
    u = wp.tile_load(x, shape=(2, 3))
    _fill(u[1], wp.float64(7.0))  # the func updates the row of u
    wp.tile_assign(u[0], wp.tile_full(shape=2, value=wp.float64(5.0), dtype=wp.float64), offset=(1,))
    wp.tile_store(out, wp.tile_view(u, offset=(0, 0), shape=(1, 3)), offset=(2, 0))
    wp.tile_store(out, wp.tile_view(u, offset=(1, 0), shape=(1, 3)), offset=(1, 0))


def test_writes_through_views_reach_the_source():
    np.testing.assert_array_equal(_run(writes_through_views), [[1, 2, 3], [7, 7, 7], [0, 5, 5]])


@wp.kernel
def aliased_loss(x: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64)):
    t = wp.tile_load(x, shape=(2, 3))
    row = t[1]
    t[1, 1] = t[0, 1] * t[0, 2]  # seen by row
    r = t[0]
    r += t[1] * t[1]  # through the view: into t
    wp.tile_store(out, wp.tile_reshape(row * row, shape=(1, 3)), offset=(2, 0))
    wp.tile_store(out, t)


def _loss(x):
    out = _run(aliased_loss, x)
    return (out * np.arange(1.0, 10.0).reshape(3, 3)).sum()


def test_gradients_through_aliased_views_match_finite_differences():
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    xa = wp.array(x, dtype=wp.float64, requires_grad=True)
    out = wp.zeros((3, 3), dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch_tiled(aliased_loss, dim=1, inputs=[xa, out], block_dim=8)
    tape.backward(grads={out: wp.array(np.arange(1.0, 10.0).reshape(3, 3), dtype=wp.float64)})
    h = 1e-6
    fd = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        fd[idx] = (_loss(x + e) - _loss(x - e)) / (2 * h)
    np.testing.assert_allclose(xa.grad.numpy(), fd, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("where", ["straight", "loop"])
def test_rows_of_one_tile_stay_consistent(where):
    """Two views of one source, each written: every write shows in the source and the other."""
    @wp.kernel(module="unique")
    def two_views(x: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64)):
        t = wp.tile_load(x, shape=(2, 3))
        a = t[1]
        b = wp.tile_view(t, offset=(1, 1), shape=(1, 2))
        if wp.static(where == "loop"):
            for _ in range(2):
                a[0] = a[0] + wp.float64(1.0)
                b[0, 1] = b[0, 1] * wp.float64(2.0) + a[0]
        else:
            a[0] = a[0] + wp.float64(1.0)
            b[0, 1] = b[0, 1] * wp.float64(2.0) + a[0]
        wp.tile_store(out, t)
        wp.tile_store(out, b, offset=(2, 0))

    out = _run(two_views)
    if where == "loop":  # a[0]: 4, 5; t[1, 2]: 5 * 2 + 4 = 14, then 14 * 2 + 5 = 33
        np.testing.assert_array_equal(out[:2], [[0, 1, 2], [5, 4, 33]])
        np.testing.assert_array_equal(out[2, :2], [4, 33])
    else:
        np.testing.assert_array_equal(out[:2], [[0, 1, 2], [4, 4, 14]])
        np.testing.assert_array_equal(out[2, :2], [4, 14])
