"""Kernels generated in Python, a common Warp idiom: a factory returning a kernel specialized
on a dtype (float32, float64, vec3, int32) and on captured Python values, the same factory
called twice with the same arguments, kernels made with module="unique", a factory closing
over a @wp.func chosen in Python, and a generic kernel instantiated per dtype by launch."""

from typing import Any

import numpy as np
import warp as wp


def make_axpy(dtype, scalar, alpha):
    @wp.kernel
    def axpy(x: wp.array(dtype=dtype), y: wp.array(dtype=dtype), out: wp.array(dtype=dtype)):
        i = wp.tid()
        out[i] = scalar(alpha) * x[i] + y[i]

    return axpy


def make_reduce(dtype, op):
    @wp.kernel(module="unique")
    def reduce_rows(a: wp.array2d(dtype=dtype), out: wp.array(dtype=dtype)):
        i = wp.tid()
        acc = a[i, 0]
        for j in range(1, a.shape[1]):
            acc = op(acc, a[i, j])
        out[i] = acc

    return reduce_rows


@wp.func
def f_min(a: Any, b: Any):
    return wp.min(a, b)


@wp.func
def f_add(a: Any, b: Any):
    return a + b


@wp.kernel
def scale_any(a: wp.array(dtype=Any), s: Any, out: wp.array(dtype=Any)):
    i = wp.tid()
    out[i] = a[i] * s


def run():
    rng = np.random.default_rng(8)
    n = 6
    res = {}
    for name, dtype, scalar, alpha, np_dtype, shape in (("f32", wp.float32, wp.float32, 2.5, np.float32, (n,)),
                                                        ("f64", wp.float64, wp.float64, -0.5, np.float64, (n,)),
                                                        ("vec3", wp.vec3, wp.float32, 3.0, np.float32, (n, 3)),
                                                        ("i32", wp.int32, wp.int32, 3, np.int32, (n,))):
        k1 = make_axpy(dtype, scalar, alpha)
        k2 = make_axpy(dtype, scalar, alpha)  # (the same kernel again)
        x = wp.array((rng.uniform(-5, 5, shape)).astype(np_dtype), dtype=dtype)
        y = wp.array((rng.uniform(-5, 5, shape)).astype(np_dtype), dtype=dtype)
        o1, o2 = wp.zeros(n, dtype=dtype), wp.zeros(n, dtype=dtype)
        wp.launch(k1, dim=n, inputs=[x, y], outputs=[o1])
        wp.launch(k2, dim=n, inputs=[o1, y], outputs=[o2])
        res["axpy_" + name] = o2.numpy()
    a = wp.array(rng.integers(-20, 20, (n, 5)).astype(np.int32), dtype=wp.int32)
    af = wp.array(rng.uniform(-1, 1, (n, 5)).astype(np.float64), dtype=wp.float64)
    for name, dtype, arr in (("i32", wp.int32, a), ("f64", wp.float64, af)):
        for op_name, op in (("min", f_min), ("add", f_add)):
            out = wp.zeros(n, dtype=dtype)
            wp.launch(make_reduce(dtype, op), dim=n, inputs=[arr], outputs=[out])
            res[f"reduce_{op_name}_{name}"] = out.numpy()
    o = wp.zeros(n, dtype=wp.vec2d)
    v = wp.array(rng.uniform(-1, 1, (n, 2)), dtype=wp.vec2d)
    wp.launch(scale_any, dim=n, inputs=[v, wp.float64(4.0)], outputs=[o])
    res["scale_vec2d"] = o.numpy()
    oi = wp.zeros(n, dtype=wp.int64)
    wp.launch(scale_any, dim=n, inputs=[wp.array(np.arange(n, dtype=np.int64) - 3, dtype=wp.int64), wp.int64(-7)],
              outputs=[oi])
    res["scale_i64"] = oi.numpy()
    return res
