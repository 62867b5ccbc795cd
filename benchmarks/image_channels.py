"""image_channels: a 3x3 box blur of an RGB image, one thread per (row, column, channel).

`y, x, c = wp.tid()` over `dim=(H, W, 3)` is how image code in Warp is written; the launch's
last dimension is 3 long. weft's SIMD lanes run along a launch's rows, which leaves rows this
short to scalar code, so such launches run a variant whose lanes run along the linear thread
index (codegen/spmd.py). H = W = 1024 (256 with --quick), float32, edges clamped. numpy sums
the nine shifted views of an edge-padded copy. The metric is output elements per second.
"""

import functools

import numpy as np

from benchmarks.common import DEVICE, PEERS, SETTINGS, Case, Report, Spec, compare, measure_all, sync_device

NAME = "image_channels"
TOL = 1e-5  # outputs in [0, 1]: float32 sums of nine terms against a float64 reference


@functools.cache
def make_kernels(wp):
    """Warp-API kernel, shared verbatim by Warp and weft."""

    @wp.kernel
    def box_blur(img: wp.array3d(dtype=float), out: wp.array3d(dtype=float)):
        y, x, c = wp.tid()
        h = img.shape[0]
        w = img.shape[1]
        s = float(0.0)  # noqa: UP018 - Warp wants typed (non-constant) loop variables
        for dy in range(-1, 2):
            for dx in range(-1, 2):
                s += img[wp.clamp(y + dy, 0, h - 1), wp.clamp(x + dx, 0, w - 1), c]
        out[y, x, c] = s / 9.0

    return box_blur


def build_wp(wp, img, ref) -> Case:
    """Warp or weft: one launch over (H, W, 3) threads."""
    kernel = make_kernels(wp)
    src = wp.array(img, dtype=wp.float32, device=DEVICE)
    out = wp.zeros(img.shape, dtype=wp.float32, device=DEVICE)

    def run():
        wp.launch(kernel, dim=img.shape, inputs=[src, out], device=DEVICE)

    return Case(run, lambda: sync_device(wp), lambda: compare(out.numpy(), ref, TOL))


def build_numpy(np_, img, ref) -> Case:
    """numpy: the nine shifted views of an edge-padded copy, summed."""
    h, w, _ = img.shape
    out = np_.empty_like(img)

    def run():
        padded = np_.pad(img, ((1, 1), (1, 1), (0, 0)), mode="edge")
        out[:] = padded[0:h, 0:w]
        for dy in range(3):
            for dx in range(3):
                if dy or dx:
                    out[:] += padded[dy:dy + h, dx:dx + w]
        out[:] /= 9.0

    return Case(run, None, lambda: compare(out, ref, TOL))


BUILDERS = {"weft": build_wp, "warp": build_wp, "numpy": build_numpy}


def run() -> Report:
    """Measure every peer and return the report."""
    n = 256 if SETTINGS.quick else 1024
    img = np.random.default_rng(0).random((n, n, 3)).astype(np.float32)
    padded = np.pad(img.astype(np.float64), ((1, 1), (1, 1), (0, 0)), mode="edge")
    ref = sum(padded[dy:dy + n, dx:dx + n] for dy in range(3) for dx in range(3)) / 9.0

    def melems(secs: float) -> float:
        return img.size / secs / 1e6

    specs = [Spec(peer, functools.partial(BUILDERS[peer], img=img, ref=ref)) for peer in PEERS if peer in BUILDERS]
    rows = measure_all(specs, melems)
    return Report(NAME, f"3x3 box blur of an RGB image, dim=({n}, {n}, 3), float32", rows, "Melem/s")
