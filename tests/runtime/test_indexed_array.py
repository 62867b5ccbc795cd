"""Indexed arrays in kernels: reads, writes and atomics through index arrays, the indexed
array as a kernel parameter annotation, and bounds checks of both the index and the
entries of the index arrays."""

from typing import Any

import numpy as np
import pytest

import weft as wp


@wp.kernel
def add_through(a: wp.indexedarray(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + b[i]
    wp.atomic_add(a, i, 1.0)


def test_reads_writes_and_atomics_go_through_the_indices():
    values = wp.array(np.arange(6, dtype=np.float32))
    ia = wp.indexedarray1d(values, [wp.array([5, 1, 3], dtype=wp.int32)])
    wp.launch(add_through, 3, inputs=[ia, wp.ones(3)])
    np.testing.assert_array_equal(values.numpy(), [0, 3, 2, 5, 4, 7])


@wp.kernel
def gather_rows(a: wp.indexedarray2d(dtype=int), out: wp.array2d(dtype=int)):
    i, j = wp.tid()
    out[i, j] = a[i, j] + a.shape[1] * 0


def test_two_dimensional_with_one_indexed_dimension():
    data = wp.array(np.arange(16, dtype=np.int32).reshape(4, 4))
    picked = data[wp.array([3, 0], dtype=wp.int32)]  # rows 3 and 0, all columns
    out = wp.zeros((2, 4), dtype=int)
    wp.launch(gather_rows, (2, 4), inputs=[picked, out])
    np.testing.assert_array_equal(out.numpy(), data.numpy()[[3, 0]])
    assert wp.indexedarray[float] == wp.indexedarray(dtype=float)


def test_bad_entries_of_an_index_array_are_reported():
    data, out = wp.zeros((4, 4), dtype=int), wp.zeros((1, 4), dtype=int)
    with pytest.raises(IndexError, match=r"index \(7, 0\) is out of bounds for array 'a'"):
        wp.launch(gather_rows, (1, 4), inputs=[wp.indexedarray(data, [wp.array([7], dtype=wp.int32)]), out])


@pytest.mark.parametrize("indices", [
    [np.array([0, 1], dtype=np.int32)],  # a numpy array, not a weft one
    [wp.array(np.array([0, 1], dtype=np.int64))],
    [wp.zeros((2, 2), dtype=wp.int32)],
])
def test_index_arrays_that_are_not_1d_int32_weft_arrays_are_a_value_error(indices):
    # Warp raises ValueError for each; code catching it must catch weft's too
    with pytest.raises(ValueError, match="must be a 1-d weft array of int32"):
        wp.indexedarray(wp.zeros(4), indices)
    with pytest.raises(ValueError, match="indexes a weft array"):
        wp.indexedarray(np.zeros(4), [wp.zeros(2, dtype=wp.int32)])


def test_plain_arrays_and_indexed_arrays_do_not_mix():
    with pytest.raises(TypeError, match="expected an indexedarray of int32"):
        wp.launch(gather_rows, (1, 4), inputs=[wp.zeros((4, 4), dtype=int), wp.zeros((1, 4), dtype=int)])


@wp.kernel
def write_plain(x: wp.array(dtype=float)):
    x[wp.tid()] = -1.0


def test_an_indexed_array_for_a_plain_array_parameter_is_refused():
    """Its memory is not an array's: accepting it through a gathered copy lost the writes."""
    base = wp.array(np.arange(8, dtype=np.float32))
    a = wp.indexedarray(base, [wp.array([7, 5, 3], dtype=wp.int32)])
    with pytest.raises(RuntimeError, match="argument 'x' expects an array of type "
                       r"array\(ndim=1, dtype=float32\), but passed value has type indexedarray"):
        wp.launch(write_plain, 3, inputs=[a])
    assert base.numpy().tolist() == list(range(8))


@wp.kernel
def square_into(a: wp.indexedarray(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] * a[i]


def test_gradients_flow_through_the_indices():
    data = wp.array(np.arange(5, dtype=np.float32), requires_grad=True)
    picked = data[wp.array([4, 1, 4], dtype=wp.int32)]  # a repeated index accumulates
    out = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square_into, 3, inputs=[picked, out])
    tape.backward(grads={out: wp.ones(3)})
    np.testing.assert_array_equal(data.grad.numpy(), [0, 2, 0, 0, 16])
    assert isinstance(picked.grad, wp.indexedarray) and picked.grad.numpy().tolist() == [16, 2, 16]


@wp.kernel
def generic_indexed_sum(a: wp.indexedarray[Any], out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = float(a[i])


def test_generic_indexed_parameter_takes_indexed_arrays_only():
    values = wp.array(np.arange(6.0), dtype=wp.float64)
    ia = wp.indexedarray(values, [wp.array([0, 2, 4], dtype=wp.int32)])
    out = wp.zeros(3)
    wp.launch(generic_indexed_sum, 3, inputs=[ia, out])
    assert out.numpy().tolist() == [0.0, 2.0, 4.0]
    with pytest.raises(TypeError, match=r"argument 'a': expected an indexedarray of 1 dimension\(s\), got wp.array"):
        wp.launch(generic_indexed_sum, 3, inputs=[values, out])


@wp.kernel
def indexed_views(a: wp.indexedarray(dtype=float, ndim=3), out: wp.array(dtype=float, ndim=3),
                  shp: wp.array(dtype=int)):
    i, j, k = wp.tid()
    row = a[i]  # an indexed view: its dimensions keep their index arrays
    col = row[j]
    out[i, j, k] = col[k] + a[i][j][k] * 100.0 + a[i, j][k] * 10000.0
    if i == 0 and j == 0 and k == 0:
        shp[0] = row.shape[0]
        shp[1] = row.shape[1]
        shp[2] = col.shape[0]


def test_views_of_indexed_arrays_keep_the_indices_of_their_dimensions():
    data = wp.array(np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6), dtype=float)
    ia = wp.indexedarray(data, [wp.array([3, 1], dtype=wp.int32), None, wp.array([5, 0, 2], dtype=wp.int32)])
    out, shp = wp.zeros(ia.shape, dtype=float), wp.zeros(3, dtype=int)
    wp.launch(indexed_views, ia.shape, [ia, out, shp])
    ref = data.numpy()[[3, 1]][:, :, [5, 0, 2]]
    np.testing.assert_array_equal(out.numpy(), ref * 10101)
    np.testing.assert_array_equal(shp.numpy(), [5, 3, 3])


def test_fill_of_an_indexed_matrix_array_takes_a_flat_value():
    data = wp.zeros(4, dtype=wp.mat22)
    ia = data[wp.array([0, 2], dtype=wp.int32)]
    ia.fill_(np.arange(4, dtype=np.float32))
    r = data.numpy()
    np.testing.assert_array_equal(r[[0, 2]], np.tile(np.arange(4.0).reshape(2, 2), (2, 1, 1)))
    np.testing.assert_array_equal(r[[1, 3]], 0)


def test_to_and_a_wrong_sized_assign():
    ia = wp.indexedarray(wp.zeros((4, 3)), [wp.array([3, 1], dtype=wp.int32)])
    assert ia.to("cpu") is ia
    with pytest.raises(RuntimeError, match=r"does not fit an indexed array of shape \(2, 3\)"):
        ia.assign(np.zeros(5, dtype=np.float32))  # (Warp: RuntimeError)
