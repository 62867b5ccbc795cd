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
