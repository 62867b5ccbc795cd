"""torch_op: the cost of calling a kernel from PyTorch, against launching it bare.

The kernel is saxpy on 1,000 float32 elements (``out[i] = a * x[i] + y[i]``), small enough
that per-call overhead dominates. Variants, each ``count`` calls per sample:

- "bare launch": ``wp.launch`` on preallocated arrays (the floor).
- "op, no grad": weft's ``weft.torch.wrap(saxpy, outputs=["out"])`` called on tensors under
  ``torch.no_grad()``: allocates the output tensor and launches.
- "op, graph": the same with ``x.requires_grad``: also records the torch autograd node.
- "op, fwd+bwd": the graph call, then ``torch.autograd.grad`` through it (adjoint launch).
- torch's own ops for the same saxpy (``A * x + y``, two ops) in the three "op" modes: what
  a wrapped op costs against native torch.
- "hand-written": the Warp pattern every Warp user writes: a ``torch.autograd.Function``
  whose forward wraps the tensors with ``wp.from_torch``, allocates the output with
  ``wp.zeros`` and returns ``wp.to_torch`` of it (Warp and weft run the same code).

The notes give the wrapped op's overhead per call over the bare launch (target < 20 us).
"""

import functools

import numpy as np

from benchmarks.common import DEVICE, SETTINGS, Case, Report, Spec, compare, measure_all

NAME = "torch_op"
N = 1000
A = 2.0


@functools.cache
def make_kernel(wp):
    """Warp-API kernel, shared verbatim by Warp and weft."""

    @wp.kernel(enable_backward=True)
    def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float, out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = a * x[i] + y[i]

    return saxpy


def _inputs(torch, requires_grad=False):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(N, generator=gen)
    y = torch.randn(N, generator=gen)
    return x.requires_grad_(requires_grad), y


def _expected(x, y):
    return A * x.detach().numpy() + y.numpy()


def build_bare(wp, count: int) -> Case:
    """``count`` launches on preallocated arrays."""
    import torch

    kernel = make_kernel(wp)
    x, y = _inputs(torch)
    xa, ya = wp.array(x.numpy(), device=DEVICE), wp.array(y.numpy(), device=DEVICE)
    out = wp.zeros(N, device=DEVICE)

    def run():
        for _ in range(count):
            wp.launch(kernel, dim=N, inputs=[xa, ya, A], outputs=[out], device=DEVICE)

    return Case(run, None, lambda: compare(out.numpy(), _expected(x, y), 1e-6), count)


def _calls(torch, saxpy, count: int, mode: str) -> Case:
    """``count`` calls of ``saxpy(x, y, a)`` on tensors in ``mode``: "no grad", "graph"
    (x requires grad) or "fwd+bwd" (then ``torch.autograd.grad`` w.r.t. x)."""
    x, y = _inputs(torch, requires_grad=mode != "no grad")
    state = {}

    def run():
        if mode == "no grad":
            with torch.no_grad():
                for _ in range(count):
                    state["out"] = saxpy(x, y, A)
        elif mode == "graph":
            for _ in range(count):
                state["out"] = saxpy(x, y, A)
        else:
            for _ in range(count):
                out = saxpy(x, y, A)
                state["out"], = torch.autograd.grad(out, x, torch.ones_like(out))

    def check():
        if mode == "fwd+bwd":
            return compare(state["out"].numpy(), np.full(N, A), 1e-6)
        return compare(state["out"].detach().numpy(), _expected(x, y), 1e-6)

    return Case(run, None, check, count)


def build_op(wp, count: int, mode: str) -> Case:
    """weft only: the wrapped op, ``count`` calls in ``mode`` (see ``_calls``)."""
    import torch

    return _calls(torch, wp.torch.wrap(make_kernel(wp), outputs=["out"]), count, mode)


def build_torch_ops(torch, count: int, mode: str) -> Case:
    """torch's own ops for the same saxpy (``a * x + y``: two ops), as ``build_op``."""
    return _calls(torch, lambda x, y, a: a * x + y, count, mode)


def build_hand_written(wp, count: int) -> Case:
    """Warp or weft: the hand-written torch.autograd.Function's forward, ``count`` calls."""
    import torch

    kernel = make_kernel(wp)

    class Saxpy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.x, ctx.y = wp.from_torch(x), wp.from_torch(y)
            ctx.out = wp.zeros(N, device=DEVICE)
            wp.launch(kernel, dim=N, inputs=[ctx.x, ctx.y, A], outputs=[ctx.out], device=DEVICE)
            return wp.to_torch(ctx.out)

    x, y = _inputs(torch)
    state = {}

    def run():
        for _ in range(count):
            state["out"] = Saxpy.apply(x, y)

    return Case(run, None, lambda: compare(state["out"].numpy(), _expected(x, y), 1e-6), count)


def run() -> Report:
    """Measure every variant and return the report."""
    count = 200 if SETTINGS.quick else 1_000

    def us(secs: float) -> float:
        return secs * 1e6

    specs = [Spec(peer, functools.partial(build_bare, count=count), "bare launch") for peer in ("weft", "warp")]
    for mode in ("no grad", "graph", "fwd+bwd"):
        specs += [Spec("weft", functools.partial(build_op, count=count, mode=mode), f"op, {mode}"),
                  Spec("torch", functools.partial(build_torch_ops, count=count, mode=mode), f"op, {mode}")]
    specs += [Spec(peer, functools.partial(build_hand_written, count=count), "hand-written")
              for peer in ("weft", "warp")]
    rows = measure_all(specs, us)
    report = Report(NAME, f"torch_op: saxpy on {N:,} float32 from PyTorch, {count:,} calls per sample",
                    rows, "us/call", "per call")
    bare = next((r for r in rows if r.peer == "weft" and r.variant == "bare launch"), None)
    for r in rows:
        if r.peer == "weft" and r.variant.startswith("op") and r.seconds and bare and bare.seconds:
            report.notes.append(f"weft {r.variant}: {1e6 * (r.seconds - bare.seconds):.1f} us per call "
                                "over the bare launch")
    return report
