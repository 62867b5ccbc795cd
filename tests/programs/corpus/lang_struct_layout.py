"""Struct layout as numpy sees it: a struct of mixed field types (bool, int8, float64, vec3h,
uint16, mat22, quath, int64) nested in another with a transform, filled in a kernel and
from Python; the struct array's itemsize and field offsets must be
Warp's, and the fields read back through numpy."""

import numpy as np
import warp as wp


@wp.struct
class Odd:
    flag: wp.bool
    small: wp.int8
    d: wp.float64
    h: wp.vec3h
    u: wp.uint16
    m: wp.mat22
    q: wp.quath
    b2: wp.bool
    i64: wp.int64


@wp.struct
class Outer:
    a: wp.uint8
    inner: Odd
    f: float
    t: wp.transform


@wp.kernel
def fill(arr: wp.array(dtype=Outer), s: Outer, out: wp.array(dtype=float)):
    i = wp.tid()
    o = Outer()
    o.a = wp.uint8(i + 250)
    o.inner.flag = i % 2 == 0
    o.inner.small = wp.int8(-i)
    o.inner.d = wp.float64(i) * wp.float64(0.1)
    o.inner.h = wp.vec3h(wp.float16(1.5), wp.float16(float(i)), wp.float16(-2.0))
    o.inner.u = wp.uint16(65000 + i)
    o.inner.m = wp.mat22(1.0, 2.0, 3.0, float(i))
    o.inner.q = wp.quath(wp.float16(0.0), wp.float16(0.0), wp.float16(0.0), wp.float16(1.0))
    o.inner.b2 = True
    o.inner.i64 = wp.int64(i) * wp.int64(10000000000)
    o.f = s.f + float(s.inner.small) + float(s.inner.d) + float(s.inner.h[1]) + float(s.inner.u) + float(s.a)
    o.t = s.t
    arr[i] = o
    out[i] = float(s.inner.flag) + float(s.inner.b2) * 2.0 + s.inner.m[1, 0] + float(s.inner.i64) + s.t.p[2]


def run():
    wp.init()
    s = Outer()
    s.a = 7
    s.f = 0.5
    s.inner.flag = True
    s.inner.small = -3
    s.inner.d = 2.25
    s.inner.h = wp.vec3h(1.0, 2.0, 3.0)
    s.inner.u = 40000
    s.inner.m = wp.mat22(1.0, 2.0, 3.0, 4.0)
    s.inner.b2 = False
    s.inner.i64 = 123456789012
    s.t = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity())
    arr = wp.zeros(3, dtype=Outer)
    out = wp.zeros(3, dtype=float)
    wp.launch(fill, dim=3, inputs=[arr, s], outputs=[out])
    d = arr.numpy()
    res = {"out": out.numpy(), "itemsize": np.array(d.dtype.itemsize)}
    res["names"] = np.array(str(d.dtype.names))
    res["offsets"] = np.array([d.dtype.fields[n][1] for n in d.dtype.names])
    inner = d["inner"]
    res["inner_offsets"] = np.array([inner.dtype.fields[n][1] for n in inner.dtype.names])
    for n in inner.dtype.names:
        res["inner_" + n] = inner[n]
    res["a"] = d["a"]
    res["f"] = d["f"]
    res["t"] = d["t"]
    return res
