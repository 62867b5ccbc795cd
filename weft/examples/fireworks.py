"""Aim a fireworks volley by differentiating through the shells' flight (reverse-mode autodiff).

Run: python -m weft.examples.fireworks [--shells N] [--iters K] [--out fireworks.png]

N shells leave one mortar at the same moment and fly under gravity and quadratic air drag in
a cross wind. All fuses burn for the same time T = steps * dt, so each shell must be at its
own burst point at that instant for the pattern to appear in the sky. The launch velocities
are found by gradient descent: each iteration simulates the flight on a `wp.Tape` (one state
array per step), sums the squared misses into a one-element loss with `atomic_add`, gets
d loss / d launch velocity from `tape.backward(loss=loss)` and takes a gradient step.

The burst points are where known "true" velocities put the shells (in a float64 numpy model
of the same physics), so the answer is known: the example checks its forward simulation
against numpy, its gradient against central finite differences, and that the optimised
velocities recover the true ones. It writes a plot of the loss and of the flights.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import weft as wp
from weft.examples import drag_reference

GRAVITY = (0.0, -9.81)
WIND = (4.0, 0.0)  # m/s: a cross wind blowing to the right
DRAG = 0.04  # 1/m, light shells: the drag acceleration is DRAG * |v_rel| * v_rel


@wp.kernel
def flight_step(x: wp.array(dtype=wp.vec2), v: wp.array(dtype=wp.vec2),
                x_next: wp.array(dtype=wp.vec2), v_next: wp.array(dtype=wp.vec2),
                gravity: wp.vec2, wind: wp.vec2, drag: float, dt: float):
    """Semi-implicit Euler: the velocity feels gravity and drag, then moves the shell."""
    i = wp.tid()
    rel = v[i] - wind
    acc = gravity - drag * wp.length(rel) * rel
    vn = v[i] + acc * dt
    v_next[i] = vn
    x_next[i] = x[i] + vn * dt


@wp.kernel
def miss_loss(x: wp.array(dtype=wp.vec2), target: wp.array(dtype=wp.vec2), scale: float,
              loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, scale * wp.dot(d, d))


class Volley:
    """The flight of `shells` projectiles over `steps` steps, with every state kept so that
    a `wp.Tape` can run the steps backwards."""

    def __init__(self, targets: np.ndarray, steps: int, dt: float):
        n = len(targets)
        self.n, self.steps, self.dt = n, steps, dt
        self.x = [wp.zeros(n, dtype=wp.vec2, requires_grad=True) for _ in range(steps + 1)]
        self.v = [wp.zeros(n, dtype=wp.vec2, requires_grad=True) for _ in range(steps + 1)]
        self.target = wp.array(targets.astype(np.float32), dtype=wp.vec2)
        self.loss = wp.zeros(1, requires_grad=True)

    def forward(self, v0: np.ndarray) -> float:
        """Fly the volley from launch velocities `v0` (n x 2); returns the loss, the mean
        squared miss distance in m^2. Launches inside a `with tape:` block are recorded."""
        self.v[0].assign(v0.astype(np.float32))
        self.loss.zero_()
        for t in range(self.steps):
            wp.launch(flight_step, self.n,
                      inputs=[self.x[t], self.v[t], self.x[t + 1], self.v[t + 1],
                              wp.vec2(*GRAVITY), wp.vec2(*WIND), DRAG, self.dt])
        wp.launch(miss_loss, self.n, inputs=[self.x[-1], self.target, 1.0 / self.n, self.loss])
        return float(self.loss.numpy()[0])

    def loss_and_grad(self, v0: np.ndarray) -> tuple[float, np.ndarray]:
        tape = wp.Tape()
        with tape:
            value = self.forward(v0)
        tape.backward(loss=self.loss)
        grad = self.v[0].grad.numpy().copy()
        tape.zero()
        return value, grad

    def trajectories(self) -> np.ndarray:
        """Positions of the last flight: (steps + 1, n, 2)."""
        return np.stack([x.numpy() for x in self.x])


def numpy_flight(v0: np.ndarray, steps: int, dt: float) -> np.ndarray:
    """The same physics in float64 numpy; returns the positions, (steps + 1, n, 2)."""
    return drag_reference.numpy_flight(v0, steps, dt, GRAVITY, WIND, DRAG)


def make_problem(shells: int, seed: int = 7) -> np.ndarray:
    """True launch velocities: a fan of elevations from 50 to 130 degrees (with some
    scatter), speeds of 18-30 m/s."""
    rng = np.random.default_rng(seed)
    angle = np.radians(np.linspace(50.0, 130.0, shells) + rng.uniform(-3.0, 3.0, shells))
    speed = rng.uniform(18.0, 30.0, shells)
    return np.stack([speed * np.cos(angle), speed * np.sin(angle)], axis=1)


def check_gradient(volley: Volley, v0: np.ndarray, grad: np.ndarray, count: int = 32,
                   eps: float = 0.05) -> float:
    """Relative error |fd - ad| / |ad| of (up to `count` components of) the gradient against
    central differences of weft's own forward simulation, which runs in float32: hence the
    large `eps`, and an error near 1e-4 rather than 1e-7."""
    flat = v0.reshape(-1)
    picks = np.unique(np.linspace(0, flat.size - 1, min(count, flat.size)).astype(int))
    fd = np.empty(len(picks))
    for n, k in enumerate(picks):
        plus, minus = flat.copy(), flat.copy()
        plus[k] += eps
        minus[k] -= eps
        fd[n] = (volley.forward(plus.reshape(v0.shape)) - volley.forward(minus.reshape(v0.shape))) / (2 * eps)
    ad = grad.reshape(-1)[picks]
    return float(np.linalg.norm(fd - ad) / np.linalg.norm(ad))


def progress(done: int, total: int, loss: float, width: int = 30, stream=None):
    stream = stream or sys.stdout
    filled = width * done // total
    bar = "#" * filled + "." * (width - filled)
    stream.write(f"\r[{bar}] {done:>{len(str(total))}}/{total} loss={loss:.3e} m^2")
    if done == total:
        stream.write("\n")
    stream.flush()


def optimize(shells: int = 24, iters: int = 60, steps: int = 90, dt: float = 1.0 / 60.0,
             gain: float = 1.5, seed: int = 7, quiet: bool = False) -> dict:
    """Find the launch velocities of the volley; returns what was found and checked.

    The step is plain gradient descent, v -= lr * grad, with lr from the physics: without
    drag a shell's position at T moves by T * dv when its launch velocity moves by dv, so
    the loss (the mean over n shells of the squared miss) has curvature 2 T^2 / n in each
    velocity component, and lr = gain * n / (2 T^2) is `gain` Newton steps. Drag makes the
    flight less sensitive (smaller curvature), so gains below 2 are stable; 1.5 converges
    by a factor of about 2 per iteration here."""
    v_true = make_problem(shells, seed)
    bursts = numpy_flight(v_true, steps, dt)[-1]
    volley = Volley(bursts, steps, dt)

    # forward check: weft's flight against float64 numpy
    volley.forward(v_true)
    forward_error = float(np.abs(volley.trajectories() - numpy_flight(v_true, steps, dt)).max())

    # first guess: every shell fired straight up at 20 m/s
    v0 = np.tile([0.0, 20.0], (shells, 1))
    first_loss, grad = volley.loss_and_grad(v0)
    fd_error = check_gradient(volley, v0, grad)
    start_path = numpy_flight(v0, steps, dt)

    flight_time = steps * dt
    lr = gain * shells / (2.0 * flight_time * flight_time)
    losses = []
    start = time.perf_counter()
    for k in range(iters):
        loss, grad = volley.loss_and_grad(v0)
        losses.append(loss)
        v0 = v0 - lr * grad
        if not quiet:
            progress(k + 1, iters, loss)
    seconds = time.perf_counter() - start
    final_loss = volley.forward(v0)
    return {
        "v_true": v_true, "v_opt": v0, "bursts": bursts, "losses": np.array(losses + [final_loss]),
        "first_loss": first_loss, "final_loss": final_loss, "fd_error": fd_error,
        "forward_error": forward_error, "seconds": seconds, "start_path": start_path,
        "final_path": volley.trajectories(), "flight_time": flight_time,
        "velocity_error": float(np.abs(v0 - v_true).max()),
    }


def plot(result: dict, out: str):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: pip install 'weft-lang[examples]' for the plot")
        return
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [1, 1.5]})
    ax0.semilogy(result["losses"], marker=".")
    ax0.set_xlabel("iteration")
    ax0.set_ylabel("mean squared miss at T (m$^2$)")
    ax0.set_title("loss: gradient descent through the simulation")
    ax0.grid(True, which="both", alpha=0.3)

    start, final, bursts = result["start_path"], result["final_path"], result["bursts"]
    n = bursts.shape[0]
    ax1.plot(start[:, 0, 0], start[:, 0, 1], color="0.6", lw=1.5, ls="--", label="first guess (all shells)")
    colors = plt.cm.plasma(np.linspace(0.05, 0.85, n))
    rays = np.linspace(0.0, 2.0 * np.pi, 12, endpoint=False)
    for i in range(n):
        ax1.plot(final[:, i, 0], final[:, i, 1], color=colors[i], lw=1.0, alpha=0.8)
        for a in rays:  # a small starburst where the shell should be when its fuse fires
            ax1.plot(bursts[i, 0] + [0.0, 1.0 * np.cos(a)], bursts[i, 1] + [0.0, 1.0 * np.sin(a)],
                     color=colors[i], lw=0.8)
    ax1.plot(final[-1, :, 0], final[-1, :, 1], "k.", ms=4, label="optimised shells at T")
    ax1.plot([], [], color=colors[n // 2], lw=0.8, label="burst points (targets)")
    ax1.axhline(0.0, color="0.3", lw=0.8)
    ax1.set_aspect("equal")
    ax1.set_xlabel("x (m)")
    ax1.set_ylabel("height (m)")
    ax1.set_title(f"{n} shells, drag, cross wind {WIND[0]:g} m/s, fuses of {result['flight_time']:.2f} s")
    ax1.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    print(f"wrote {out}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shells", type=int, default=24)
    parser.add_argument("--iters", type=int, default=60)
    parser.add_argument("--steps", type=int, default=90, help="simulation steps of 1/60 s per flight")
    parser.add_argument("--gain", type=float, default=1.5,
                        help="gradient-descent step in units of the drag-free Newton step (0 to 2)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default="fireworks.png")
    args = parser.parse_args(argv)

    r = optimize(args.shells, args.iters, args.steps, gain=args.gain, seed=args.seed)
    print(f"forward check: weft vs float64 numpy, max position difference {r['forward_error']:.2e} m")
    print(f"gradient check: reverse mode vs central differences, relative error {r['fd_error']:.2e}")
    print(f"loss: {r['first_loss']:.3e} -> {r['final_loss']:.3e} m^2 "
          f"({r['first_loss'] / max(r['final_loss'], 1e-30):.1e}x lower) in {args.iters} iterations, "
          f"{r['seconds']:.2f} s ({r['seconds'] / max(args.iters, 1) * 1e3:.1f} ms per forward + backward "
          f"of {args.steps} steps)")
    print(f"launch velocities: max error against the true ones {r['velocity_error']:.2e} m/s")
    if r["forward_error"] > 1e-2:
        raise SystemExit("weft's flight disagrees with numpy")
    if r["fd_error"] > 1e-2:
        raise SystemExit("the gradient disagrees with finite differences")
    plot(r, args.out)
    return r


if __name__ == "__main__":
    main()
