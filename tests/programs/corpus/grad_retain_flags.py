"""requires_grad and retain_grad as the Differentiability page describes them: arrays created
with and without requires_grad (no .grad buffer), turning requires_grad on later, zeros_like /
empty_like / clone propagating it, output gradients consumed by the backward pass unless the
array was created with retain_grad=True, and tape.gradients / tape.get_adjoint."""

import numpy as np
import warp as wp


@wp.kernel
def f1(x: wp.array(dtype=float), c: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * c[i] + x[i] * x[i]


@wp.kernel
def f2(y: wp.array(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    z[i] = wp.sin(y[i]) * 2.0


@wp.kernel
def total(z: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, z[i])


def run():
    n = 5
    x = wp.array(np.linspace(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    c = wp.array(np.linspace(2.0, 3.0, n).astype(np.float32))
    out = {"c_has_grad": c.grad is not None, "c_requires_grad": c.requires_grad,
           "zeros_like_requires_grad": wp.zeros_like(x).requires_grad,
           "empty_like_requires_grad": wp.empty_like(x).requires_grad,
           "clone_requires_grad": wp.clone(x).requires_grad}
    y = wp.zeros(n, dtype=float, requires_grad=True, retain_grad=True)
    z = wp.zeros(n, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(f1, dim=n, inputs=[x, c], outputs=[y])
        wp.launch(f2, dim=n, inputs=[y], outputs=[z])
        wp.launch(total, dim=n, inputs=[z], outputs=[loss])
    tape.backward(loss)
    out["x_grad"] = x.grad.numpy().copy()
    out["y_grad_retained"] = y.grad.numpy().copy()
    out["z_grad_consumed"] = z.grad.numpy().copy()
    out["y_retain_flag"] = bool(y.retain_grad)
    out["c_grad_still_none"] = c.grad is None

    # turn requires_grad on afterwards: a zeroed .grad appears, and c now receives a gradient
    c.requires_grad = True
    out["c_grad_zero"] = c.grad.numpy().copy()
    tape.reset()
    loss.zero_()
    with tape:
        wp.launch(f1, dim=n, inputs=[x, c], outputs=[y])
        wp.launch(f2, dim=n, inputs=[y], outputs=[z])
        wp.launch(total, dim=n, inputs=[z], outputs=[loss])
    tape.backward(loss)
    out["c_grad"] = c.grad.numpy().copy()
    out["x_grad_second"] = x.grad.numpy().copy()
    out["tape_has_c"] = c in tape.gradients
    out["adjoint_is_grad"] = bool(np.array_equal(tape.get_adjoint(x).numpy(), x.grad.numpy()))
    return out
