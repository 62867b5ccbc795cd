"""launch: per-launch overhead of a trivial kernel (``a[0] = 1.0``, dim = 1).

One sample is 10,000 back-to-back launches followed by one synchronize; the
table shows time per launch. "replay" re-launches the object returned by
``wp.launch(..., record_cmd=True)`` (Warp's ``Launch.launch()``), which skips
argument packing; "adjoint" and "adjoint replay" do the same for the adjoint kernel
(``adjoint=True``, an adjoint array for ``a``). numpy's row is a plain ``a[0] = 1.0`` from Python, i.e. the
interpreter floor; torch runs ``fill_`` on a 1-element tensor, JAX a jitted
``a.at[0].set(1.0)``, Taichi a one-line kernel.
"""

import functools

import numpy as np

from benchmarks.common import DEVICE, PEERS, SETTINGS, Case, Report, Spec, compare, measure_all, sync_device

NAME = "launch"
ONE = np.ones(1, dtype=np.float32)


@functools.cache
def make_kernels(wp):
    """Warp-API kernel, shared verbatim by Warp and weft."""

    @wp.kernel
    def trivial(a: wp.array(dtype=float)):
        a[0] = 1.0

    return trivial


@functools.cache
def make_adjoint_kernels(wp):
    """The same kernel with its adjoint built (benchmarks.common turns Warp's off)."""

    @wp.kernel(enable_backward=True)
    def trivial_differentiable(a: wp.array(dtype=float)):
        a[0] = 1.0

    return trivial_differentiable


@functools.cache
def make_taichi_kernels(ti):
    """The same kernel for Taichi."""

    @ti.kernel
    def trivial(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        a[0] = 1.0

    return trivial


def build_wp(wp, count: int) -> Case:
    """Warp or weft: ``count`` calls of ``wp.launch``."""
    kernel = make_kernels(wp)
    a = wp.zeros(1, dtype=wp.float32, device=DEVICE)

    def run():
        for _ in range(count):
            wp.launch(kernel, dim=1, inputs=[a], device=DEVICE)

    return Case(run, lambda: sync_device(wp), lambda: compare(a.numpy(), ONE, 0.0), count)


def build_wp_replay(wp, count: int) -> Case:
    """Warp or weft: ``count`` replays of a recorded launch."""
    kernel = make_kernels(wp)
    a = wp.zeros(1, dtype=wp.float32, device=DEVICE)
    cmd = wp.launch(kernel, dim=1, inputs=[a], device=DEVICE, record_cmd=True)
    replay = cmd.launch  # AttributeError (-> row note) when not supported

    def run():
        for _ in range(count):
            replay()

    return Case(run, lambda: sync_device(wp), lambda: compare(a.numpy(), ONE, 0.0), count)


def build_wp_adjoint(wp, count: int, replay: bool) -> Case:
    """Warp or weft: ``count`` adjoint launches (or replays of a recorded one)."""
    kernel = make_adjoint_kernels(wp)
    a = wp.zeros(1, dtype=wp.float32, device=DEVICE)
    adj_a = wp.ones(1, dtype=wp.float32, device=DEVICE)
    args = dict(dim=1, inputs=[a], adj_inputs=[adj_a], device=DEVICE, adjoint=True)
    if replay:
        launch = wp.launch(kernel, record_cmd=True, **args).launch
    else:
        def launch():
            wp.launch(kernel, **args)

    def run():
        for _ in range(count):
            launch()

    # No result check: weft's adjoint of `a[0] = 1.0` clears adj_a (the overwritten value has
    # no influence), Warp's leaves it; the gradients are tested in weft's test suite.
    return Case(run, lambda: sync_device(wp), None, count)


def build_numpy(np_, count: int) -> Case:
    """numpy: a Python-level element store, the floor for any launch."""
    a = np_.zeros(1, dtype=np_.float32)

    def run():
        for _ in range(count):
            a[0] = 1.0

    return Case(run, None, lambda: compare(a, ONE, 0.0), count)


def build_torch(torch, count: int) -> Case:
    """torch: one ``fill_`` op dispatch per call."""
    a = torch.zeros(1, dtype=torch.float32)

    def run():
        for _ in range(count):
            a.fill_(1.0)

    return Case(run, None, lambda: compare(a.numpy(), ONE, 0.0), count)


def build_jax(jax, count: int) -> Case:
    """JAX: a jitted scatter with the buffer donated, chained ``count`` times."""
    fn = jax.jit(lambda a: a.at[0].set(1.0), donate_argnums=0)
    state = {"a": jax.numpy.zeros(1, dtype=jax.numpy.float32)}

    def run():
        a = state["a"]
        for _ in range(count):
            a = fn(a)
        state["a"] = a

    return Case(run, lambda: state["a"].block_until_ready(),
                lambda: compare(np.asarray(state["a"]), ONE, 0.0), count)


def build_taichi(ti, count: int) -> Case:
    """Taichi: ``count`` kernel calls on a ti.ndarray."""
    kernel = make_taichi_kernels(ti)
    a = ti.ndarray(ti.f32, shape=1)

    def run():
        for _ in range(count):
            kernel(a)

    return Case(run, ti.sync, lambda: compare(a.to_numpy(), ONE, 0.0), count)


BUILDERS = {"weft": build_wp, "warp": build_wp, "numpy": build_numpy,
            "torch": build_torch, "jax": build_jax, "taichi": build_taichi}


def run() -> Report:
    """Measure every peer and return the report."""
    count = 2_000 if SETTINGS.quick else 10_000

    def per_sec(secs: float) -> float:
        return 1e-3 / secs  # thousands of launches per second

    specs = [Spec(peer, functools.partial(BUILDERS[peer], count=count), "launch")
             for peer in PEERS]
    specs += [Spec(peer, functools.partial(build_wp_replay, count=count), "replay")
              for peer in ("weft", "warp")]
    for label, replay in (("adjoint", False), ("adjoint replay", True)):
        specs += [Spec(peer, functools.partial(build_wp_adjoint, count=count, replay=replay), label)
                  for peer in ("weft", "warp")]
    rows = measure_all(specs, per_sec)
    return Report(NAME, f"launch: trivial kernel, dim = 1, {count:,} launches per sample",
                  rows, "k/s", "per launch")
