"""Gradients through structs: an array of structs with requires_grad (its .grad is an array of
the same struct, read field by field through numpy), a struct parameter holding an array
with requires_grad, struct values passed to a @wp.func, and an element field read both
through a local copy and directly (bodies[i].x)."""

import numpy as np
import warp as wp


@wp.struct
class Body:
    x: wp.vec3
    m: float
    k: int


@wp.struct
class Params:
    g: wp.vec3
    scale: float
    w: wp.array(dtype=float)


@wp.func
def energy(b: Body, p: Params):
    return b.m * wp.dot(p.g, b.x) * p.scale + float(b.k)


@wp.kernel
def total_energy(bodies: wp.array(dtype=Body), p: Params, out: wp.array(dtype=float)):
    i = wp.tid()
    b = bodies[i]
    e = energy(b, p) * p.w[i]
    wp.atomic_add(out, 0, e + b.m * b.m + wp.length_sq(bodies[i].x))


def run():
    n = 4
    rng = np.random.default_rng(1)
    host = []
    for i in range(n):
        b = Body()
        b.x = wp.vec3(*rng.uniform(-1, 1, 3))
        b.m = float(i + 1)
        b.k = i
        host.append(b)
    bodies = wp.array(host, dtype=Body, requires_grad=True)
    p = Params()
    p.g = wp.vec3(0.0, -9.8, 1.0)
    p.scale = 0.5
    p.w = wp.array(rng.uniform(0.5, 1.5, n).astype(np.float32), requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(total_energy, dim=n, inputs=[bodies, p], outputs=[out])
    tape.backward(out)
    g = bodies.grad.numpy()
    return {"energy": out.numpy(), "grad_x": g["x"], "grad_m": g["m"], "grad_k": g["k"], "grad_w": p.w.grad.numpy()}


TOLERANCE = {"energy": (1e-5, 1e-5)}
