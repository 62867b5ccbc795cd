"""Noise on lattices: noise at integer lattice points (where Perlin noise vanishes) and half-integers in
1-4D, across negative coordinates and far from the origin; pnoise at x and x + period (equal), with
periods 1, 3 and 7 and negative points; noise from states made with different seeds and offsets at
the same point; curlnoise with octaves, lacunarity and gain varied on a 2-D and 3-D grid; fBm sums
built from octaves of noise."""

import numpy as np
import warp as wp

TOLERANCE = {"fbm": (1e-5, 1e-5)}


@wp.kernel
def lattice(seed: int, pts: wp.array(dtype=wp.vec4), out: wp.array2d(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seed)
    p = pts[i]
    out[i, 0] = wp.noise(s, p[0])
    out[i, 1] = wp.noise(s, wp.vec2(p[0], p[1]))
    out[i, 2] = wp.noise(s, wp.vec3(p[0], p[1], p[2]))
    out[i, 3] = wp.noise(s, p)


@wp.kernel
def periodic(seed: int, xs: wp.array(dtype=float), period: int, out: wp.array2d(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seed)
    x = xs[i]
    px = float(period)
    out[i, 0] = wp.pnoise(s, x, period)
    out[i, 1] = wp.pnoise(s, x + px, period)
    out[i, 2] = wp.pnoise(s, wp.vec2(x, 0.5 * x), period, period)
    out[i, 3] = wp.pnoise(s, wp.vec2(x + px, 0.5 * x), period, period)
    out[i, 4] = wp.pnoise(s, wp.vec3(x, -x, 0.3), period, period, period)
    out[i, 5] = wp.pnoise(s, wp.vec4(x, -x, 0.3, x + px), period, period, period, period)


@wp.kernel
def by_state(seeds: wp.array(dtype=int), offsets: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seeds[i], offsets[i])
    out[i] = wp.noise(s, wp.vec3(1.3, -2.7, 0.45))


@wp.kernel
def curl(seed: int, out2: wp.array2d(dtype=wp.vec2), out3: wp.array2d(dtype=wp.vec3)):
    i, j = wp.tid()
    s = wp.rand_init(seed)
    p = wp.vec2(float(i) * 0.37 - 1.0, float(j) * 0.29 + 0.1)
    out2[i, j] = wp.curlnoise(s, p, wp.uint32(1 + j), 2.0 + 0.5 * float(i), 0.5)
    out3[i, j] = wp.curlnoise(s, wp.vec3(p[0], p[1], 0.25 * float(i + j)), wp.uint32(2), 1.5, 0.25 * float(1 + i))


@wp.kernel
def fbm(seed: int, out: wp.array(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seed)
    p = wp.vec2(float(i) * 0.173, float(i) * -0.091)
    amp = float(1.0)
    freq = float(1.0)
    total = float(0.0)
    for _ in range(5):
        total += amp * wp.noise(s, p * freq)
        amp *= 0.5
        freq *= 2.0
    out[i] = total


def run():
    r = {}
    ints = np.array([[0, 0, 0, 0], [1, -2, 3, -4], [-7, 5, 0, 2], [1000, -1000, 77, 3]], dtype=np.float32)
    halves = ints + 0.5
    pts = wp.array(np.concatenate([ints, halves, -halves * 3.0]), dtype=wp.vec4)
    out = wp.zeros((12, 4), dtype=float)
    wp.launch(lattice, dim=12, inputs=[9, pts, out])
    r["lattice"] = out.numpy().copy()
    r["lattice_zero"] = np.abs(out.numpy()[:4]).max() == 0.0
    xs = wp.array(np.array([-3.25, -0.5, 0.0, 0.75, 2.5, 6.125], dtype=np.float32))
    for period in (1, 3, 7):
        po = wp.zeros((6, 6), dtype=float)
        wp.launch(periodic, dim=6, inputs=[4, xs, period, po])
        r[f"pnoise_period{period}"] = po.numpy().copy()
    seeds = wp.array(np.array([1, 1, 2, 2, 1, -5], dtype=np.int64), dtype=int)
    offs = wp.array(np.array([0, 1, 0, 1, 1000, 3], dtype=np.int64), dtype=int)
    bs = wp.zeros(6, dtype=float)
    wp.launch(by_state, dim=6, inputs=[seeds, offs, bs])
    r["by_state"] = bs.numpy().copy()
    c2 = wp.zeros((4, 3), dtype=wp.vec2)
    c3 = wp.zeros((4, 3), dtype=wp.vec3)
    wp.launch(curl, dim=(4, 3), inputs=[21, c2, c3])
    r["curl2"] = c2.numpy().copy()
    r["curl3"] = c3.numpy().copy()
    f = wp.zeros(16, dtype=float)
    wp.launch(fbm, dim=16, inputs=[5, f])
    r["fbm"] = f.numpy().copy()
    return r
