"""`wp.array` in Python scope: construction, the allocation helpers, copies, numpy
interop (views, not copies), filling, attributes, indexing, reshaping and gradients."""

import math

import numpy as np
import pytest

import weft as wp


# Construction ---------------------------------------------------------------------------------
@pytest.mark.parametrize("np_dtype, t", [(np.bool_, wp.bool), (np.int8, wp.int8), (np.int16, wp.int16),
                                         (np.int32, wp.int32), (np.int64, wp.int64), (np.uint8, wp.uint8),
                                         (np.uint16, wp.uint16), (np.uint32, wp.uint32),
                                         (np.uint64, wp.uint64), (np.float16, wp.float16),
                                         (np.float32, wp.float32), (np.float64, wp.float64)])
def test_dtype_inferred_from_numpy(np_dtype, t):
    src = np.arange(6).astype(np_dtype)
    a = wp.array(src)
    assert a.dtype is t and a.shape == (6,)
    np.testing.assert_array_equal(a.numpy(), src)


def test_from_lists():
    assert wp.array([1, 2, 3]).dtype is wp.int64  # numpy's inference, as in Warp
    assert wp.array([1.0, 2.0]).dtype is wp.float64
    a = wp.array([1, 2, 3], dtype=float)
    assert a.dtype is wp.float32 and a.numpy().dtype == np.float32
    assert a.numpy().tolist() == [1.0, 2.0, 3.0]
    assert wp.array([[1, 2], [3, 4]], dtype=wp.int16).shape == (2, 2)


def test_vector_and_matrix_arrays_from_data():
    src = np.arange(12, dtype=np.float64).reshape(4, 3)
    a = wp.array(src, dtype=wp.vec3)
    assert a.shape == (4,) and a.dtype is wp.vec3 and a.numpy().shape == (4, 3)
    assert a.numpy().dtype == np.float32 and a.strides == (12,)
    np.testing.assert_array_equal(a.numpy(), src)
    flat = wp.array(np.arange(12), dtype=wp.vec3)  # a flat buffer of components
    assert flat.shape == (4,)
    np.testing.assert_array_equal(flat.numpy(), src)
    values = wp.array([wp.vec3(1, 2, 3), wp.vec3(4, 5, 6)], dtype=wp.vec3)
    np.testing.assert_array_equal(values.numpy(), [[1, 2, 3], [4, 5, 6]])
    m = wp.array(np.zeros((5, 2, 3, 3)), dtype=wp.mat33d)
    assert m.shape == (5, 2) and m.ndim == 2 and m.numpy().dtype == np.float64
    with pytest.raises(ValueError, match="does not hold vec3f elements"):
        wp.array(np.zeros((4, 2)), dtype=wp.vec3)


def test_vectors_without_a_dtype_make_arrays_of_their_scalars():
    # Warp takes the dtype from numpy's view of the data: a list of vec3 is a (2, 3) float32
    # array, not an array of vec3; matrices are seen flat, as numpy sees Warp's matrices
    a = wp.array([wp.vec3(1.0, 2.0, 3.0), wp.vec3(4.0, 5.0, 6.0)])
    assert a.dtype is wp.float32 and a.shape == (2, 3)
    np.testing.assert_array_equal(a.numpy(), [[1, 2, 3], [4, 5, 6]])
    assert wp.array([wp.vec3d(1.0, 2.0, 3.0)]).dtype is wp.float64
    assert wp.array([wp.vec3i(1, 2, 3)]).dtype is wp.int32
    m = wp.array([wp.mat22(1.0, 2.0, 3.0, 4.0)])
    assert m.dtype is wp.float32 and m.shape == (1, 4)
    np.testing.assert_array_equal(m.numpy(), [[1, 2, 3, 4]])
    assert wp.array(wp.mat22(1.0, 2.0, 3.0, 4.0)).shape == (4,)
    assert wp.array([[wp.vec2(1.0, 2.0)], [wp.vec2(3.0, 4.0)]]).shape == (2, 1, 2)
    # with the dtype given, the same data are vectors and matrices
    assert wp.array([wp.mat22(1.0, 2.0, 3.0, 4.0)], dtype=wp.mat22).shape == (1,)


def test_data_errors_are_also_runtime_errors():
    # Warp raises RuntimeError for these; weft's errors are ValueError/TypeError and RuntimeError
    with pytest.raises(RuntimeError, match="does not hold vec3f elements"):
        wp.array(np.zeros((4, 2), dtype=np.float32), dtype=wp.vec3)
    with pytest.raises(RuntimeError, match="does not fit"):
        wp.zeros(4, dtype=wp.vec2).assign(np.ones(5, dtype=np.float32))
    with pytest.raises(RuntimeError, match="cannot take the shape"):
        wp.array(np.arange(6, dtype=np.float32), shape=(4, 2))
    for scalar in (5.0, 3, np.float32(1.0)):
        with pytest.raises(TypeError, match="must be a sequence or an array"):
            wp.array(scalar)
        with pytest.raises(RuntimeError):
            wp.array(scalar)


@pytest.mark.parametrize("shape", [(7,), (2, 3), (2, 3, 4), (2, 1, 3, 2)])
def test_one_to_four_dimensions(shape):
    src = np.random.default_rng(0).random(shape).astype(np.float32)
    a = wp.array(src)
    assert a.shape == shape and a.ndim == len(shape) and a.size == src.size
    assert a.strides == src.strides
    np.testing.assert_array_equal(a.numpy(), src)
    z = wp.zeros(shape, dtype=wp.vec2)
    assert z.shape == shape and z.numpy().shape == (*shape, 2)


def test_five_dimensions_are_refused():
    with pytest.raises(ValueError, match="1 to 4 dimensions"):
        wp.array(np.zeros((1, 2, 1, 2, 1)))
    with pytest.raises(ValueError, match="1 to 4 dimensions"):
        wp.zeros((1, 1, 1, 1, 1))


def test_shape_argument_reshapes_data():
    a = wp.array(np.arange(6), dtype=float, shape=(2, 3))
    assert a.shape == (2, 3)
    np.testing.assert_array_equal(a.numpy(), np.arange(6).reshape(2, 3))


def test_copy_flag():
    src = np.arange(4, dtype=np.float32)
    shared = wp.array(src, copy=False)
    copied = wp.array(src)
    src[0] = 42
    assert shared.numpy()[0] == 42 and copied.numpy()[0] == 0
    from_weft = wp.array(shared)
    assert not np.shares_memory(from_weft.numpy(), shared.numpy())


def test_requires_grad_allocates_a_zero_gradient():
    a = wp.array(np.ones((2, 3), np.float32), requires_grad=True)
    assert a.requires_grad and isinstance(a.grad, wp.array)
    assert a.grad.shape == (2, 3) and a.grad.dtype is wp.float32 and not a.grad.numpy().any()
    b = wp.zeros(4, dtype=wp.vec3)
    assert not b.requires_grad and b.grad is None
    b.requires_grad = True
    assert b.grad.dtype is wp.vec3 and b.grad.numpy().shape == (4, 3)
    b.requires_grad = False  # (as in Warp: the gradient goes too)
    assert b.grad is None and not b.retain_grad


def test_a_gradient_must_match_the_arrays_dtype_shape_and_strides():
    """As Warp's `array.grad` setter: a kernel writes the gradient where it writes the array,
    so a gradient laid out otherwise (a broadcast torch gradient, strides 0) would gather
    every thread's adjoint in one element; setting one sets requires_grad, None clears it."""
    a = wp.zeros(8)
    for bad, what in ((wp.zeros(4), "shape"), (wp.zeros(8, dtype=wp.float64), "dtype"),
                      (wp.zeros(16)[::2], "strides")):
        with pytest.raises(ValueError, match=f"The given gradient array is incompatible: expected {what}"):
            a.grad = bad
    assert a.grad is None and not a.requires_grad
    a.grad = wp.ones(8)
    assert a.requires_grad and a.grad.numpy().tolist() == [1.0] * 8
    a.grad = None
    assert not a.requires_grad
    view = wp.zeros((4, 6))[:, ::2]
    view.requires_grad = True  # (a gradient with the view's strides, as Warp allocates)
    assert view.grad.strides == view.strides and view.grad.shape == (4, 3)
    flipped = wp.array(np.arange(6, dtype=np.float32))[::-1]
    flipped.requires_grad = True  # (a reversed axis: the gradient is reversed alike)
    assert flipped.grad.strides == flipped.strides == (-4,)


def test_unsupported_arguments():
    with pytest.raises(TypeError, match="unexpected keyword"):
        wp.array(np.zeros(3), pinnned=True)
    with pytest.raises(TypeError, match="not a weft dtype"):
        wp.zeros(3, dtype="float32x")
    with pytest.raises(TypeError, match="cannot infer"):
        wp.array(np.array(["a", "b"]))


# Allocation helpers --------------------------------------------------------------------------------
def test_zeros_ones_full_empty():
    z = wp.zeros((2, 3), dtype=wp.int16)
    assert z.shape == (2, 3) and z.dtype is wp.int16 and not z.numpy().any()
    assert wp.zeros(4).dtype is wp.float32 and wp.zeros(4).shape == (4,)
    np.testing.assert_array_equal(wp.ones(3, dtype=wp.vec2).numpy(), np.ones((3, 2)))
    np.testing.assert_array_equal(wp.full((2, 2), 7, dtype=wp.uint8).numpy(), np.full((2, 2), 7))
    e = wp.empty((3, 2), dtype=wp.int64)
    assert e.shape == (3, 2) and e.dtype is wp.int64
    assert wp.zeros(5, requires_grad=True).grad.shape == (5,)
    assert wp.zeros(0).size == 0


@pytest.mark.parametrize("value, dtype", [(2.0, wp.float32), (2, wp.int32), (True, wp.bool),
                                          (np.float64(2.0), wp.float64), (np.int16(3), wp.int16),
                                          # sequences: numpy's scalar type for them, as in Warp
                                          ((1.0, 2.0, 3.0), wp.vec3d), ([1, 2], wp.types.vector(2, wp.int64)),
                                          (((1.0, 2.0), (3.0, 4.0)), wp.mat22d),
                                          (np.array([1.0, 2.0], np.float32), wp.vec2),
                                          ([True, False], wp.types.vector(2, wp.bool)),
                                          (wp.vec3d(1, 2, 3), wp.vec3d), (wp.quat(0, 0, 0, 1), wp.quat)])
def test_full_infers_the_dtype(value, dtype):
    a = wp.full(3, value)
    assert a.dtype is dtype
    for element in a.numpy():
        np.testing.assert_array_equal(element, np.asarray(value))


def test_full_with_a_vector_dtype_broadcasts_a_scalar():
    a = wp.full(2, 5.0, dtype=wp.vec3)
    np.testing.assert_array_equal(a.numpy(), np.full((2, 3), 5.0))
    with pytest.raises(TypeError, match="cannot infer"):
        wp.full(2, "x")


def test_like_helpers():
    src = wp.array(np.arange(6, dtype=np.float64).reshape(2, 3), requires_grad=True)
    for fn in (wp.zeros_like, wp.empty_like, wp.ones_like):
        a = fn(src)
        assert a.shape == (2, 3) and a.dtype is wp.float64 and a.requires_grad and a.device == "cpu"
    assert not wp.zeros_like(src).numpy().any()
    assert (wp.ones_like(src).numpy() == 1).all()
    f = wp.full_like(src, 2.5)
    assert f.dtype is wp.float64 and (f.numpy() == 2.5).all()
    assert wp.zeros_like(src, dtype=wp.int8).dtype is wp.int8
    assert not wp.zeros_like(src, requires_grad=False).requires_grad
    v = wp.zeros_like(wp.zeros(3, dtype=wp.vec3))
    assert v.dtype is wp.vec3 and v.shape == (3,)


def test_like_helpers_take_warps_parameters_in_warps_order():
    # Warp: zeros_like(src, device, requires_grad, pinned, retain_grad); full_like(src, value, device, ...)
    src = wp.array(np.arange(3, dtype=np.float32), requires_grad=True)
    for fn in (wp.zeros_like, wp.empty_like, wp.ones_like):
        a = fn(src, "cpu", False)
        assert a.device == "cpu" and a.dtype is wp.float32 and not a.requires_grad
        assert fn(src, None, True, False, True).retain_grad
    f = wp.full_like(src, 4.0, "cpu", None, False, True)
    assert f.retain_grad and f.requires_grad and (f.numpy() == 4.0).all()
    assert wp.clone(src, retain_grad=True).retain_grad
    with pytest.raises(TypeError):
        wp.zeros_like(src, "cpu", False, False, False, wp.int8)  # dtype is keyword-only


# Copies ---------------------------------------------------------------------------------------
def test_clone_is_independent():
    a = wp.array(np.arange(5, dtype=np.float32))
    c = wp.clone(a)
    assert c.dtype is a.dtype and c.shape == a.shape
    np.testing.assert_array_equal(c.numpy(), a.numpy())
    c.numpy()[0] = 99
    assert a.numpy()[0] == 0
    strided = wp.clone(a[::2])
    assert strided.is_contiguous and strided.numpy().tolist() == [0, 2, 4]
    assert wp.clone(a, requires_grad=True).grad is not None


def test_copy_whole_and_partial():
    src = wp.array(np.arange(10, dtype=np.float32))
    dest = wp.zeros(10)
    wp.copy(dest, src)
    np.testing.assert_array_equal(dest.numpy(), np.arange(10))
    dest.zero_()
    wp.copy(dest, src, dest_offset=1, src_offset=2, count=3)
    np.testing.assert_array_equal(dest.numpy(), [0, 2, 3, 4, 0, 0, 0, 0, 0, 0])
    big = wp.zeros(12)
    wp.copy(big, src, dest_offset=2)  # count=0: all of src
    np.testing.assert_array_equal(big.numpy(), [0, 0, *range(10)])
    with pytest.raises(RuntimeError, match="exceeds the source size"):
        wp.copy(wp.zeros(10), src, src_offset=7)  # count=0 means all of src, as in Warp


def test_copy_between_shapes_and_into_views():
    src = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    flat = wp.zeros(6)
    wp.copy(flat, src)
    np.testing.assert_array_equal(flat.numpy(), np.arange(6))
    m = wp.zeros((3, 4))
    wp.copy(m[:, 1], wp.array(np.ones(3, np.float32)))
    np.testing.assert_array_equal(m.numpy(), np.outer(np.ones(3), [0, 1, 0, 0]))
    vecs = wp.zeros(2, dtype=wp.vec3)
    wp.copy(vecs, wp.array(np.arange(6), dtype=wp.vec3), count=1)
    np.testing.assert_array_equal(vecs.numpy(), [[0, 1, 2], [0, 0, 0]])


def test_copy_errors():
    src = wp.array(np.arange(10, dtype=np.float32))
    # Warp's error types: RuntimeError for every bad range or layout
    with pytest.raises(RuntimeError, match="exceeds the destination size"):
        wp.copy(wp.zeros(4), src)  # silently truncating would lose data
    with pytest.raises(RuntimeError, match="exceeds the destination size"):
        wp.copy(wp.zeros(10), src, dest_offset=8, count=3)
    with pytest.raises(RuntimeError, match="Source offset must be non-negative"):
        wp.copy(wp.zeros(10), src, src_offset=-1)
    with pytest.raises(RuntimeError, match="must be integers"):
        wp.copy(wp.zeros(10), src, count=2.0)
    with pytest.raises(RuntimeError, match="destination dtype=float64, source dtype=float32"):
        wp.copy(wp.zeros(10, dtype=wp.float64), src)
    with pytest.raises(RuntimeError, match=r"destination shape=\(3, 2\), source shape=\(2, 3\)"):
        wp.copy(wp.zeros((6, 2))[::2], wp.array(np.zeros((6, 3), np.float32))[::3])
    bits = wp.zeros(10, dtype=wp.uint32)  # same element size: the bits are copied
    wp.copy(bits, src)
    np.testing.assert_array_equal(bits.numpy(), src.numpy().view(np.uint32))


def test_from_numpy():
    a = wp.from_numpy(np.arange(6, dtype=np.float32))
    assert a.dtype is wp.float32 and a.shape == (6,)
    v = wp.from_numpy(np.ones((4, 3)), dtype=wp.vec3)
    assert v.dtype is wp.vec3 and v.shape == (4,)
    s = wp.from_numpy(np.arange(6), dtype=wp.int32, shape=(3, 2), requires_grad=True)
    assert s.shape == (3, 2) and s.grad.shape == (3, 2)


# numpy interop ----------------------------------------------------------------------------------
def test_numpy_is_a_view_both_ways():
    a = wp.array(np.zeros(4, np.float32))
    n = a.numpy()
    n[1] = 5
    assert a.numpy()[1] == 5
    assert a.numpy() is n or np.shares_memory(a.numpy(), n)
    out = wp.zeros(4)
    wp.launch(_double, 4, inputs=[a, out])  # the kernel sees numpy's write
    assert out.numpy()[1] == 10
    wp.launch(_double, 4, inputs=[out, a])  # and numpy sees the kernel's
    assert n[1] == 20


@wp.kernel
def _double(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] * 2.0


def test_array_interface_shares_memory():
    a = wp.array(np.arange(6, dtype=np.float64).reshape(2, 3))
    iface = a.__array_interface__
    assert iface["shape"] == (2, 3) and iface["typestr"] == "<f8" and iface["data"][0] == a.ptr
    n = np.asarray(a)
    assert np.shares_memory(n, a.numpy())
    n[1, 2] = -1
    assert a.numpy()[1, 2] == -1
    copied = np.array(a)
    assert not np.shares_memory(copied, a.numpy())
    assert not np.shares_memory(a.__array__(copy=True), a.numpy())
    assert np.shares_memory(a.__array__(), a.numpy())
    assert a.__array__(dtype=np.float32).dtype == np.float32
    v = np.asarray(wp.zeros(3, dtype=wp.vec3))
    assert v.shape == (3, 3) and v.dtype == np.float32
    col = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))[:, 1]
    assert np.asarray(col).tolist() == [1, 5, 9] and np.asarray(col).strides == (16,)


def test_list_str_repr():
    a = wp.array([1.5, 2.5], dtype=float)
    assert a.list() == [1.5, 2.5]
    assert str(a) == str(a.numpy())
    assert repr(a) == "array(shape=(2,), dtype=float32)"  # (Warp's form: `print([a, b])` reads the same)
    assert repr(wp.zeros((2, 3), dtype=wp.vec3)) == "array(shape=(2, 3), dtype=vec3f)"
    assert repr(wp.indexedarray(a, [wp.array([1], dtype=wp.int32)])) == "indexedarray(shape=(1,), dtype=float32)"
    halves = wp.array([1.0, 2.5, 3.14], dtype=wp.bfloat16).list()  # (Warp's bfloat16 values, not floats)
    assert all(isinstance(x, wp.bfloat16) for x in halves) and [float(x) for x in halves] == [1.0, 2.5, 3.140625]
    vectors = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=wp.vec3).list()
    assert vectors == [wp.vec3(0, 1, 2), wp.vec3(3, 4, 5)]
    vectors[0][0] = 9.0  # (the values are copies: neither the array nor the other value changes)
    assert vectors[1] == wp.vec3(3, 4, 5)
    assert wp.zeros(0, dtype=wp.vec3).list() == [] and wp.zeros((0, 2), dtype=wp.mat22).list() == []


# Filling and assigning ----------------------------------------------------------------------------
def test_fill_and_zero():
    a = wp.zeros((2, 3), dtype=wp.int32)
    assert a.fill_(4) is a
    assert (a.numpy() == 4).all()
    assert a.zero_() is a and not a.numpy().any()
    v = wp.zeros(3, dtype=wp.vec3)
    v.fill_(wp.vec3(1, 2, 3))
    np.testing.assert_array_equal(v.numpy(), [[1, 2, 3]] * 3)
    v.fill_((4, 5, 6))
    np.testing.assert_array_equal(v.numpy(), [[4, 5, 6]] * 3)
    v.fill_(7.0)  # a scalar fills every component, as in Warp
    assert (v.numpy() == 7).all()
    m = wp.zeros(2, dtype=wp.mat22)
    m.fill_(wp.mat22(1, 2, 3, 4))
    np.testing.assert_array_equal(m.numpy(), [[[1, 2], [3, 4]]] * 2)


@pytest.mark.parametrize("dtype, value", [
    (wp.float32, [1.0]),  # one value per element is not a fill value
    (wp.float32, np.array([1.0, 2.0])),  # (numpy would broadcast it across the elements)
    (wp.vec3, wp.vec2(1.0, 2.0)),
    (wp.vec3, (1.0, 2.0, 3.0, 4.0)),
    (wp.mat22, wp.vec2(1.0, 2.0)),  # (numpy would broadcast it across the rows)
    (wp.int32, 2.7),
    (wp.vec3i, 0.5),
])
def test_fill_refuses_a_value_that_is_not_one_element(dtype, value):
    # Warp raises ValueError for each of these; none may be broadcast silently
    a = wp.zeros(2, dtype=dtype)
    with pytest.raises(ValueError, match="fill_: cannot fill"):
        a.fill_(value)
    assert not a.numpy().any()


@wp.struct
class _Filled:
    a: float
    v: wp.vec2


def test_fill_a_struct_array_with_an_instance_or_zero():
    arr = wp.zeros(3, dtype=_Filled)
    s = _Filled()
    s.a, s.v = 2.0, wp.vec2(1.0, 3.0)
    arr.fill_(s)
    arr[1:].fill_(0)  # Warp's way to reset struct elements to the default instance
    assert arr.numpy()["a"].tolist() == [2.0, 0.0, 0.0] and arr.numpy()["v"][0].tolist() == [1.0, 3.0]
    with pytest.raises(ValueError, match="filled with an instance of _Filled or 0, got 1.5"):
        arr.fill_(1.5)
    with pytest.raises(ValueError, match="fill_: cannot fill"):
        wp.indexedarray(wp.zeros(4), [wp.array([0, 2], dtype=wp.int32)]).fill_(np.array([1.0, 2.0]))
    ia = wp.indexedarray(arr, [wp.array([2], dtype=wp.int32)])
    ia.fill_(s)
    ia.fill_(0)
    assert arr.numpy()["a"].tolist() == [2.0, 0.0, 0.0]


def test_fill_a_view_touches_only_the_view():
    a = wp.zeros(6)
    a[::2].fill_(1.0)
    assert a.numpy().tolist() == [1, 0, 1, 0, 1, 0]


@pytest.mark.parametrize("dtype, value", [(wp.vec3, (1.0, -2.0, 3.5)), (wp.mat22d, 2.5), (wp.vec2h, (1.5, -2.0)),
                                          (wp.vec4i, (7, -1, 0, 2**31 - 1))])
def test_fill_large_arrays_of_vectors_and_matrices(dtype, value):
    """Large contiguous arrays fill through a block of elements (runtime/array.py
    _fill_blocks): every element, the last partial block included, as numpy's broadcast;
    a strided view still fills only its own elements."""
    n = 2048 * 3 + 17
    a = wp.zeros(n, dtype=dtype)
    a.fill_(value)
    expected = np.empty(a.numpy().shape, a.numpy().dtype)
    expected[...] = np.asarray(value).reshape(expected.shape[1:]) if np.ndim(value) else value
    np.testing.assert_array_equal(a.numpy(), expected)
    b = wp.zeros((n, 2), dtype=dtype)
    b[:, 1].fill_(value)
    np.testing.assert_array_equal(b.numpy()[:, 1], expected)
    assert not b.numpy()[:, 0].any()


def test_assign_from_numpy_overlapping_its_own_memory():
    a = wp.array(np.arange(6, dtype=np.float32))
    a.assign(a.numpy()[::-1])
    assert a.numpy().tolist() == [5, 4, 3, 2, 1, 0]
    b = wp.clone(a)
    wp.copy(b, a)
    a.assign(np.arange(6, dtype=np.float64) * 0.5)  # (converted, as Warp)
    assert a.numpy().tolist() == [0, 0.5, 1, 1.5, 2, 2.5] and b.numpy().tolist() == [5, 4, 3, 2, 1, 0]


def test_assign():
    a = wp.zeros(4)
    assert a.assign(np.arange(4)) is a
    assert a.numpy().tolist() == [0, 1, 2, 3]
    a.assign([4, 5, 6, 7])
    assert a.numpy().tolist() == [4, 5, 6, 7]
    a.assign(wp.array(np.ones(4, np.float32)))
    assert a.numpy().tolist() == [1] * 4
    v = wp.zeros(2, dtype=wp.vec3)
    v.assign(np.arange(6).reshape(2, 3))
    assert v.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match=r"data of shape \(5,\) does not fit the array's shape \(4,\)"):
        a.assign(np.zeros(5))
    a.assign([9, 8])  # fewer elements fill the first ones, as Warp's copy does
    assert a.numpy().tolist() == [9, 8, 1, 1]
    a.assign(wp.array([7.0], dtype=float))
    assert a.numpy().tolist() == [7, 8, 1, 1]
    with pytest.raises(ValueError, match="does not fit"):
        a.assign(wp.zeros(5))
    big = wp.zeros(6)
    big[1:5].assign([1, 2, 3, 4])
    assert big.numpy().tolist() == [0, 1, 2, 3, 4, 0]
    with pytest.raises(TypeError, match="must be a sequence or an array, got the scalar 3.0"):
        big.assign(3.0)  # (Warp's rule; numpy's 0-d array would fill only the first element)


# Attributes --------------------------------------------------------------------------------------
def test_attributes():
    a = wp.zeros((3, 4), dtype=wp.vec2d)
    assert a.shape == (3, 4) and a.ndim == 2 and a.size == 12 and len(a) == 3
    assert a.strides == (64, 16) and a.dtype is wp.vec2d
    assert a.device == "cpu" and str(a.device) == "cpu" and a.device is wp.get_device()
    assert a.is_contiguous and a.ptr == a.numpy().ctypes.data
    assert a.to("cpu") is a and a.contiguous() is a


def test_float16_arrays():
    src = np.array([0.5, 1.25, -2.0, 65504.0], np.float16)
    a = wp.array(src)
    assert a.dtype is wp.float16 and a.numpy().dtype == np.float16 and a.strides == (2,)
    out = wp.zeros(4, dtype=wp.float16)
    wp.launch(_half_scale, 4, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), src * np.float16(0.5))
    assert wp.array([0.1, 0.2], dtype=wp.float16).numpy().tolist() == [np.float16(0.1), np.float16(0.2)]


@wp.kernel
def _half_scale(a: wp.array(dtype=wp.float16), out: wp.array(dtype=wp.float16)):
    i = wp.tid()
    out[i] = a[i] * wp.float16(0.5)


# Indexing, views and reshaping -------------------------------------------------------------------------
def test_element_indexing():
    a = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert a[1, 2] == 6 and isinstance(a[1, 2], np.float32)
    row = a[1]
    assert isinstance(row, wp.array) and row.shape == (4,) and row.is_contiguous
    assert a[-1, -1] == 11
    v = wp.array(np.arange(6), dtype=wp.vec3)
    np.testing.assert_array_equal(v[1], [3, 4, 5])
    a[0, 0] = 100
    assert a.numpy()[0, 0] == 100
    a[2] = 7
    assert a.numpy()[2].tolist() == [7] * 4


def test_slices_are_views():
    base = np.arange(20, dtype=np.float32).reshape(4, 5)
    a = wp.array(base)
    for key, expected in [((slice(1, 3),), base[1:3]), ((slice(None), 1), base[:, 1]),
                          ((slice(None, None, 2), slice(1, None, 2)), base[::2, 1::2]),
                          ((Ellipsis, 2), base[..., 2]), ((slice(None, None, -1),), base[::-1])]:
        view = a[key]
        assert isinstance(view, wp.array) and view.dtype is wp.float32
        assert view.shape == expected.shape and view.strides == expected.strides
        np.testing.assert_array_equal(view.numpy(), expected)
        assert np.shares_memory(view.numpy(), a.numpy())
    assert a[1:3].is_contiguous and not a[:, 1].is_contiguous and not a[::2].is_contiguous


def test_contiguous_means_packed_strides_also_along_extent_one():
    """Warp's rule: strides equal to packed row-major strides, where numpy's flag ignores a
    dimension of extent 1 (a one-element view with a step is not contiguous)."""
    a = wp.array(np.arange(16, dtype=np.float32).reshape(4, 4))
    assert a[1:2].is_contiguous and a[1:2].strides == (16, 4)  # packed, extent 1 or not
    assert not a[:, 1:2].is_contiguous  # strides (16, 4), packed would be (4, 4)
    one = wp.array((1, 2), dtype=int)[::2]
    assert one.shape == (1,) and one.strides == (8,) and not one.is_contiguous
    assert wp.zeros(1).is_contiguous and wp.zeros((1, 3)).is_contiguous and wp.zeros(0).is_contiguous
    np.testing.assert_array_equal(one.contiguous().numpy(), [1])
    with pytest.raises(RuntimeError, match="requires a contiguous segment_end_indices array"):
        wp.utils.segmented_sort_pairs(wp.zeros(2, dtype=int), wp.zeros(2, dtype=int), 1,
                                      wp.array((0,), dtype=int), wp.array((1, 1), dtype=int)[::2])


def test_vector_array_indexing_never_reaches_components():
    v = wp.zeros(4, dtype=wp.vec3)
    view = v[..., 1:3]  # the Ellipsis covers array dimensions only
    assert view.shape == (2,) and view.dtype is wp.vec3
    with pytest.raises(IndexError, match="too many indices"):
        v[:, 1]  # noqa: B018
    with pytest.raises(IndexError, match="too many indices"):
        wp.zeros((2, 2))[0, 0, 0]  # noqa: B018


def test_python_scope_index_errors_are_also_warps_runtime_error():
    a, m = wp.zeros(12), wp.zeros((3, 4))
    for key, array_ in ((12, a), (-13, a), (3, m), ((0, 4), m)):
        for kind in (IndexError, RuntimeError):
            with pytest.raises(kind, match="is out of bounds for a dimension of size"):
                array_[key]  # noqa: B018
    with pytest.raises(RuntimeError, match="ints and slices"):
        a[1.5]  # noqa: B018
    assert a[-12] == 0.0 and m[2, 3] == 0.0 and list(iter(wp.array([1.0, 2.0], dtype=float))) == [1.0, 2.0]


def test_data_that_cannot_make_an_array_is_warps_runtime_error():
    for data in ([[1.0, 2.0], [3.0]], ["a", "b"]):
        with pytest.raises(RuntimeError, match="Failed to convert input data to an array with type float"):
            wp.array(data, dtype=float)
    with pytest.raises(RuntimeError, match="Failed to convert input data"):
        wp.array(np.array([1, "a"], dtype=object))
    for make in (lambda: wp.zeros((1, 1, 1, 1, 2)), lambda: wp.zeros(12).reshape((1, 1, 1, 2, 6))):
        with pytest.raises(RuntimeError, match="arrays have 1 to 4 dimensions, got 5"):
            make()


def test_index_arrays_are_refused():
    a = wp.zeros(5)
    for key in ([0, 2], np.array([0, 2]), np.array([True, False, True, False, True]), True, 1.0):
        with pytest.raises(TypeError, match="ints and slices"):
            a[key]  # noqa: B018
    with pytest.raises(TypeError, match="ints and slices"):
        a[[0, 1]] = 1.0


def test_gradients_follow_views():
    a = wp.zeros(6, requires_grad=True)
    view = a[2:5]
    assert view.requires_grad and view.grad.shape == (3,)
    view.grad.fill_(1.0)
    assert a.grad.numpy().tolist() == [0, 0, 1, 1, 1, 0]
    plain = wp.zeros(3)[1:]
    assert plain.grad is None and not plain.requires_grad


def test_reshape_and_flatten():
    a = wp.array(np.arange(6, dtype=np.float32), requires_grad=True)
    r = a.reshape((2, 3))
    assert r.shape == (2, 3) and np.shares_memory(r.numpy(), a.numpy())
    assert r.requires_grad and r.grad.shape == (2, 3)
    assert np.shares_memory(r.grad.numpy(), a.grad.numpy())
    assert r.reshape(-1).shape == (6,) and r.flatten().shape == (6,)
    assert a.reshape(6).shape == (6,)
    v = wp.zeros((2, 3), dtype=wp.vec3).reshape(6)
    assert v.shape == (6,) and v.dtype is wp.vec3
    with pytest.raises(RuntimeError, match="without a copy"):
        wp.zeros((4, 4))[:, 1:3].reshape(8)
    strided = wp.zeros(10)[::2].reshape((5, 1))  # possible as a view: allowed
    strided.fill_(1.0)
    assert strided.numpy().sum() == 5


def test_contiguous():
    a = wp.array(np.arange(10, dtype=np.float32))
    c = a[::3].contiguous()
    assert c.is_contiguous and c.numpy().tolist() == [0, 3, 6, 9]
    assert not np.shares_memory(c.numpy(), a.numpy())


def test_fill_and_full_take_a_flat_matrix_value():
    mat23 = wp.types.matrix((2, 3), wp.float32)
    a = wp.zeros((2, 2), dtype=mat23)
    a.fill_(np.arange(6))
    b = wp.full(3, value=list(range(6)), dtype=mat23)
    expected = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(a.numpy(), np.broadcast_to(expected, (2, 2, 2, 3)))
    np.testing.assert_array_equal(b.numpy(), np.broadcast_to(expected, (3, 2, 3)))


@wp.kernel
def sum_3d(a: wp.array3d(dtype=float), out: wp.array(dtype=float)):
    i, j, k = wp.tid()
    wp.atomic_add(out, 0, a[i, j, k])


def test_arraynd_constructors_take_the_datas_dimensions_as_warp_does():
    """`wp.array3d(data)` makes the array the data describes (Warp ignores the 3 there too);
    a kernel that expects a 3-D array then refuses it at launch, naming the parameter."""
    a = wp.array3d(((1, 2, 3),) * 2, dtype=wp.float16)
    assert a.ndim == 2 and a.shape == (2, 3) and a.dtype is wp.float16
    assert wp.array2d([1.0, 2.0], dtype=float).shape == (2,)
    assert wp.array3d(np.zeros((2, 3, 4), np.float32)).shape == (2, 3, 4)
    with pytest.raises(TypeError, match="'a'"):
        wp.launch(sum_3d, (2, 3, 1), inputs=[wp.array3d(np.ones((2, 3), np.float32)), wp.zeros(1, dtype=float)])


def test_extents_beyond_int32_are_refused():
    """Kernels index arrays with int32: a dimension of 2**31 or more would wrap silently, so
    every way of making one says so (without allocating anything)."""
    message = "must not exceed the maximum representable value of a signed 32-bit integer"
    with pytest.raises(ValueError, match=message):
        wp.zeros(2**31, dtype=wp.int8)
    with pytest.raises(ValueError, match=message):
        wp.empty((2, 2**31), dtype=wp.int8)
    with pytest.raises(ValueError, match=message):  # a zero-stride view: nothing is allocated
        wp.array(np.broadcast_to(np.zeros(1, dtype=np.int8), (2**31,)), dtype=wp.int8)
    assert wp.zeros(0, dtype=wp.int8).shape == (0,)


def test_allocations_are_64_byte_aligned():
    # as Warp's CPU allocations, which XLA needs to view without a copy (to_jax)
    @wp.struct
    class Odd:
        a: wp.int8
        b: wp.vec3

    arrays = [wp.zeros(n, dtype=t) for n in (1, 3, 5, 17) for t in (wp.int8, wp.float16, wp.vec3, wp.mat33d, Odd)]
    arrays += [wp.empty((3, 5), dtype=float), wp.array(np.arange(7, dtype=np.int16)),
               wp.zeros((2, 3), dtype=float, strides=(4, 8)), wp.clone(wp.zeros(3)),
               wp.zeros(2, requires_grad=True).grad]
    for a in arrays:
        assert a.ptr % 64 == 0, (a.dtype, a.shape)
    s = wp.zeros((2, 3), dtype=float, strides=(4, 8))
    s.fill_(2.0)
    assert s.numpy().tolist() == [[2.0] * 3] * 2


def test_a_list_of_vectors_without_dtype_is_a_scalar_array_as_warps():
    # Warp reads vector/matrix values through the buffer protocol: their components, flat
    a = wp.array([wp.vec3(1, 2, 3), wp.vec3(4, 5, 6)])
    assert a.dtype is wp.float32 and a.shape == (2, 3)
    np.testing.assert_array_equal(a.numpy(), [[1, 2, 3], [4, 5, 6]])
    m = wp.array([wp.mat22d(1, 2, 3, 4)])
    assert m.dtype is wp.float64 and m.shape == (1, 4)
    assert wp.array([wp.vec2i(1, 2)]).dtype is wp.int32
    typed = wp.array([wp.mat22(1, 2, 3, 4)], dtype=wp.mat22)
    assert typed.shape == (1,) and typed.numpy()[0, 1, 0] == 3


@wp.struct
class _Point:
    x: float
    n: wp.int16


def test_assign_takes_a_list_of_struct_values():
    points = []
    for k in range(3):
        p = _Point()
        p.x, p.n = 0.5 * k, wp.int16(-k)
        points.append(p)
    a = wp.zeros(3, dtype=_Point)
    a.assign(points)
    assert a.numpy()["x"].tolist() == [0.0, 0.5, 1.0] and a.numpy()["n"].tolist() == [0, -1, -2]
    a.assign(points[:2][::-1])  # (fewer values: the first elements)
    assert a.numpy()["x"].tolist() == [0.5, 0.0, 1.0]


@wp.struct
class _Joint:
    h: wp.float16
    m: wp.mat22


@wp.struct
class _Body:
    pos: wp.vec3
    mass: float
    id: wp.int64
    on: bool
    joint: _Joint


@wp.struct
class _Holder:
    data: wp.array(dtype=float)
    scale: float


def test_an_array_of_structs_from_a_list_is_the_structs_packed_one_by_one():
    # (field by field for fields of numbers, nested structs included; element by element
    # where a field holds an array)
    from weft.runtime.array import struct_record

    bodies = []
    for k in range(5):
        b = _Body()
        b.pos, b.mass, b.id, b.on = wp.vec3(k, -1.5 * k, 2.0), 0.25 * k, 2**40 + k, k % 2 == 1
        b.joint.h, b.joint.m = wp.float16(0.5 * k), wp.mat22(1.0, k, -k, 4.0)
        bodies.append(b)
    got = wp.array(bodies, dtype=_Body).numpy()
    for k, b in enumerate(bodies):
        one = struct_record(_Body, b)
        for name in ("pos", "mass", "id", "on"):
            np.testing.assert_array_equal(got[k][name], one[name])
        for name in ("h", "m"):
            np.testing.assert_array_equal(got[k]["joint"][name], one["joint"][name])
    assert got["id"][3] == 2**40 + 3 and got["joint"]["m"][2].tolist() == [[1.0, 2.0], [-2.0, 4.0]]
    holders = [_Holder(), _Holder()]
    holders[0].data, holders[0].scale = wp.array([1.0, 2.0], dtype=float), 3.0
    held = wp.array(holders, dtype=_Holder).numpy()
    assert held["data"]["data"][0] == holders[0].data.ptr and held["data"]["data"][1] == 0
    assert held["scale"].tolist() == [3.0, 0.0]
    assert wp.array([], dtype=_Body).shape == (0,)
    with pytest.raises(Exception, match="_Body"):
        wp.array([bodies[0], _Holder()], dtype=_Body)


def test_python_numbers_out_of_an_integer_dtypes_range_are_refused():
    # Warp (through numpy) refuses them, RuntimeError; numpy data is cast, wrapping, in both
    for data, dtype in (([-1, 256], wp.uint8), ([2**40], wp.int32), ([[1, 2], [3, 400]], wp.vec2ub),
                        ([1, 2**70], wp.int64), ([-1.5, 2.0], wp.uint8)):
        with pytest.raises(RuntimeError, match="out of range for"):
            wp.array(data, dtype=dtype)
    assert wp.array(np.array([-1, 256]), dtype=wp.uint8).numpy().tolist() == [255, 0]
    assert wp.array([1.7, -1.7], dtype=int).numpy().tolist() == [1, -1]
    assert wp.array([2**64 - 1], dtype=wp.uint64).numpy().tolist() == [2**64 - 1]
    big = [2**64 - 1, 0, 2**63, 5]  # (numpy alone infers float64 for these and loses 2**64 - 1)
    assert wp.array(big, dtype=wp.uint64).numpy().tolist() == big
    for data, dtype in (([float("nan")], wp.int32), ([1.0, float("nan")], wp.uint8), ((2, math.nan), wp.int64)):
        with pytest.raises(RuntimeError, match=f"cannot convert float NaN to {dtype.__name__}"):
            wp.array(data, dtype=dtype)  # (numpy's int cast of NaN is a garbage value)


def test_constructors_pass_warps_array_keywords_on():
    # NCLaw: wp.zeros(shape=shape, dtype=wp.vec3, ndim=3, ...); Warp hands **kwargs to array()
    assert wp.zeros(shape=(2, 3, 4), dtype=wp.vec3, ndim=3).shape == (2, 3, 4)
    assert wp.empty(shape=(2, 3), dtype=float, ndim=2).shape == (2, 3)
    np.testing.assert_array_equal(wp.ones(2, ndim=1).numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(wp.full(2, 3.0, ndim=1).numpy(), [3.0, 3.0])
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        wp.zeros(3, colour="red")
