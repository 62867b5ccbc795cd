"""Expression forms users meet: tuple swap, chained comparisons, int truthiness and `not`,
Python's abs/min/max/round in kernels, tuples indexed by constants, ** on floats, unary +,
wp.where, in-place updates of array elements' components (v[i].x = ..., m[i][0, 1] = ...,
a2d[i][j] = ..., quaternion and transform fields), `+=` on array elements, and narrow
integer arithmetic that wraps (int8/int16/uint8 products) or shifts (arithmetic vs logical)."""

import numpy as np
import warp as wp


@wp.kernel
def forms(xs: wp.array(dtype=float), ns: wp.array(dtype=int), out: wp.array(dtype=float, ndim=2),
          iout: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    x = xs[i]
    n = ns[i]
    a = x
    b = float(n)
    a, b = b, a
    out[i, 0] = a - 2.0 * b
    out[i, 1] = 1.0 if 0.0 < x < 1.0 else 0.0
    out[i, 2] = +x - -x
    iout[i, 0] = int(n > 1) + int(True) * 2
    if n:
        iout[i, 1] = 1
    else:
        iout[i, 1] = -1
    iout[i, 2] = int(not n)
    iout[i, 3] = n * 65537 * 65537
    out[i, 3] = x ** 3.0
    out[i, 4] = x ** 0.5 if x > 0.0 else -1.0
    out[i, 5] = wp.where(x > 0.0, 1.0, 2.0) + wp.where(n < 0, 10.0, 20.0)
    t = (x, n, 2.0)
    out[i, 6] = t[0] + t[2]
    iout[i, 4] = t[1]
    iout[i, 5] = n % -3 + (-n) // 4
    out[i, 7] = abs(x) + min(x, 0.1) + max(x, 0.2)
    out[i, 8] = float(round(x)) + float(abs(n)) + float(min(n, 1)) + float(max(n, -1))
    iout[i, 6] = 7 // 2 + -7 // 2 + -7 % 3 + 7 % -3


@wp.kernel
def element_updates(vs: wp.array(dtype=wp.vec3), ms: wp.array(dtype=wp.mat22), a2: wp.array2d(dtype=float),
                    cnt: wp.array(dtype=int), qs: wp.array(dtype=wp.quat), ts: wp.array(dtype=wp.transform)):
    i = wp.tid()
    vs[i].x = 1.0 + float(i)
    vs[i][2] += 5.0
    vs[i] *= 2.0
    ms[i][0, 1] = -3.0
    ms[i][1] = wp.vec2(7.0, 8.0)
    ms[i][0][0] += 1.5
    a2[i, 2] += 1.0
    a2[i][0] = float(a2.shape[1])
    cnt[0] += 1
    cnt[1] -= 2
    qs[i].w = 0.5
    ts[i].p = wp.vec3(1.0, 2.0, 3.0)
    ts[i].q.x = 9.0


@wp.kernel
def narrow(x: wp.array(dtype=wp.int32), u8: wp.array(dtype=wp.uint8), i64: wp.array(dtype=wp.int64),
           out: wp.array(dtype=wp.int64, ndim=2)):
    i = wp.tid()
    v = x[i]
    a = wp.int16(v)
    c = wp.int8(v)
    out[i, 0] = wp.int64(a * a)
    out[i, 1] = wp.int64(u8[i] + wp.uint8(200))
    out[i, 2] = i64[i] >> wp.int64(3)
    out[i, 3] = wp.int64(wp.uint8(v) >> wp.uint8(1))
    out[i, 4] = wp.int64(c >> wp.int8(1))
    out[i, 5] = wp.int64(wp.uint16(v))
    out[i, 6] = wp.int64(wp.uint32(v))
    out[i, 7] = wp.int64(float(v) * 0.3)
    out[i, 8] = wp.int64(c * c + c)
    out[i, 9] = wp.int64(wp.uint64(v) // wp.uint64(3))
    out[i, 10] = wp.int64(a * wp.int16(3) - a)
    out[i, 11] = wp.int64(wp.uint16(v) * wp.uint16(v))


def run():
    xs = wp.array(np.linspace(-1.5, 1.5, 7, dtype=np.float32), dtype=float)
    ns = wp.array(np.arange(-3, 4, dtype=np.int32), dtype=int)
    out = wp.zeros((7, 9), dtype=float)
    iout = wp.zeros((7, 7), dtype=int)
    wp.launch(forms, dim=7, inputs=[xs, ns], outputs=[out, iout])

    vs = wp.zeros(4, dtype=wp.vec3)
    ms = wp.zeros(4, dtype=wp.mat22)
    a2 = wp.zeros((4, 3), dtype=float)
    cnt = wp.zeros(2, dtype=int)
    qs = wp.zeros(4, dtype=wp.quat)
    ts = wp.zeros(4, dtype=wp.transform)
    wp.launch(element_updates, dim=4, inputs=[vs, ms, a2, cnt, qs, ts])

    x = wp.array(np.array([-300, -129, -1, 0, 1, 127, 200, 70000], dtype=np.int32))
    u8 = wp.array(np.array([0, 10, 55, 56, 100, 200, 255, 1], dtype=np.uint8))
    i64 = wp.array(np.array([-(2**40), -9, -8, 0, 7, 2**62, -1, 5], dtype=np.int64))
    ints = wp.zeros((8, 12), dtype=wp.int64)
    wp.launch(narrow, dim=8, inputs=[x, u8, i64], outputs=[ints])
    return {"floats": out.numpy(), "ints": iout.numpy(), "vs": vs.numpy(), "ms": ms.numpy(), "a2": a2.numpy(),
            "cnt": cnt.numpy(), "qs": qs.numpy(), "ts": ts.numpy(), "narrow": ints.numpy()}
