"""float16 to and from every other scalar type, forward and adjoint. LLVM lowers most of these
conversions to compiler-rt calls that a JIT process lacks (a call to address 0: the process
died with a segmentation fault); weft converts through float32 instead."""

import numpy as np
import pytest

import weft as wp

OTHERS = [wp.float64, wp.int8, wp.int16, wp.int32, wp.int64, wp.uint8, wp.uint16, wp.uint32, wp.uint64]


@pytest.mark.parametrize("other", OTHERS, ids=lambda t: t.name)
def test_conversions_to_and_from_half(other):
    @wp.kernel
    def convert(h: wp.array(dtype=wp.float16), x: wp.array(dtype=other),
                to_other: wp.array(dtype=other), to_half: wp.array(dtype=wp.float16)):
        i = wp.tid()
        to_other[i] = other(h[i])
        to_half[i] = wp.float16(x[i])

    h = wp.array(np.array([0.0, 1.5, 7.0, 100.25], np.float16), dtype=wp.float16)
    x = wp.array(np.array([0, 1, 7, 100], other.np_dtype), dtype=other)
    to_other, to_half = wp.zeros(4, dtype=other), wp.zeros(4, dtype=wp.float16)
    wp.launch(convert, 4, inputs=[h, x, to_other, to_half])
    np.testing.assert_array_equal(to_other.numpy(), h.numpy().astype(np.float64).astype(other.np_dtype))
    np.testing.assert_array_equal(to_half.numpy(), x.numpy().astype(np.float16))


def test_adjoint_of_a_cast_from_half_to_double():
    @wp.kernel
    def widen(h: wp.array(dtype=wp.float16), d: wp.array(dtype=wp.float64)):
        i = wp.tid()
        d[i] = wp.float64(h[i]) * 3.0

    h = wp.array(np.ones(3, np.float16), dtype=wp.float16, requires_grad=True)
    d = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(widen, 3, inputs=[h, d])
    tape.backward(grads={d: wp.array(np.ones(3), dtype=wp.float64)})
    np.testing.assert_array_equal(h.grad.numpy(), [3.0, 3.0, 3.0])
