"""Arrays inside kernels: slices with Python's rules (negative and omitted bounds,
negative steps, runtime bounds), shape past ndim reading 0, `ptr` and arrays made from an
address, null arrays as false, gradients through a slice, and the errors (a constant zero
step at compile time, a runtime zero step and a bad integer key after the launch)."""

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError


@wp.kernel
def slices_1d(arr: wp.array(dtype=int), out: wp.array(dtype=int)):
    sub = arr[:3]
    out[0] = sub.shape[0]
    out[1] = sub.shape[1]  # past ndim: 0
    out[2] = sub[2]
    sub = arr[3::-1]
    out[3] = sub.shape[0]
    out[4] = sub[3]
    sub = arr[::-3][::2]
    out[5] = sub.shape[0]
    out[6] = sub[0]
    out[7] = sub[2]
    out[8] = arr[-2:][0]
    out[9] = arr[5:100].shape[0]  # bounds clamp, as in Python


def test_slices_follow_python_rules():
    arr, out = wp.array(np.arange(16, dtype=np.int32)), wp.zeros(10, dtype=int)
    wp.launch(slices_1d, 1, inputs=[arr, out])
    assert out.numpy().tolist() == [3, 0, 2, 4, 0, 3, 15, 3, 14, 11]


@wp.kernel
def slices_2d(arr: wp.array2d(dtype=int), out: wp.array(dtype=int)):
    row = arr[-4, :3]
    out[0] = row[2]
    block = arr[3:5, 3:1:-1]
    out[1] = block[1, 1]
    out[2] = block.shape[1]
    out[3] = arr[::4][:, ::-3][1, 1]


def test_slices_mixed_with_indices():
    arr, out = wp.array(np.arange(32, dtype=np.int32).reshape(8, 4)), wp.zeros(4, dtype=int)
    wp.launch(slices_2d, 1, inputs=[arr, out])
    assert out.numpy().tolist() == [18, 18, 2, 16]


@wp.kernel
def runtime_slice(a: wp.array2d(dtype=int), start: int, stop: int, step: int, out: wp.array(dtype=int)):
    view = a[start:stop:step, 1]
    out[0] = view.shape[0]
    out[1] = view[0]
    out[2] = view[view.shape[0] - 1]


def test_runtime_bounds_and_steps():
    a, out = wp.array(np.arange(18, dtype=np.int32).reshape(6, 3)), wp.zeros(3, dtype=int)
    wp.launch(runtime_slice, 1, inputs=[a, 1, 6, 2, out])
    assert out.numpy().tolist() == [3, 4, 16]
    wp.launch(runtime_slice, 1, inputs=[a, 5, 0, -2, out])
    assert out.numpy().tolist() == [3, 16, 4]
    with pytest.raises(AssertionError, match="slice step cannot be zero"):
        wp.launch(runtime_slice, 1, inputs=[a, 0, 6, 0, out])


@wp.kernel
def bad_row(a: wp.array2d(dtype=int), r: int, out: wp.array(dtype=int)):
    out[0] = a[r, :].shape[0]


def test_integer_key_of_a_slice_is_bounds_checked():
    a, out = wp.zeros((3, 2), dtype=int), wp.zeros(1, dtype=int)
    wp.launch(bad_row, 1, inputs=[a, -1, out])  # negative keys count from the end
    assert out.numpy()[0] == 2
    with pytest.raises(IndexError, match="out of bounds"):
        wp.launch(bad_row, 1, inputs=[a, 3, out])


def test_constant_zero_step_is_a_compile_error():
    @wp.kernel
    def zero_step(a: wp.array(dtype=int)):
        view = a[0:2:0]  # noqa: F841

    with pytest.raises(CompileError, match="Slice step cannot be zero"):
        wp.launch(zero_step, 1, inputs=[wp.zeros(2, dtype=int)])


@wp.kernel
def through_pointer(src: wp.array2d(dtype=wp.float32), seen: wp.array(dtype=int)):
    alias = wp.array(ptr=src.ptr, shape=(2, 3), dtype=wp.float32)
    alias[1, 2] = 5.0
    if src:
        seen[0] = 1
    if not seen:
        seen[1] = 1


def test_pointer_arrays_and_truth():
    src, seen = wp.zeros((2, 3)), wp.zeros(2, dtype=int)
    wp.launch(through_pointer, 1, inputs=[src, seen])
    assert src.numpy()[1, 2] == 5.0 and seen.numpy().tolist() == [1, 0]


@wp.kernel
def null_is_false(a: wp.array(dtype=float), flag: wp.array(dtype=int)):
    if not a:
        flag[0] = 7


def test_null_array_is_false():
    flag = wp.zeros(1, dtype=int)
    wp.launch(null_is_false, 1, inputs=[None, flag])
    assert flag.numpy()[0] == 7


@wp.kernel
def store_through_slice(x: wp.array(dtype=float), y: wp.array2d(dtype=float)):
    i = wp.tid()
    row = y[1:2, ::-1]
    row[0, i] = 2.0 * x[i] * x[i]


def test_gradient_through_a_slice():
    x = wp.array(np.arange(4, dtype=np.float32), requires_grad=True)
    y = wp.zeros((2, 4), requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(store_through_slice, 4, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy()[1], [18, 8, 2, 0])
    seed = np.zeros((2, 4), np.float32)
    seed[1] = [1, 2, 3, 4]
    tape.backward(grads={y: wp.array(seed)})
    # x[i] lands in y[1, 3 - i]: dy/dx = 4 x, seeded with seed[1, 3 - i]
    np.testing.assert_array_equal(x.grad.numpy(), 4 * np.arange(4) * np.array([4, 3, 2, 1]))


@wp.kernel
def search(arr: wp.array(dtype=float), values: wp.array(dtype=float), found: wp.array(dtype=int),
           ranged: wp.array(dtype=int)):
    i = wp.tid()
    found[i] = wp.lower_bound(arr, values[i])
    ranged[i] = wp.lower_bound(arr, 1, 4, values[i])


def test_lower_bound_is_a_binary_search():
    arr = wp.array(np.arange(6, dtype=np.float32))
    values = wp.array(np.array([-0.1, 0.0, 2.5, 4.0, 5.0, 5.5], np.float32))
    found, ranged = wp.zeros(6, dtype=int), wp.zeros(6, dtype=int)
    wp.launch(search, 6, inputs=[arr, values, found, ranged])
    # past the last element: the last index (Warp's "closest element")
    assert found.numpy().tolist() == [0, 0, 3, 4, 5, 5]
    assert ranged.numpy().tolist() == [1, 1, 3, 3, 3, 3]
