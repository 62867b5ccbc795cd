"""tile_fft / tile_ifft in place on rows of complex (vec2) tiles: a low-pass filter, round trip."""

import numpy as np
import warp as wp

ROWS = 4
N = 16


@wp.func
def cmul(a: wp.vec2, b: wp.vec2):
    return wp.vec2(a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0])


@wp.kernel
def spectrum(x: wp.array2d(dtype=wp.vec2), out: wp.array2d(dtype=wp.vec2)):
    t = wp.tile_load(x, shape=(ROWS, N))
    wp.tile_fft(t)
    wp.tile_store(out, t)


@wp.kernel
def low_pass(x: wp.array2d(dtype=wp.vec2), mask: wp.array2d(dtype=wp.vec2), out: wp.array2d(dtype=wp.vec2)):
    t = wp.tile_load(x, shape=(ROWS, N))
    wp.tile_fft(t)
    m = wp.tile_load(mask, shape=(ROWS, N))
    f = wp.tile_map(cmul, t, m)
    wp.tile_ifft(f)
    wp.tile_store(out, f * (1.0 / float(N)))


@wp.kernel
def round_trip64(x: wp.array2d(dtype=wp.vec2d), out: wp.array2d(dtype=wp.vec2d)):
    t = wp.tile_load(x, shape=(2, 8))
    wp.tile_fft(t)
    wp.tile_ifft(t)
    wp.tile_store(out, t)


def run():
    rng = np.random.default_rng(23)
    k = np.arange(N)
    sig = np.stack([np.sin(2 * np.pi * k * (r + 1) / N) + 0.3 * rng.standard_normal(N) for r in range(ROWS)])
    x = np.zeros((ROWS, N, 2), dtype=np.float32)
    x[..., 0] = sig
    x[..., 1] = 0.1 * rng.standard_normal((ROWS, N))
    xw = wp.array(x, dtype=wp.vec2)
    spec = wp.zeros((ROWS, N), dtype=wp.vec2)
    wp.launch_tiled(spectrum, dim=1, inputs=[xw, spec], block_dim=32)
    mask = np.zeros((ROWS, N, 2), dtype=np.float32)
    keep = (k < 4) | (k > N - 4)
    mask[:, keep, 0] = 1.0
    filtered = wp.zeros((ROWS, N), dtype=wp.vec2)
    wp.launch_tiled(low_pass, dim=1, inputs=[xw, wp.array(mask, dtype=wp.vec2), filtered], block_dim=64)
    x64 = wp.array(rng.standard_normal((2, 8, 2)), dtype=wp.vec2d)
    back = wp.zeros((2, 8), dtype=wp.vec2d)
    wp.launch_tiled(round_trip64, dim=1, inputs=[x64, back], block_dim=32)
    return {"spectrum": spec.numpy(), "filtered": filtered.numpy(), "round_trip": back.numpy()}


TOLERANCE = {"spectrum": (1e-5, 1e-5), "filtered": (1e-5, 1e-5), "round_trip": (1e-12, 1e-12)}
