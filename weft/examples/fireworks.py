"""Aim a fireworks volley by differentiating through the shells' flight (reverse-mode autodiff).

Run: python -m weft.examples.fireworks [--shells N] [--iters K] [--out fireworks.png]

N shells leave one mortar at the same moment and fly under gravity and quadratic air drag in
a cross wind. All fuses burn for the same time T = steps * dt, so each shell must be at its
own burst point at that instant for the pattern to appear in the sky. The launch velocities
are found by gradient descent: each iteration simulates the flight on a `wp.Tape` (one state
array per step), sums the squared misses into a one-element loss with `atomic_add`, gets
d loss / d launch velocity from `tape.backward(loss=loss)` and takes an Adam step.

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

GRAVITY = (0.0, -9.81)
WIND = (-3.0, 0.0)  # m/s: a head wind the shells fly into
DRAG = 0.04  # 1/m: the drag acceleration is DRAG * |v_rel| * v_rel


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
    g, wind = np.array(GRAVITY), np.array(WIND)
    x, v = np.zeros_like(v0, dtype=np.float64), v0.astype(np.float64)
    path = [x]
    for _ in range(steps):
        rel = v - wind
        v = v + (g - DRAG * np.linalg.norm(rel, axis=1, keepdims=True) * rel) * dt
        x = x + v * dt
        path.append(x)
    return np.stack(path)


def make_problem(shells: int, seed: int = 7) -> np.ndarray:
    """True launch velocities: speeds of 15-24 m/s at elevations of 40-70 degrees."""
    rng = np.random.default_rng(seed)
    speed = rng.uniform(15.0, 24.0, shells)
    angle = np.radians(rng.uniform(40.0, 70.0, shells))
    return np.stack([speed * np.cos(angle), speed * np.sin(angle)], axis=1)


def check_gradient(volley: Volley, v0: np.ndarray, grad: np.ndarray, count: int = 6,
                   eps: float = 1e-2) -> float:
    """Largest relative error of `count` gradient components against central differences
    of weft's own forward simulation."""
    flat = v0.reshape(-1)
    picks = np.linspace(0, flat.size - 1, min(count, flat.size)).astype(int)
    worst = 0.0
    for k in picks:
        plus, minus = flat.copy(), flat.copy()
        plus[k] += eps
        minus[k] -= eps
        fd = (volley.forward(plus.reshape(v0.shape)) - volley.forward(minus.reshape(v0.shape))) / (2 * eps)
        ad = grad.reshape(-1)[k]
        worst = max(worst, abs(fd - ad) / max(abs(fd), abs(ad), 1e-6))
    return worst


class Adam:
    def __init__(self, shape, lr: float, beta1=0.9, beta2=0.999, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, beta1, beta2, eps
        self.m, self.s, self.t = np.zeros(shape), np.zeros(shape), 0

    def step(self, params: np.ndarray, grad: np.ndarray, lr: float) -> np.ndarray:
        self.t += 1
        self.m = self.b1 * self.m + (1 - self.b1) * grad
        self.s = self.b2 * self.s + (1 - self.b2) * grad * grad
        m_hat = self.m / (1 - self.b1 ** self.t)
        s_hat = self.s / (1 - self.b2 ** self.t)
        return params - lr * m_hat / (np.sqrt(s_hat) + self.eps)


def progress(done: int, total: int, loss: float, width: int = 30, stream=None):
    stream = stream or sys.stdout
    filled = width * done // total
    bar = "#" * filled + "." * (width - filled)
    stream.write(f"\r[{bar}] {done:>{len(str(total))}}/{total} loss={loss:.3e} m^2")
    if done == total:
        stream.write("\n")
    stream.flush()


def optimize(shells: int = 16, iters: int = 200, steps: int = 120, dt: float = 1.0 / 60.0,
             lr: float = 1.0, seed: int = 7, quiet: bool = False) -> dict:
    """Find the launch velocities of the volley; returns what was found and checked."""
    v_true = make_problem(shells, seed)
    targets = numpy_flight(v_true, steps, dt)[-1]
    volley = Volley(targets, steps, dt)

    # forward check: weft's flight against float64 numpy
    volley.forward(v_true)
    forward_error = float(np.abs(volley.trajectories() - numpy_flight(v_true, steps, dt)).max())

    # first guess: every shell fired the same way, at 45 degrees
    v0 = np.tile([10.0, 10.0], (shells, 1))
    first_loss, grad = volley.loss_and_grad(v0)
    fd_error = check_gradient(volley, v0, grad)
    start_path = numpy_flight(v0, steps, dt)

    adam = Adam(v0.shape, lr)
    losses = []
    start = time.perf_counter()
    for k in range(iters):
        loss, grad = volley.loss_and_grad(v0)
        losses.append(loss)
        # cosine decay of the step lets Adam settle instead of circling the minimum
        step_lr = lr * (0.02 + 0.98 * 0.5 * (1 + np.cos(np.pi * k / iters)))
        v0 = adam.step(v0, grad, step_lr)
        if not quiet and (k % 5 == 4 or k == iters - 1):
            progress(k + 1, iters, loss)
    seconds = time.perf_counter() - start
    final_loss = volley.forward(v0)
    return {
        "v_true": v_true, "v_opt": v0, "targets": targets, "losses": np.array(losses + [final_loss]),
        "first_loss": first_loss, "final_loss": final_loss, "fd_error": fd_error,
        "forward_error": forward_error, "seconds": seconds, "start_path": start_path,
        "final_path": volley.trajectories(), "velocity_error": float(np.abs(v0 - v_true).max()),
    }


def plot(result: dict, out: str):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: pip install 'weft-lang[examples]' for the plot")
        return
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [1, 1.6]})
    ax0.semilogy(result["losses"])
    ax0.set_xlabel("iteration")
    ax0.set_ylabel("mean squared miss (m$^2$)")
    ax0.set_title("loss (Adam on reverse-mode gradients)")
    ax0.grid(True, which="both", alpha=0.3)

    start, final, targets = result["start_path"], result["final_path"], result["targets"]
    for i in range(targets.shape[0]):
        ax1.plot(start[:, i, 0], start[:, i, 1], color="0.75", lw=0.8, label="first guess" if i == 0 else None)
        ax1.plot(final[:, i, 0], final[:, i, 1], color=f"C{i % 10}", lw=1.2)
    ax1.plot(final[-1, :, 0], final[-1, :, 1], "k.", ms=5, label="shells at T (optimised)")
    ax1.scatter(targets[:, 0], targets[:, 1], s=80, facecolors="none", edgecolors="r", label="targets")
    ax1.axhline(0.0, color="0.3", lw=0.8)
    ax1.set_aspect("equal")
    ax1.set_xlabel("x (m)")
    ax1.set_ylabel("height (m)")
    ax1.set_title(f"{targets.shape[0]} shells, drag and head wind, all hitting at the same instant")
    ax1.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shells", type=int, default=16)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--steps", type=int, default=120, help="simulation steps of 1/60 s per flight")
    parser.add_argument("--lr", type=float, default=1.0, help="Adam step size (m/s)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default="ballistic.png")
    args = parser.parse_args(argv)

    r = optimize(args.shells, args.iters, args.steps, lr=args.lr, seed=args.seed)
    print(f"forward check: weft vs float64 numpy, max position difference {r['forward_error']:.2e} m")
    print(f"gradient check: reverse mode vs central differences, max relative error {r['fd_error']:.2e}")
    print(f"loss: {r['first_loss']:.3e} -> {r['final_loss']:.3e} m^2 "
          f"({r['first_loss'] / max(r['final_loss'], 1e-30):.1e}x lower) in {args.iters} iterations, "
          f"{r['seconds']:.2f} s ({r['seconds'] / args.iters * 1e3:.1f} ms per forward + backward)")
    print(f"launch velocities: max error against the true ones {r['velocity_error']:.2e} m/s")
    if r["forward_error"] > 1e-2:
        raise SystemExit("weft's flight disagrees with numpy")
    if r["fd_error"] > 1e-2:
        raise SystemExit("the gradient disagrees with finite differences")
    plot(r, args.out)
    return r


if __name__ == "__main__":
    main()
