"""Kernel parameters of every value kind and the Python values Warp accepts for them: Python
and numpy scalars for float/int/uint8/float64/float16 parameters, an int for a bool, a
tuple or list for a vector, a nested numpy array for a matrix, quaternion and transform
values, a struct with a tuple assigned to its vector field; and a generic func over an
array of any dtype that starts its sum from a.dtype(0)."""

from typing import Any

import numpy as np
import warp as wp


@wp.struct
class Params:
    a: float
    v: wp.vec3
    n: int


@wp.kernel
def scalars(f: float, i: int, u: wp.uint8, d: wp.float64, v: wp.vec3, m: wp.mat22, q: wp.quat, t: wp.transform,
            b: bool, vi: wp.vec2i, h: wp.float16, p: Params, out: wp.array(dtype=float)):
    out[0] = f
    out[1] = float(i)
    out[2] = float(u)
    out[3] = float(d)
    out[4] = v[0] + v[1] * 10.0 + v[2] * 100.0
    out[5] = m[0, 1] + m[1, 0] * 10.0
    out[6] = q[3] + q[0] * 10.0
    out[7] = t.p[2] + t.q[3] * 10.0
    out[8] = float(b)
    out[9] = float(vi[1])
    out[10] = float(h)
    out[11] = p.a + p.v[2] + float(p.n)


@wp.func
def total(a: wp.array(dtype=Any)):
    s = a.dtype(0)
    for j in range(a.shape[0]):
        s += a[j]
    return s


@wp.kernel
def sums(a: wp.array(dtype=Any), b: wp.array(dtype=Any), c: wp.array(dtype=Any), out: wp.array(dtype=float)):
    out[0] = float(total(a))
    out[1] = float(total(b))
    out[2] = wp.length(total(c))


def run():
    out = wp.zeros(12, dtype=float)
    p = Params()
    p.a = 1.5
    p.v = (1.0, 2.0, 3.0)
    p.n = 4
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    t = wp.transform((1.0, 2.0, 3.0), (0.0, 0.0, 0.0, 1.0))
    wp.launch(scalars, dim=1, inputs=[3, np.int64(5), 300 % 256, np.float32(2.5), (1.0, 2.0, 3.0), m,
                                      wp.quat(0.0, 0.0, 0.0, 1.0), t, 1, [3, 4], 0.5, p], outputs=[out])
    flags = []
    for flag in (0, 1, np.int32(2), True):
        one = wp.zeros(12, dtype=float)
        wp.launch(scalars, dim=1, inputs=[0.0, 0, 0, 0.0, (0.0, 0.0, 0.0), m, wp.quat_identity(), t, flag,
                                          (0, 0), 0.0, p], outputs=[one])
        flags.append(one.numpy()[8])
    o2 = wp.zeros(3, dtype=float)
    vecs = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=wp.vec3)
    wp.launch(sums, dim=1, inputs=[wp.array([1, 2, 3], dtype=wp.int32), wp.array([0.5, 0.25], dtype=wp.float64),
                                   vecs], outputs=[o2])
    return {"params": out.numpy(), "flags": np.array(flags), "sums": o2.numpy()}
