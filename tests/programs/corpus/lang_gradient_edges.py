"""Gradients at the points where a derivative is not smooth, as a simulation reaches them:
the angle between unit vectors that coincide (acos of a dot product of 1), atan2 at the
origin, abs at 0, a value clamped exactly onto its bounds by an earlier step, relu as
wp.max(x, 0.0) at 0, min of equal values, sqrt and length away from zero, normalize of a
zero vector; the adjoints must be Warp's finite choices."""

import numpy as np
import warp as wp


@wp.kernel
def clamp_step(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.clamp(x[i], -1.0, 1.0)


@wp.kernel
def edges(y: wp.array(dtype=float), a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3),
          loss: wp.array(dtype=float)):
    i = wp.tid()
    v = y[i]
    ua = wp.normalize(a[i])
    ub = wp.normalize(b[i])
    angle = wp.acos(wp.dot(ua, ub))
    heading = wp.atan2(v * v - v * v, v - v) + wp.atan2(ua[1], ua[0])
    s = wp.clamp(v, -1.0, 1.0) * 2.0 + wp.max(v, 0.0) + wp.abs(v) + wp.min(v, v) + wp.sqrt(v * v + 1.0)
    z = wp.normalize(a[i] - a[i])
    wp.atomic_add(loss, 0, angle + heading + s + wp.length(z) + z[0])


def run():
    xs = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 0.0], dtype=np.float32)
    x = wp.array(xs, dtype=float, requires_grad=True)
    y = wp.zeros(8, dtype=float, requires_grad=True)
    rng = np.random.default_rng(4)
    av = rng.uniform(-1.0, 1.0, (8, 3)).astype(np.float32)
    bv = rng.uniform(-1.0, 1.0, (8, 3)).astype(np.float32)
    # even rows: parallel along an axis, so the unit vectors and their dot product (1) are
    # exact whatever the rounding; odd rows: generic directions
    av[::2] = [[2.0, 0.0, 0.0], [0.0, -3.0, 0.0], [0.0, 0.0, 0.5], [-1.0, 0.0, 0.0]]
    bv[::2] = av[::2] * 4.0
    a = wp.array(av, dtype=wp.vec3, requires_grad=True)
    b = wp.array(bv, dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(clamp_step, dim=8, inputs=[x], outputs=[y])
        wp.launch(edges, dim=8, inputs=[y, a, b], outputs=[loss])
    tape.backward(loss)
    return {"loss": loss.numpy(), "grad_x": x.grad.numpy(), "grad_a": a.grad.numpy(), "grad_b": b.grad.numpy()}


TOLERANCE = {"loss": (1e-5, 1e-5), "grad_a": (1e-4, 1e-4), "grad_b": (1e-4, 1e-4)}
