"""Gradients through user functions: several return values, default arguments, overloads by
argument type, generic functions (typing.Any), functions that update local vector and
matrix components (u[1] += ..., m[0, 2] += ..., m[2, 0] = ... on a constant), a function that
returns a struct, and calls nested three deep. (Overwriting a component from its own old
value, `u[1] = u[1] + ...`, is left out: Warp 1.19's gradient of it is wrong.)"""

from typing import Any

import numpy as np
import warp as wp


@wp.struct
class Frame:
    origin: wp.vec3
    scale: float


@wp.func
def make_frame(p: wp.vec3, s: float):
    f = Frame()
    f.origin = p * 0.5
    f.scale = s * s + 1.0
    return f


@wp.func
def split(v: wp.vec3, k: float = 2.0):
    return v[0] * k, wp.vec2(v[1], v[2] * k)


@wp.func
def energy(x: float):
    return x * x


@wp.func
def energy(v: wp.vec3):  # noqa: F811 (an overload)
    return wp.dot(v, v) * 0.5


@wp.func
def weighted(a: Any, w: Any):
    return a * w + a


@wp.func
def shear(v: wp.vec3, t: float):
    u = v
    u[1] += t * u[0]
    m = wp.identity(n=3, dtype=float)
    m[0, 2] += t
    m[2, 0] = -t * t
    return m * u


@wp.func
def level3(v: wp.vec3, t: float):
    return energy(shear(v, t))


@wp.func
def level2(v: wp.vec3, t: float):
    return level3(v, t) + energy(t)


@wp.func
def level1(v: wp.vec3, t: float):
    return level2(v, t) * 2.0


@wp.kernel
def evaluate(v: wp.array(dtype=wp.vec3), t: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    a, b = split(v[i])
    c, d = split(v[i], k=t[i])
    f = make_frame(v[i], t[i])
    r = a + b[0] * b[1] + c * d[1] + energy(f.origin) * f.scale
    r += weighted(t[i], 3.0) + wp.length(weighted(v[i], t[i]))
    r += level1(v[i], t[i])
    out[i] = r


def run():
    n = 6
    rng = np.random.default_rng(43)
    v = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    t = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(evaluate, dim=n, inputs=[v, t], outputs=[out])
    tape.backward(grads={out: wp.full(n, 1.0, dtype=float)})
    return {"out": out.numpy().copy(), "v_grad": v.grad.numpy().copy(), "t_grad": t.grad.numpy().copy()}


TOLERANCE = {"out": (1e-5, 1e-5), "v_grad": (1e-5, 1e-5), "t_grad": (1e-5, 1e-5)}
