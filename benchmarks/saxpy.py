"""saxpy: ``y = a*x + y`` on N = 2^24 float32, in place (memory bound).

Bandwidth counts 12 bytes per element: read x, read y, write y.
"""

import functools
import warnings

import numpy as np

from benchmarks.common import DEVICE, PEERS, SETTINGS, Case, Report, Spec, compare, measure_all, sync_device

NAME = "saxpy"
A = 2.0
TOL = 1e-5  # values are O(1); allows FMA vs. multiply-then-add rounding


@functools.cache
def make_kernels(wp):
    """Warp-API kernel, shared verbatim by Warp and weft."""

    @wp.kernel
    def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
        i = wp.tid()
        y[i] = a * x[i] + y[i]

    return saxpy


@functools.cache
def make_taichi_kernels(ti):
    """The same kernel for Taichi, over ndarrays."""

    @ti.kernel
    def saxpy(x: ti.types.ndarray(dtype=ti.f32, ndim=1),
              y: ti.types.ndarray(dtype=ti.f32, ndim=1), a: ti.f32):
        for i in range(x.shape[0]):  # (``for i in x`` is ~10x slower on ndarrays)
            y[i] = a * x[i] + y[i]

    return saxpy


def build_wp(wp, x, y0, ref) -> Case:
    """Warp or weft: one launch over N threads."""
    kernel = make_kernels(wp)
    xa = wp.array(x, dtype=wp.float32, device=DEVICE)
    ya = wp.array(y0, dtype=wp.float32, device=DEVICE)
    n = x.shape[0]

    def run():
        wp.launch(kernel, dim=n, inputs=[xa, ya, A], device=DEVICE)

    return Case(run, lambda: sync_device(wp), lambda: compare(ya.numpy(), ref, TOL))


def build_numpy(np_, x, y0, ref) -> Case:
    """numpy: multiply into a scratch buffer, then add in place."""
    xa, ya, tmp = x.copy(), y0.copy(), np_.empty_like(x)

    def run():
        np_.multiply(xa, np_.float32(A), out=tmp)
        np_.add(ya, tmp, out=ya)

    return Case(run, None, lambda: compare(ya, ref, TOL))


def build_torch(torch, x, y0, ref) -> Case:
    """torch: ``y.add_(x, alpha=a)``."""
    xt, yt = torch.from_numpy(x.copy()), torch.from_numpy(y0.copy())
    return Case(lambda: yt.add_(xt, alpha=A), None, lambda: compare(yt.numpy(), ref, TOL))


def build_jax(jax, x, y0, ref) -> Case:
    """JAX: jitted ``a*x + y`` with y donated so XLA may update it in place."""
    jnp = jax.numpy
    fn = jax.jit(lambda x, y, a: a * x + y, donate_argnums=1)
    xj = jnp.asarray(x.copy())
    state = {"y": jnp.asarray(y0.copy())}

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "donated buffers were not usable"
            state["y"] = fn(xj, state["y"], np.float32(A))

    return Case(run, lambda: state["y"].block_until_ready(),
                lambda: compare(np.asarray(state["y"]), ref, TOL))


def build_taichi(ti, x, y0, ref) -> Case:
    """Taichi: parallel-for kernel over ti.ndarray."""
    kernel = make_taichi_kernels(ti)
    xt, yt = ti.ndarray(ti.f32, shape=x.shape), ti.ndarray(ti.f32, shape=x.shape)
    xt.from_numpy(x)
    yt.from_numpy(y0)
    return Case(lambda: kernel(xt, yt, A), ti.sync, lambda: compare(yt.to_numpy(), ref, TOL))


BUILDERS = {"weft": build_wp, "warp": build_wp, "numpy": build_numpy,
            "torch": build_torch, "jax": build_jax, "taichi": build_taichi}


def run() -> Report:
    """Measure every peer and return the report."""
    n = 1 << (20 if SETTINGS.quick else 24)
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    y0 = rng.random(n, dtype=np.float32)
    ref = np.float32(A) * x + y0

    def gbps(secs: float) -> float:
        return 12.0 * n / secs / 1e9

    specs = [Spec(peer, functools.partial(BUILDERS[peer], x=x, y0=y0, ref=ref)) for peer in PEERS]
    rows = measure_all(specs, gbps)
    return Report(NAME, f"saxpy: y = a*x + y, N = {n:,} float32", rows, "GB/s")
