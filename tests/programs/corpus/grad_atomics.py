"""Gradients through atomics: atomic_add and atomic_sub accumulation (scatter-add of particle
weights into grid cells), the `+=` / `-=` array shorthand, atomics on vec3 arrays and on 2D
arrays, and the gradient that flows back from the accumulated cells."""

import numpy as np
import warp as wp


@wp.kernel
def scatter(pos: wp.array(dtype=float), mass: wp.array(dtype=float), grid: wp.array(dtype=float)):
    i = wp.tid()
    p = pos[i] * 4.0
    cell = int(wp.floor(p))
    f = p - float(cell)
    wp.atomic_add(grid, cell, (1.0 - f) * mass[i])
    wp.atomic_add(grid, cell + 1, f * mass[i])


@wp.kernel
def shorthand(x: wp.array(dtype=float), out: wp.array(dtype=float), out2d: wp.array2d(dtype=float)):
    i = wp.tid()
    out[i % 3] += x[i] * x[i]
    out[3] -= 0.5 * x[i]
    out2d[i % 2, i % 3] += wp.exp(0.1 * x[i])


@wp.kernel
def vec_accumulate(v: wp.array(dtype=wp.vec3), acc: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    wp.atomic_add(acc, i % 2, v[i] * float(i + 1))
    wp.atomic_sub(acc, 2, wp.cross(v[i], wp.vec3(0.0, 0.0, 1.0)))


@wp.kernel
def grid_loss(grid: wp.array(dtype=float), out: wp.array(dtype=float), out2d: wp.array2d(dtype=float),
              acc: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    if i < grid.shape[0]:
        wp.atomic_add(loss, 0, grid[i] * grid[i] * float(i + 1))
    if i < out.shape[0]:
        wp.atomic_add(loss, 0, out[i] * float(2 * i + 1))
    if i < 6:
        wp.atomic_add(loss, 0, out2d[i % 2, i % 3] * out2d[i % 2, i % 3])
    if i < acc.shape[0]:
        wp.atomic_add(loss, 0, wp.dot(acc[i], wp.vec3(1.0, -1.0, 0.5)))


def run():
    n = 20
    rng = np.random.default_rng(23)
    pos = wp.array(rng.uniform(0.0, 1.9, n).astype(np.float32), requires_grad=True)
    mass = wp.array(rng.uniform(0.5, 1.5, n).astype(np.float32), requires_grad=True)
    grid = wp.zeros(10, dtype=float, requires_grad=True)
    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    out = wp.zeros(4, dtype=float, requires_grad=True)
    out2d = wp.zeros((2, 3), dtype=float, requires_grad=True)
    v = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    acc = wp.zeros(3, dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scatter, dim=n, inputs=[pos, mass], outputs=[grid])
        wp.launch(shorthand, dim=n, inputs=[x], outputs=[out, out2d])
        wp.launch(vec_accumulate, dim=n, inputs=[v], outputs=[acc])
        wp.launch(grid_loss, dim=16, inputs=[grid, out, out2d, acc], outputs=[loss])
    tape.backward(loss)
    return {
        "grid": grid.numpy().copy(), "out": out.numpy().copy(), "out2d": out2d.numpy().copy(),
        "acc": acc.numpy().copy(), "loss": loss.numpy().copy(),
        "pos_grad": pos.grad.numpy().copy(), "mass_grad": mass.grad.numpy().copy(),
        "x_grad": x.grad.numpy().copy(), "v_grad": v.grad.numpy().copy(),
        "grid_grad": grid.grad.numpy().copy(), "out2d_grad": out2d.grad.numpy().copy(),
    }


TOLERANCE = {"grid": (1e-5, 1e-5), "out": (1e-5, 1e-5), "out2d": (1e-5, 1e-5), "acc": (1e-5, 1e-5),
             "loss": (1e-5, 1e-4), "pos_grad": (1e-4, 1e-4), "mass_grad": (1e-4, 1e-4), "x_grad": (1e-4, 1e-5),
             "v_grad": (1e-5, 1e-5), "grid_grad": (1e-5, 1e-5), "out2d_grad": (1e-5, 1e-5)}
