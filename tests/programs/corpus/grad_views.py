"""Gradients of array views: a kernel launched on a slice x[2:7] of a requires_grad array
(the view's .grad is the matching slice of the parent's), a strided view x[::2], a row of a
2D array, a reshape, and flatten(); the parent's gradient shows where they landed."""

import numpy as np
import warp as wp


@wp.kernel
def cube(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i] * x[i]


@wp.kernel
def total(y: wp.array(dtype=float), w: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, w * y[i] * float(i + 1))


@wp.kernel
def grid_energy(m: wp.array2d(dtype=float), loss: wp.array(dtype=float)):
    i, j = wp.tid()
    wp.atomic_add(loss, 0, m[i, j] * m[i, j] * float(i + 2 * j + 1))


def run():
    x = wp.array(np.linspace(-1.0, 1.0, 12).astype(np.float32), requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        s = x[2:7]
        ys = wp.zeros(5, dtype=float, requires_grad=True)
        wp.launch(cube, dim=5, inputs=[s], outputs=[ys])
        wp.launch(total, dim=5, inputs=[ys, 1.0], outputs=[loss])
        t = x[::2]
        yt = wp.zeros(6, dtype=float, requires_grad=True)
        wp.launch(cube, dim=6, inputs=[t], outputs=[yt])
        wp.launch(total, dim=6, inputs=[yt, -0.5], outputs=[loss])
    tape.backward(loss)
    out = {"loss": loss.numpy().copy(), "x_grad": x.grad.numpy().copy(),
           "slice_grad": s.grad.numpy().copy(), "strided_grad": t.grad.numpy().copy(),
           "slice_grad_shares": bool(np.shares_memory(s.grad.numpy(), x.grad.numpy()))}

    m = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4) * 0.1, requires_grad=True)
    e = wp.zeros(1, dtype=float, requires_grad=True)
    tape2 = wp.Tape()
    with tape2:
        wp.launch(grid_energy, dim=(3, 4), inputs=[m], outputs=[e])
        row = m[1]
        yr = wp.zeros(4, dtype=float, requires_grad=True)
        wp.launch(cube, dim=4, inputs=[row], outputs=[yr])
        wp.launch(total, dim=4, inputs=[yr, 2.0], outputs=[e])
        r = m.reshape((2, 6))
        wp.launch(grid_energy, dim=(2, 6), inputs=[r], outputs=[e])
        f = m.flatten()
        yf = wp.zeros(12, dtype=float, requires_grad=True)
        wp.launch(cube, dim=12, inputs=[f], outputs=[yf])
        wp.launch(total, dim=12, inputs=[yf, 0.1], outputs=[e])
    tape2.backward(e)
    out.update({"energy": e.numpy().copy(), "m_grad": m.grad.numpy().copy(), "row_grad": row.grad.numpy().copy()})
    return out


TOLERANCE = {"loss": (1e-5, 1e-5), "energy": (1e-5, 1e-5), "m_grad": (1e-5, 1e-5)}
