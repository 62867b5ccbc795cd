"""Tape.record_func: a host-side step (a numpy normalisation) between two kernels, whose
backward is supplied as a Python callable; record_scope_begin/end (also opened by
ScopedTimer under a tape) group launches without changing the gradients."""

import numpy as np
import warp as wp


@wp.kernel
def scale(x: wp.array(dtype=float), s: float, y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = s * x[i] + wp.sin(x[i])


@wp.kernel
def sum_squares(z: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, z[i] * z[i])


def run():
    n = 9
    rng = np.random.default_rng(13)
    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    y = wp.zeros(n, dtype=float, requires_grad=True)
    z = wp.zeros(n, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        with wp.ScopedTimer("forward", print=False):
            tape.record_scope_begin("features")
            wp.launch(scale, dim=n, inputs=[x, 2.0], outputs=[y])
            tape.record_scope_end()
        # z = y / 4 + y**2 / 10 computed on the host
        yv = y.numpy().copy()
        z.assign((yv / 4.0 + yv * yv / 10.0).astype(np.float32))

        def backward_host():
            gz = z.grad.numpy().copy()
            yv2 = y.numpy().copy()
            y.grad.assign((y.grad.numpy().copy() + gz * (0.25 + yv2 / 5.0)).astype(np.float32))

        tape.record_func(backward=backward_host, arrays=[y, z])
        tape.record_scope_begin("loss", metadata={"kind": "reduction"})
        wp.launch(sum_squares, dim=n, inputs=[z], outputs=[loss])
        tape.record_scope_end()
    tape.backward(loss)
    return {
        "loss": loss.numpy().copy(),
        "x_grad": x.grad.numpy().copy(),
        "z_grad": z.grad.numpy().copy(),
        "y_grad_after": y.grad.numpy().copy(),
        "n_launches": len(tape.launches),
    }


TOLERANCE = {"loss": (1e-5, 1e-5)}
