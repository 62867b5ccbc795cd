"""Generic kernels (typing.Any) launched on several dtypes, explicit wp.overload, wp.constant, module-level
values captured at compile time, launch with adjoint=True and explicit adj_inputs."""

from typing import Any

import numpy as np
import warp as wp

SCALE = wp.constant(3.0)
OFFSET = wp.constant(wp.vec3(1.0, 0.0, -1.0))
COUNT = wp.constant(4)


@wp.kernel
def scale_any(a: wp.array(dtype=Any), s: Any, out: wp.array(dtype=Any)):
    i = wp.tid()
    out[i] = a[i] * s


@wp.kernel
def add_any(a: wp.array(dtype=Any), b: wp.array(dtype=Any)):
    i = wp.tid()
    b[i] = b[i] + a[i] + a.dtype(COUNT)


wp.overload(add_any, {"a": wp.array(dtype=wp.float64), "b": wp.array(dtype=wp.float64)})


@wp.kernel
def use_constants(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = v[i] * SCALE + OFFSET


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i] + 2.0 * x[i]


def run():
    r = {}
    f32 = wp.array(np.arange(4, dtype=np.float32))
    o32 = wp.zeros(4, dtype=wp.float32)
    wp.launch(scale_any, dim=4, inputs=[f32, wp.float32(2.5), o32])
    r["f32"] = o32.numpy().copy()
    i32 = wp.array(np.arange(4, dtype=np.int32) - 2)
    oi = wp.zeros(4, dtype=wp.int32)
    wp.launch(scale_any, dim=4, inputs=[i32, wp.int32(-3), oi])
    r["i32"] = oi.numpy().copy()
    v = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=wp.vec3)
    ov = wp.zeros(2, dtype=wp.vec3)
    wp.launch(scale_any, dim=2, inputs=[v, wp.float32(0.5), ov])
    r["vec"] = ov.numpy().copy()
    d = wp.array(np.array([0.25, 0.5], dtype=np.float64))
    od = wp.zeros(2, dtype=wp.float64)
    wp.launch(add_any, dim=2, inputs=[d, od])
    r["f64"] = od.numpy().copy()
    ii = wp.array(np.array([1, 2], dtype=np.int64))
    oii = wp.ones(2, dtype=wp.int64)
    wp.launch(add_any, dim=2, inputs=[ii, oii])
    r["i64"] = oii.numpy().copy()
    oc = wp.zeros(2, dtype=wp.vec3)
    wp.launch(use_constants, dim=2, inputs=[v, oc])
    r["const"] = oc.numpy().copy()
    x = wp.array(np.array([1.0, -0.5, 2.0], dtype=np.float32))
    y = wp.zeros(3, dtype=float)
    wp.launch(square, dim=3, inputs=[x, y])
    r["y"] = y.numpy().copy()
    adj_x = wp.zeros(3, dtype=float)
    adj_y = wp.array(np.array([1.0, 2.0, -1.0], dtype=np.float32))
    wp.launch(square, dim=3, inputs=[x, y], adj_inputs=[adj_x, adj_y], adjoint=True)
    r["adj_x"] = adj_x.numpy().copy()
    return r
