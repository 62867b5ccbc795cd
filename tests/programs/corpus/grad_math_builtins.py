"""Gradients of the scalar math builtins a user differentiates: trig and inverse trig,
hyperbolic, exp/log families, sqrt/cbrt/pow, atan2, erf, smoothstep, lerp, degrees/radians,
and the piecewise-constant ones (floor, round, trunc, rint). (frac is left out: Warp 1.19
gives it a zero gradient, weft the true 1.)"""

import numpy as np
import warp as wp


@wp.func
def unary_mix(x: float):
    r = wp.sin(x) + 2.0 * wp.cos(x) + 0.25 * wp.tan(x)
    r += wp.asin(0.5 * x) + wp.acos(0.4 * x) + wp.atan(3.0 * x)
    r += wp.sinh(x) + wp.cosh(0.5 * x) + wp.tanh(2.0 * x)
    r += wp.exp(0.3 * x) + wp.log(x + 2.0) + wp.log2(x + 3.0) + wp.log10(x + 4.0)
    r += wp.sqrt(x + 1.5) + wp.cbrt(x + 2.5) + wp.pow(x + 2.0, 1.5)
    r += wp.erf(x) + wp.erfc(0.5 * x)
    r += wp.degrees(x) * 0.01 + wp.radians(x) * 10.0
    r += wp.floor(x) + wp.round(x) + wp.trunc(x) + wp.rint(x)
    return r


@wp.kernel
def evaluate(x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    a = x[i]
    b = y[i]
    out[i] = unary_mix(a) + wp.atan2(a, b) + wp.pow(b + 2.0, a) + wp.smoothstep(-1.0, 1.0, a * b) + wp.lerp(a, b, 0.3)


def run():
    n = 11
    xv = np.linspace(-0.9, 0.9, n).astype(np.float32)
    yv = np.linspace(0.8, -0.7, n).astype(np.float32)
    x = wp.array(xv, requires_grad=True)
    y = wp.array(yv, requires_grad=True)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(evaluate, dim=n, inputs=[x, y], outputs=[out])
    tape.backward(grads={out: wp.ones(n, dtype=float)})
    return {"out": out.numpy().copy(), "x_grad": x.grad.numpy().copy(), "y_grad": y.grad.numpy().copy()}


TOLERANCE = {"out": (1e-5, 1e-5), "x_grad": (1e-5, 1e-5), "y_grad": (1e-5, 1e-5)}
