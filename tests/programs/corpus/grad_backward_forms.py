"""The ways to start a backward pass: tape.backward(loss), backward(grads=...) with several
arrays at once, backward() with no arguments after seeding .grad by hand, a launch excluded
from the tape with record_tape=False, two tapes over separate launches, and a launch over a
2D dim tuple."""

import numpy as np
import warp as wp


@wp.kernel
def two_outputs(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    y[i] = wp.exp(0.5 * x[i])
    z[i] = wp.vec2(x[i] * x[i], wp.sin(x[i]))


@wp.kernel
def outer_sum(a: wp.array(dtype=float), b: wp.array(dtype=float), m: wp.array2d(dtype=float)):
    i, j = wp.tid()
    m[i, j] = a[i] * b[j] + a[i] * a[i]


@wp.kernel
def reduce2d(m: wp.array2d(dtype=float), loss: wp.array(dtype=float)):
    i, j = wp.tid()
    wp.atomic_add(loss, 0, m[i, j] * float(i - j))


def run():
    n = 6
    rng = np.random.default_rng(53)
    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    y = wp.zeros(n, dtype=float, requires_grad=True)
    z = wp.zeros(n, dtype=wp.vec2, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(two_outputs, dim=n, inputs=[x], outputs=[y, z])
    gy = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32))
    gz = wp.array(rng.uniform(-1.0, 1.0, (n, 2)).astype(np.float32), dtype=wp.vec2)
    tape.backward(grads={y: gy, z: gz})
    out = {"x_grad_dict": x.grad.numpy().copy()}

    tape.zero()
    y.grad.fill_(1.0)
    z.grad.fill_(wp.vec2(0.5, -1.0))
    tape.backward()
    out["x_grad_manual"] = x.grad.numpy().copy()

    a = wp.array(rng.uniform(-1.0, 1.0, 4).astype(np.float32), requires_grad=True)
    b = wp.array(rng.uniform(-1.0, 1.0, 5).astype(np.float32), requires_grad=True)
    m = wp.zeros((4, 5), dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    unrecorded = wp.zeros(1, dtype=float, requires_grad=True)
    tape2 = wp.Tape()
    with tape2:
        wp.launch(outer_sum, dim=(4, 5), inputs=[a, b], outputs=[m])
        wp.launch(reduce2d, dim=m.shape, inputs=[m], outputs=[unrecorded], record_tape=False)
        wp.launch(reduce2d, dim=m.shape, inputs=[m], outputs=[loss])
    tape2.backward(loss)
    out.update({"loss": loss.numpy().copy(), "unrecorded": unrecorded.numpy().copy(),
                "a_grad": a.grad.numpy().copy(), "b_grad": b.grad.numpy().copy(),
                "n_launches": len(tape2.launches)})
    return out


TOLERANCE = {"loss": (1e-5, 1e-5), "unrecorded": (1e-5, 1e-5)}
