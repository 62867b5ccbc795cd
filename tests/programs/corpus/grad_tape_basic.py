"""Tape basics from the Differentiability page: record three kernels, backward from a scalar
loss, read a.grad and tape.gradients, tape.zero() and a second backward, accumulation
without zero(), and which intermediate gradients Warp leaves behind."""

import numpy as np
import warp as wp


@wp.kernel
def compute1(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=float), c: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    c[i] = a[i] * b[i] + wp.vec3(1.0, 2.0, 3.0)


@wp.kernel
def compute2(c: wp.array(dtype=wp.vec3), d: wp.array(dtype=float)):
    i = wp.tid()
    v = c[i]
    d[i] = wp.dot(v, v) + wp.sin(v[0]) * v[2]


@wp.kernel
def loss_kernel(d: wp.array(dtype=float), l: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(l, 0, d[i] * 0.5)


def run():
    n = 16
    rng = np.random.default_rng(11)
    a = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    b = wp.array(rng.uniform(0.5, 1.5, n).astype(np.float32), dtype=float, requires_grad=True)
    c = wp.zeros(n, dtype=wp.vec3, requires_grad=True)
    d = wp.zeros(n, dtype=float, requires_grad=True)
    l = wp.zeros(1, dtype=float, requires_grad=True)

    tape = wp.Tape()
    with tape:
        wp.launch(kernel=compute1, dim=n, inputs=[a, b, c])
        wp.launch(kernel=compute2, dim=n, inputs=[c, d])
        wp.launch(kernel=loss_kernel, dim=n, inputs=[d, l])
    tape.backward(l)
    out = {
        "loss": l.numpy().copy(),
        "d": d.numpy().copy(),
        "a_grad": a.grad.numpy().copy(),
        "b_grad": b.grad.numpy().copy(),
        "tape_grad_a": tape.gradients[a].numpy().copy() if a in tape.gradients else np.zeros(0, np.float32),
        "a_in_tape_gradients": a in tape.gradients,
        "l_grad_after": l.grad.numpy().copy(),
    }
    # second backward without zeroing: gradients accumulate on the buffers
    tape.backward(l)
    out["a_grad_twice"] = a.grad.numpy().copy()
    out["b_grad_twice"] = b.grad.numpy().copy()
    tape.zero()
    out["a_grad_zeroed"] = a.grad.numpy().copy()
    out["c_grad_zeroed"] = c.grad.numpy().copy()
    tape.backward(l)
    out["a_grad_again"] = a.grad.numpy().copy()
    out["b_grad_again"] = b.grad.numpy().copy()
    return out


TOLERANCE = {"loss": (1e-5, 1e-5)}
