"""tile_transpose is a view of its source, as Warp's (which aliases shared memory): a write
through the transpose reaches the source, a write into the source shows in the transpose,
and gradients follow the elements either way."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def write_both_ways(x: wp.array2d[float], out: wp.array2d[float], out_t: wp.array2d[float]):
    t = wp.tile_load(x, shape=(2, 3), storage="shared")
    tt = wp.tile_transpose(t)
    tt[0, 1] = 100.0  # t[1, 0]
    wp.tile_assign(tt, wp.tile_full(shape=(1, 2), value=-1.0, dtype=float), offset=(2, 0))  # t[:, 2]
    wp.tile_store(out, t)
    t[0, 1] = 42.0  # tt[1, 0]
    wp.tile_store(out_t, tt)


def test_writes_through_a_transpose_reach_its_source_and_back():
    out, out_t = wp.zeros((2, 3), dtype=float), wp.zeros((3, 2), dtype=float)
    x = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    wp.launch_tiled(write_both_ways, dim=1, inputs=[x, out, out_t], block_dim=8)
    np.testing.assert_array_equal(out.numpy(), [[0, 1, -1], [100, 4, -1]])
    np.testing.assert_array_equal(out_t.numpy(), [[0, 100], [42, 4], [-1, -1]])


@wp.kernel
def write_into_transpose_of_a_temporary(x: wp.array2d[float], out: wp.array2d[float]):
    tt = wp.tile_transpose(wp.tile_load(x, shape=(2, 3)))
    tt[2, 1] = 7.0  # (nothing else sees the loaded tile: the write stays in tt)
    wp.tile_store(out, tt)


def test_a_transpose_of_a_temporary_takes_writes():
    out = wp.zeros((3, 2), dtype=float)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    wp.launch_tiled(write_into_transpose_of_a_temporary, dim=1, inputs=[wp.array(x), out], block_dim=8)
    expected = x.T.copy()
    expected[2, 1] = 7.0
    np.testing.assert_array_equal(out.numpy(), expected)


@wp.kernel
def scale_through_transpose(x: wp.array2d[wp.float64], w: wp.array2d[wp.float64], loss: wp.array[wp.float64]):
    t = wp.tile_load(x, shape=(2, 3))
    tt = wp.tile_transpose(t)
    tt[1, 0] = tt[1, 0] * tt[2, 1]  # t[0, 1] = t[0, 1] * t[1, 2]
    wp.tile_atomic_add(loss, wp.tile_sum(wp.tile_map(wp.mul, t, wp.tile_load(w, shape=(2, 3)))))


def test_gradient_through_a_write_into_a_transpose():
    rng = np.random.default_rng(3)
    x0, w0 = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    x = wp.array(x0, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch_tiled(scale_through_transpose, dim=1, inputs=[x, wp.array(w0, dtype=wp.float64), loss], block_dim=8)
    tape.backward(loss=loss)
    expected = w0.copy()  # d/dx of sum(w * x) with x[0, 1] replaced by x[0, 1] * x[1, 2]
    expected[0, 1] = w0[0, 1] * x0[1, 2]
    expected[1, 2] = w0[1, 2] + w0[0, 1] * x0[0, 1]
    assert loss.numpy()[0] == pytest.approx((w0 * x0).sum() + w0[0, 1] * x0[0, 1] * (x0[1, 2] - 1))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


@wp.kernel
def reshape_a_transpose(x: wp.array2d[float], out: wp.array[float]):
    t = wp.tile_load(x, shape=(2, 3))
    wp.tile_store(out, wp.tile_reshape(wp.tile_transpose(t), shape=6))


def test_a_transpose_is_strided_like_warps():
    with pytest.raises(ValueError, match="requires a contiguous tile"):
        wp.launch_tiled(reshape_a_transpose, dim=1, inputs=[wp.zeros((2, 3), dtype=float), wp.zeros(6, dtype=float)],
                        block_dim=8)
