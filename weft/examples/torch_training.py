"""Train a PyTorch network through a weft simulation: a ball launcher learns to aim against drag and wind.

Run: python -m weft.examples.torch_training [--iters K] [--batch B] [--steps S] [--out torch_training.png]
(needs PyTorch: pip install torch==2.13.0)

A ball launcher at the origin must put a ball at a given point p = (distance, height) exactly
T = 1.5 s after it fires, against quadratic air drag and a head wind. Without air the answer
is the textbook v0 = (p - g T^2 / 2) / T; with air there is no closed form. A small
`torch.nn.Module` (an MLP, 2 -> 32 -> 32 -> 2) maps p to the launch velocity, as the
drag-free aim plus a learned correction, and is trained with `torch.optim.Adam` on the
squared miss distance of simulated flights.

The flight is a weft kernel (one semi-implicit Euler step of all balls) turned into a
differentiable torch function with `weft.torch.wrap`. A flight is `--steps` calls of that op
in a Python loop, so torch's autograd chains the kernel's adjoints back through every step
into the network's weights: each iteration draws a fresh batch of random targets, flies the
balls, and backpropagates the loss through the whole simulation.

Checks (the process exits non-zero if one fails): the wrapped op's gradient passes
`torch.autograd.gradcheck` (a float64 build of the same kernel, several steps chained); the
gradient of the training loss with respect to the network's weights matches the one through
the same physics written in plain torch; the weft flight matches a float64 numpy model; the
loss on held-out targets fell by a large factor; and the trained launcher, judged by the
numpy model, hits 95% of the held-out targets (never trained on) within 15 cm.
"""

import argparse
import sys
import time

import numpy as np

import weft as wp
import weft.torch
from weft.examples import drag_reference

GRAVITY = (0.0, -9.81)
WIND = (-4.0, 0.0)  # m/s: a head wind, blowing back towards the launcher
DRAG = 0.03  # 1/m, a light ball: the drag acceleration is DRAG * |v_rel| * v_rel
FLIGHT_TIME = 1.5  # s
TARGETS_LOW, TARGETS_HIGH = (5.0, 0.0), (30.0, 10.0)  # m: the box the targets are drawn from
HIT_RADIUS = 0.15  # m: a target is hit if the ball passes within this distance at T


def make_flight_step(real):
    """The step kernel for `real` = wp.float32 (training) or wp.float64 (gradcheck). (The
    annotations name this function's locals, which is why this module does not use
    `from __future__ import annotations`: weft evaluates string annotations in the globals.)"""
    vec = wp.vec2d if real is wp.float64 else wp.vec2

    @wp.kernel
    def flight_step(x: wp.array(dtype=vec), v: wp.array(dtype=vec), gravity: vec, wind: vec, drag: real,
                    dt: real, x_next: wp.array(dtype=vec), v_next: wp.array(dtype=vec)):
        """Semi-implicit Euler: the velocity feels gravity and drag, then moves the ball."""
        i = wp.tid()
        rel = v[i] - wind
        vn = v[i] + (gravity - drag * wp.length(rel) * rel) * dt
        v_next[i] = vn
        x_next[i] = x[i] + vn * dt

    return flight_step


KERNELS = {wp.float32: make_flight_step(wp.float32), wp.float64: make_flight_step(wp.float64)}
_OPS: dict = {}


def _import_torch():
    try:
        import torch
    except ImportError:
        raise ImportError("weft.examples.torch_training needs PyTorch: pip install torch==2.13.0 "
                          "(a CPU build)") from None
    return torch


def step_op(real=wp.float32):
    """The step as a differentiable torch function (made once, on first use):
    step(x, v, gravity, wind, drag, dt) -> (x_next, v_next). The vec2 arrays are (n, 2)
    tensors; gravity, wind, drag and dt are plain Python values."""
    if real not in _OPS:
        _import_torch()
        _OPS[real] = weft.torch.wrap(KERNELS[real], outputs=["x_next", "v_next"])
    return _OPS[real]


def fly(v0, steps: int, path=None):
    """Positions of the balls launched from the origin with velocities `v0` ((n, 2) tensor)
    after `steps` steps of FLIGHT_TIME / steps: one call of the weft op per step, which
    autograd chains. `path`, a list, collects the (detached) positions."""
    torch = _import_torch()
    step = step_op(wp.float64 if v0.dtype == torch.float64 else wp.float32)
    dt = FLIGHT_TIME / steps
    x, v = torch.zeros_like(v0), v0
    for _ in range(steps):
        x, v = step(x, v, GRAVITY, WIND, DRAG, dt)
        if path is not None:
            path.append(x.detach().numpy().copy())
    return x


def torch_fly(v0, steps: int):
    """The same flight in plain torch operations (a reference for the gradient check)."""
    torch = _import_torch()
    dt = FLIGHT_TIME / steps
    g, wind = torch.tensor(GRAVITY, dtype=v0.dtype), torch.tensor(WIND, dtype=v0.dtype)
    x, v = torch.zeros_like(v0), v0
    for _ in range(steps):
        rel = v - wind
        v = v + (g - DRAG * rel.norm(dim=1, keepdim=True) * rel) * dt
        x = x + v * dt
    return x


def numpy_flight(v0: np.ndarray, steps: int) -> np.ndarray:
    """The same physics in float64 numpy; returns the positions, (steps + 1, n, 2)."""
    return drag_reference.numpy_flight(v0, steps, FLIGHT_TIME / steps, GRAVITY, WIND, DRAG)


def drag_free_aim(targets):
    """The launch velocity that hits `targets` at T in a vacuum: (p - g T^2 / 2) / T."""
    g = np.array(GRAVITY) if isinstance(targets, np.ndarray) else targets.new_tensor(GRAVITY)
    return (targets - 0.5 * g * FLIGHT_TIME ** 2) / FLIGHT_TIME


def make_launcher(hidden: int = 32, seed: int = 0):
    """The network: target (m) -> launch velocity (m/s). Targets are scaled to [-1, 1]^2 for
    the MLP, whose output (times 10 m/s) corrects the drag-free aim."""
    torch = _import_torch()

    class Launcher(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = torch.nn.Sequential(torch.nn.Linear(2, hidden), torch.nn.Tanh(),
                                           torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
                                           torch.nn.Linear(hidden, 2))
            low, high = torch.tensor(TARGETS_LOW), torch.tensor(TARGETS_HIGH)
            self.register_buffer("center", (low + high) / 2)
            self.register_buffer("half_width", (high - low) / 2)

        def forward(self, targets):
            return drag_free_aim(targets) + 10.0 * self.mlp((targets - self.center) / self.half_width)

    torch.manual_seed(seed)
    return Launcher()


def random_targets(n: int, generator):
    torch = _import_torch()
    low, high = torch.tensor(TARGETS_LOW), torch.tensor(TARGETS_HIGH)
    return low + (high - low) * torch.rand(n, 2, generator=generator)


def miss_loss(x, targets):
    """Mean squared miss distance at T, in m^2."""
    return ((x - targets) ** 2).sum(dim=1).mean()


def check_op_gradient(balls: int = 3, steps: int = 4, seed: int = 0) -> bool:
    """`torch.autograd.gradcheck` of `steps` chained calls of the float64 op: the Jacobian of
    the final positions and velocities with respect to the initial ones, from the adjoint
    kernel, against central differences."""
    torch = _import_torch()
    g = torch.Generator().manual_seed(seed)
    x0 = torch.rand(balls, 2, generator=g, dtype=torch.float64).requires_grad_()
    v0 = (torch.tensor([12.0, 8.0], dtype=torch.float64)
          + 5.0 * torch.randn(balls, 2, generator=g, dtype=torch.float64)).requires_grad_()

    step = step_op(wp.float64)

    def flight(x, v):
        for _ in range(steps):
            x, v = step(x, v, GRAVITY, WIND, DRAG, 0.1)
        return x, v

    return torch.autograd.gradcheck(flight, (x0, v0), eps=1e-6, atol=1e-7, rtol=1e-5, raise_exception=False)


def check_model_gradient(model, targets, steps: int) -> float:
    """Relative difference between d loss / d weights through the weft op and through the
    same flight in plain torch (both float32)."""
    grads = []
    for flight in (fly, torch_fly):
        model.zero_grad()
        miss_loss(flight(model(targets), steps), targets).backward()
        grads.append(np.concatenate([p.grad.numpy().ravel() for p in model.parameters()]))
    model.zero_grad()
    return float(np.linalg.norm(grads[0] - grads[1]) / np.linalg.norm(grads[1]))


def progress(done: int, total: int, loss: float, width: int = 30, stream=None):
    stream = stream or sys.stdout
    filled = width * done // total
    bar = "#" * filled + "." * (width - filled)
    stream.write(f"\r[{bar}] {done:>{len(str(total))}}/{total} loss={loss:.3e} m^2")
    if done == total:
        stream.write("\n")
    stream.flush()


def train(iters: int = 800, batch: int = 128, steps: int = 40, lr: float = 3e-2, hidden: int = 32,
          held_out: int = 256, eval_every: int = 20, seed: int = 0, quiet: bool = False) -> dict:
    """Train the launcher; returns what was learned, measured and checked."""
    torch = _import_torch()
    model = make_launcher(hidden, seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, max(iters, 1), eta_min=lr * 1e-3)
    batches = torch.Generator().manual_seed(seed + 1)
    test = random_targets(held_out, torch.Generator().manual_seed(seed + 2))  # never trained on

    def held_out_loss():
        with torch.no_grad():
            return float(miss_loss(fly(model(test), steps), test))

    gradient_error = check_model_gradient(model, random_targets(16, torch.Generator().manual_seed(seed + 3)),
                                          steps)
    losses, test_losses = [], [(0, held_out_loss())]
    start = time.perf_counter()
    for k in range(iters):
        targets = random_targets(batch, batches)
        loss = miss_loss(fly(model(targets), steps), targets)
        optimizer.zero_grad()
        loss.backward()  # through every step of the flight, into the weights
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if (k + 1) % eval_every == 0 or k + 1 == iters:
            test_losses.append((k + 1, held_out_loss()))
        if not quiet:
            progress(k + 1, iters, losses[-1])
    seconds = time.perf_counter() - start

    # judge the trained launcher on the held-out targets with the float64 numpy model
    path = []
    with torch.no_grad():
        v0 = model(test)
        fly(v0, steps, path=path)
    v0 = v0.numpy().astype(np.float64)
    reference = numpy_flight(v0, steps)
    forward_error = float(np.abs(np.stack([np.zeros_like(v0)] + path) - reference).max())
    targets = test.numpy().astype(np.float64)
    miss = np.linalg.norm(reference[-1] - targets, axis=1)
    free = np.linalg.norm(numpy_flight(drag_free_aim(targets), steps)[-1] - targets, axis=1)
    return {
        "losses": np.array(losses), "test_losses": np.array(test_losses), "seconds": seconds,
        "first_loss": test_losses[0][1], "final_loss": test_losses[-1][1],
        "gradient_error": gradient_error, "forward_error": forward_error,
        "targets": targets, "v0": v0, "paths": reference, "miss": miss, "drag_free_miss": free,
        "drag_free_paths": numpy_flight(drag_free_aim(targets), steps), "model": model,
    }


def plot(r: dict, out: str, shown: int = 7):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: pip install 'weft-lang[examples]' for the plot")
        return
    fig, (ax0, ax1, ax2) = plt.subplots(1, 3, figsize=(16, 4.8), gridspec_kw={"width_ratios": [1, 1.4, 1]})
    ax0.semilogy(np.arange(1, len(r["losses"]) + 1), r["losses"], lw=0.8, alpha=0.7, label="training batch")
    ax0.semilogy(r["test_losses"][:, 0], r["test_losses"][:, 1], "k.-", ms=3, label="held-out targets")
    ax0.set_xlabel("Adam iteration")
    ax0.set_ylabel("mean squared miss at T (m$^2$)")
    ax0.set_title("loss, backpropagated through the simulation")
    ax0.grid(True, which="both", alpha=0.3)
    ax0.legend()

    targets, paths, free = r["targets"], r["paths"], r["drag_free_paths"]
    picks = np.argsort(targets[:, 0])[np.linspace(0, len(targets) - 1, shown).astype(int)]
    colors = plt.cm.viridis(np.linspace(0.0, 0.85, shown))
    for c, i in zip(colors, picks):
        ax1.plot(free[:, i, 0], free[:, i, 1], color=c, lw=0.8, ls="--", alpha=0.6)
        ax1.plot(paths[:, i, 0], paths[:, i, 1], color=c, lw=1.5)
        ax1.plot(*targets[i], "o", mfc="none", mec=c, ms=9)
    ax1.plot([], [], "k--", lw=0.8, label="drag-free aim")
    ax1.plot([], [], "k-", lw=1.5, label="learned aim")
    ax1.plot([], [], "ko", mfc="none", label="held-out targets")
    ax1.axhline(0.0, color="0.3", lw=0.8)
    ax1.set_ylim(bottom=-1.0)  # no ground in the model: the short drag-free flights go on below it
    ax1.set_aspect("equal")
    ax1.set_xlabel("distance (m)")
    ax1.set_ylabel("height (m)")
    ax1.set_title(f"flights of {FLIGHT_TIME:g} s, drag, head wind {-WIND[0]:g} m/s")
    ax1.legend(loc="upper left", fontsize=8)

    sc = ax2.scatter(targets[:, 0], targets[:, 1], c=np.maximum(r["miss"], 1e-4) * 100, s=14, cmap="magma_r",
                     norm=matplotlib.colors.LogNorm())
    fig.colorbar(sc, ax=ax2, label="miss (cm)")
    ax2.set_xlabel("target distance (m)")
    ax2.set_ylabel("target height (m)")
    ax2.set_title(f"held-out misses (drag-free aim: {np.median(r['drag_free_miss']):.1f} m median)")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    print(f"wrote {out}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=800, help="Adam iterations")
    parser.add_argument("--batch", type=int, default=128, help="random targets per iteration")
    parser.add_argument("--steps", type=int, default=40, help=f"simulation steps per {FLIGHT_TIME:g} s flight")
    parser.add_argument("--lr", type=float, default=3e-2, help="Adam's learning rate (cosine-annealed)")
    parser.add_argument("--hidden", type=int, default=32, help="width of the MLP's hidden layers")
    parser.add_argument("--held-out", type=int, default=256, help="held-out targets to judge the launcher on")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="torch_training.png", help="where to write the plot")
    parser.add_argument("--no-plot", action="store_true", help="skip the plot")
    args = parser.parse_args(argv)
    try:
        torch = _import_torch()
    except ImportError as e:
        raise SystemExit(str(e)) from None

    # The network and the batches are tiny: torch's intra-op threads gain nothing here, and on a
    # busy machine they slow every op down waiting for each other (weft runs launches this
    # small on one thread too). Restored afterwards.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        start = time.perf_counter()
        op_ok = check_op_gradient()
        r = train(args.iters, args.batch, args.steps, args.lr, args.hidden, args.held_out, seed=args.seed)
        r["op_gradcheck"] = op_ok
        r["total_seconds"] = time.perf_counter() - start
    finally:
        torch.set_num_threads(threads)

    miss, free = r["miss"], r["drag_free_miss"]
    r["miss_95"] = float(np.percentile(miss, 95))
    checks = [
        ("gradcheck: the float64 op, 4 steps chained, adjoint vs central differences", op_ok,
         "passed" if op_ok else "FAILED"),
        ("gradient: d loss / d weights through weft vs through plain torch", r["gradient_error"] < 1e-3,
         f"relative difference {r['gradient_error']:.1e}"),
        ("forward: weft (float32) vs numpy (float64) flights", r["forward_error"] < 1e-2,
         f"max position difference {r['forward_error']:.1e} m"),
        ("training: held-out loss fell by more than 1000x", r["first_loss"] > 1000 * r["final_loss"],
         f"{r['first_loss']:.3e} -> {r['final_loss']:.3e} m^2 "
         f"({r['first_loss'] / max(r['final_loss'], 1e-30):.1e}x lower)"),
        (f"aim: 95% of {len(miss)} held-out targets hit within {HIT_RADIUS * 100:g} cm", r["miss_95"] < HIT_RADIUS,
         f"miss median {np.median(miss) * 100:.1f} cm, 95th percentile {r['miss_95'] * 100:.1f} cm, "
         f"max {miss.max() * 100:.1f} cm (drag-free aim: median {np.median(free):.2f} m)"),
    ]
    print(f"trained {args.iters} iterations of {args.batch} flights x {args.steps} steps in {r['seconds']:.2f} s "
          f"({r['seconds'] / max(args.iters, 1) * 1e3:.1f} ms per iteration, forward + backward); "
          f"{r['total_seconds']:.2f} s in all")
    for name, ok, detail in checks:
        print(f"[{'ok' if ok else 'FAIL'}] {name}: {detail}")
    if not args.no_plot:
        plot(r, args.out)
    failed = [name for name, ok, _ in checks if not ok]
    if failed:
        raise SystemExit(f"{len(failed)} check(s) failed: {'; '.join(failed)}")
    return r


if __name__ == "__main__":
    main()
