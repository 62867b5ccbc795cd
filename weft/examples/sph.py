"""A small SPH dam break: neighbours through a HashGrid, checked against brute force.

Run: python -m weft.examples.sph [--particles N] [--steps K]

A block of fluid particles collapses under gravity in a box. Each step rebuilds the
HashGrid, computes every particle's density (poly6 kernel) and then its acceleration
(pressure by the spiky kernel's gradient, a viscosity term by its Laplacian, gravity),
and integrates with symplectic Euler, reflecting off the walls (Mueller, Charypar and
Gross 2003). After the first step the example recomputes density and acceleration in
float64 numpy over all pairs, without the grid, and prints the largest relative
differences: the grid must find every pair within the smoothing length. When warp-lang
is installed it also runs the same kernels under Warp's CPU from the same start and
prints how far its density and acceleration at step 0, and its positions at the end,
are from weft's (float32 sums in another order: differences of float32 rounding).
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import weft as wp
from weft.examples.warp_peer import run_in_warp

H = 0.1  # smoothing length
SPACING = 0.6 * H  # of the initial block of particles
REST_DENSITY = 1000.0
MASS = REST_DENSITY * SPACING ** 3
STIFFNESS = 2.0
VISCOSITY = 0.05
GRAVITY = -9.8
BOX = 1.0
POLY6 = 315.0 / (64.0 * math.pi * H ** 9)
SPIKY_GRAD = -45.0 / (math.pi * H ** 6)
VISC_LAP = 45.0 / (math.pi * H ** 6)


@wp.kernel
def densities(grid: wp.uint64, x: wp.array(dtype=wp.vec3), rho: wp.array(dtype=float), h: float,
              mass: float, poly6: float):
    t = wp.tid()
    i = wp.hash_grid_point_id(grid, t)  # threads in cell order: neighbours share cache lines
    p = x[i]
    total = wp.float32(0.0)  # (a dynamic variable: Warp refuses to mutate a literal in a loop)
    for j in wp.hash_grid_query(grid, p, h):
        d = p - x[j]
        r2 = wp.dot(d, d)
        if r2 < h * h:
            w = h * h - r2
            total += w * w * w
    rho[i] = mass * poly6 * total


@wp.kernel
def accelerations(grid: wp.uint64, x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3),
                  rho: wp.array(dtype=float), a: wp.array(dtype=wp.vec3), h: float, mass: float,
                  rest: float, k: float, mu: float, spiky: float, visc: float, g: float):
    t = wp.tid()
    i = wp.hash_grid_point_id(grid, t)
    p = x[i]
    pi = k * (rho[i] - rest)
    f = wp.vec3(0.0, 0.0, 0.0)
    for j in wp.hash_grid_query(grid, p, h):
        if j != i:
            d = p - x[j]
            r = wp.length(d)
            if r < h and r > 0.0:
                pj = k * (rho[j] - rest)
                f += (-mass * (pi + pj) / (2.0 * rho[j]) * spiky * (h - r) * (h - r) / r) * d
                f += (mu * mass / rho[j] * visc * (h - r)) * (v[j] - v[i])
    a[i] = f / rho[i] + wp.vec3(0.0, g, 0.0)


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), a: wp.array(dtype=wp.vec3),
              dt: float, box: float):
    i = wp.tid()
    vel = v[i] + dt * a[i]
    pos = x[i] + dt * vel
    for c in range(3):  # reflect off the walls of [0, box]^3, losing some speed
        if pos[c] < 0.0:
            pos[c] = -pos[c]
            vel[c] = -0.5 * vel[c]
        if pos[c] > box:
            pos[c] = 2.0 * box - pos[c]
            vel[c] = -0.5 * vel[c]
    x[i] = pos
    v[i] = vel


def reference(x, v):
    """Density and acceleration of every particle, in float64 over all pairs."""
    d = x[:, None, :] - x[None, :, :]
    r = np.linalg.norm(d, axis=-1)
    near = r < H
    w = np.where(near, H * H - r * r, 0.0)
    rho = MASS * POLY6 * (w ** 3).sum(1)
    p = STIFFNESS * (rho - REST_DENSITY)
    pair = near & (r > 0.0)
    safe_r = np.where(pair, r, 1.0)
    coef = np.where(pair, -MASS * (p[:, None] + p[None, :]) / (2.0 * rho[None, :]) * SPIKY_GRAD
                    * (H - r) ** 2 / safe_r, 0.0)
    f = (coef[:, :, None] * d).sum(1)
    vcoef = np.where(pair, VISCOSITY * MASS / rho[None, :] * VISC_LAP * (H - r), 0.0)
    f += (vcoef[:, :, None] * (v[None, :, :] - v[:, None, :])).sum(1)
    a = f / rho[:, None] + np.array([0.0, GRAVITY, 0.0])
    return rho, a


WARP_DRIVER = """
x = wp.array(np.array(data["x0"], np.float32), dtype=wp.vec3)
n = len(x)
v, a = wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3)
rho = wp.zeros(n, dtype=float)
grid = wp.HashGrid(32, 32, 32)
h, c = data["h"], data["constants"]
for step in range(data["steps"]):
    grid.build(x, h)
    wp.launch(k.densities, n, inputs=[grid.id, x, rho, h, c[0], c[1]])
    wp.launch(k.accelerations, n, inputs=[grid.id, x, v, rho, a, h, *c[:1], *c[2:]])
    if step == 0:
        out["rho"], out["a"] = rho.numpy().tolist(), a.numpy().tolist()
    wp.launch(k.integrate, n, inputs=[x, v, a, data["dt"], data["box"]])
out["x"] = x.numpy().tolist()
"""


def compare_with_warp(x0, steps, dt, rho0, a0, final):
    """Largest relative differences of Warp's step-0 density and acceleration from weft's,
    and the largest difference of its final positions (in box units), or None without Warp."""
    constants = [MASS, POLY6, REST_DENSITY, STIFFNESS, VISCOSITY, SPIKY_GRAD, VISC_LAP, GRAVITY]
    out = run_in_warp([densities, accelerations, integrate], WARP_DRIVER, x0=x0, steps=steps, dt=dt, box=BOX,
                      h=H, constants=constants)
    if out is None:
        return None
    rho, a, x = (np.array(out[key]) for key in ("rho", "a", "x"))
    return (float(np.abs(rho - rho0).max() / np.abs(rho0).max()), float(np.abs(a - a0).max() / np.abs(a0).max()),
            float(np.abs(x - final).max()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--particles", type=int, default=3000)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--dt", type=float, default=1.0e-3)
    parser.add_argument("--no-warp", action="store_true", help="skip the comparison with Warp")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    spacing = SPACING  # a block in the box's corner, slightly jittered
    side = int(round(args.particles ** (1.0 / 3.0)))
    grid_pts = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)
    x0 = (grid_pts * spacing + spacing + rng.random(grid_pts.shape) * 0.01 * spacing).astype(np.float32)
    n = len(x0)
    x, v = wp.array(x0, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3)
    rho, a = wp.zeros(n, dtype=float), wp.zeros(n, dtype=wp.vec3)
    grid = wp.HashGrid(32, 32, 32)
    result = {}
    for step in range(args.steps):
        grid.build(x, H)
        wp.launch(densities, n, inputs=[wp.uint64(grid.id), x, rho, H, MASS, POLY6])
        wp.launch(accelerations, n, inputs=[wp.uint64(grid.id), x, v, rho, a, H, MASS, REST_DENSITY,
                                            STIFFNESS, VISCOSITY, SPIKY_GRAD, VISC_LAP, GRAVITY])
        if step == 0:
            rho0, a0 = rho.numpy().copy(), a.numpy().copy()
            ref_rho, ref_a = reference(x.numpy().astype(np.float64), v.numpy().astype(np.float64))
            result["density_error"] = float(np.abs(rho.numpy() - ref_rho).max() / np.abs(ref_rho).max())
            result["acceleration_error"] = float(np.abs(a.numpy() - ref_a).max() / np.abs(ref_a).max())
            print(f"{n} particles; step 0 against float64 brute force: density max relative difference "
                  f"{result['density_error']:.2e}, acceleration {result['acceleration_error']:.2e}")
        wp.launch(integrate, n, inputs=[x, v, a, args.dt, BOX])
    final = x.numpy()
    result["inside_box"] = bool(np.all((final >= 0.0) & (final <= BOX)))
    result["mean_height"] = (float(x0[:, 1].mean()), float(final[:, 1].mean()))
    print(f"after {args.steps} steps: mean height {result['mean_height'][0]:.4f} -> "
          f"{result['mean_height'][1]:.4f}, all inside the box: {result['inside_box']}")
    result["warp"] = None if args.no_warp else compare_with_warp(x0, args.steps, args.dt, rho0, a0, final)
    if result["warp"] is not None:
        print("the same kernels under Warp's CPU: density max relative difference {:.1e}, acceleration {:.1e}; "
              "final positions max difference {:.1e}".format(*result["warp"]))
    elif not args.no_warp:
        print("warp-lang is not installed (or failed): no comparison with Warp")
    return result


if __name__ == "__main__":
    main()
