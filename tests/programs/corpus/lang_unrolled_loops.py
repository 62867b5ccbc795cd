"""Loops with compile-time trip counts, as Warp unrolls them: nested constant ranges filling a
matrix element by element, Horner's rule over a Python list of coefficients read with
wp.static, a loop over a module constant, a loop over len() of a vector, range with a
constant step, and the gradients through all of them (the loop-carried values included)."""

import numpy as np
import warp as wp

N = 3
COEFFS = [0.3, -1.2, 0.5, 2.0, -0.25]


@wp.func
def horner(x: float):
    acc = float(0.0)
    for k in range(wp.static(len(COEFFS))):
        acc = acc * x + wp.static(COEFFS[k])
    return acc


@wp.func
def rotation_like(a: float, b: float) -> wp.mat33:
    m = wp.mat33()
    for r in range(3):
        for c in range(3):
            m[r, c] = wp.sin(a * float(r + 1) + b * float(c)) if r != c else wp.cos(a - b)
    return m


@wp.kernel
def unrolled(xs: wp.array(dtype=float), vs: wp.array(dtype=wp.vec4), out: wp.array(dtype=float, ndim=2),
             mats: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    x = xs[i]
    v = vs[i]
    out[i, 0] = horner(x)
    p = float(1.0)
    for _k in range(N):
        p = p * (x + 1.5)
    out[i, 1] = p
    s = float(0.0)
    for k in range(4):
        s = s + v[k] * float(k + 1)
    out[i, 2] = s
    t = float(0.0)
    for k in range(0, 8, 3):
        t = t + wp.sin(x * float(k))
    out[i, 3] = t
    mats[i] = rotation_like(x, v[0])


@wp.kernel
def loss(xs: wp.array(dtype=float), vs: wp.array(dtype=wp.vec4), total: wp.array(dtype=float)):
    i = wp.tid()
    x = xs[i]
    v = vs[i]
    p = float(1.0)
    for _k in range(N):
        p = p * (x + 1.5)
    s = float(0.0)
    for k in range(4):
        s = s + v[k] * v[k] * float(k + 1)
    m = rotation_like(x, v[1])
    r = wp.vec3(1.0, 2.0, 3.0)
    for _j in range(2):
        r = m @ r * 0.5
    wp.atomic_add(total, 0, horner(x) + p + s + wp.length_sq(r) + wp.determinant(m))


def run():
    rng = np.random.default_rng(23)
    n = 6
    xs = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), dtype=float, requires_grad=True)
    vs = wp.array(rng.uniform(-1.0, 1.0, (n, 4)).astype(np.float32), dtype=wp.vec4, requires_grad=True)
    out = wp.zeros((n, 4), dtype=float)
    mats = wp.zeros(n, dtype=wp.mat33)
    wp.launch(unrolled, dim=n, inputs=[xs, vs], outputs=[out, mats])
    total = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(loss, dim=n, inputs=[xs, vs], outputs=[total])
    tape.backward(total)
    return {"values": out.numpy(), "mats": mats.numpy(), "loss": total.numpy(), "grad_x": xs.grad.numpy(),
            "grad_v": vs.grad.numpy()}


TOLERANCE = {"loss": (1e-5, 1e-5), "grad_x": (1e-4, 1e-5), "grad_v": (1e-4, 1e-5)}
