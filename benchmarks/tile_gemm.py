"""tile_gemm: a tiled float32 GEMM, C = A @ B at 1024 x 1024 x 1024, written as Warp's
``example_tile_matmul`` writes it.

Each block owns one 64 x 64 tile of C: it starts from ``tile_zeros``, loops over K in
steps of ``TILE_K`` (8, the example's value), loads a 64 x 8 tile of A and an 8 x 64 tile
of B, accumulates ``tile_matmul(a, b, sum)`` and stores the tile. Warp and weft run the
same kernel (``launch_tiled`` over a 16 x 16 grid of blocks); numpy runs ``A @ B``
(OpenBLAS). The metric is GFLOP/s, counting 2 M N K flops.
"""

import functools

import numpy as np

from benchmarks.common import DEVICE, PEERS, SETTINGS, Case, Report, Spec, compare, measure_all, sync_device

NAME = "tile_gemm"
TILE_M = 64
TILE_N = 64
TILE_K = 8  # as in Warp's example_tile_matmul
BLOCK_DIM = 64  # threads per block on a GPU; a block is one thread on the CPU
TOL = 1e-4  # max error relative to max |C|; float32 sums of K products


@functools.cache
def make_kernels(wp):
    """Warp-API kernel, shared verbatim by Warp and weft."""
    tm, tn, tk = wp.constant(TILE_M), wp.constant(TILE_N), wp.constant(TILE_K)

    @wp.kernel
    def tile_gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
        i, j = wp.tid()
        sum = wp.tile_zeros(shape=(tm, tn), dtype=float)
        count = int(A.shape[1] / tk)
        for k in range(0, count):
            a = wp.tile_load(A, shape=(tm, tk), offset=(i * tm, k * tk))
            b = wp.tile_load(B, shape=(tk, tn), offset=(k * tk, j * tn))
            wp.tile_matmul(a, b, sum)
        wp.tile_store(C, sum, offset=(i * tm, j * tn))

    return tile_gemm


def build_wp(wp, a, b, ref) -> Case:
    """Warp or weft: one tiled launch, one block per 64 x 64 tile of C."""
    kernel = make_kernels(wp)
    aa = wp.array(a, dtype=wp.float32, device=DEVICE)
    ba = wp.array(b, dtype=wp.float32, device=DEVICE)
    ca = wp.zeros((a.shape[0], b.shape[1]), dtype=wp.float32, device=DEVICE)
    grid = (a.shape[0] // TILE_M, b.shape[1] // TILE_N)

    def run():
        wp.launch_tiled(kernel, dim=grid, inputs=[aa, ba, ca], block_dim=BLOCK_DIM, device=DEVICE)

    return Case(run, lambda: sync_device(wp), lambda: compare(ca.numpy(), ref, TOL, relative=True))


def build_numpy(np_, a, b, ref) -> Case:
    """numpy: ``A @ B`` into a preallocated output."""
    out = np_.empty((a.shape[0], b.shape[1]), dtype=np_.float32)
    return Case(lambda: np_.matmul(a, b, out=out), None, lambda: compare(out, ref, TOL, relative=True))


BUILDERS = {"weft": build_wp, "warp": build_wp, "numpy": build_numpy}


def run() -> Report:
    """Measure every peer and return the report."""
    n = 256 if SETTINGS.quick else 1024
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32) - np.float32(0.5)
    b = rng.random((n, n), dtype=np.float32) - np.float32(0.5)
    ref = a.astype(np.float64) @ b.astype(np.float64)

    def gflops(secs: float) -> float:
        return 2.0 * n ** 3 / secs / 1e9

    specs = [Spec(peer, functools.partial(BUILDERS[peer], a=a, b=b, ref=ref) if peer in BUILDERS else None)
             for peer in PEERS if peer in BUILDERS]
    rows = measure_all(specs, gflops)
    return Report(NAME, f"tile_gemm: C = A @ B, {n} x {n} x {n} float32, "
                        f"{TILE_M} x {TILE_N} tiles, TILE_K = {TILE_K}", rows, "GFLOP/s")
