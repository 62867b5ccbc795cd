"""tile_reduce: the sum of N = 2^24 float32 by tiles, each block loading 4096 elements
(``tile_load``), summing them (``tile_sum``) and adding the block's sum into one element
(``tile_atomic_add``); Warp and weft run the same kernel, numpy runs ``x.sum()``.

Bandwidth counts 4 bytes per element read. The timed call zeroes the result and launches.
"""

import functools

import numpy as np

from benchmarks.common import DEVICE, PEERS, SETTINGS, Case, Check, Report, Spec, measure_all, sync_device

NAME = "tile_reduce"
TILE = 4096
BLOCK_DIM = 64  # threads per block on a GPU; a block is one thread on the CPU
TOL = 1e-5  # error relative to sum |x|


@functools.cache
def make_kernels(wp):
    """Warp-API kernel, shared verbatim by Warp and weft."""
    tile = wp.constant(TILE)

    @wp.kernel
    def tile_reduce(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(x, shape=tile, offset=i * tile)
        s = wp.tile_sum(t)
        wp.tile_atomic_add(out, s)

    return tile_reduce


def _check(value, ref, scale) -> Check:
    err = abs(float(value) - ref) / scale
    ok = bool(np.isfinite(err) and err <= TOL)
    return Check(ok, f"{'ok' if ok else 'FAIL'} err {err:.1e}")


def build_wp(wp, x, ref, scale) -> Case:
    """Warp or weft: zero the result, one tiled launch of N / 4096 blocks."""
    kernel = make_kernels(wp)
    xa = wp.array(x, dtype=wp.float32, device=DEVICE)
    out = wp.zeros(1, dtype=wp.float32, device=DEVICE)
    blocks = x.shape[0] // TILE

    def run():
        out.zero_()
        wp.launch_tiled(kernel, dim=blocks, inputs=[xa, out], block_dim=BLOCK_DIM, device=DEVICE)

    return Case(run, lambda: sync_device(wp), lambda: _check(out.numpy()[0], ref, scale))


def build_numpy(np_, x, ref, scale) -> Case:
    """numpy: ``x.sum()`` (pairwise summation, one core)."""
    res = {}

    def run():
        res["s"] = x.sum()

    return Case(run, None, lambda: _check(res["s"], ref, scale))


BUILDERS = {"weft": build_wp, "warp": build_wp, "numpy": build_numpy}


def run() -> Report:
    """Measure every peer and return the report."""
    n = 1 << (20 if SETTINGS.quick else 24)
    x = np.random.default_rng(0).random(n, dtype=np.float32) - np.float32(0.5)
    ref = float(x.astype(np.float64).sum())
    scale = float(np.abs(x).astype(np.float64).sum())

    def gbps(secs: float) -> float:
        return 4.0 * n / secs / 1e9

    specs = [Spec(peer, functools.partial(BUILDERS[peer], x=x, ref=ref, scale=scale))
             for peer in PEERS if peer in BUILDERS]
    rows = measure_all(specs, gbps)
    return Report(NAME, f"tile_reduce: sum of N = {n:,} float32, {TILE}-element tiles", rows, "GB/s")
