"""Writes through a tile_broadcast view: the broadcast elements share their source's
storage (Warp's stride-0 view), so an update of the view adds up at the shared place and
every element that shares it sees the result."""

import numpy as np

import weft as wp


@wp.kernel
def axpy_onto_broadcast(bias_in: wp.array[float], src_in: wp.array2d[float], alpha: float,
                        out: wp.array2d[float], out_bias: wp.array[float]):
    bias = wp.tile_load(bias_in, shape=4)
    dest = wp.tile_broadcast(bias, shape=(3, 4))
    wp.tile_axpy(alpha, wp.tile_load(src_in, shape=(3, 4)), dest)
    wp.tile_store(out, dest)
    wp.tile_store(out_bias, bias)


def test_axpy_onto_a_broadcast_adds_every_row_at_the_shared_element():
    bias = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    out, out_bias = wp.zeros((3, 4), dtype=float), wp.zeros(4, dtype=float)
    wp.launch_tiled(axpy_onto_broadcast, dim=[1], inputs=[wp.array(bias), wp.array(src), 0.5, out, out_bias],
                    block_dim=16)
    expected = bias + 0.5 * src.sum(axis=0)
    np.testing.assert_allclose(out.numpy(), np.broadcast_to(expected, (3, 4)))
    np.testing.assert_allclose(out_bias.numpy(), expected)  # the source sees it too


@wp.kernel
def element_set_on_broadcast(a: wp.array2d[float], out: wp.array2d[float], out_src: wp.array2d[float]):
    col = wp.tile_load(a, shape=(2, 1))
    wide = wp.tile_broadcast(col, shape=(2, 3))
    wide[1, 2] = 7.0  # the whole row 1 shares one element
    wp.tile_store(out, wide)
    wp.tile_store(out_src, col)


def test_setting_one_element_of_a_broadcast_sets_the_shared_element():
    out, out_src = wp.zeros((2, 3), dtype=float), wp.zeros((2, 1), dtype=float)
    wp.launch_tiled(element_set_on_broadcast, dim=[1], inputs=[wp.array([[1.0], [2.0]], dtype=float), out, out_src],
                    block_dim=16)
    np.testing.assert_array_equal(out.numpy(), [[1, 1, 1], [7, 7, 7]])
    np.testing.assert_array_equal(out_src.numpy(), [[1], [7]])


@wp.kernel
def axpy_onto_broadcast_of_a_temporary(a: wp.array[float], out: wp.array2d[float]):
    dest = wp.tile_broadcast(wp.tile_load(a, shape=2), shape=(3, 2))
    wp.tile_axpy(1.0, wp.tile_ones(shape=(3, 2), dtype=float), dest)
    wp.tile_store(out, dest)


def test_a_broadcast_of_a_temporary_still_shares_its_elements():
    out = wp.zeros((3, 2), dtype=float)
    wp.launch_tiled(axpy_onto_broadcast_of_a_temporary, dim=[1], inputs=[wp.array([1.0, 5.0], dtype=float), out],
                    block_dim=16)
    np.testing.assert_array_equal(out.numpy(), [[4, 8]] * 3)
