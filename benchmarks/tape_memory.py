"""Memory and time of a long differentiable simulation: an unbounded Tape against
`Tape(memory_budget=...)` (weft's automatic checkpointing), and the forward alone.

    python -m benchmarks.tape_memory                       # 10^5 particles x 2000 steps
    python -m benchmarks.tape_memory --particles 10000 --steps 500

Particles (vec3 positions and velocities, float32) ping-pong between two state arrays, so
an unbounded Tape keeps a copy of the positions per step (1.2 MB at 10^5 particles; the
step is linear in the velocities, whose old values its adjoint never reads). Each mode
runs in its own process; memory is the peak resident size above what the process held
when the forward started (the state, compiled kernels). The budget is 1/20 of what the
unbounded Tape keeps. The gradients of the budgeted run are compared, bit for bit, with
the unbounded run's. Warp has no automatic checkpointing (its users write it by hand,
as in `example_fluid_checkpoint`), so there is no Warp column.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

DT = 0.001


def make_kernels(wp):
    @wp.kernel
    def step(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), x_new: wp.array(dtype=wp.vec3),
             v_new: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        a = -x[i] * wp.length(x[i]) + wp.vec3(0.0, -9.8, 0.0) - 0.1 * v[i]
        v_new[i] = v[i] + a * DT
        x_new[i] = x[i] + v_new[i] * DT

    @wp.kernel
    def energy(x: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
        i = wp.tid()
        wp.atomic_add(loss, 0, wp.dot(x[i], x[i]))

    return step, energy


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child(mode: str, particles: int, steps: int, budget: int, out: str):
    """One measurement in this process: prints a JSON line."""
    import weft as wp
    step, energy = make_kernels(wp)
    rng = np.random.default_rng(0)
    xs = [wp.array(rng.normal(size=(particles, 3)), dtype=wp.vec3, requires_grad=True),
          wp.zeros(particles, dtype=wp.vec3, requires_grad=True)]
    vs = [wp.array(rng.normal(size=(particles, 3)), dtype=wp.vec3, requires_grad=True),
          wp.zeros(particles, dtype=wp.vec3, requires_grad=True)]
    loss = wp.zeros(1, dtype=float, requires_grad=True)

    def forward():
        for s in range(steps):
            a, b = s % 2, (s + 1) % 2
            wp.launch(step, dim=particles, inputs=[xs[a], vs[a]], outputs=[xs[b], vs[b]])
        wp.launch(energy, dim=particles, inputs=[xs[steps % 2]], outputs=[loss])

    x0, v0 = xs[0].numpy().copy(), vs[0].numpy().copy()
    with wp.Tape() as warm_up:  # compile the kernels and their adjoints outside the measurement
        wp.launch(step, dim=particles, inputs=[xs[0], vs[0]], outputs=[xs[1], vs[1]])
        wp.launch(energy, dim=particles, inputs=[xs[1]], outputs=[loss])
    warm_up.backward(loss)
    warm_up.reset()
    for a in xs + vs + [loss]:
        a.grad.zero_()
    loss.zero_()
    xs[0].assign(x0)
    vs[0].assign(v0)
    base = _rss_bytes()
    start = time.perf_counter()
    if mode == "forward":
        forward()
    else:
        tape = wp.Tape(memory_budget=budget if mode == "budget" else None)
        with tape:
            forward()
        tape.backward(loss)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if mode != "forward":
        np.save(out, np.concatenate([xs[0].grad.numpy().ravel(), vs[0].grad.numpy().ravel()]))
    print(json.dumps({"mode": mode, "seconds": seconds, "peak_above_start": max(peak - base, 0)}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--particles", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--budget", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    state_bytes = args.particles * 12  # x, overwritten every step (v too, but its adjoint never reads it)
    budget = args.budget or args.steps * state_bytes // 20
    if args.child:
        child(args.child[0], args.particles, args.steps, budget, args.child[1])
        return
    results, grads = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("forward", "unbounded", "budget"):
            out = os.path.join(tmp, f"{mode}.npy")
            proc = subprocess.run([sys.executable, "-m", "benchmarks.tape_memory", "--particles", str(args.particles),
                                   "--steps", str(args.steps), "--budget", str(budget), "--child", mode, out],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                print(proc.stderr)
                raise SystemExit(f"tape_memory: the {mode} run failed")
            results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
            if mode != "forward":
                grads[mode] = np.load(out)
    mib = 1024 * 1024
    print(f"Tape memory: {args.particles} particles x {args.steps} steps, copies {state_bytes / mib:.1f} MiB per "
          f"step, budget {budget / mib:.0f} MiB (1/20 of {args.steps * state_bytes / mib:.0f} MiB)")
    print(f"  {'mode':<12}{'time (s)':>10}{'x unbounded':>13}{'peak above start (MiB)':>25}")
    for mode, r in results.items():
        ratio = r["seconds"] / results["unbounded"]["seconds"]
        print(f"  {mode:<12}{r['seconds']:>10.2f}{ratio:>13.2f}{r['peak_above_start'] / mib:>25.0f}")
    same = np.array_equal(grads["unbounded"], grads["budget"])
    print(f"  gradients of the budgeted run equal the unbounded run's bit for bit: {same}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
