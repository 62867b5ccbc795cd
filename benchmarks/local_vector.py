"""local_vector: attention rows with a length-64 local vector accumulator (online softmax).

One thread per query row keeps ``acc = wp.vector(length=64)`` and updates ``acc[d]`` for
every key, at the loop counter ``d``: the shape of a flash-attention kernel from a public
Warp program. C (Warp) keeps such a local in memory; weft keeps it in a stack buffer too
(transforms/composite_memory.py; before, each access was a select over the 64 components,
50-150x slower). N = 2048 queries, 512 keys, float32. numpy computes the same softmax
attention with matrix products (a different algorithm: the reference for the check). The
metric is billions of multiply-adds (2 * N * keys * 64) per second.
"""

import functools

import numpy as np

from benchmarks.common import DEVICE, PEERS, SETTINGS, Case, Report, Spec, compare, measure_all, sync_device

NAME = "local_vector"
D = 64
TOL = 1e-5  # outputs are O(1); float32 online softmax against numpy's float64 reference


@functools.cache
def make_kernels(wp):
    """Warp-API kernel, shared verbatim by Warp and weft."""
    vec64 = wp.types.vector(length=D, dtype=wp.float32)

    @wp.kernel
    def attention(q: wp.array2d(dtype=float), k: wp.array2d(dtype=float), v: wp.array2d(dtype=float),
                  out: wp.array2d(dtype=float)):
        i = wp.tid()
        acc = vec64()
        m = float(-1e30)  # noqa: UP018 - Warp wants typed (non-constant) loop variables
        s = float(0.0)  # noqa: UP018
        for j in range(k.shape[0]):
            dot = float(0.0)  # noqa: UP018
            for d in range(D):
                dot += q[i, d] * k[j, d]
            mn = wp.max(m, dot)
            c = wp.exp(m - mn)
            p = wp.exp(dot - mn)
            s = s * c + p
            for d in range(D):
                acc[d] = acc[d] * c + p * v[j, d]
            m = mn
        for d in range(D):
            out[i, d] = acc[d] / s

    return attention


def build_wp(wp, q, k, v, ref) -> Case:
    """Warp or weft: one launch, a thread per query row."""
    kernel = make_kernels(wp)
    qa, ka, va = (wp.array(a, dtype=wp.float32, device=DEVICE) for a in (q, k, v))
    out = wp.zeros(q.shape, dtype=wp.float32, device=DEVICE)

    def run():
        wp.launch(kernel, dim=q.shape[0], inputs=[qa, ka, va, out], device=DEVICE)

    return Case(run, lambda: sync_device(wp), lambda: compare(out.numpy(), ref, TOL))


def build_numpy(np_, q, k, v, ref) -> Case:
    """numpy: scores by a matrix product, a stable softmax, a matrix product."""
    out = {}

    def run():
        s = q @ k.T
        w = np_.exp(s - s.max(axis=1, keepdims=True))
        out["o"] = (w / w.sum(axis=1, keepdims=True)) @ v

    return Case(run, None, lambda: compare(out["o"], ref, TOL))


BUILDERS = {"weft": build_wp, "warp": build_wp, "numpy": build_numpy}


def run() -> Report:
    """Measure every peer and return the report."""
    n, keys = (256, 128) if SETTINGS.quick else (2048, 512)
    rng = np.random.default_rng(0)
    q = (0.1 * rng.standard_normal((n, D))).astype(np.float32)
    k = (0.1 * rng.standard_normal((keys, D))).astype(np.float32)
    v = rng.standard_normal((keys, D)).astype(np.float32)
    s = q.astype(np.float64) @ k.T.astype(np.float64)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    ref = (w / w.sum(axis=1, keepdims=True)) @ v.astype(np.float64)

    def gmacs(secs: float) -> float:
        return 2.0 * n * keys * D / secs / 1e9

    specs = [Spec(peer, functools.partial(BUILDERS[peer], q=q, k=k, v=v, ref=ref))
             for peer in PEERS if peer in BUILDERS]
    rows = measure_all(specs, gmacs)
    return Report(NAME, f"attention with a local vector accumulator: {n:,} x {keys} keys x {D}, float32",
                  rows, "GMAC/s")
