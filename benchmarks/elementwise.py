"""elementwise: ``y = sin(x)*exp(-x*x) + sqrt(abs(x))`` on N = 2^24 float32.

Exercises the transcendental math library. torch runs eagerly and, as a second row
(case "torch.compile"), compiled by ``torch.compile``. The check column shows each peer's max abs
difference from a float64 numpy reference (x in [-4, 4]).
"""

import functools

import numpy as np

from benchmarks.common import DEVICE, PEERS, SETTINGS, Case, Report, Spec, compare, measure_all, sync_device

NAME = "elementwise"
TOL = 1e-4  # float32 results are O(1); correct libm-quality math is ~1e-7


@functools.cache
def make_kernels(wp):
    """Warp-API kernel, shared verbatim by Warp and weft."""

    @wp.kernel
    def elementwise(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        v = x[i]
        y[i] = wp.sin(v) * wp.exp(-v * v) + wp.sqrt(wp.abs(v))

    return elementwise


@functools.cache
def make_taichi_kernels(ti):
    """The same kernel for Taichi, over ndarrays."""

    @ti.kernel
    def elementwise(x: ti.types.ndarray(dtype=ti.f32, ndim=1),
                    y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in range(x.shape[0]):
            v = x[i]
            y[i] = ti.sin(v) * ti.exp(-v * v) + ti.sqrt(ti.abs(v))

    return elementwise


def build_wp(wp, x, ref) -> Case:
    """Warp or weft: one launch over N threads."""
    kernel = make_kernels(wp)
    xa = wp.array(x, dtype=wp.float32, device=DEVICE)
    ya = wp.zeros(x.shape[0], dtype=wp.float32, device=DEVICE)
    n = x.shape[0]

    def run():
        wp.launch(kernel, dim=n, inputs=[xa, ya], device=DEVICE)

    return Case(run, lambda: sync_device(wp), lambda: compare(ya.numpy(), ref, TOL))


def build_numpy(np_, x, ref) -> Case:
    """numpy: ufuncs writing into preallocated float32 buffers."""
    xa, y = x.copy(), np_.empty_like(x)
    t1, t2 = np_.empty_like(x), np_.empty_like(x)

    def run():
        np_.sin(xa, out=t1)
        np_.multiply(xa, xa, out=t2)
        np_.negative(t2, out=t2)
        np_.exp(t2, out=t2)
        np_.multiply(t1, t2, out=t1)
        np_.abs(xa, out=t2)
        np_.sqrt(t2, out=t2)
        np_.add(t1, t2, out=y)

    return Case(run, None, lambda: compare(y, ref, TOL))


def build_torch(torch, x, ref) -> Case:
    """torch: the expression, written into a preallocated output."""
    xt = torch.from_numpy(x.copy())
    yt = torch.empty_like(xt)

    def run():
        torch.add(torch.sin(xt) * torch.exp(-xt * xt), torch.sqrt(torch.abs(xt)), out=yt)

    return Case(run, None, lambda: compare(yt.numpy(), ref, TOL))


def build_torch_compiled(torch, x, ref) -> Case:
    """torch.compile of the expression (Inductor's fused C++ loop, its default mode); the
    first call, which compiles, is not timed."""
    xt = torch.from_numpy(x.copy())
    fn = torch.compile(lambda x: torch.sin(x) * torch.exp(-x * x) + torch.sqrt(torch.abs(x)))
    state = {}

    def run():
        state["y"] = fn(xt)

    return Case(run, None, lambda: compare(state["y"].numpy(), ref, TOL))


def build_jax(jax, x, ref) -> Case:
    """JAX: the expression, jitted (XLA fuses it into one loop)."""
    jnp = jax.numpy
    fn = jax.jit(lambda x: jnp.sin(x) * jnp.exp(-x * x) + jnp.sqrt(jnp.abs(x)))
    xj = jnp.asarray(x.copy())
    state = {}

    def run():
        state["y"] = fn(xj)

    return Case(run, lambda: state["y"].block_until_ready(),
                lambda: compare(np.asarray(state["y"]), ref, TOL))


def build_taichi(ti, x, ref) -> Case:
    """Taichi: parallel-for kernel over ti.ndarray."""
    kernel = make_taichi_kernels(ti)
    xt, yt = ti.ndarray(ti.f32, shape=x.shape), ti.ndarray(ti.f32, shape=x.shape)
    xt.from_numpy(x)
    return Case(lambda: kernel(xt, yt), ti.sync, lambda: compare(yt.to_numpy(), ref, TOL))


BUILDERS = {"weft": build_wp, "warp": build_wp, "numpy": build_numpy,
            "torch": build_torch, "jax": build_jax, "taichi": build_taichi}


def run() -> Report:
    """Measure every peer and return the report."""
    n = 1 << (20 if SETTINGS.quick else 24)
    x = np.random.default_rng(1).uniform(-4.0, 4.0, n).astype(np.float32)
    x64 = x.astype(np.float64)
    ref = np.sin(x64) * np.exp(-x64 * x64) + np.sqrt(np.abs(x64))

    def melems(secs: float) -> float:
        return n / secs / 1e6

    specs = [Spec(peer, functools.partial(BUILDERS[peer], x=x, ref=ref)) for peer in PEERS]
    if "torch" in PEERS:  # (the speed issue's peer for this workload)
        specs.append(Spec("torch", functools.partial(build_torch_compiled, x=x, ref=ref), "torch.compile"))
    rows = measure_all(specs, melems)
    return Report(NAME, f"elementwise: y = sin(x)*exp(-x*x) + sqrt(abs(x)), N = {n:,} float32",
                  rows, "Melem/s",
                  notes=["check: max abs difference from a float64 numpy reference"])
