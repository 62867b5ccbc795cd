"""mass_spring: a differentiable mass-spring chain, forward on a Tape and backward: weft, Warp, Taichi.

A chain of N = 10,000 particles (``wp.vec3`` float32) hangs from particle 0 under gravity,
with springs between neighbours (i, i+1) and second neighbours (i, i+2), listed in build
order (both springs of particle i, then i + 1, ...) as index pairs in one ``springs`` array
the way ``warp.sim`` stores them: S = 2N - 3 springs with per-spring rest lengths and
stiffnesses ``ke``, plus damping along each spring. One time step is two launches:
``spring_forces`` (one thread per spring, ``atomic_add`` / ``atomic_sub`` of the spring
force into both particles' force array) and ``integrate`` (semi-implicit Euler into the
next step's position and velocity arrays).
Every step has its own ``x``, ``v`` and ``f`` arrays, so nothing is overwritten and the
Tape is valid in both frameworks. After T = 200 steps ``loss_kernel`` adds the squared
distances of the final positions to targets into a one-element loss with ``atomic_add``.

Timed per sample, separately: **forward** = a new ``wp.Tape``, zeroing the force arrays
and the loss, recording the 2T + 1 launches; **backward** = ``tape.backward(loss=loss)``;
then ``tape.zero()`` (shown as its own row). Warp and weft samples are interleaved in
8 rounds; the first run (compiling the forward and adjoint kernels into empty kernel
caches) is timed on its own and left out of the medians.

Checks: the loss against a float64 numpy simulation; weft's gradients (with respect to
the initial velocities and the spring stiffnesses) against Warp's on the full instance;
and, for each framework, its float64 gradients on a small instance (20 particles, 20
steps) against central finite differences of its own float64 forward pass.

Taichi runs the same simulation written its own way (benchmarks/mass_spring_taichi.py);
its gradients are checked against weft's.
"""

import functools
import shutil
import statistics
import tempfile
import time
from types import SimpleNamespace

import numpy as np

from benchmarks.common import DEVICE, SETTINGS, Report, Row, compare, get_peer, one_line, sync_device

NAME = "mass_spring"
PEERS = ("weft", "warp", "taichi")  # taichi: benchmarks/mass_spring_taichi.py
DT = 0.01
KD = 0.5  # spring damping
GRAVITY = (0.0, -9.8, 0.0)
SPACING = 0.01
LOSS_TOL = 1e-4  # float32 loss vs float64 numpy, relative
GRAD_TOL = 1e-3  # weft vs Warp float32 gradients, max error relative to max |grad|
FD_TOL = 1e-6  # float64 adjoint vs central differences, max error relative to max |grad|
FD_EPS = 1e-6


@functools.cache
def make_kernels(wp, precision: str = "float32"):
    """Warp-API kernels, shared verbatim by Warp and weft, in float32 or float64."""
    # benchmarks.common loads Warp with enable_backward = False; these kernels need adjoints
    wp.set_module_options({"enable_backward": True})
    real = wp.float64 if precision == "float64" else wp.float32
    vec = wp.vec3d if precision == "float64" else wp.vec3

    @wp.kernel
    def spring_forces(x: wp.array(dtype=vec), v: wp.array(dtype=vec), springs: wp.array(dtype=int),
                      rest: wp.array(dtype=real), ke: wp.array(dtype=real), kd: real, f: wp.array(dtype=vec)):
        s = wp.tid()
        i = springs[2 * s]  # as warp.sim stores spring_indices
        j = springs[2 * s + 1]
        d = x[j] - x[i]
        length = wp.length(d)
        u = d / length
        c = ke[s] * (length - rest[s]) + kd * wp.dot(v[j] - v[i], u)
        fs = c * u
        wp.atomic_add(f, i, fs)
        wp.atomic_sub(f, j, fs)

    @wp.kernel
    def integrate(x: wp.array(dtype=vec), v: wp.array(dtype=vec), f: wp.array(dtype=vec),
                  inv_mass: wp.array(dtype=real), gravity: vec, dt: real,
                  x_new: wp.array(dtype=vec), v_new: wp.array(dtype=vec)):
        i = wp.tid()
        w = inv_mass[i]
        v1 = v[i]
        if w > real(0.0):  # particles with inv_mass 0 are pinned
            v1 = v1 + (f[i] * w + gravity) * dt
        x_new[i] = x[i] + v1 * dt
        v_new[i] = v1

    @wp.kernel
    def loss_kernel(x: wp.array(dtype=vec), target: wp.array(dtype=vec), loss: wp.array(dtype=real)):
        i = wp.tid()
        d = x[i] - target[i]
        wp.atomic_add(loss, 0, wp.dot(d, d))

    return SimpleNamespace(spring_forces=spring_forces, integrate=integrate, loss=loss_kernel,
                           real=real, vec=vec)


# --------------------------------------------------------------------------- #
# Problem and numpy reference
# --------------------------------------------------------------------------- #
def make_problem(n: int, seed: int = 5) -> dict:
    """A chain along x pinned at particle 0, random rest lengths, stiffnesses, initial
    velocities, and targets near the initial positions (float64 numpy arrays)."""
    rng = np.random.default_rng(seed)
    x0 = np.zeros((n, 3))
    x0[:, 0] = np.arange(n) * SPACING
    v0 = 0.1 * rng.standard_normal((n, 3))
    v0[0] = 0.0
    # springs in build order: (i, i+1) and (i, i+2) for each i, as a mesh builder makes them
    pairs = np.array([(i, i + d) for i in range(n) for d in (1, 2) if i + d < n], dtype=np.int32)
    rest = np.linalg.norm(x0[pairs[:, 1]] - x0[pairs[:, 0]], axis=1) * rng.uniform(0.9, 1.1, len(pairs))
    ke = rng.uniform(50.0, 150.0, len(pairs))
    inv_mass = np.ones(n)
    inv_mass[0] = 0.0
    target = x0 + 0.05 * rng.standard_normal((n, 3))
    return {"x0": x0, "v0": v0, "pairs": pairs, "rest": rest, "ke": ke, "inv_mass": inv_mass,
            "target": target}


def reference_loss(prob: dict, steps: int) -> float:
    """The same simulation in float64 numpy (``np.add.at`` for the scattered forces)."""
    x, v = prob["x0"].copy(), prob["v0"].copy()
    i, j = prob["pairs"][:, 0], prob["pairs"][:, 1]
    w = prob["inv_mass"][:, None]
    g = np.array(GRAVITY)
    for _ in range(steps):
        d = x[j] - x[i]
        length = np.linalg.norm(d, axis=1)
        u = d / length[:, None]
        c = prob["ke"] * (length - prob["rest"]) + KD * np.sum((v[j] - v[i]) * u, axis=1)
        fs = c[:, None] * u
        f = np.zeros_like(x)
        np.add.at(f, i, fs)
        np.add.at(f, j, -fs)
        v = np.where(w > 0, v + (f * w + g) * DT, v)
        x = x + v * DT
    return float(np.sum((x - prob["target"]) ** 2))


# --------------------------------------------------------------------------- #
# One framework's simulation
# --------------------------------------------------------------------------- #
class Sim:
    """Per-step state arrays, parameters and the forward / backward passes of one framework."""

    def __init__(self, wp, prob: dict, steps: int, precision: str = "float32"):
        self.wp, self.steps = wp, steps
        self.k = k = make_kernels(wp, precision)
        np_real = np.float64 if precision == "float64" else np.float32
        n, s = prob["x0"].shape[0], prob["pairs"].shape[0]
        self.n, self.s = n, s

        def arr(a, dtype, grad=False):
            return wp.array(np.ascontiguousarray(a, dtype=np_real), dtype=dtype, device=DEVICE,
                            requires_grad=grad)

        self.x = [arr(prob["x0"], k.vec, True)] + [wp.zeros(n, dtype=k.vec, device=DEVICE, requires_grad=True)
                                                   for _ in range(steps)]
        self.v = [arr(prob["v0"], k.vec, True)] + [wp.zeros(n, dtype=k.vec, device=DEVICE, requires_grad=True)
                                                   for _ in range(steps)]
        self.f = [wp.zeros(n, dtype=k.vec, device=DEVICE, requires_grad=True) for _ in range(steps)]
        self.springs = wp.array(prob["pairs"].reshape(-1), dtype=wp.int32, device=DEVICE)
        self.rest = arr(prob["rest"], k.real)
        self.ke = arr(prob["ke"], k.real, True)
        self.inv_mass = arr(prob["inv_mass"], k.real)
        self.target = arr(prob["target"], k.vec)
        self.loss = wp.zeros(1, dtype=k.real, device=DEVICE, requires_grad=True)
        self.gravity = k.vec(*GRAVITY)
        self.kd, self.dt = k.real(KD), k.real(DT)
        self.tape = None

    def simulate(self):
        """The launches of one forward pass (recorded when a Tape is active)."""
        wp, k = self.wp, self.k
        for f in self.f:
            f.zero_()
        self.loss.zero_()
        for t in range(self.steps):
            wp.launch(k.spring_forces, dim=self.s,
                      inputs=[self.x[t], self.v[t], self.springs, self.rest, self.ke, self.kd],
                      outputs=[self.f[t]], device=DEVICE)
            wp.launch(k.integrate, dim=self.n,
                      inputs=[self.x[t], self.v[t], self.f[t], self.inv_mass, self.gravity, self.dt],
                      outputs=[self.x[t + 1], self.v[t + 1]], device=DEVICE)
        wp.launch(k.loss, dim=self.n, inputs=[self.x[-1], self.target], outputs=[self.loss], device=DEVICE)

    def forward(self):
        self.tape = self.wp.Tape()
        with self.tape:
            self.simulate()

    def backward(self):
        self.tape.backward(loss=self.loss)

    def zero(self):
        self.tape.zero()

    def sync(self):
        sync_device(self.wp)

    def grads(self) -> np.ndarray:
        """d loss / d (initial velocities, stiffnesses), concatenated, as float64."""
        return np.concatenate([self.v[0].grad.numpy().reshape(-1), self.ke.grad.numpy()]).astype(np.float64)

    def loss_value(self) -> float:
        return float(self.loss.numpy()[0])


def fd_check(wp, steps: int = 20, n: int = 20) -> tuple[bool, str]:
    """float64 adjoint gradients vs central differences of the float64 forward pass."""
    prob = make_problem(n, seed=11)
    sim = Sim(wp, prob, steps, "float64")
    sim.forward()
    sim.backward()
    adj = sim.grads()
    sim.zero()

    def loss_at(key, idx, delta):
        p = {**prob, key: prob[key].copy()}
        p[key].reshape(-1)[idx] += delta
        s = Sim(wp, p, steps, "float64")
        s.simulate()
        return s.loss_value()

    fd = [(loss_at(key, idx, FD_EPS) - loss_at(key, idx, -FD_EPS)) / (2 * FD_EPS)
          for key in ("v0", "ke") for idx in range(prob[key].size)]
    chk = compare(adj, np.array(fd), FD_TOL, relative=True, label="rel err")
    return chk.ok, f"{chk.text} over {adj.size} gradients (v0, ke)"


# --------------------------------------------------------------------------- #
# Measurement
# --------------------------------------------------------------------------- #
def _with_fresh_cache(wp, name: str, fn):
    """Run ``fn()`` with the framework's kernel cache pointed at an empty temp dir, so the
    first run compiles from scratch (the cache dir is restored afterwards)."""
    cfg = wp.config
    old = getattr(cfg, "kernel_cache_dir", None)
    tmp = tempfile.mkdtemp(prefix=f"bench-{name}-cache-")
    try:
        cfg.kernel_cache_dir = tmp
        return fn()
    finally:
        cfg.kernel_cache_dir = old
        shutil.rmtree(tmp, ignore_errors=True)


def _time_sample(sim) -> tuple:
    """Seconds of (forward, backward, tape.zero) for one sample."""
    t0 = time.perf_counter()
    sim.forward()
    sim.sync()
    t1 = time.perf_counter()
    sim.backward()
    sim.sync()
    t2 = time.perf_counter()
    sim.zero()
    sim.sync()
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2


VARIANTS = ("forward", "backward", "fwd+bwd", "tape.zero")


def _prepare(peer: str, prob: dict, steps: int):
    """The peer's simulation after a first, compiling run; returns (sim, first-run times)
    or (None, reason)."""
    wp, reason = get_peer(peer)
    if wp is None:
        return None, reason
    try:
        if peer == "taichi":  # (fields and kernels of its own; its first run includes its JIT)
            from benchmarks.mass_spring_taichi import TaichiSim
            sim = TaichiSim(wp, prob, steps)
            first = _time_sample(sim)
        else:
            sim = Sim(wp, prob, steps)
            first = _with_fresh_cache(wp, peer, lambda: _time_sample(sim))
        sim.forward()  # the first run's gradients were zeroed: one more for the checks
        sim.backward()
        sim.sync()
    except Exception as exc:  # report and keep going
        return None, one_line(exc)
    return sim, first


def _checks(sims: dict, ref_loss: float) -> dict:
    """(peer, variant) -> check text: the loss vs numpy, the gradients vs the other peer."""
    out = {}
    grads = {p: s.grads() for p, s in sims.items()}
    for peer, sim in sims.items():
        err = abs(sim.loss_value() - ref_loss) / abs(ref_loss)
        out[(peer, "forward")] = f"{'ok' if err <= LOSS_TOL else 'FAIL'} loss rel err {err:.1e}"
        others = [p for p in grads if p != peer]
        if others:  # (against weft's, or weft's against the next peer's)
            other = "weft" if "weft" in others else others[0]
            chk = compare(grads[peer], grads[other], GRAD_TOL, relative=True, label=f"grad vs {other}")
            out[(peer, "backward")] = chk.text
        sim.zero()
    return out


def _sample_all(sims: dict, rounds: int = 8) -> dict:
    """Interleaved timing: every peer gets about 5 x budget seconds of (forward, backward,
    zero) samples, a share of them in each round, after one warm-up sample."""
    plan = {}
    for peer, sim in sims.items():
        fwd, bwd, _ = _time_sample(sim)  # warm-up
        reps = max(SETTINGS.min_reps, min(40, int(5 * SETTINGS.budget_s / max(fwd + bwd, 1e-9))))
        plan[peer] = [(r + 1) * reps // rounds - r * reps // rounds for r in range(rounds)]
    samples = {p: [] for p in sims}
    for r in range(rounds):
        for peer, sim in sims.items():
            samples[peer].extend(_time_sample(sim) for _ in range(plan[peer][r]))
    return samples


def run() -> Report:
    """Build both frameworks' simulations, check them, time them and return the report."""
    n, steps = (2000, 50) if SETTINGS.quick else (10_000, 200)
    prob = make_problem(n)
    peers = [p for p in PEERS if p in SETTINGS.peers]
    prepared = {p: _prepare(p, prob, steps) for p in peers}
    sims = {p: sim for p, (sim, _) in prepared.items() if sim is not None}
    checks = _checks(sims, reference_loss(prob, steps))
    samples = _sample_all(sims)
    fd = {}
    for peer, sim in sims.items():
        if peer == "taichi":  # (its gradients are checked against weft's above)
            continue
        try:
            fd[peer] = fd_check(sim.wp)
        except Exception as exc:  # report and keep going
            fd[peer] = (False, one_line(exc))

    rows, med = [], {}
    for k, variant in enumerate(VARIANTS):
        for peer in peers:
            if peer not in sims:
                rows.append(Row(peer, None, variant=variant, note=prepared[peer][1]))
                continue
            vals = [(fwd, bwd, fwd + bwd, zero)[k] for fwd, bwd, zero in samples[peer]]
            med[(peer, variant)] = secs = statistics.median(vals)
            check = checks.get((peer, variant), "")
            if variant == "backward" and peer in fd:
                ok, text = fd[peer]
                check = ("" if ok else "FAIL ") + (check + "; " if check else "") + f"FD f64 {text.split(' over')[0]}"
            metric = None if variant == "tape.zero" else n * steps / secs / 1e6
            rows.append(Row(peer, secs, metric, check, variant,
                            extra={"reps": len(vals), "best_s": min(vals)}))

    notes = [f"N = {n:,} particles, {prob['pairs'].shape[0]:,} springs, T = {steps} steps "
             f"({2 * steps + 1} launches a pass), float32; Mps/s = million particle-steps per second"]
    for peer in sims:
        fwd, bwd = med[(peer, "forward")], med[(peer, "backward")]
        f0, b0, _ = prepared[peer][1]
        notes.append(f"{peer}: backward/forward = {bwd / fwd:.2f}; first run (empty kernel cache) "
                     f"forward {f0 * 1e3:.0f} ms + backward {b0 * 1e3:.0f} ms = {(f0 + b0 - fwd - bwd) * 1e3:.0f} ms "
                     f"over the medians (compiling); {len(samples[peer])} samples")
        for r in rows:
            if r.peer == peer and r.variant == "fwd+bwd":
                r.extra["bwd_over_fwd"] = bwd / fwd
                r.extra["first_run_s"] = f0 + b0
    for peer, (_, text) in fd.items():
        notes.append(f"{peer}: float64 gradients vs central differences (20 particles, 20 steps, "
                     f"eps {FD_EPS:g}): {text}")
    notes.append("check: loss vs float64 numpy; gradients (v0, ke) vs the other framework, "
                 "max error relative to max |grad|")
    return Report(NAME, f"mass_spring: chain of {n:,} particles, {steps} steps on a Tape, forward and backward",
                  rows, "Mps/s", notes=notes)


if __name__ == "__main__":
    run().print()
