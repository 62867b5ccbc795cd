"""Trigonometric, hyperbolic, exponential and logarithmic builtins and pow/sqrt/cbrt in
float32 and float64, with their gradients through a Tape."""

import numpy as np
import warp as wp


@wp.kernel
def trig(x: wp.array(dtype=float), out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    v = x[i]
    out[i, 0] = wp.sin(v)
    out[i, 1] = wp.cos(v)
    out[i, 2] = wp.tan(v * 0.5)
    out[i, 3] = wp.asin(v * 0.3)
    out[i, 4] = wp.acos(v * 0.3)
    out[i, 5] = wp.atan(v)
    out[i, 6] = wp.atan2(v, 0.5 - v)
    out[i, 7] = wp.sinh(v)
    out[i, 8] = wp.cosh(v)
    out[i, 9] = wp.tanh(v)
    out[i, 10] = wp.degrees(v)
    out[i, 11] = wp.radians(v * 90.0)


@wp.kernel
def explog(x: wp.array(dtype=float), out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    v = x[i]
    p = wp.abs(v) + 0.1
    out[i, 0] = wp.exp(v)
    out[i, 1] = wp.exp(-v * v)
    out[i, 2] = wp.log(p)
    out[i, 3] = wp.log2(p)
    out[i, 4] = wp.log10(p)
    out[i, 5] = wp.pow(p, 1.7)
    out[i, 6] = wp.pow(p, v)
    out[i, 7] = wp.sqrt(p)
    out[i, 8] = wp.cbrt(v)
    out[i, 9] = p ** 2.0
    out[i, 10] = wp.mod(v, 0.75)
    out[i, 11] = wp.erf(v)


@wp.kernel
def explog64(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64, ndim=2)):
    i = wp.tid()
    v = x[i]
    p = wp.abs(v) + wp.float64(0.1)
    out[i, 0] = wp.exp(v) + wp.log(p)
    out[i, 1] = wp.sin(v) * wp.cos(v)
    out[i, 2] = wp.pow(p, wp.float64(2.5))
    out[i, 3] = wp.atan2(v, wp.float64(1.0))
    out[i, 4] = wp.sqrt(p) + wp.tanh(v)


@wp.kernel
def loss_fn(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    p = wp.abs(v) + 0.1
    y = wp.sin(v) * wp.exp(0.3 * v) + wp.log(p) + wp.pow(p, 1.7) + wp.atan2(v, 0.5 - v) + wp.tanh(v)
    y += wp.sqrt(p) * wp.cosh(0.2 * v) + wp.asin(v * 0.3) + wp.log2(p) + wp.exp(v * 0.1)
    wp.atomic_add(loss, 0, y)


def run():
    xs = np.linspace(-2.0, 2.0, 21, dtype=np.float32)
    x = wp.array(xs, dtype=float, requires_grad=True)
    a = wp.zeros((21, 12), dtype=float)
    b = wp.zeros((21, 12), dtype=float)
    wp.launch(trig, dim=21, inputs=[x], outputs=[a])
    wp.launch(explog, dim=21, inputs=[x], outputs=[b])
    x64 = wp.array(xs.astype(np.float64), dtype=wp.float64)
    c = wp.zeros((21, 5), dtype=wp.float64)
    wp.launch(explog64, dim=21, inputs=[x64], outputs=[c])
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(loss_fn, dim=21, inputs=[x], outputs=[loss])
    tape.backward(loss=loss)
    return {"trig": a.numpy(), "explog": b.numpy(), "f64": c.numpy(), "loss": loss.numpy(), "grad": x.grad.numpy()}


TOLERANCE = {"loss": (1e-5, 1e-5), "trig": (1e-5, 1e-5), "explog": (1e-5, 1e-5), "grad": (1e-5, 1e-5)}
