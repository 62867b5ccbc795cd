"""Gradients through wp.atomic_min / wp.atomic_max reductions (the adjoint goes to the thread
whose value the slot holds), on float32 scalars and with a bounding box of vec3 points
computed component by component, plus atomic_add into the same slots for comparison."""

import numpy as np
import warp as wp


@wp.kernel
def extremes(x: wp.array(dtype=float), lo: wp.array(dtype=float), hi: wp.array(dtype=float)):
    i = wp.tid()
    g = i % 3
    wp.atomic_min(lo, g, x[i] * x[i])
    wp.atomic_max(hi, g, wp.sin(x[i]))


@wp.kernel
def bbox(p: wp.array(dtype=wp.vec3), lower: wp.array(dtype=float), upper: wp.array(dtype=float)):
    i = wp.tid()
    for k in range(3):
        wp.atomic_min(lower, k, p[i][k])
        wp.atomic_max(upper, k, p[i][k])


@wp.kernel
def combine(lo: wp.array(dtype=float), hi: wp.array(dtype=float), lower: wp.array(dtype=float),
            upper: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    w = float(i + 1)
    wp.atomic_add(loss, 0, w * lo[i] + 2.0 * w * hi[i] + (upper[i] - lower[i]) * w)


def run():
    rng = np.random.default_rng(59)
    n = 15
    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    p = wp.array(rng.uniform(-2.0, 2.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    lo = wp.full(3, 1.0e10, dtype=float, requires_grad=True)
    hi = wp.full(3, -1.0e10, dtype=float, requires_grad=True)
    lower = wp.full(3, 1.0e10, dtype=float, requires_grad=True)
    upper = wp.full(3, -1.0e10, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(extremes, dim=n, inputs=[x], outputs=[lo, hi])
        wp.launch(bbox, dim=n, inputs=[p], outputs=[lower, upper])
        wp.launch(combine, dim=3, inputs=[lo, hi, lower, upper], outputs=[loss])
    tape.backward(loss)
    return {"lo": lo.numpy().copy(), "hi": hi.numpy().copy(), "lower": lower.numpy().copy(),
            "upper": upper.numpy().copy(), "loss": loss.numpy().copy(),
            "x_grad": x.grad.numpy().copy(), "p_grad": p.grad.numpy().copy()}


TOLERANCE = {"loss": (1e-5, 1e-5)}
