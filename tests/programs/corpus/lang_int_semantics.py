"""Integer semantics: floor division and modulo with negative operands (Warp truncates like C),
bit operations and shifts, wraparound of the narrow and unsigned types, casts between
floats and ints, and the scalar constructors wp.int32(x), wp.uint8(x), ..."""

import numpy as np
import warp as wp


@wp.kernel
def div_mod(a: wp.array(dtype=int), b: wp.array(dtype=int), q: wp.array(dtype=int), r: wp.array(dtype=int),
            fq: wp.array(dtype=float), fr: wp.array(dtype=float)):
    i = wp.tid()
    q[i] = a[i] // b[i]
    r[i] = a[i] % b[i]
    x = float(a[i]) * 0.5
    y = float(b[i])
    fq[i] = x // y
    fr[i] = x % y


@wp.kernel
def bit_ops(a: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32, ndim=2),
            uout: wp.array(dtype=wp.uint32, ndim=2)):
    i = wp.tid()
    x = a[i]
    out[i, 0] = x & 0x5A5A
    out[i, 1] = x | 0x0F0F
    out[i, 2] = x ^ 0x3C3C
    out[i, 3] = ~x
    out[i, 4] = x << 3
    out[i, 5] = x >> 2
    out[i, 6] = (x << 28) >> 28
    out[i, 7] = -x
    u = wp.uint32(x)
    uout[i, 0] = u >> wp.uint32(3)
    uout[i, 1] = u << wp.uint32(5)
    uout[i, 2] = ~u
    uout[i, 3] = u * wp.uint32(2654435761)
    uout[i, 4] = u - wp.uint32(100000)
    uout[i, 5] = u // wp.uint32(7)
    uout[i, 6] = u % wp.uint32(7)


@wp.kernel
def narrow_types(a: wp.array(dtype=wp.int32), i8: wp.array(dtype=wp.int8), u8: wp.array(dtype=wp.uint8),
                 i16: wp.array(dtype=wp.int16), u16: wp.array(dtype=wp.uint16), i64: wp.array(dtype=wp.int64),
                 u64: wp.array(dtype=wp.uint64)):
    i = wp.tid()
    x = a[i]
    b8 = wp.int8(x)
    i8[i] = b8 * wp.int8(3) + wp.int8(100)
    c8 = wp.uint8(x)
    u8[i] = c8 * wp.uint8(7) - wp.uint8(9)
    s16 = wp.int16(x) * wp.int16(300)
    i16[i] = s16 // wp.int16(-7)
    w16 = wp.uint16(x) * wp.uint16(1000)
    u16[i] = w16 ^ wp.uint16(0xFFFF)
    big = wp.int64(x) * wp.int64(3000000000)
    i64[i] = big % wp.int64(-1000000007)
    ub = wp.uint64(big)
    u64[i] = (ub >> wp.uint64(7)) + (ub << wp.uint64(60))


@wp.kernel
def casts(x: wp.array(dtype=float), ints: wp.array(dtype=int, ndim=2), back: wp.array(dtype=float, ndim=2),
          d: wp.array(dtype=wp.float64)):
    i = wp.tid()
    v = x[i]
    ints[i, 0] = int(v)
    ints[i, 1] = wp.int32(v)
    ints[i, 2] = int(wp.floor(v))
    ints[i, 3] = int(wp.round(v))
    ints[i, 4] = int(wp.uint8(wp.int32(v)))
    ints[i, 5] = int(wp.int8(wp.int32(v * 40.0)))
    n = int(v * 3.0)
    back[i, 0] = float(n) / 2.0
    back[i, 1] = float(n / 2)
    back[i, 2] = float(n // 2)
    back[i, 3] = wp.float32(wp.int64(v * 1.0e6)) * 1.0e-6
    back[i, 4] = float(wp.float16(v * 1000.0))
    d[i] = wp.float64(v) / wp.float64(3.0) + wp.float64(n)


def run():
    a = np.array([7, -7, 7, -7, 0, 13, -13, 1, -1, 100, -100, 5], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3, 5, 5, -4, 4, 7, -7, 1], dtype=np.int32)
    q, r = wp.zeros(12, dtype=int), wp.zeros(12, dtype=int)
    fq, fr = wp.zeros(12, dtype=float), wp.zeros(12, dtype=float)
    wp.launch(div_mod, dim=12, inputs=[wp.array(a, dtype=int), wp.array(b, dtype=int)], outputs=[q, r, fq, fr])

    vals = np.array([0, 1, -1, 12345, -12345, 2**31 - 1, -(2**31), 255, 256, -129, 70000, -70000], dtype=np.int32)
    va = wp.array(vals, dtype=wp.int32)
    bo = wp.zeros((12, 8), dtype=wp.int32)
    bu = wp.zeros((12, 7), dtype=wp.uint32)
    wp.launch(bit_ops, dim=12, inputs=[va], outputs=[bo, bu])

    outs = [wp.zeros(12, dtype=t) for t in (wp.int8, wp.uint8, wp.int16, wp.uint16, wp.int64, wp.uint64)]
    wp.launch(narrow_types, dim=12, inputs=[va], outputs=outs)

    xs = np.array([0.4, 0.5, 0.6, 1.5, 2.5, -0.4, -0.5, -0.6, -1.5, -2.5, 3.99, -3.99, 7.25, -7.25], dtype=np.float32)
    ints = wp.zeros((14, 6), dtype=int)
    back = wp.zeros((14, 5), dtype=float)
    d = wp.zeros(14, dtype=wp.float64)
    wp.launch(casts, dim=14, inputs=[wp.array(xs, dtype=float)], outputs=[ints, back, d])
    res = {"q": q.numpy(), "r": r.numpy(), "fq": fq.numpy(), "fr": fr.numpy(), "bits": bo.numpy(), "ubits": bu.numpy(),
           "ints": ints.numpy(), "back": back.numpy(), "d": d.numpy()}
    for name, arr in zip(("i8", "u8", "i16", "u16", "i64", "u64"), outs):
        res[name] = arr.numpy()
    return res
