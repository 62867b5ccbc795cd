"""`wp.launch`: launch shapes (1 to 4 dimensions, tid() linear or unpacked), empty launches,
inputs + outputs, argument conversions, and repeated launches reusing packed arguments."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def first_tid(out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = i


@wp.kernel
def tid2(out: wp.array2d(dtype=int)):
    i, j = wp.tid()
    out[i, j] = i * 10 + j


@wp.kernel
def tid3(out: wp.array3d(dtype=int)):
    i, j, k = wp.tid()
    out[i, j, k] = i * 100 + j * 10 + k


@wp.kernel
def tid4(out: wp.array4d(dtype=int)):
    i, j, k, l = wp.tid()
    out[i, j, k, l] = i * 1000 + j * 100 + k * 10 + l


@wp.kernel
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a * x[i] + y[i]


@pytest.mark.parametrize("dim", [24, (24,), [24], (4, 6), (2, 3, 4), (2, 3, 2, 2), (1, 1, 1, 24),
                                 np.int64(24), (np.int32(4), 6)])
def test_tid_is_the_leading_index(dim):
    """`i = wp.tid()`: the thread's first launch index (Warp 1.19), which in a 1-D launch
    is the linear one."""
    out = wp.full(24, -1, dtype=int)
    wp.launch(first_tid, dim, inputs=[out])
    first = int(np.atleast_1d(np.asarray(dim))[0])
    np.testing.assert_array_equal(out.numpy(), [*range(first), *[-1] * (24 - first)])


@pytest.mark.parametrize("kernel, shape", [(tid2, (3, 4)), (tid3, (2, 3, 4)), (tid4, (2, 3, 2, 2))])
def test_unpacked_tid_gives_row_major_indices(kernel, shape):
    out = wp.full(shape, -1, dtype=int)
    wp.launch(kernel, shape, inputs=[out])
    index = np.indices(shape)
    weights = [10 ** (len(shape) - 1 - d) for d in range(len(shape))]
    np.testing.assert_array_equal(out.numpy(), sum(w * ix for w, ix in zip(weights, index)))


def test_unpacked_tid_needs_a_launch_of_that_many_dimensions():
    out = wp.zeros((3, 4), dtype=int)
    wp.launch(tid2, (2, 2, 3), inputs=[out])  # (Warp 1.19: the first two of the three indices)
    assert out.numpy()[:2, :2].tolist() == [[0, 1], [10, 11]] and not out.numpy()[2:].any()


def test_missing_launch_dimensions_are_one_and_trailing_ones_are_dropped():
    """As in Warp 1.19: `i, j = tid()` in a 1D launch gets j = 0; a launch with extra
    trailing dimensions of 1 (launch_tiled's block dimension on the CPU) runs as without them."""
    out = wp.zeros((3, 1), dtype=int)
    wp.launch(tid2, 3, inputs=[out])
    np.testing.assert_array_equal(out.numpy()[:, 0], [0, 10, 20])
    out = wp.zeros((3, 4), dtype=int)
    wp.launch(tid2, (3, 4, 1), inputs=[out])
    np.testing.assert_array_equal(out.numpy(), np.arange(3)[:, None] * 10 + np.arange(4))


@wp.kernel
def scaled_tid2(out: wp.array2d(dtype=float), s: float):
    i, j = wp.tid()
    out[i, j] = float(i * 10 + j) * s


def test_dim_as_a_numpy_array_and_a_0d_tensor_as_a_scalar():
    torch = pytest.importorskip("torch")
    out = wp.zeros((2, 3), dtype=float)
    wp.launch(scaled_tid2, np.array([2, 3]), inputs=[out, torch.tensor(2.0)])  # (as Warp takes them)
    np.testing.assert_array_equal(out.numpy(), 2.0 * (np.arange(2)[:, None] * 10 + np.arange(3)))


@pytest.mark.parametrize("dim", [0, (0,), (0, 5), (5, 0), (3, 0, 2, 1)])
def test_empty_launch_runs_nothing(dim):
    out = wp.full(5, -1, dtype=int)
    wp.launch(first_tid, dim, inputs=[out])
    assert (out.numpy() == -1).all()


def test_empty_launch_still_validates_arguments():
    with pytest.raises(TypeError, match="kernel 'first_tid'"):
        wp.launch(first_tid, 0, inputs=[1.0])


def test_larger_launch_shapes():
    out = wp.zeros((64, 65), dtype=int)
    wp.launch(tid2, (64, 65), inputs=[out])
    np.testing.assert_array_equal(out.numpy(), np.add.outer(np.arange(64) * 10, np.arange(65)))
    big = wp.zeros(100_003, dtype=int)
    wp.launch(first_tid, 100_003, inputs=[big])
    np.testing.assert_array_equal(big.numpy(), np.arange(100_003))


def test_inputs_and_outputs_are_concatenated():
    x = wp.array(np.arange(5, dtype=np.float32))
    y = wp.ones(5)
    expected = 2 * np.arange(5) + 1
    for split in range(5):  # the same four arguments, cut anywhere
        out = wp.zeros(5)
        args = [x, y, 2.0, out]
        wp.launch(saxpy, 5, inputs=args[:split], outputs=args[split:])
        np.testing.assert_array_equal(out.numpy(), expected, err_msg=f"split {split}")
    out = wp.zeros(5)
    wp.launch(saxpy, dim=5, inputs=(x, y), outputs=(2.0, out), device="cpu")  # tuples and keywords
    np.testing.assert_array_equal(out.numpy(), expected)
    out = wp.zeros(5)
    wp.launch(saxpy, 5, inputs=None, outputs=[x, y, 2.0, out])  # None for an empty list
    wp.launch(saxpy, 5, inputs=[x, y, 2.0, out], outputs=None)
    np.testing.assert_array_equal(out.numpy(), expected)


def test_scalar_argument_conversions():
    x, y, out = wp.ones(3), wp.zeros(3), wp.zeros(3)
    for a in (2, 2.0, np.float32(2), np.float64(2), np.int64(2), np.array(2.0)):
        out.zero_()
        wp.launch(saxpy, 3, inputs=[x, y, a, out])
        assert out.numpy().tolist() == [2, 2, 2]


def test_device_arguments():
    x, y, out = wp.ones(3), wp.zeros(3), wp.zeros(3)
    for device in (None, "cpu", wp.get_device(), wp.get_device("cpu")):
        wp.launch(saxpy, 3, inputs=[x, y, 3.0, out], device=device)
        assert out.numpy().tolist() == [3, 3, 3]


def test_repeated_launches_see_new_values():
    """Arguments identical to the last launch are not repacked; everything else must be."""
    x = wp.array(np.arange(4, dtype=np.float32))
    y = wp.zeros(4)
    out1, out2 = wp.zeros(4), wp.zeros(4)
    for k, (a, out) in enumerate([(1.0, out1), (2.0, out1), (2.0, out2), (3.0, out2), (3, out1)]):
        wp.launch(saxpy, 4, inputs=[x, y, a, out])
        np.testing.assert_array_equal(out.numpy(), a * np.arange(4), err_msg=f"launch {k}")
    x.numpy()[:] = 10  # new contents in the same array
    wp.launch(saxpy, 4, inputs=[x, y, 3, out1])
    assert out1.numpy().tolist() == [30] * 4
    short = wp.array(np.arange(2, dtype=np.float32))  # another shape
    wp.launch(saxpy, 2, inputs=[short, wp.zeros(2), 1.0, out1])
    assert out1.numpy().tolist() == [0, 1, 30, 30]


@wp.struct
class Inner:
    shift: wp.vec3
    count: wp.int8


@wp.struct
class Outer:
    gain: float
    inner: Inner
    values: wp.array(dtype=wp.vec3)


@wp.kernel
def scaled_shift(s: Outer, offset: wp.vec3, n: wp.uint16, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = s.values[i] * s.gain + s.inner.shift * float(s.inner.count) + offset * float(n)


def test_struct_vector_and_integer_arguments_are_packed_at_every_launch():
    """The launch packs a struct's fields through their types' fast paths: nested structs,
    vectors changed in place between launches, integers at their type's bounds; values a
    fast path does not take still convert or are refused as before."""
    s = Outer()
    s.gain = 2.0
    s.values = wp.array(np.ones((3, 3), np.float32), dtype=wp.vec3)
    s.inner.shift = wp.vec3(1.0, 2.0, 3.0)
    s.inner.count = 127
    out = wp.zeros(3, dtype=wp.vec3)
    offset = wp.vec3(0.0, 0.0, 1.0)
    wp.launch(scaled_shift, 3, inputs=[s, offset, 65535, out])
    np.testing.assert_array_equal(out.numpy()[0], [2.0 + 127, 2.0 + 254, 2.0 + 381 + 65535])
    s.inner.shift[0] = -1.0  # (in place: the struct object itself is unchanged)
    offset[2] = 0.0
    s.inner.count = -128
    wp.launch(scaled_shift, 3, inputs=[s, offset, np.uint16(1), out])
    np.testing.assert_array_equal(out.numpy()[0], [2.0 + 128, 2.0 - 256, 2.0 - 384])
    wp.launch(scaled_shift, 3, inputs=[s, (0.0, 0.0, 2.0), True, out])  # (a tuple, a bool)
    np.testing.assert_array_equal(out.numpy()[0], [2.0 + 128, 2.0 - 256, 2.0 - 384 + 2.0])
    with pytest.raises(ValueError, match="argument 'n': expected an integer in the range of uint16"):
        wp.launch(scaled_shift, 3, inputs=[s, offset, 65536, out])
    wp.launch(scaled_shift, 3, inputs=[s, wp.vec3(0.0, 0.0, 1.0), -1, out])  # (all ones, as C and Warp convert -1)
    np.testing.assert_array_equal(out.numpy()[0], [2.0 + 128, 2.0 - 256, 2.0 - 384 + 65535])
    with pytest.raises(ValueError, match="argument 'n': expected an integer in the range of uint16"):
        wp.launch(scaled_shift, 3, inputs=[s, offset, -32769, out])
    with pytest.raises(TypeError, match="argument 's': expected an instance of struct Outer"):
        wp.launch(scaled_shift, 3, inputs=[Inner(), offset, 1, out])


def test_changing_the_launch_shape():
    out = wp.zeros(24, dtype=int)
    for dim in (3, 24, (5, 2), 7):
        out.fill_(-1)
        wp.launch(first_tid, dim, inputs=[out])
        n = int(np.atleast_1d(dim)[0])
        np.testing.assert_array_equal(out.numpy(), [*range(n), *[-1] * (24 - n)])


def test_launch_returns_none_and_kernels_are_not_callable():
    assert wp.launch(first_tid, 1, inputs=[wp.zeros(1, dtype=int)]) is None
    with pytest.raises(RuntimeError, match="weft.launch"):
        first_tid(wp.zeros(1, dtype=int))
    with pytest.raises(TypeError, match="expected a @weft.kernel"):
        wp.launch(lambda a: a, 1, inputs=[1])


@wp.kernel
def uses_shape(a: wp.array2d(dtype=float), out: wp.array(dtype=int)):
    out[0] = a.shape[0]
    out[1] = a.shape[1]
    out[2] = len(a)


def test_kernels_see_array_shapes():
    out = wp.zeros(3, dtype=int)
    wp.launch(uses_shape, 1, inputs=[wp.zeros((5, 7)), out])
    assert out.numpy().tolist() == [5, 7, 5]
    wp.launch(uses_shape, 1, inputs=[wp.zeros((6, 8))[1:4, ::2], out])
    assert out.numpy().tolist() == [3, 4, 3]


@wp.kernel
def _add_optional(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    v = a[i]
    if b:
        v += 10.0 * b[i]
    out[i] = v


def test_an_array_made_from_a_dtype_alone_passes_as_a_null_array():
    # (in Warp `wp.array(dtype=float)` is an empty array instance; in weft it is the annotation)
    a, out = wp.array([1.0, 2.0, 3.0], dtype=float), wp.zeros(3)
    wp.launch(_add_optional, 3, inputs=[a, wp.array(dtype=float), out])
    assert out.numpy().tolist() == [1.0, 2.0, 3.0]
    wp.launch(_add_optional, 3, inputs=[a, a, out])
    assert out.numpy().tolist() == [11.0, 22.0, 33.0]
