"""Custom gradients with @wp.func_grad: a safe sqrt whose gradient is zero at the kink, a
clipped-gradient function, a function with two results, a vector function with a custom
gradient called through another @wp.func, and a function with no return value."""

import numpy as np
import warp as wp


@wp.func
def safe_sqrt(x: float):
    return wp.sqrt(x)


@wp.func_grad(safe_sqrt)
def adj_safe_sqrt(x: float, adj_ret: float):
    if x > 0.0:
        wp.adjoint[x] += adj_ret / (2.0 * wp.sqrt(x))


@wp.func
def clip_grad_tanh(x: float):
    return wp.tanh(x)


@wp.func_grad(clip_grad_tanh)
def adj_clip_grad_tanh(x: float, adj_ret: float):
    g = (1.0 - wp.tanh(x) * wp.tanh(x)) * adj_ret
    wp.adjoint[x] += wp.clamp(g, -0.25, 0.25)


@wp.func
def polar(x: float, y: float):
    return wp.sqrt(x * x + y * y), wp.atan2(y, x)


@wp.func_grad(polar)
def adj_polar(x: float, y: float, adj_r: float, adj_theta: float):
    r2 = x * x + y * y
    r = wp.sqrt(r2)
    wp.adjoint[x] += adj_r * x / r - adj_theta * y / r2
    wp.adjoint[y] += adj_r * y / r + adj_theta * x / r2


@wp.func
def unit_norm(v: wp.vec3):
    return wp.length(v)


@wp.func_grad(unit_norm)
def adj_unit_norm(v: wp.vec3, adj_ret: float):
    wp.adjoint[v] += wp.normalize(v) * adj_ret * 2.0


@wp.func
def outer_norm(v: wp.vec3):
    return unit_norm(v) + 1.0


@wp.func
def write_square(i: int, xs: wp.array(dtype=float), ys: wp.array(dtype=float)):
    ys[i] = xs[i] * xs[i]


@wp.func_grad(write_square)
def adj_write_square(i: int, xs: wp.array(dtype=float), ys: wp.array(dtype=float)):
    wp.adjoint[xs][i] += 3.0 * xs[i] * wp.adjoint[ys][i]


@wp.kernel
def evaluate(
    xs: wp.array(dtype=float),
    ys: wp.array(dtype=float),
    vs: wp.array(dtype=wp.vec3),
    out: wp.array(dtype=float),
):
    i = wp.tid()
    x = xs[i]
    r, theta = polar(x, ys[i])
    s = safe_sqrt(wp.max(x, 0.0)) + clip_grad_tanh(3.0 * x) + r + 0.5 * theta
    out[i] = s + outer_norm(vs[i])


@wp.kernel
def evaluate_nr(xs: wp.array(dtype=float), ys: wp.array(dtype=float)):
    i = wp.tid()
    write_square(i, xs, ys)


def run():
    n = 12
    rng = np.random.default_rng(4)
    xv = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    xv[0] = 0.0
    xs = wp.array(xv, requires_grad=True)
    ys = wp.array(rng.uniform(0.2, 1.0, n).astype(np.float32), requires_grad=True)
    vs = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(evaluate, dim=n, inputs=[xs, ys, vs], outputs=[out])
    tape.backward(grads={out: wp.ones(n, dtype=float)})
    res = {"out": out.numpy().copy(), "xs_grad": xs.grad.numpy().copy(),
           "ys_grad": ys.grad.numpy().copy(), "vs_grad": vs.grad.numpy().copy()}

    a = wp.array(np.arange(1, 6, dtype=np.float32), requires_grad=True)
    b = wp.zeros_like(a)
    b.grad.fill_(1.0)
    tape2 = wp.Tape()
    with tape2:
        wp.launch(evaluate_nr, dim=5, inputs=[a], outputs=[b])
    tape2.backward()
    res["b"] = b.numpy().copy()
    res["a_grad"] = a.grad.numpy().copy()
    return res
