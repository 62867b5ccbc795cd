"""nbody: all-pairs gravitational acceleration, N = 4096 bodies, float32 vec3.

``acc[i] = sum_j m[j] * d / (|d|^2 + eps^2)^(3/2)`` with ``d = p[j] - p[i]``
(the self term is zero since d = 0). Warp/weft/Taichi run one thread per body
with a dynamic inner loop over all bodies; numpy and torch are vectorised over
blocks of rows (one array per axis), JAX broadcasts the full N x N problem
under jit. The metric is
billions of pair interactions (N^2) per second.
"""

import functools

import numpy as np

from benchmarks.common import DEVICE, PEERS, SETTINGS, Case, Report, Spec, compare, measure_all, sync_device

NAME = "nbody"
EPS2 = 0.01
TOL = 1e-4  # max error relative to max |acc|; float32 sums of N terms give ~1e-6


@functools.cache
def make_kernels(wp):
    """Warp-API kernel, shared verbatim by Warp and weft, with default settings (no fast
    math: the inner loop is a float reduction nobody may reorder; weft runs 8 threads on the
    SIMD lanes instead, codegen/spmd.py). Taichi uses fast math by default."""

    @wp.kernel
    def nbody(pos: wp.array(dtype=wp.vec3), mass: wp.array(dtype=float),
              acc: wp.array(dtype=wp.vec3), n: int, eps2: float):
        i = wp.tid()
        pi = pos[i]
        a = wp.vec3(0.0, 0.0, 0.0)
        for j in range(n):
            d = pos[j] - pi
            r2 = wp.dot(d, d) + eps2
            inv = 1.0 / wp.sqrt(r2)
            a = a + (mass[j] * inv * inv * inv) * d
        acc[i] = a

    return nbody


@functools.cache
def make_taichi_kernels(ti):
    """The same kernel for Taichi, over ndarrays of vec3."""
    vec3 = ti.math.vec3

    @ti.kernel
    def nbody(pos: ti.types.ndarray(dtype=vec3, ndim=1),
              mass: ti.types.ndarray(dtype=ti.f32, ndim=1),
              acc: ti.types.ndarray(dtype=vec3, ndim=1), eps2: ti.f32):
        n = pos.shape[0]
        for i in range(n):  # parallel (outermost loop)
            pi = pos[i]
            a = vec3(0.0, 0.0, 0.0)
            for j in range(n):  # serial
                d = pos[j] - pi
                r2 = d.dot(d) + eps2
                inv = 1.0 / ti.sqrt(r2)
                a += mass[j] * inv * inv * inv * d
            acc[i] = a

    return nbody


def reference(p, m, block: int = 256):
    """Accelerations by blocked numpy broadcasting in the dtype of ``p``."""
    n = p.shape[0]
    x, y, z = p[:, 0], p[:, 1], p[:, 2]
    acc = np.empty_like(p)
    for i0 in range(0, n, block):
        i1 = min(i0 + block, n)
        dx = x[None, :] - x[i0:i1, None]
        dy = y[None, :] - y[i0:i1, None]
        dz = z[None, :] - z[i0:i1, None]
        inv = 1.0 / np.sqrt(dx * dx + dy * dy + dz * dz + p.dtype.type(EPS2))
        w = m[None, :] * inv * inv * inv
        acc[i0:i1, 0] = (w * dx).sum(axis=1)
        acc[i0:i1, 1] = (w * dy).sum(axis=1)
        acc[i0:i1, 2] = (w * dz).sum(axis=1)
    return acc


def build_wp(wp, p, m, ref) -> Case:
    """Warp or weft: one thread per body."""
    kernel = make_kernels(wp)
    pos = wp.array(p, dtype=wp.vec3, device=DEVICE)
    mass = wp.array(m, dtype=wp.float32, device=DEVICE)
    n = p.shape[0]
    acc = wp.zeros(n, dtype=wp.vec3, device=DEVICE)

    def run():
        wp.launch(kernel, dim=n, inputs=[pos, mass, acc, n, EPS2], device=DEVICE)

    return Case(run, lambda: sync_device(wp),
                lambda: compare(acc.numpy(), ref, TOL, relative=True, label="rel err"))


def build_numpy(np_, p, m, ref) -> Case:
    """numpy: float32 broadcasting over blocks of 256 rows."""
    pa, ma, state = p.copy(), m.copy(), {}

    def run():
        state["acc"] = reference(pa, ma)

    return Case(run, None,
                lambda: compare(state["acc"], ref, TOL, relative=True, label="rel err"))


def build_torch(torch, p, m, ref, block: int = 1024) -> Case:
    """torch: float32 broadcasting over blocks of 1024 rows, one tensor per axis."""
    x, y, z = (torch.from_numpy(p[:, k].copy()) for k in range(3))
    mt = torch.from_numpy(m.copy())
    n = p.shape[0]
    acc = torch.empty((n, 3), dtype=torch.float32)

    def run():
        for i0 in range(0, n, block):
            rows = slice(i0, i0 + block)
            dx = x[None, :] - x[rows, None]
            dy = y[None, :] - y[rows, None]
            dz = z[None, :] - z[rows, None]
            inv = torch.rsqrt(dx * dx + dy * dy + dz * dz + EPS2)
            w = mt[None, :] * inv * inv * inv
            acc[rows, 0] = (w * dx).sum(dim=1)
            acc[rows, 1] = (w * dy).sum(dim=1)
            acc[rows, 2] = (w * dz).sum(dim=1)

    return Case(run, None,
                lambda: compare(acc.numpy(), ref, TOL, relative=True, label="rel err"))


def build_jax(jax, p, m, ref) -> Case:
    """JAX: full N x N broadcasting per axis, jitted (faster than (N, N, 3) or vmap)."""
    jnp = jax.numpy

    @jax.jit
    def accel(p, m):
        x, y, z = p[:, 0], p[:, 1], p[:, 2]
        dx = x[None, :] - x[:, None]
        dy = y[None, :] - y[:, None]
        dz = z[None, :] - z[:, None]
        inv = jax.lax.rsqrt(dx * dx + dy * dy + dz * dz + EPS2)
        w = m[None, :] * inv * inv * inv
        return jnp.stack([(w * dx).sum(axis=1), (w * dy).sum(axis=1), (w * dz).sum(axis=1)],
                         axis=1)

    pj, mj, state = jnp.asarray(p.copy()), jnp.asarray(m.copy()), {}

    def run():
        state["acc"] = accel(pj, mj)

    return Case(run, lambda: state["acc"].block_until_ready(),
                lambda: compare(np.asarray(state["acc"]), ref, TOL, relative=True,
                                label="rel err"))


def build_taichi(ti, p, m, ref) -> Case:
    """Taichi: one thread per body over ti.ndarray(vec3)."""
    kernel = make_taichi_kernels(ti)
    n = p.shape[0]
    pos = ti.ndarray(ti.math.vec3, shape=n)
    mass = ti.ndarray(ti.f32, shape=n)
    acc = ti.ndarray(ti.math.vec3, shape=n)
    pos.from_numpy(p)
    mass.from_numpy(m)
    return Case(lambda: kernel(pos, mass, acc, EPS2), ti.sync,
                lambda: compare(acc.to_numpy(), ref, TOL, relative=True, label="rel err"))


BUILDERS = {"weft": build_wp, "warp": build_wp, "numpy": build_numpy,
            "torch": build_torch, "jax": build_jax, "taichi": build_taichi}


def run() -> Report:
    """Measure every peer and return the report."""
    n = 1024 if SETTINGS.quick else 4096
    rng = np.random.default_rng(2)
    p = rng.standard_normal((n, 3)).astype(np.float32)
    m = rng.uniform(0.5, 1.5, n).astype(np.float32)
    ref = reference(p.astype(np.float64), m.astype(np.float64))

    def ginter(secs: float) -> float:
        return n * n / secs / 1e9

    specs = [Spec(peer, functools.partial(BUILDERS[peer], p=p, m=m, ref=ref)) for peer in PEERS]
    rows = measure_all(specs, ginter)
    return Report(NAME, f"nbody: all-pairs gravity, N = {n:,} bodies (vec3 float32)", rows,
                  "Ginter/s", notes=["check: max error relative to max |acc| (float64 ref)"])
