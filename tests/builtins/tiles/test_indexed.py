"""Indexed tile memory (tile_load/store/atomic_add_indexed, t[indices, :]) and the scatters
into tiles (tile_scatter_add/masked): values, bounds and gradients."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def _gather(x: wp.array2d(dtype=wp.float64), idx: wp.array(dtype=int), y: wp.array2d(dtype=wp.float64),
            z: wp.array2d(dtype=wp.float64)):
    rows = wp.tile_load(idx, shape=4)
    wp.tile_store(y, wp.tile_load_indexed(x, indices=rows, shape=(4, 3), offset=(1, 1), axis=0))
    cols = wp.tile_load(idx, shape=3)
    wp.tile_store(z, wp.tile_load_indexed(x, cols, (2, 3), (0, 0), 1))


def test_load_indexed_gathers_masks_out_of_range_rows_and_has_the_scatter_gradient():
    x = np.arange(30, dtype=np.float64).reshape(5, 6)
    idx = np.array([3, -2, 0, 3], dtype=np.int32)  # offset 1: rows 4, -1 (out: zero), 1, 4
    xa = wp.array(x, dtype=wp.float64, requires_grad=True)
    y = wp.zeros((4, 3), dtype=wp.float64, requires_grad=True)
    z = wp.zeros((2, 3), dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(_gather, dim=[1], inputs=[xa, wp.array(idx), y, z], block_dim=1)
    expected_y = np.zeros((4, 3))
    for r, k in enumerate(idx):
        if 0 <= k + 1 < 5:
            expected_y[r] = x[k + 1, 1:4]
    np.testing.assert_array_equal(y.numpy(), expected_y)
    z_expected = np.zeros((2, 3))
    z_expected[:, 0] = x[:2, 3]
    z_expected[:, 2] = x[:2, 0]
    np.testing.assert_array_equal(z.numpy(), z_expected)

    wy = np.random.default_rng(0).standard_normal((4, 3))
    wz = np.random.default_rng(1).standard_normal((2, 3))
    tape.backward(grads={y: wp.array(wy, dtype=wp.float64), z: wp.array(wz, dtype=wp.float64)})
    grad = np.zeros_like(x)
    for r, k in enumerate(idx):
        if 0 <= k + 1 < 5:
            grad[k + 1, 1:4] += wy[r]
    grad[:2, 3] += wz[:, 0]
    grad[:2, 0] += wz[:, 2]
    np.testing.assert_allclose(xa.grad.numpy(), grad, rtol=0, atol=1e-15)


@wp.kernel
def _scatter(x: wp.array2d(dtype=float), idx: wp.array(dtype=int), y: wp.array2d(dtype=float),
             acc: wp.array2d(dtype=float), old: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=(3, 2))
    rows = wp.tile_load(idx, shape=3)
    wp.tile_store_indexed(y, indices=rows, t=t, axis=0)
    wp.tile_store(old, wp.tile_atomic_add_indexed(acc, rows, t * 2.0))


def test_store_and_atomic_add_indexed_skip_out_of_range_rows_and_accumulate_repeats():
    x = np.arange(1, 7, dtype=np.float32).reshape(3, 2)
    idx = np.array([2, 9, 0], dtype=np.int32)
    y = wp.zeros((4, 2), dtype=float)
    acc = wp.array(np.ones((4, 2), np.float32))
    old = wp.zeros((3, 2), dtype=float)
    wp.launch_tiled(_scatter, dim=[1], inputs=[wp.array(x), wp.array(idx), y, acc, old], block_dim=1)
    expected = np.zeros((4, 2), np.float32)
    expected[2], expected[0] = x[0], x[2]
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(acc.numpy(), 1 + 2 * expected)
    np.testing.assert_array_equal(old.numpy(), [[1, 1], [0, 0], [1, 1]])

    # repeated indices accumulate
    idx = np.array([1, 1, 1], dtype=np.int32)
    acc = wp.zeros((4, 2), dtype=float)
    wp.launch_tiled(_scatter, dim=[1], inputs=[wp.array(x), wp.array(idx), wp.zeros((4, 2), dtype=float), acc,
                                               wp.zeros((3, 2), dtype=float)], block_dim=1)
    np.testing.assert_array_equal(acc.numpy()[1], 2 * x.sum(axis=0))


def test_store_indexed_gradient_reads_and_clears_the_destination_adjoint():
    @wp.kernel
    def scale_then_scatter(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float), z: wp.array2d(dtype=float)):
        t = wp.tile_load(x, shape=(2, 2)) * 3.0
        cols = wp.tile_arange(2, dtype=int) * 2 + 1  # columns 1 and 3
        wp.tile_store_indexed(y, cols, t, axis=1)
        wp.tile_atomic_add_indexed(z, cols, t, axis=1)

    xa = wp.array(np.ones((2, 2), np.float32), requires_grad=True)
    y = wp.zeros((2, 4), dtype=float, requires_grad=True)
    z = wp.zeros((2, 4), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(scale_then_scatter, dim=[1], inputs=[xa, y, z], block_dim=1)
    gy = np.arange(8, dtype=np.float32).reshape(2, 4)
    tape.backward(grads={y: wp.array(gy), z: wp.array(np.ones((2, 4), np.float32))})
    np.testing.assert_array_equal(xa.grad.numpy(), 3.0 * (gy[:, [1, 3]] + 1.0))
    np.testing.assert_array_equal(y.grad.numpy()[:, [1, 3]], 0.0)  # a store's adjoint is consumed
    np.testing.assert_array_equal(y.grad.numpy()[:, [0, 2]], gy[:, [0, 2]])


def test_index_tiles_must_match_the_indexed_extent():
    @wp.kernel
    def bad(x: wp.array2d(dtype=float)):
        rows = wp.tile_arange(3, dtype=int)
        wp.tile_store(x, wp.tile_load_indexed(x, rows, shape=(2, 2)))

    with pytest.raises(ValueError, match="indices tile holds 3 value"):
        wp.launch_tiled(bad, dim=[1], inputs=[wp.zeros((4, 4), dtype=float)], block_dim=1)


@wp.kernel
def _slices(x: wp.array2d(dtype=wp.float64), idx: wp.array(dtype=int), y: wp.array2d(dtype=wp.float64),
            z: wp.array2d(dtype=wp.float64)):
    t = wp.tile_load(x, shape=(4, 3))
    i = wp.tile_load(idx, shape=3)
    wp.tile_store(y, t[i, :] * t[i])
    wp.tile_store(z, wp.tile_slice_indexed(t, (slice(None), i)))


def test_tile_indexed_slices_gather_with_negative_indices_and_repeats_accumulate_gradients():
    x = np.random.default_rng(2).standard_normal((4, 3))
    idx = np.array([2, -1, 2], dtype=np.int32)
    xa = wp.array(x, dtype=wp.float64, requires_grad=True)
    y = wp.zeros((3, 3), dtype=wp.float64, requires_grad=True)
    z = wp.zeros((4, 3), dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(_slices, dim=[1], inputs=[xa, wp.array(idx), y, z], block_dim=1)
    np.testing.assert_allclose(y.numpy(), x[idx] ** 2, rtol=1e-15)
    np.testing.assert_allclose(z.numpy(), x[:, idx], rtol=1e-15)
    tape.backward(grads={y: wp.array(np.ones((3, 3)), dtype=wp.float64),
                         z: wp.array(np.zeros((4, 3)), dtype=wp.float64)})
    grad = np.zeros_like(x)
    np.add.at(grad, idx % 4, 2 * x[idx])
    np.testing.assert_allclose(xa.grad.numpy(), grad, rtol=1e-14)


@wp.kernel
def _scatter_into_tile(inp: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_zeros(shape=4, dtype=float)
    v = inp[0] * 2.0
    wp.tile_scatter_add(t, 1, v, True)
    wp.tile_scatter_add(t, 1, v * v, inp[0] > 0.0)
    wp.tile_scatter_add(t, 3, v, False)
    wp.tile_scatter_masked(t, 2, 7.0, True)
    wp.tile_scatter_masked(t, 2, v, inp[0] < 0.0)
    wp.tile_scatter_add(t, 0, 0.5, True, atomic=False)
    wp.tile_store(out, t)


def test_scatter_add_and_masked_write_under_has_value_with_gradients():
    for x0 in (1.5, -1.5):
        inp = wp.array([x0], dtype=float, requires_grad=True)
        out = wp.zeros(4, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch_tiled(_scatter_into_tile, dim=[1], inputs=[inp, out], block_dim=1)
        v = 2 * x0
        expected = [0.5, v + (v * v if x0 > 0 else 0.0), v if x0 < 0 else 7.0, 0.0]
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
        tape.backward(grads={out: wp.array([1.0, 1.0, 1.0, 1.0], dtype=float)})
        expected_grad = 2.0 * (1.0 + (2 * v if x0 > 0 else 0.0) + (1.0 if x0 < 0 else 0.0))
        assert inp.grad.numpy()[0] == pytest.approx(expected_grad)


def test_scatter_checks_its_arguments():
    @wp.kernel
    def bad(out: wp.array(dtype=float)):
        t = wp.tile_zeros(shape=(2, 2), dtype=float)
        wp.tile_scatter_add(t, 1, 1.0, True)

    with pytest.raises(TypeError, match="one index per dimension"):
        wp.launch_tiled(bad, dim=[1], inputs=[wp.zeros(1)], block_dim=1)

    @wp.kernel
    def bad_value(out: wp.array(dtype=float)):
        t = wp.tile_zeros(shape=2, dtype=float)
        wp.tile_scatter_masked(t, 1, wp.vec2(1.0, 2.0), True)

    with pytest.raises(TypeError, match="does not match"):
        wp.launch_tiled(bad_value, dim=[1], inputs=[wp.zeros(1)], block_dim=1)
