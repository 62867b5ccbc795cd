"""cast(a, dtype): bit reinterpretation of scalars, in kernels and in Python."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def reinterpret(bits: wp.array(dtype=wp.int32), out: wp.array(dtype=float), back: wp.array(dtype=wp.int32)):
    i = wp.tid()
    out[i] = wp.cast(bits[i], wp.float32)
    back[i] = wp.cast(out[i], wp.int32)


def test_cast_reinterprets_bits():
    values = np.array([1.25, -2.0, 3.5e-3], dtype=np.float32)
    bits = wp.array(values.view(np.int32))
    out, back = wp.zeros(3), wp.zeros(3, dtype=wp.int32)
    wp.launch(reinterpret, dim=3, inputs=[bits, out, back])
    np.testing.assert_array_equal(out.numpy(), values)
    np.testing.assert_array_equal(back.numpy(), values.view(np.int32))
    assert wp.cast(np.int32(0x3FA00000), wp.float32) == 1.25


def test_cast_needs_the_same_size():
    @wp.kernel
    def wrong_size(out: wp.array(dtype=float)):
        out[0] = wp.cast(wp.int16(1), wp.float32)

    with pytest.raises(TypeError, match="the same size"):
        wp.launch(wrong_size, dim=1, inputs=[wp.zeros(1)])


@wp.struct
class Pun:
    f: wp.float16
    i: wp.int16


@wp.kernel
def pun(out: wp.array(dtype=wp.int32), vec: wp.array(dtype=wp.vec2h)):
    p = Pun()
    p.f = wp.float16(2.0)
    p.i = wp.int16(123)
    out[0] = wp.cast(p, wp.int32)
    vec[0] = wp.cast(out[0], wp.vec2h)


def test_cast_of_structs_and_vectors():
    out, vec = wp.zeros(1, dtype=wp.int32), wp.zeros(1, dtype=wp.vec2h)
    wp.launch(pun, dim=1, inputs=[out, vec])
    assert out.numpy()[0] == 0x007B4000
    np.testing.assert_array_equal(vec.numpy()[0], [2.0, np.int16(123).view(np.float16)])


def test_cast_is_not_differentiable():
    @wp.kernel
    def through_bits(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        halves = wp.cast(x[0], wp.vec2h)
        y[0] = float(halves[0]) + float(halves[1])

    x, y = wp.ones(1, requires_grad=True), wp.zeros(1, requires_grad=True)
    with pytest.raises(wp.WarpCodegenError, match="bitcast"):
        wp.launch(through_bits, dim=1, inputs=[x, y], adjoint=True, adj_inputs=[None, None])

