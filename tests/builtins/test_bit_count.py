"""`bit_count`: the set bits of an integer in its own width (two's complement for signed
types), as an int32, in kernels and in Python scope; floats, bools and vectors are refused."""

import numpy as np
import pytest

import weft as wp

INT_TYPES = (wp.int8, wp.uint8, wp.int16, wp.uint16, wp.int32, wp.uint32, wp.int64, wp.uint64)


def _patterns(width):
    """Every bit pattern for widths up to 16; edge cases and random words above."""
    unsigned = np.dtype(f"uint{width}")
    if width <= 16:
        return np.arange(1 << width, dtype=unsigned)
    mask = (1 << width) - 1
    edge = [0, 1, mask, mask - 1, 1 << (width - 1), (1 << (width - 1)) - 1, mask // 3]
    edge += [1 << b for b in range(width)]
    rng = np.random.default_rng(7)
    random = np.frombuffer(rng.bytes(200 * width // 8), dtype=unsigned)
    return np.concatenate((np.array(edge, dtype=unsigned), random))


@pytest.mark.parametrize("dtype", INT_TYPES, ids=lambda t: t.__name__)
def test_kernel_counts_every_width(dtype):
    @wp.kernel(module="unique")
    def count(values: wp.array(dtype=dtype), out: wp.array(dtype=wp.int32)):
        i = wp.tid()
        out[i] = wp.bit_count(values[i])

    np_dtype = np.dtype(wp.dtype_to_numpy(dtype))
    patterns = _patterns(np_dtype.itemsize * 8)
    values = wp.array(patterns.view(np_dtype), dtype=dtype)
    out = wp.zeros(len(patterns), dtype=wp.int32)
    wp.launch(count, dim=len(patterns), inputs=[values], outputs=[out])
    expected = np.array([int(p).bit_count() for p in patterns], dtype=np.int32)
    np.testing.assert_array_equal(out.numpy(), expected)


def test_result_is_int32_and_literal_is_int32():
    @wp.kernel(module="unique")
    def k(out: wp.array(dtype=wp.int32), x: wp.int64):
        n = wp.bit_count(x)
        out[0] = n + wp.bit_count(-1)  # a Python int literal counts as int32

    out = wp.zeros(1, dtype=wp.int32)
    wp.launch(k, dim=1, inputs=[out, wp.int64(-2)])
    assert out.numpy()[0] == 63 + 32


@pytest.mark.parametrize("dtype", INT_TYPES, ids=lambda t: t.__name__)
def test_python_scope(dtype):
    width = np.dtype(wp.dtype_to_numpy(dtype)).itemsize * 8
    for value, expected in ((0, 0), (45, 4), (-1, width), (-2, width - 1), (1 << (width - 1), 1)):
        assert wp.bit_count(dtype(value)) == expected
    assert wp.bit_count(45) == 4 and wp.bit_count(-1) == 32


@pytest.mark.parametrize("dtype", (wp.float32, wp.float64, wp.bool, wp.vec2i), ids=lambda t: t.__name__)
def test_python_scope_rejects_non_integers(dtype):
    with pytest.raises(RuntimeError, match="Couldn't find a function 'bit_count' compatible"):
        wp.bit_count(dtype(0))


def test_kernel_rejects_float():
    @wp.kernel(module="unique")
    def k(x: wp.float32, out: wp.array(dtype=wp.int32)):
        out[0] = wp.bit_count(x)

    with pytest.raises(RuntimeError, match="Couldn't find function overload for 'bit_count'.*float32"):
        wp.launch(k, dim=1, inputs=[wp.float32(45.0), wp.zeros(1, dtype=wp.int32)])


def test_not_differentiable_but_int_path_does_not_block_gradients():
    """An integer count in a differentiated kernel carries no gradient and needs no rule."""
    @wp.kernel(module="unique")
    def k(x: wp.array(dtype=float), bits: wp.array(dtype=wp.int32), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * float(wp.bit_count(bits[i]))

    x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    bits = wp.array([7, -1], dtype=wp.int32)
    y = wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k, dim=2, inputs=[x, bits, y])
    tape.backward(grads={y: wp.ones(2, dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 32.0])


@pytest.mark.parametrize("dtype", (wp.uint8, wp.int16, wp.int32, wp.int64), ids=lambda t: t.__name__)
def test_in_a_loop_on_simd_lanes(dtype):
    """A loop makes the kernel run threads in SIMD lanes (codegen/spmd.py): the count is
    then one vector ctpop, narrowed or widened to int32 lanes."""
    @wp.kernel(module="unique")
    def k(v: wp.array(dtype=dtype), n: int, out: wp.array(dtype=wp.int32)):
        i = wp.tid()
        s = wp.int32(0)
        for j in range(n):
            s += wp.bit_count(v[i] ^ dtype(j))
        out[i] = s

    np_dtype = np.dtype(wp.dtype_to_numpy(dtype))
    unsigned = np.dtype(f"uint{np_dtype.itemsize * 8}")
    bits = np.frombuffer(np.random.default_rng(3).bytes(999 * np_dtype.itemsize), dtype=unsigned)
    out = wp.zeros(len(bits), dtype=wp.int32)
    wp.launch(k, dim=len(bits), inputs=[wp.array(bits.view(np_dtype), dtype=dtype), 6, out])
    expected = [sum(int(b ^ unsigned.type(j)).bit_count() for j in range(6)) for b in bits]
    np.testing.assert_array_equal(out.numpy(), expected)
