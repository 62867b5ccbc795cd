"""Gradients through the language: @wp.func helpers with several return values, a struct
returned by a func, generic (Any) funcs, default arguments, statically unrolled loops
(constant trip counts and wp.static ranges), branches on values (if/else and the
conditional expression), wp.where, early returns inside funcs, and components of a local vector
written in an unrolled loop; adjoints of every input through a Tape."""

from typing import Any

import numpy as np
import warp as wp

TERMS = 4


@wp.struct
class Frame:
    origin: wp.vec3
    axis: wp.vec3
    scale: float


@wp.func
def polar(v: wp.vec2):
    r = wp.length(v)
    return r, wp.atan2(v[1], v[0])


@wp.func
def make_frame(a: wp.vec3, b: wp.vec3, s: float) -> Frame:
    f = Frame()
    f.origin = a
    f.axis = wp.normalize(b - a)
    f.scale = s * s
    return f


@wp.func
def project(f: Frame, p: wp.vec3):
    d = p - f.origin
    t = wp.dot(d, f.axis)
    return f.origin + f.axis * t * f.scale, t


@wp.func
def soft(x: Any, k: Any = 2.0):
    return x / (k + wp.abs(x))


@wp.func
def piecewise(x: float):
    if x < -1.0:
        return -1.0 - 0.1 * (x + 1.0)
    if x > 1.0:
        return x * x
    return x * wp.abs(x) * 0.5 + 0.5 * x


@wp.func
def series(x: float):
    # exp(x) truncated. The bound must be a constant for Warp to unroll the loop: with
    # `range(1, TERMS + 1)` it does not, and its gradient through the loop is wrong
    term = float(1.0)
    total = float(1.0)
    for k in range(1, wp.static(TERMS + 1)):
        term = term * x / float(k)
        total = total + term
    return total


@wp.kernel
def loss_kernel(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), xs: wp.array(dtype=float),
                loss: wp.array(dtype=float)):
    i = wp.tid()
    f = make_frame(a[i], b[i], 1.0 + 0.1 * xs[i])
    p, t = project(f, wp.vec3(1.0, 0.5, -0.25))
    r, th = polar(wp.vec2(p[0], p[2]))
    x = xs[i]
    y = soft(x) + soft(x, 0.5) + piecewise(x) + series(0.5 * x)
    y += wp.where(x > 0.0, x * 3.0, -x)
    z = t * t if t > 0.0 else 0.5 * t
    m = wp.mat22(x, 1.0, r * x, th)
    v = wp.vec3(p[0], p[1], p[2] + z)
    # (components written once: Warp drops the adjoint of the old value in `v[j] = v[j] * c`)
    w = wp.vec3()
    for j in range(wp.static(3)):
        w[j] = v[j] * float(j + 1)
    wp.atomic_add(loss, 0, y + wp.determinant(m) + wp.length_sq(w) + f.scale * r)


def run():
    n = 12
    rng = np.random.default_rng(9)
    a = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    b = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32) + 2.0, dtype=wp.vec3, requires_grad=True)
    xs = wp.array(np.linspace(-2.2, 2.05, n).astype(np.float32), dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(loss_kernel, dim=n, inputs=[a, b, xs], outputs=[loss])
    tape.backward(loss)
    return {"loss": loss.numpy(), "grad_a": a.grad.numpy(), "grad_b": b.grad.numpy(), "grad_x": xs.grad.numpy()}


TOLERANCE = {"loss": (1e-5, 1e-4), "grad_a": (1e-4, 1e-5), "grad_b": (1e-4, 1e-5), "grad_x": (1e-4, 1e-5)}
