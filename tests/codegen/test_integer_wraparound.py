"""int8/int16 arithmetic wraps to the type's width, as in Warp's C++ (computed in int, then
truncated). The LLVM `nsw` flag (overflow is poison) is only right for int32/int64: on an
int16 square it let LLVM widen `int32(a * a)` with a zero extension (40000, not -25536)."""

import numpy as np

import weft as wp


@wp.kernel
def narrow_products(x: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32, ndim=2)):
    i = wp.tid()
    a = wp.int16(x[i])
    c = wp.int8(x[i])
    out[i, 0] = wp.int32(a * a)
    out[i, 1] = wp.int32(a + a)
    out[i, 2] = wp.int32(a * a - a)
    out[i, 3] = wp.int32(c * c)
    out[i, 4] = wp.int32(c * c + c)
    out[i, 5] = wp.int32(wp.int64(a * a))


def wrap(v, bits):
    v = v & ((1 << bits) - 1)
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def test_int16_and_int8_arithmetic_wraps_before_widening():
    xs = [200, -200, 30000, 181, 1000, -5, 100, 127]
    out = wp.zeros((len(xs), 6), dtype=wp.int32)
    wp.launch(narrow_products, dim=len(xs), inputs=[wp.array(np.array(xs, dtype=np.int32))], outputs=[out])
    expected = []
    for x in xs:
        a, c = wrap(x, 16), wrap(x, 8)
        expected.append([wrap(a * a, 16), wrap(a + a, 16), wrap(wrap(a * a, 16) - a, 16), wrap(c * c, 8),
                         wrap(wrap(c * c, 8) + c, 8), wrap(a * a, 16)])
    np.testing.assert_array_equal(out.numpy(), np.array(expected))
