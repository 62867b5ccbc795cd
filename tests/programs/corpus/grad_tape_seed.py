"""Backward with `grads={array: seed}` instead of a scalar loss: a vector-valued output seeded
with chosen adjoints (a vector-Jacobian product), reset() and re-recording, and seeding an
array that has no .grad buffer of its own."""

import numpy as np
import warp as wp


@wp.kernel
def stretch(x: wp.array(dtype=wp.vec2), k: float, y: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    p = x[i]
    y[i] = wp.vec2(k * p[0] * p[1], wp.exp(0.5 * p[0]) - p[1] * p[1])


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i] * x[i]


def run():
    n = 8
    rng = np.random.default_rng(5)
    x = wp.array(rng.uniform(-1.0, 1.0, (n, 2)).astype(np.float32), dtype=wp.vec2, requires_grad=True)
    y = wp.zeros(n, dtype=wp.vec2, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(stretch, dim=n, inputs=[x, 1.5], outputs=[y])
    seed = wp.array(np.tile(np.array([[1.0, 0.0]], np.float32), (n, 1)), dtype=wp.vec2)
    tape.backward(grads={y: seed})
    out = {"y": y.numpy().copy(), "vjp_first": x.grad.numpy().copy()}
    tape.zero()
    seed2 = wp.array(np.tile(np.array([[0.0, 1.0]], np.float32), (n, 1)), dtype=wp.vec2)
    tape.backward(grads={y: seed2})
    out["vjp_second"] = x.grad.numpy().copy()
    out["seed2_after"] = seed2.numpy().copy()

    # reset() forgets the launches and zeroes the gradients; record again with another k
    tape.reset()
    out["x_grad_after_reset"] = x.grad.numpy().copy()
    with tape:
        wp.launch(stretch, dim=n, inputs=[x, -2.0], outputs=[y])
    w = rng.uniform(-1.0, 1.0, (n, 2)).astype(np.float32)
    tape.backward(grads={y: wp.array(w, dtype=wp.vec2)})
    out["vjp_weighted"] = x.grad.numpy().copy()

    # an output created without requires_grad: the seed array becomes its gradient
    s = wp.array(rng.uniform(0.5, 2.0, n).astype(np.float32), requires_grad=True)
    t = wp.zeros(n, dtype=float)
    tape2 = wp.Tape()
    with tape2:
        wp.launch(square, dim=n, inputs=[s], outputs=[t])
    tape2.backward(grads={t: wp.ones(n, dtype=float)})
    out["s_grad"] = s.grad.numpy().copy()
    return out
