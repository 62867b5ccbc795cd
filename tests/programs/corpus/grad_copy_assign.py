"""wp.copy and array.assign under a tape: the copy carries gradients back to its source
(including copies with offsets and counts), clone(), and what .grad of the copy holds."""

import numpy as np
import warp as wp


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i] + 1.0


@wp.kernel
def weighted_loss(y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, float(i + 1) * y[i])


@wp.kernel
def vec_energy(v: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.length_sq(v[i]) * float(i + 1))


def run():
    n = 6
    rng = np.random.default_rng(6)
    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    y = wp.zeros(n, dtype=float, requires_grad=True)
    y2 = wp.zeros(n, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square, dim=n, inputs=[x], outputs=[y])
        wp.copy(y2, y)
        wp.launch(weighted_loss, dim=n, inputs=[y2], outputs=[loss])
    tape.backward(loss)
    out = {"loss": loss.numpy().copy(), "x_grad_copy": x.grad.numpy().copy(),
           "y_grad": y.grad.numpy().copy(), "y2_grad": y2.grad.numpy().copy()}

    # a partial copy: only elements 1..3 of y reach the loss through z
    tape.reset()
    loss.zero_()
    z = wp.zeros(n, dtype=float, requires_grad=True)
    with tape:
        wp.launch(square, dim=n, inputs=[x], outputs=[y])
        wp.copy(z, y, dest_offset=2, src_offset=1, count=3)
        wp.launch(weighted_loss, dim=n, inputs=[z], outputs=[loss])
    tape.backward(loss)
    out["loss_partial"] = loss.numpy().copy()
    out["x_grad_partial"] = x.grad.numpy().copy()

    # assign from another array under the tape, and clone()
    v = wp.array(rng.uniform(-1.0, 1.0, (4, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    w = wp.zeros(4, dtype=wp.vec3, requires_grad=True)
    e = wp.zeros(1, dtype=float, requires_grad=True)
    tape2 = wp.Tape()
    with tape2:
        w.assign(v)
        c = wp.clone(w, requires_grad=True)
        wp.launch(vec_energy, dim=4, inputs=[c], outputs=[e])
    tape2.backward(e)
    out["energy"] = e.numpy().copy()
    out["v_grad_assign"] = v.grad.numpy().copy()
    out["w_grad"] = w.grad.numpy().copy()
    out["c_grad"] = c.grad.numpy().copy()
    return out


TOLERANCE = {"loss": (1e-5, 1e-5), "loss_partial": (1e-5, 1e-5), "energy": (1e-5, 1e-5)}
