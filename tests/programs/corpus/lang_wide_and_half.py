"""64-bit integers and float16 scalars: uint64 comparisons and shifts above 2**63, int64 // and %
with negative divisors, abs/sign/min/clamp on int64, conversions from uint64 and int64 to
narrower ints and floats, and float16 arithmetic and math builtins (each op rounded to
half precision) including a vec3h length."""

import numpy as np
import warp as wp


@wp.kernel
def wide_and_half(a: wp.array(dtype=wp.uint64), b: wp.array(dtype=wp.int64), h: wp.array(dtype=wp.float16),
      out: wp.array(dtype=wp.int64, ndim=2), ho: wp.array(dtype=wp.float16, ndim=2)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[i, 0] = wp.int64(x > wp.uint64(9223372036854775808))
    out[i, 1] = wp.int64(wp.max(x, wp.uint64(5)) % wp.uint64(1000))
    out[i, 2] = y // wp.int64(-3)
    out[i, 3] = y % wp.int64(-3)
    out[i, 4] = wp.abs(y) + wp.int64(wp.sign(y))
    out[i, 5] = wp.min(y, wp.int64(0)) + wp.clamp(y, wp.int64(-10), wp.int64(10))
    out[i, 6] = wp.int64(x >> wp.uint64(60))
    out[i, 7] = wp.int64(wp.uint32(x))
    out[i, 8] = wp.int64(float(x) * 1.0e-15)
    out[i, 9] = wp.int64(wp.float64(y) * wp.float64(0.5))
    v = h[i]
    ho[i, 0] = v * v + wp.float16(0.1)
    ho[i, 1] = wp.sin(v) + wp.sqrt(wp.abs(v))
    ho[i, 2] = wp.exp(v) / (v + wp.float16(3.0))
    ho[i, 3] = wp.floor(v * wp.float16(10.0)) + wp.round(v)
    ho[i, 4] = wp.max(v, wp.float16(0.3)) - wp.clamp(v, wp.float16(-0.2), wp.float16(0.2))
    ho[i, 5] = wp.float16(float(v) * 1000.0)
    ho[i, 6] = wp.pow(wp.abs(v) + wp.float16(0.5), wp.float16(2.5))
    ho[i, 7] = wp.length(wp.vec3h(v, wp.float16(1.0), wp.float16(2.0)))


def run():
    a = wp.array(np.array([0, 1, 2**63, 2**64 - 1, 12345678901234, 2**63 - 1], dtype=np.uint64))
    b = wp.array(np.array([-7, 7, -(2**62), 2**62, -1, 0], dtype=np.int64))
    h = wp.array(np.array([-1.5, -0.3, 0.0, 0.3333, 1.25, 2.7], dtype=np.float16))
    out = wp.zeros((6, 10), dtype=wp.int64)
    ho = wp.zeros((6, 8), dtype=wp.float16)
    wp.launch(wide_and_half, dim=6, inputs=[a, b, h], outputs=[out, ho])
    return {"ints": out.numpy(), "halves": ho.numpy()}
