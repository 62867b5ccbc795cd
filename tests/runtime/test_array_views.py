"""Kernels on array views: slices, strided and reversed views, columns of 2-D arrays and
views of vector arrays go through the non-specialised compiled variant; results must match
numpy, and writes through a view must land only at the view's positions."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def affine(a: wp.array(dtype=float), out: wp.array(dtype=float), s: float):
    i = wp.tid()
    out[i] = a[i] * s + 1.0


@wp.kernel
def affine2d(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    out[i, j] = a[i, j] * 2.0 + float(j)


@wp.kernel
def scale_vec(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = a[i] * 2.0


@wp.kernel
def sum_rows(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    s = 0.0
    for j in range(a.shape[1]):
        s += a[i, j]
    out[i] = s


BASE = np.arange(40, dtype=np.float32)
VIEWS_1D = {
    "slice": lambda a: a[2:9],
    "strided": lambda a: a[::3],
    "offset_strided": lambda a: a[5:30:4],
    "reversed": lambda a: a[::-1],
    "reversed_strided": lambda a: a[30:2:-5],
    "column": lambda a: a.reshape((8, 5))[:, 3],
    "row": lambda a: a.reshape((8, 5))[6],
}


@pytest.mark.parametrize("name", VIEWS_1D)
def test_read_through_1d_views(name):
    a = wp.array(BASE)
    view = VIEWS_1D[name](a)
    expected_in = VIEWS_1D[name](BASE)  # numpy's view of the same data
    np.testing.assert_array_equal(view.numpy(), expected_in)
    out = wp.zeros(view.shape[0])
    wp.launch(affine, view.shape[0], inputs=[view, out, 3.0])
    np.testing.assert_array_equal(out.numpy(), expected_in * 3 + 1)


@pytest.mark.parametrize("name", VIEWS_1D)
def test_write_through_1d_views(name):
    a = wp.array(np.full(40, -1.0, np.float32))
    view = VIEWS_1D[name](a)
    src = wp.array(np.arange(view.shape[0], dtype=np.float32))
    wp.launch(affine, view.shape[0], inputs=[src, view, 2.0])
    expected = np.full(40, -1.0, np.float32)
    VIEWS_1D[name](expected)[...] = np.arange(view.shape[0]) * 2 + 1
    np.testing.assert_array_equal(a.numpy(), expected)  # nothing outside the view changed


def test_2d_views():
    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    a = wp.array(base)
    for key in [(slice(1, 4), slice(2, 8)), (slice(None, None, 2), slice(None, None, 3)),
                (slice(None, None, -1), slice(1, None)), (slice(None), slice(None))]:
        view = a[key]
        out = wp.zeros(view.shape)
        wp.launch(affine2d, view.shape, inputs=[view, out])
        np.testing.assert_array_equal(out.numpy(), base[key] * 2 + np.arange(view.shape[1]))
        rows = wp.zeros(view.shape[0])
        wp.launch(sum_rows, view.shape[0], inputs=[view, rows])
        np.testing.assert_allclose(rows.numpy(), base[key].sum(axis=1))


def test_transposed_like_view_of_3d_array():
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    view = wp.array(base)[:, 1, :]  # (2, 4), strides (48, 4)
    out = wp.zeros((2, 4))
    wp.launch(affine2d, (2, 4), inputs=[view, out])
    np.testing.assert_array_equal(out.numpy(), base[:, 1, :] * 2 + np.arange(4))


def test_vector_array_views():
    base = np.arange(30, dtype=np.float32).reshape(10, 3)
    a = wp.array(base, dtype=wp.vec3)
    view = a[1::3]
    assert view.shape == (3,) and view.strides == (36,) and not view.is_contiguous
    out = wp.zeros(3, dtype=wp.vec3)
    wp.launch(scale_vec, 3, inputs=[view, out])
    np.testing.assert_array_equal(out.numpy(), base[1::3] * 2)
    target = wp.zeros(10, dtype=wp.vec3)
    wp.launch(scale_vec, 3, inputs=[out, target[::4]])
    expected = np.zeros((10, 3), np.float32)
    expected[::4] = base[1::3] * 4
    np.testing.assert_array_equal(target.numpy(), expected)


def test_switching_between_contiguous_and_strided_arguments():
    a = wp.array(BASE)
    for view in (a, a[::2], a[3:10], a[::-1], a):
        out = wp.zeros(view.shape[0])
        wp.launch(affine, view.shape[0], inputs=[view, out, 0.5])
        np.testing.assert_array_equal(out.numpy(), view.numpy() * 0.5 + 1)
    assert len(affine._compiled) >= 2  # a specialised and a general variant


def test_array_built_on_foreign_strided_numpy_memory():
    base = np.arange(20, dtype=np.float32)
    a = wp.array(base[::2], copy=False)  # non-contiguous memory owned by numpy
    assert not a.is_contiguous and np.shares_memory(a.numpy(), base)
    out = wp.zeros(10)
    wp.launch(affine, 10, inputs=[a, out, 1.0])
    np.testing.assert_array_equal(out.numpy(), base[::2] + 1)
    wp.launch(affine, 10, inputs=[out, a, 1.0])
    np.testing.assert_array_equal(base[::2], np.arange(0, 20, 2) + 2)
    np.testing.assert_array_equal(base[1::2], np.arange(1, 20, 2))


def test_fortran_ordered_numpy_memory():
    base = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    shared = wp.array(base, copy=False)
    assert shared.strides == (4, 12) and not shared.is_contiguous
    out = wp.zeros((3, 4))
    wp.launch(affine2d, (3, 4), inputs=[shared, out])
    np.testing.assert_array_equal(out.numpy(), base * 2 + np.arange(4))
    for copied in (wp.array(base), wp.array(base, dtype=wp.float64)):  # copies are row-major
        assert copied.is_contiguous and copied.strides == (4 * copied.dtype.size, copied.dtype.size)
        np.testing.assert_array_equal(copied.numpy(), base)


def test_launch_takes_empty_numpy_memory_with_zero_strides_as_vectors():
    """An empty array's strides mean nothing (torch's numpy() of a (0, 3) tensor is (0, 0))."""
    empty = np.lib.stride_tricks.as_strided(np.zeros(3, np.float32), (0, 3), (0, 0))
    wp.launch(scale_vec, 0, inputs=[empty, np.zeros((0, 3), np.float32)])
    view = wp.array(empty, dtype=wp.vec3, copy=False)
    assert view.shape == (0,) and view.dtype is wp.vec3
    wp.launch(scale_vec, view.shape, inputs=[view, wp.zeros(0, dtype=wp.vec3)])


def test_view_between_elements_of_the_same_size_keeps_the_shape():
    a = wp.array(np.arange(5.0), dtype=wp.float64)
    m = a.view(wp.types.matrix((1, 1), wp.float64))
    assert m.shape == (5,)
    np.testing.assert_array_equal(m.numpy().reshape(-1), np.arange(5.0))
    u = wp.array(np.array([0x04030201, 7], dtype=np.uint32), dtype=wp.uint32)
    v = u.view(wp.vec4ub)
    assert v.shape == (2,)
    np.testing.assert_array_equal(v.numpy()[0], [1, 2, 3, 4])
    np.testing.assert_array_equal(v.view(wp.uint32).numpy(), u.numpy())


def test_refused_views_raise_warps_runtime_error():
    # Warp raises RuntimeError for both; code catching it must catch weft's
    with pytest.raises(RuntimeError, match="not a permutation"):
        wp.zeros((2, 3, 4)).transpose((0, 0, 1))
    with pytest.raises(RuntimeError, match=r"trailing dimensions \(6,\) are not the shape \(3,\)"):
        wp.zeros((2, 6)).view(wp.vec3)
