"""A 2-D wave equation on a 256 x 256 grid: weft kernels against the same model in numpy.

Run: python -m weft.examples.wave [--steps N] [--out wave.png]
Prints the speed of both, checks they agree, and writes a plot of the final wave field and
of the energy over time.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import weft as wp


@wp.kernel
def wave_step(u: wp.array2d(dtype=float), u_prev: wp.array2d(dtype=float),
              u_next: wp.array2d(dtype=float), c2: float, damping: float):
    """Leapfrog update of the damped wave equation; the border stays fixed at zero."""
    i, j = wp.tid()
    n, m = u.shape[0], u.shape[1]
    if i == 0 or j == 0 or i == n - 1 or j == m - 1:
        u_next[i, j] = 0.0
        return
    lap = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
    u_next[i, j] = (2.0 - damping) * u[i, j] - (1.0 - damping) * u_prev[i, j] + c2 * lap


@wp.kernel
def add_drop(u: wp.array2d(dtype=float), cx: float, cy: float, radius: float, height: float):
    i, j = wp.tid()
    d2 = (float(i) - cx) * (float(i) - cx) + (float(j) - cy) * (float(j) - cy)
    u[i, j] = u[i, j] + height * wp.exp(-d2 / (radius * radius))


@wp.kernel
def row_energy(u: wp.array2d(dtype=float), u_prev: wp.array2d(dtype=float), total: wp.array(dtype=float)):
    """One thread per row sums its row; one atomic add per row (not per cell)."""
    i = wp.tid()
    s = 0.0
    for j in range(u.shape[1]):
        v = u[i, j] - u_prev[i, j]
        s += v * v + u[i, j] * u[i, j]
    wp.atomic_add(total, 0, s)


def numpy_step(u, u_prev, c2, damping):
    u_next = np.zeros_like(u)
    lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
    u_next[1:-1, 1:-1] = ((2.0 - damping) * u[1:-1, 1:-1] - (1.0 - damping) * u_prev[1:-1, 1:-1]
                          + c2 * lap)
    return u_next


def simulate(steps: int, size: int = 256):
    fields = [wp.zeros((size, size)) for _ in range(3)]
    drops = [(size * 0.3, size * 0.4, 6.0, 1.0), (size * 0.65, size * 0.6, 9.0, -0.7)]
    for cx, cy, r, h in drops:
        wp.launch(add_drop, (size, size), inputs=[fields[0], cx, cy, r, h])
    fields[1].assign(fields[0])
    start_field = fields[0].numpy().copy()
    total = wp.zeros(1)
    energies = []
    start = time.perf_counter()
    for _ in range(steps):
        u_prev, u, u_next = fields
        wp.launch(wave_step, (size, size), inputs=[u, u_prev, u_next, 0.2, 0.002])
        total.zero_()
        wp.launch(row_energy, size, inputs=[u_next, u, total])
        energies.append(float(total.numpy()[0]))
        fields = [u, u_next, u_prev]
    return fields[1].numpy(), start_field, np.array(energies), time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--out", default="wave.png")
    args = parser.parse_args(argv)

    wp.launch(wave_step, (8, 8), inputs=[wp.zeros((8, 8))] * 3 + [0.2, 0.002])  # compile once
    field, start_field, energies, seconds = simulate(args.steps)
    print(f"weft : {args.steps} steps of a 256x256 wave in {seconds * 1e3:.1f} ms "
          f"({seconds / args.steps * 1e6:.1f} us/step, {wp.config.num_threads or 'all'} threads)")

    u_prev = start_field.astype(np.float32)
    u = start_field.astype(np.float32)
    start = time.perf_counter()
    for _ in range(args.steps):
        u_prev, u = u, numpy_step(u, u_prev, np.float32(0.2), np.float32(0.002))
    np_seconds = time.perf_counter() - start
    error = float(np.abs(u - field).max())
    print(f"numpy: {np_seconds * 1e3:.1f} ms ({np_seconds / seconds:.1f}x weft's time); "
          f"max difference {error:.2e}")
    print(f"energy: start {energies[0]:.3f}, end {energies[-1]:.3f}")
    if error > 1e-3:
        raise SystemExit("weft and numpy disagree")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: pip install 'weft-lang[examples]' for the plot")
        return
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4.2))
    im = ax0.imshow(field, cmap="RdBu", vmin=-0.3, vmax=0.3)
    ax0.set_title(f"wave field after {args.steps} steps")
    fig.colorbar(im, ax=ax0, shrink=0.8)
    ax1.plot(energies)
    ax1.set_xlabel("step")
    ax1.set_ylabel("energy")
    ax1.set_title("energy (damped)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
