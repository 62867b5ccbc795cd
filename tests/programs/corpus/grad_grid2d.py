"""Gradients on 2D and 3D arrays: a smoothness (Laplacian) energy on a height field launched
over a 2D grid with wp.tid() pairs and boundary checks, a 3D density with a trilinear gather,
and a Tape over both; gradients come back in the arrays' own shapes."""

import numpy as np
import warp as wp


@wp.kernel
def laplacian_energy(h: wp.array2d(dtype=float), w: float, e: wp.array(dtype=float)):
    i, j = wp.tid()
    ny = h.shape[0]
    nx = h.shape[1]
    if i == 0 or j == 0 or i == ny - 1 or j == nx - 1:
        wp.atomic_add(e, 0, 0.5 * h[i, j] * h[i, j])
        return
    lap = h[i - 1, j] + h[i + 1, j] + h[i, j - 1] + h[i, j + 1] - 4.0 * h[i, j]
    wp.atomic_add(e, 0, w * lap * lap)


@wp.kernel
def trilinear(density: wp.array3d(dtype=float), pts: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    t = wp.tid()
    p = pts[t]
    i = int(p[0])
    j = int(p[1])
    k = int(p[2])
    fx = p[0] - float(i)
    fy = p[1] - float(j)
    fz = p[2] - float(k)
    c00 = wp.lerp(density[i, j, k], density[i + 1, j, k], fx)
    c10 = wp.lerp(density[i, j + 1, k], density[i + 1, j + 1, k], fx)
    c01 = wp.lerp(density[i, j, k + 1], density[i + 1, j, k + 1], fx)
    c11 = wp.lerp(density[i, j + 1, k + 1], density[i + 1, j + 1, k + 1], fx)
    out[t] = wp.lerp(wp.lerp(c00, c10, fy), wp.lerp(c01, c11, fy), fz)


@wp.kernel
def sum_sq(x: wp.array(dtype=float), e: wp.array(dtype=float)):
    t = wp.tid()
    wp.atomic_add(e, 0, x[t] * x[t])


def run():
    rng = np.random.default_rng(37)
    h = wp.array(rng.normal(size=(6, 7)).astype(np.float32), dtype=float, requires_grad=True)
    density = wp.array(rng.uniform(0.0, 1.0, (4, 4, 4)).astype(np.float32), requires_grad=True)
    pts = wp.array(rng.uniform(0.0, 2.99, (10, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    samples = wp.zeros(10, dtype=float, requires_grad=True)
    e = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(laplacian_energy, dim=h.shape, inputs=[h, 0.25], outputs=[e])
        wp.launch(trilinear, dim=10, inputs=[density, pts], outputs=[samples])
        wp.launch(sum_sq, dim=10, inputs=[samples], outputs=[e])
    tape.backward(e)
    return {
        "energy": e.numpy().copy(), "samples": samples.numpy().copy(),
        "h_grad": h.grad.numpy().copy(), "density_grad": density.grad.numpy().copy(),
        "pts_grad": pts.grad.numpy().copy(), "h_grad_shape": np.array(h.grad.shape),
    }


TOLERANCE = {"energy": (1e-5, 1e-5), "h_grad": (1e-5, 1e-5), "density_grad": (1e-5, 1e-5),
             "pts_grad": (1e-4, 1e-5)}
