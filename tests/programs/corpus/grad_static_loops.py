"""Gradients through loops with static bounds: range() with constant and wp.constant bounds,
wp.static bounds from Python lists with a wp.constant vector, nested static loops over matrix entries, a loop-carried
local accumulation (a polynomial by Horner's rule), and a fixed-length dynamic-bound loop
that only sums (the pattern Warp's adjoint handles)."""

import numpy as np
import warp as wp

DEGREE = wp.constant(5)
COEFFS = [0.5, -1.0, 0.25, 2.0, -0.75, 0.1]
vec6 = wp.types.vector(length=6, dtype=float)
COEFF_VEC = wp.constant(vec6(*COEFFS))


@wp.func
def horner(x: float, c: wp.array(dtype=float)):
    acc = wp.float32(0.0)
    for k in range(wp.static(DEGREE + 1)):
        acc = acc * x + c[DEGREE - k]
    return acc


@wp.kernel
def poly(x: wp.array(dtype=float), c: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = horner(x[i], c)


@wp.kernel
def static_poly(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    acc = wp.float32(0.0)
    for k in range(wp.static(len(COEFFS))):
        acc += COEFF_VEC[k] * wp.pow(x[i], float(k))
    y[i] = acc


@wp.kernel
def frobenius_like(m: wp.array(dtype=wp.mat33), y: wp.array(dtype=float)):
    i = wp.tid()
    a = m[i]
    s = wp.float32(0.0)
    for r in range(3):
        for c in range(3):
            w = float(r * 3 + c + 1)
            s += w * a[r, c] * a[r, c] + wp.sin(a[r, c])
    y[i] = s


@wp.kernel
def window_sum(x: wp.array(dtype=float), width: int, y: wp.array(dtype=float)):
    i = wp.tid()
    s = wp.float32(0.0)
    for j in range(width):
        k = (i + j) % x.shape[0]
        s += x[k] * x[k] * float(j + 1)
    y[i] = s


@wp.kernel
def total(y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, y[i])


def run():
    n = 8
    rng = np.random.default_rng(1)
    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    c = wp.array(np.array(COEFFS, np.float32), requires_grad=True)
    m = wp.array(rng.normal(size=(n, 3, 3)).astype(np.float32), dtype=wp.mat33, requires_grad=True)
    y1, y2, y3, y4 = (wp.zeros(n, dtype=float, requires_grad=True) for _ in range(4))
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(poly, dim=n, inputs=[x, c], outputs=[y1])
        wp.launch(static_poly, dim=n, inputs=[x], outputs=[y2])
        wp.launch(frobenius_like, dim=n, inputs=[m], outputs=[y3])
        wp.launch(window_sum, dim=n, inputs=[x, 3], outputs=[y4])
        for y in (y1, y2, y3, y4):
            wp.launch(total, dim=n, inputs=[y], outputs=[loss])
    tape.backward(loss)
    return {
        "y1": y1.numpy().copy(), "y2": y2.numpy().copy(), "y3": y3.numpy().copy(), "y4": y4.numpy().copy(),
        "loss": loss.numpy().copy(), "x_grad": x.grad.numpy().copy(), "c_grad": c.grad.numpy().copy(),
        "m_grad": m.grad.numpy().copy(),
    }


TOLERANCE = {"loss": (1e-5, 1e-5), "x_grad": (1e-5, 1e-5)}
