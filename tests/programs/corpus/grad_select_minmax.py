"""Gradients through branches and piecewise functions: wp.where (wp.select is removed in Warp 1.19), wp.min/wp.max
on scalars and vectors (including exact ties), wp.clamp at and inside its bounds, abs, sign,
step, a ReLU written as max(x, 0) evaluated at 0, and an if/else with different formulas."""

import numpy as np
import warp as wp


@wp.kernel
def piecewise(x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    a = x[i]
    b = y[i]
    r = wp.where(a > b, a * a, 2.0 * b)
    r += wp.where(a < 0.0, wp.sin(a), wp.cos(a))
    r += wp.min(a, b) * 3.0 + wp.max(a, b) * 5.0
    r += wp.clamp(a, -0.5, 0.5) * 7.0
    r += wp.abs(b) * 11.0 + wp.sign(a) * a + wp.step(a) * b
    r += wp.max(a, 0.0) * 13.0
    if a > 0.25:
        r += wp.exp(a)
    else:
        r -= a * b
    out[i] = r


@wp.kernel
def vector_minmax(u: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    lo = wp.min(u[i], v[i])
    hi = wp.max(u[i], v[i])
    out[i] = wp.dot(lo, wp.vec3(1.0, 2.0, 3.0)) + wp.dot(hi, wp.vec3(-1.0, 0.5, 4.0)) + wp.max(u[i]) - wp.min(v[i])


def run():
    xv = np.array([-1.0, -0.5, -0.25, 0.0, 0.0, 0.25, 0.3, 0.5, 0.75, 1.2, 0.4, -0.7], np.float32)
    yv = np.array([0.3, -0.5, 0.1, 0.0, -0.2, 0.25, 0.9, -0.1, 0.75, 0.0, 0.4, -0.7], np.float32)
    n = len(xv)
    x = wp.array(xv, requires_grad=True)
    y = wp.array(yv, requires_grad=True)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(piecewise, dim=n, inputs=[x, y], outputs=[out])
    tape.backward(grads={out: wp.ones(n, dtype=float)})
    res = {"out": out.numpy().copy(), "x_grad": x.grad.numpy().copy(), "y_grad": y.grad.numpy().copy()}

    uv = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0], [2.0, -2.0, 0.0], [1.0, 1.0, 1.0]], np.float32)
    vv = np.array([[1.0, 0.0, 4.0], [0.5, 1.5, -2.0], [1.0, -2.0, 3.0], [0.0, 2.0, 1.0]], np.float32)
    u = wp.array(uv, dtype=wp.vec3, requires_grad=True)
    v = wp.array(vv, dtype=wp.vec3, requires_grad=True)
    o = wp.zeros(4, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(vector_minmax, dim=4, inputs=[u, v], outputs=[o])
    tape.backward(grads={o: wp.ones(4, dtype=float)})
    res["vec_out"] = o.numpy().copy()
    res["u_grad"] = u.grad.numpy().copy()
    res["v_grad"] = v.grad.numpy().copy()
    return res
