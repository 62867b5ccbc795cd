"""Kernels with enable_backward=False: a forward-only statistics kernel outside the tape, the
same kernel recorded on a tape (Warp warns and skips its adjoint, so nothing flows through
it), module options set with wp.set_module_options, and the per-kernel option overriding
them; wp.get_module_options reports what was set."""

import warnings

import numpy as np
import warp as wp

wp.set_module_options({"enable_backward": True})


@wp.kernel(enable_backward=False)
def normalize_stats(x: wp.array(dtype=float), stats: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(stats, 0, x[i])
    wp.atomic_max(stats, 1, wp.abs(x[i]))


@wp.kernel(enable_backward=False)
def triple(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 3.0 * x[i]


@wp.kernel
def scaled_square(x: wp.array(dtype=float), stats: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    s = x[i] / stats[1]
    y[i] = s * s + wp.cos(x[i])


@wp.kernel
def total(y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, y[i])


def run():
    n = 10
    rng = np.random.default_rng(29)
    x = wp.array(rng.uniform(-2.0, 2.0, n).astype(np.float32), requires_grad=True)
    stats = wp.zeros(2, dtype=float)
    wp.launch(normalize_stats, dim=n, inputs=[x], outputs=[stats])
    y = wp.zeros(n, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scaled_square, dim=n, inputs=[x, stats], outputs=[y])
        wp.launch(total, dim=n, inputs=[y], outputs=[loss])
    tape.backward(loss)
    out = {"stats": stats.numpy().copy(), "loss": loss.numpy().copy(), "x_grad": x.grad.numpy().copy()}

    # a forward-only kernel recorded on the tape: no gradient flows through it
    t = wp.zeros(n, dtype=float, requires_grad=True)
    u = wp.zeros(n, dtype=float, requires_grad=True)
    loss2 = wp.zeros(1, dtype=float, requires_grad=True)
    x.grad.zero_()
    tape2 = wp.Tape()
    with tape2:
        wp.launch(triple, dim=n, inputs=[x], outputs=[t])
        wp.launch(scaled_square, dim=n, inputs=[t, stats], outputs=[u])
        wp.launch(total, dim=n, inputs=[u], outputs=[loss2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tape2.backward(loss2)
    out["x_grad_blocked"] = x.grad.numpy().copy()
    out["t_grad_left"] = t.grad.numpy().copy()
    out["module_enable_backward"] = bool(wp.get_module_options()["enable_backward"])
    return out


TOLERANCE = {"stats": (1e-5, 1e-5), "loss": (1e-5, 1e-5)}
