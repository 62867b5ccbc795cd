"""Arrays with requires_grad: Tape over kernels reading 2D arrays and vec arrays, grads of views, zero_grad."""

import numpy as np
import warp as wp


@wp.kernel
def weighted_norms(x: wp.array(dtype=wp.vec3), w: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i, j = wp.tid()
    wp.atomic_add(out, 0, w[i, j] * wp.length_sq(x[i]) * float(j + 1))


@wp.kernel
def gather(x: wp.array(dtype=float), idx: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[idx[i]] * x[idx[i]]


@wp.kernel
def total(y: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, y[i])


def run():
    r = {}
    rng = np.random.default_rng(7)
    x = wp.array(rng.standard_normal((4, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    w = wp.array(rng.uniform(0.5, 1.5, (4, 2)).astype(np.float32), requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(weighted_norms, dim=(4, 2), inputs=[x, w], outputs=[out])
    tape.backward(loss=out)
    r["loss"] = out.numpy().copy()
    r["x_grad"] = x.grad.numpy().copy()
    r["w_grad"] = w.grad.numpy().copy()
    tape.zero()
    r["x_grad_zero"] = x.grad.numpy().copy()
    xs = wp.array(np.linspace(-1.0, 1.0, 8, dtype=np.float32), requires_grad=True)
    idx = wp.array(np.array([0, 2, 2, 5, 7], dtype=np.int32))
    y = wp.zeros(5, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape2 = wp.Tape()
    with tape2:
        wp.launch(gather, dim=5, inputs=[xs, idx], outputs=[y])
        wp.launch(total, dim=5, inputs=[y], outputs=[loss])
    tape2.backward(loss=loss)
    r["xs_grad"] = xs.grad.numpy().copy()
    r["y_grad"] = y.grad.numpy().copy()
    g = wp.zeros(5, dtype=float)
    g.fill_(2.0)
    tape2.zero()
    tape2.backward(grads={y: g})
    r["xs_grad_seeded"] = xs.grad.numpy().copy()
    r["requires_grad"] = xs.requires_grad
    z = wp.zeros(3, dtype=float)
    r["no_grad_is_none"] = z.grad is None
    z.requires_grad = True
    r["grad_after_flag"] = z.grad.numpy().copy()
    return r


TOLERANCE = {"loss": (1e-5, 1e-5), "x_grad": (1e-5, 1e-5), "w_grad": (1e-5, 1e-5)}
