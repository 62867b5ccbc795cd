"""float16, float32 and float64 arrays side by side: arithmetic in each precision, conversions between them,
vector types of each, reductions with atomics, and gradients through float16 and float64 arrays."""

import numpy as np
import warp as wp


@wp.kernel
def poly16(x: wp.array(dtype=wp.float16), y: wp.array(dtype=wp.float16)):
    i = wp.tid()
    v = x[i]
    y[i] = v * v * wp.float16(0.5) + wp.float16(3.0) * v - wp.float16(1.0)


@wp.kernel
def poly64(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    v = x[i]
    y[i] = wp.sin(v) * v + wp.float64(1.0) / (v * v + wp.float64(1.0))


@wp.kernel
def mixed(a: wp.array(dtype=wp.float16), b: wp.array(dtype=float), c: wp.array(dtype=wp.float64),
          out32: wp.array(dtype=float), out64: wp.array(dtype=wp.float64), out16: wp.array(dtype=wp.float16)):
    i = wp.tid()
    out32[i] = float(a[i]) + b[i] + float(c[i])
    out64[i] = wp.float64(a[i]) * wp.float64(b[i]) + c[i]
    out16[i] = wp.float16(b[i] * 100.0)


@wp.kernel
def vec_precisions(h: wp.array(dtype=wp.vec3h), d: wp.array(dtype=wp.vec3d), out_h: wp.array(dtype=wp.float16),
                   out_d: wp.array(dtype=wp.float64), total: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out_h[i] = wp.dot(h[i], h[i])
    out_d[i] = wp.length(d[i])
    wp.atomic_add(total, 0, wp.float64(wp.length(d[i])))


def run():
    r = {}
    xs = np.array([-2.0, -0.5, 0.0, 0.25, 1.5, 3.0], dtype=np.float16)
    x16 = wp.array(xs, dtype=wp.float16, requires_grad=True)
    y16 = wp.zeros(6, dtype=wp.float16, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(poly16, dim=6, inputs=[x16], outputs=[y16])
    tape.backward(grads={y16: wp.ones(6, dtype=wp.float16)})
    r["y16"] = y16.numpy().copy()
    r["x16_grad"] = x16.grad.numpy().copy()
    x64 = wp.array(np.linspace(-2.0, 2.0, 7), dtype=wp.float64, requires_grad=True)
    y64 = wp.zeros(7, dtype=wp.float64, requires_grad=True)
    tape64 = wp.Tape()
    with tape64:
        wp.launch(poly64, dim=7, inputs=[x64], outputs=[y64])
    tape64.backward(grads={y64: wp.ones(7, dtype=wp.float64)})
    r["y64"] = y64.numpy().copy()
    r["x64_grad"] = x64.grad.numpy().copy()
    a = wp.array(np.array([0.1, 1.5, -3.25], dtype=np.float16))
    b = wp.array(np.array([1.0 / 3.0, 2.5, 700.0], dtype=np.float32))
    c = wp.array(np.array([1e-10, -2.0, 1e10]))
    o32 = wp.zeros(3, dtype=float)
    o64 = wp.zeros(3, dtype=wp.float64)
    o16 = wp.zeros(3, dtype=wp.float16)
    wp.launch(mixed, dim=3, inputs=[a, b, c, o32, o64, o16])
    r["o32"] = o32.numpy().copy()
    r["o64"] = o64.numpy().copy()
    r["o16"] = o16.numpy().copy()
    h = wp.array(np.array([[0.5, 1.0, 2.0], [1.5, -1.0, 0.25]], dtype=np.float16), dtype=wp.vec3h)
    d = wp.array(np.array([[3.0, 4.0, 12.0], [1.0, 1.0, 1.0]]), dtype=wp.vec3d)
    oh = wp.zeros(2, dtype=wp.float16)
    od = wp.zeros(2, dtype=wp.float64)
    total = wp.zeros(1, dtype=wp.float64)
    wp.launch(vec_precisions, dim=2, inputs=[h, d, oh, od, total])
    r["dot_h"] = oh.numpy().copy()
    r["len_d"] = od.numpy().copy()
    r["total"] = total.numpy().copy()
    return r


TOLERANCE = {"y64": (1e-12, 1e-12), "x64_grad": (1e-12, 1e-12), "o64": (1e-12, 1e-12), "len_d": (1e-12, 1e-12),
             "total": (1e-12, 1e-12)}
