"""Functions as values: @wp.func parameters annotated wp.Function (user funcs and builtins
passed in, a builtin as a default, two function parameters, a generic Any parameter beside
one), funcs made by a Python factory closing over a value (one per value, chosen with
wp.static), and the gradient through a function passed as an argument."""

from typing import Any

import numpy as np
import warp as wp


@wp.func
def double_it(x: float):
    return x * 2.0


@wp.func
def square_it(x: float):
    return x * x


@wp.func
def apply(g: wp.Function, x: float):
    return g(x)


@wp.func
def apply_twice(g: wp.Function, x: Any):
    return g(g(x))


@wp.func
def apply_default(x: float, g: wp.Function = wp.sin):
    return g(x)


@wp.func
def combine(f: wp.Function, g: wp.Function, x: float, y: float):
    return f(x) + g(y)


def make_adder(c: float):
    @wp.func
    def add_c(x: float):
        return x + c
    return add_c


ADDERS = [make_adder(c) for c in (1.0, 2.0, 3.0)]


@wp.kernel
def apply_all(xs: wp.array(dtype=float), out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    x = xs[i]
    out[i, 0] = apply(double_it, x)
    out[i, 1] = apply(square_it, x)
    out[i, 2] = apply_twice(double_it, x)
    out[i, 3] = apply_default(x)
    out[i, 4] = apply_default(x, wp.cos)
    out[i, 5] = combine(square_it, wp.exp, x, 0.5 * x)
    out[i, 6] = wp.static(ADDERS[0])(x) + wp.static(ADDERS[2])(x)


@wp.kernel
def loss(xs: wp.array(dtype=float), total: wp.array(dtype=float)):
    i = wp.tid()
    x = xs[i]
    wp.atomic_add(total, 0, combine(square_it, wp.sin, x, x) + apply_twice(square_it, x))


def run():
    xs = wp.array(np.linspace(-1.0, 1.0, 5, dtype=np.float32), requires_grad=True)
    out = wp.zeros((5, 7), dtype=float)
    wp.launch(apply_all, dim=5, inputs=[xs], outputs=[out])
    total = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(loss, dim=5, inputs=[xs], outputs=[total])
    tape.backward(total)
    return {"values": out.numpy(), "loss": total.numpy(), "grad": xs.grad.numpy()}
