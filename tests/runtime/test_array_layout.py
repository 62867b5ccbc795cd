"""Array construction as Warp programs spell it: raw pointers, explicit strides, capacity,
dtype views, transposes, regrouped components, list(), retain_grad, indexed arrays, and
the array reductions of weft.utils."""

import gc

import numpy as np
import pytest

import weft as wp
from weft.utils import array_inner, array_sum


def test_strided_allocation_and_capacity():
    a = wp.zeros((2, 3), dtype=wp.float32)
    assert a.capacity == 24 and a.strides == (12, 4) and a.is_contiguous
    t = wp.empty((3, 2), dtype=wp.float32, strides=(4, 12))  # transposed layout
    assert t.capacity == 24 and not t.is_contiguous
    gapped = wp.empty((3, 3), dtype=wp.int32, strides=(16, 12))
    assert gapped.capacity == 4 + 2 * 16 + 2 * 12
    empty = wp.empty((0, 3), dtype=wp.int32, strides=(4, 16))
    assert empty.capacity == 0 and empty.ptr is None
    with pytest.raises(ValueError, match="expected 2 strides, got 1"):
        wp.empty((0, 3), dtype=wp.int32, strides=(4,))
    with pytest.raises(NotImplementedError, match="Negative strides"):
        wp.empty((3, 3), dtype=wp.int32, strides=(16, -4))
    with pytest.raises(ValueError, match="non-negative"):
        wp.zeros((10, -1))


def test_array_over_a_pointer_shares_memory():
    base = wp.array(np.arange(6, dtype=np.float32))
    alias = wp.array(ptr=base.ptr, shape=(2, 3), dtype=wp.float32)
    alias.numpy()[1, 2] = 42.0
    assert base.numpy()[5] == 42.0
    transposed = wp.array(ptr=base.ptr, shape=(3, 2), strides=(4, 12), dtype=wp.float32)
    np.testing.assert_array_equal(transposed.numpy(), base.numpy().reshape(2, 3).T)
    assert transposed[1:, 1].ptr == base.ptr + 4 + 12


def test_deleter_runs_once_the_array_and_its_views_are_gone():
    memory = np.arange(8, dtype=np.float32)
    freed = []
    a = wp.array(ptr=memory.ctypes.data, shape=(2, 4), dtype=wp.float32,
                 deleter=lambda ptr, size: freed.append((ptr, size)))
    assert a.deleter is not None
    view = a[1, 1:]
    del a
    gc.collect()
    assert freed == []  # the view still reads the memory
    assert view.numpy().tolist() == [5.0, 6.0, 7.0]
    del view
    gc.collect()
    assert freed == [(memory.ctypes.data, 32)]  # (Warp's arguments: the pointer and capacity)


def test_numpy_views_keep_the_memory_of_pointer_arrays_alive():
    """A numpy view outliving its weft array reads the memory, never freed memory (Warp's
    numpy() holds the array): for a deleter, and for an owner weft passes (sparse values)."""
    memory = np.arange(4, dtype=np.float32)
    freed = []
    a = wp.array(ptr=memory.ctypes.data, shape=4, dtype=wp.float32, deleter=lambda p, n: freed.append(p))
    view = a.numpy()[1:]
    del a
    gc.collect()
    assert freed == [] and view.tolist() == [1.0, 2.0, 3.0]
    del view
    gc.collect()
    assert freed == [memory.ctypes.data]

    def scalars_of_a_sparse_matrix():
        A = wp.sparse.bsr_from_triplets(2, 2, wp.array([0, 1], dtype=int), wp.array([0, 1], dtype=int),
                                        wp.array(np.ones((2, 2, 2), np.float32), dtype=wp.mat22))
        return A.scalar_values.numpy()

    values = scalars_of_a_sparse_matrix()
    gc.collect()
    junk = [wp.full(values.size, 7.0) for _ in range(8)]  # (would reuse freed memory)
    assert values.ravel().tolist() == [1.0] * 8 and len(junk) == 8


def test_a_deleter_on_weft_allocated_memory_runs_when_its_last_view_goes():
    freed = []
    a = wp.zeros(8, dtype=float)
    a.deleter = lambda ptr, size: freed.append(size)
    view = a.numpy()[2:]
    del a
    gc.collect()
    assert freed == [] and view.tolist() == [0.0] * 6
    del view
    gc.collect()
    assert freed == [32]


def test_deleter_none_keeps_the_memory():
    memory = np.zeros(4, dtype=np.float32)
    freed = []
    a = wp.array(ptr=memory.ctypes.data, shape=4, dtype=wp.float32, deleter=lambda p, n: freed.append(p))
    a.deleter = None
    del a
    gc.collect()
    assert freed == []
    assert wp.zeros(3).deleter is None  # weft's own allocations have none
    with pytest.raises(TypeError, match="deleter"):
        wp.zeros(3).deleter = 5


def test_views_transpose_and_dtype_views():
    a = wp.array(np.arange(6, dtype=np.float32).reshape(3, 2), requires_grad=True)
    t = a.transpose()
    assert t.shape == (2, 3) and not t.is_contiguous
    np.testing.assert_array_equal(t.numpy(), a.numpy().T)
    assert t.grad.shape == (2, 3)
    v = wp.array(np.arange(8, dtype=np.float32).reshape(2, 4), dtype=wp.vec4)
    assert v.view(float).shape == (2, 4)
    assert v.view(wp.mat22).numpy().shape == (2, 2, 2)
    assert a.view(wp.uint32).numpy().dtype == np.uint32
    with pytest.raises(TypeError, match="source dtype has size 4 bytes, but target dtype has size 2"):
        a.view(wp.uint16)
    with pytest.raises(TypeError, match="target scalar dtype float64 has size 8 bytes"):
        wp.zeros((2, 4)).view(wp.vec4d)


@wp.kernel
def _lengths(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.length(v[i])


def test_a_dtype_view_sees_the_gradient_too():
    x = np.arange(12, dtype=np.float32).reshape(4, 3) + 1.0
    w = wp.array(x, dtype=float, requires_grad=True)
    v = w.view(wp.vec3)
    assert v.requires_grad and v.grad.shape == (4,) and v.grad.dtype == wp.vec3
    out = wp.zeros(4, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_lengths, 4, inputs=[v, out])
    tape.backward(grads={out: wp.ones(4, dtype=float)})
    np.testing.assert_allclose(w.grad.numpy(), x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-6)
    assert not wp.zeros(4).view(wp.uint32).requires_grad


def test_components_regrouped_from_data():
    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert wp.array(data, dtype=wp.vec3).shape == (4, 2)
    assert wp.array(np.arange(12, dtype=np.float32).reshape(3, 4), dtype=wp.mat22).shape == (3,)
    strided = wp.array(np.arange(20, dtype=np.float32).reshape(4, 5))[:, 2:]
    np.testing.assert_array_equal(wp.array(strided, dtype=wp.vec3).numpy()[0], [2, 3, 4])
    same = wp.array(wp.array(data), dtype=typing_any())
    assert same.dtype is wp.float32 and same.shape == (4, 6)
    assert wp.from_numpy(np.ones((5, 3), np.float32)).dtype is wp.vec3
    assert wp.array(np.ones((5, 3, 1), np.float32), dtype=wp.vec3).shape == (5,)


def typing_any():
    import typing
    return typing.Any


def test_copy_false_aliases_only_matching_dtypes():
    src = np.ones(8, dtype=np.int32)
    alias = wp.array(src, dtype=int, copy=False)
    assert alias.ptr == src.ctypes.data
    converted = wp.array(np.ones(8, dtype=np.int64), dtype=int, copy=False)
    assert converted.ptr != src.ctypes.data and converted.is_contiguous


def test_list_gives_python_values():
    assert wp.full((2, 2), 7, dtype=wp.int64).list() == [7, 7, 7, 7]
    assert all(type(x) is float for x in wp.full(3, 1.5).list())
    vecs = wp.full(2, wp.vec3(1, 2, 3)).list()
    assert len(vecs) == 2 and list(vecs[1]) == [1, 2, 3]


def test_retain_grad_needs_requires_grad():
    with pytest.raises(ValueError):
        wp.zeros(3, retain_grad=True)
    a = wp.zeros(3, requires_grad=True, retain_grad=True)
    assert a.retain_grad
    a.requires_grad = False
    assert not a.retain_grad


def test_indexed_array_gathers_and_scatters():
    data = wp.array(np.arange(16, dtype=np.float32).reshape(4, 4))
    rows = wp.array([3, 1], dtype=wp.int32)
    picked = data[rows]
    assert isinstance(picked, wp.indexedarray) and picked.shape == (2, 4) and not picked.is_contiguous
    np.testing.assert_array_equal(picked.numpy(), data.numpy()[[3, 1]])
    both = data[rows, rows]
    np.testing.assert_array_equal(both.numpy(), [[15, 13], [7, 5]])
    column = data[1:, 2][wp.array([0, 2], dtype=wp.int32)]
    np.testing.assert_array_equal(column.numpy(), [6, 14])
    both.fill_(-1)
    assert data.numpy()[3, 3] == -1 and data.numpy()[0, 0] == 0
    dense = wp.clone(picked)
    assert dense.is_contiguous and dense.shape == (2, 4)
    wp.copy(picked, wp.zeros((2, 4)))
    assert data.numpy()[[1, 3]].sum() == 0
    with pytest.raises(IndexError, match="out of bounds"):
        data[wp.array([9], dtype=wp.int32)].numpy()
    with pytest.raises(RuntimeError, match="indexed"):
        wp.copy(wp.zeros(4), picked, src_offset=1, count=1)


def test_copy_adjoint_through_strided_views():
    src = wp.array(np.arange(6, dtype=np.float32), requires_grad=True)
    dest = wp.zeros(12, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(dest[::2], src)
    tape.backward(grads={dest: wp.array(np.arange(12, dtype=np.float32))})
    np.testing.assert_array_equal(src.grad.numpy(), np.arange(0, 12, 2))


def test_clone_and_assign_record_their_adjoint():
    x = wp.array(np.ones(3, np.float32), requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        z = wp.clone(x)
        y.assign(z)
    tape.backward(grads={y: wp.full(3, 2.0)})
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2])


def test_array_sum_and_inner():
    a = wp.array(np.arange(12, dtype=np.float64).reshape(4, 3), dtype=wp.vec3d)
    np.testing.assert_allclose(array_sum(a), [18, 22, 26])
    assert array_inner(a, a) == pytest.approx((np.arange(12.0) ** 2).sum())
    b = wp.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    out = wp.zeros((2, 1, 4))
    assert array_sum(b, out=out, axis=-2, value_count=2) is out
    np.testing.assert_allclose(out.numpy(), b.numpy()[:, :2].sum(axis=1, keepdims=True))
    np.testing.assert_allclose(array_inner(b, b, axis=2).numpy(), (b.numpy() ** 2).sum(2, keepdims=True))
    assert array_inner(wp.zeros(0), wp.zeros(0)) == 0.0
    with pytest.raises(IndexError, match=r"array_sum\(\) axis 3 is out of bounds"):
        array_sum(b, axis=3)
    with pytest.raises(RuntimeError, match=r"float32 or float64.*Unsupported data type: int32$"):
        array_sum(wp.zeros(3, dtype=wp.int32))


def test_whole_array_sum_and_inner_of_strided_views_read_the_view():
    # Warp 1.19 steps through a view's memory by the element size when axis is None, so its
    # array_sum(base[1::3]) sums base[1:8]; weft sums the view's own elements (numpy's answer).
    base = wp.array(np.arange(20, dtype=np.float32))
    assert array_sum(base[1::3]) == pytest.approx(np.arange(20)[1::3].sum())  # 70, not Warp's 28
    assert array_inner(base[::2], base[1::2]) == pytest.approx(np.dot(np.arange(0, 20, 2), np.arange(1, 20, 2)))
    grid = wp.array(np.arange(12, dtype=np.float64).reshape(3, 4))
    assert array_sum(grid[:, 1:3]) == pytest.approx(np.arange(12).reshape(3, 4)[:, 1:3].sum())


def test_reduction_errors_say_what_was_found_then_the_rule():
    """What was found first, Warp's words for the rule last (Warp's tests anchor them)."""
    a = wp.zeros(4)
    with pytest.raises(RuntimeError,
                       match=r"^array_sum\(\) got an out array of type float64: out array should have type float32$"):
        array_sum(a, out=wp.zeros(1, dtype=wp.float64))
    with pytest.raises(RuntimeError,
                       match=r"^array_inner\(\) got an out array of shape \(2,\): out array should have shape \(1,\)$"):
        array_inner(a, a, out=wp.zeros(2))
    with pytest.raises(RuntimeError, match=r"A and b array data types do not match \(float32 vs float64\)$"):
        array_inner(a, wp.zeros(4, dtype=wp.float64))
    with pytest.raises(RuntimeError, match=r"array_inner\(\) sums .*Unsupported data type: int32$"):
        array_inner(wp.zeros(4, dtype=int), wp.zeros(4, dtype=int))


@wp.kernel
def double_into(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 2.0 * x[i]


@wp.kernel
def triple_into(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 3.0 * x[i]


@wp.kernel
def double_into_view(x: wp.array(dtype=float), y: wp.array2d(dtype=float)):
    i = wp.tid()
    row = y[0:1, :]
    row[0, i] = 2.0 * x[i]


@pytest.mark.parametrize("retain", [False, True])
def test_retain_grad_keeps_the_adjoint_of_overwritten_arrays(retain):
    xa, xb = wp.ones(3, requires_grad=True), wp.ones(3, requires_grad=True)
    y = wp.zeros(3, requires_grad=True, retain_grad=retain)
    with wp.Tape() as tape:
        wp.launch(double_into, 3, inputs=[xa, y])
        wp.launch(triple_into, 3, inputs=[xb, y])  # overwrites y: xa no longer matters...
    tape.backward(grads={y: wp.ones(3)})
    # ...unless y keeps its gradient (Warp's retain_grad), which then reaches xa too
    assert xa.grad.numpy().tolist() == ([2.0] * 3 if retain else [0.0] * 3)
    assert xb.grad.numpy().tolist() == [3.0] * 3
    assert y.grad.numpy().tolist() == ([1.0] * 3 if retain else [0.0] * 3)


def test_retain_grad_covers_views_made_in_the_kernel():
    # A deliberate difference from Warp, which drops the flag on views made inside a kernel
    # (its test_retain_grad_slice_view_store): in weft the flag belongs to the memory, so a
    # store through a view of a retain_grad array keeps the gradient as a direct store does.
    x = wp.ones(3, requires_grad=True)
    y = wp.zeros((1, 3), requires_grad=True, retain_grad=True)
    with wp.Tape() as tape:
        wp.launch(double_into_view, 3, inputs=[x, y])
    tape.backward(grads={y: wp.ones((1, 3))})
    assert x.grad.numpy().tolist() == [2.0] * 3 and y.grad.numpy().tolist() == [[1.0] * 3]


@wp.kernel
def square_row(y: wp.array2d(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    z[i] = y[0, i] * y[0, i]


def _loss_through_view(x, y, nudge=None):
    """sum(z) for z = y_row^2, y_row = 2x written through a view; `nudge` is added to y
    after the write (the intermediate) when given."""
    z = wp.zeros(3, requires_grad=True)
    wp.launch(double_into_view, 3, inputs=[x, y])
    if nudge is not None:
        y.numpy()[0] += nudge
    wp.launch(square_row, 3, inputs=[y, z])
    return float(z.numpy().astype(np.float64).sum())


@pytest.mark.parametrize("retain", [False, True])
def test_retain_grad_through_views_is_the_gradient_of_the_intermediate(retain):
    # Finite differences name what y.grad means: without retain_grad, the gradient of the loss
    # with respect to y's contents before the launches (zero: the kernel overwrites them);
    # with it, with respect to y as the first launch left it (2 y = 4 x here).
    x = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
    y = wp.zeros((1, 3), requires_grad=True, retain_grad=retain)
    z = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(double_into_view, 3, inputs=[x, y])
        wp.launch(square_row, 3, inputs=[y, z])
    tape.backward(grads={z: wp.ones(3)})
    eps, fd = 1e-2, []
    for k in range(3):
        e = np.zeros(3, dtype=np.float32)
        e[k] = eps
        if retain:  # perturb the intermediate
            up, down = (_loss_through_view(x, wp.zeros((1, 3)), s * e) for s in (1, -1))
        else:  # perturb y's initial contents
            up, down = (_loss_through_view(x, wp.array((s * e)[None, :], dtype=float)) for s in (1, -1))
        fd.append((up - down) / (2 * eps))
    np.testing.assert_allclose(y.grad.numpy()[0], fd, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 16.0, 24.0], rtol=1e-6)  # d(4x^2)/dx


@wp.kernel
def add_one_vec(a: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a[i] = a[i] + wp.vec3(1.0)


def test_numpy_arrays_are_kernel_arguments_in_place():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    wp.launch(add_one_vec, 2, inputs=[data])
    np.testing.assert_array_equal(data, np.arange(1, 7).reshape(2, 3))
    with pytest.raises(TypeError, match="holds float64 values"):
        wp.launch(add_one_vec, 2, inputs=[np.zeros((2, 3))])  # no silent conversion


def test_subscript_annotations_with_dimension_counts():
    from typing import Literal
    assert wp.array[float, Literal[2]] is wp.array(dtype=float, ndim=2)
    assert wp.array[wp.vec3, 3] is wp.array3d(dtype=wp.vec3)
    assert wp.indexedarray[wp.float64, Literal[2]] == wp.indexedarray2d(dtype=wp.float64)
    with pytest.raises(TypeError, match="dimension count"):
        wp.array[float, "2"]


@wp.kernel
def total(y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    wp.atomic_add(loss, 0, y[wp.tid()])


def test_overlapping_self_copy_has_the_analytic_gradient():
    # Warp leaves the incoming gradient in place here ([1, 1, 1, 1], its test
    # test_tape_copy_adjoint_out_of_scope); the copy y[1:4] = y[0:3] makes y0 count twice
    # and y3 not at all, so weft gives [2, 1, 1, 0] (a deliberate difference).
    y = wp.array(np.arange(1.0, 5.0, dtype=np.float32), requires_grad=True)
    loss = wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(y, y, dest_offset=1, src_offset=0, count=3)
        wp.launch(total, 4, inputs=[y, loss])
    tape.backward(loss)
    assert y.numpy().tolist() == [1, 1, 2, 3] and y.grad.numpy().tolist() == [2, 1, 1, 0]
