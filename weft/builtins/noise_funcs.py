"""Perlin noise in weft's kernel language: the bodies of `noise`, `pnoise` and `curlnoise`.

The builtins in noise.py call these funcs. They follow the arithmetic of Warp's
native/noise.h operation by operation (the same products, sums and their order, the same
lattice hash of each corner), so a seed gives the same float32 values as Warp's CPU code.
Gradients come from weft's reverse pass through this code: `noise` is differentiated
through the interpolation, and `curlnoise` (which evaluates the analytic gradient of the
noise) through that gradient, which yields the Hessian products that Warp writes by hand.

This module is imported on first use (it needs the frontend, which imports the builtins).
"""

from __future__ import annotations

from typing import Any

import weft as wp

_P1, _P2, _P3, _P4 = 73856093, 19349663, 53471161, 10000019


@wp.func
def _smootherstep(t: float):
    return t * t * t * (t * (t * 6.0 - 15.0) + 10.0)


@wp.func
def _smootherstep_gradient(t: float):
    return 30.0 * t * t * (t * (t - 2.0) + 1.0)


@wp.func
def _interpolate(a0: float, a1: float, t: float):
    return (a1 - a0) * _smootherstep(t) + a0


@wp.func
def _interpolate_gradient(a0: float, a1: float, t: float, d_a0: Any, d_a1: Any, d_t: Any):
    return (d_a1 - d_a0) * _smootherstep(t) + (a1 - a0) * _smootherstep_gradient(t) * d_t + d_a0


# Lattice hashes: one random gradient per integer corner ---------------------------------------
@wp.func
def _gradient_1d(state: wp.uint32, ix: int):
    idx = wp.uint32(ix) * wp.uint32(_P1) + state
    return wp.randf(idx, -1.0, 1.0)


@wp.func
def _gradient_2d(state: wp.uint32, ix: int, iy: int):
    idx = (wp.uint32(ix) * wp.uint32(_P1)) ^ (wp.uint32(iy) * wp.uint32(_P2) + state)
    x = wp.randf(idx) - 0.5
    y = wp.randf(idx) - 0.5
    n = wp.sqrt(x * x + y * y)
    if n > 0.0:
        return wp.vec2(x / n, y / n)
    return wp.vec2(0.0, 0.0)


@wp.func
def _gradient_3d(state: wp.uint32, ix: int, iy: int, iz: int):
    idx = (wp.uint32(ix) * wp.uint32(_P1)) ^ (wp.uint32(iy) * wp.uint32(_P2)) \
        ^ (wp.uint32(iz) * wp.uint32(_P3) + state)
    x = wp.randf(idx) - 0.5
    y = wp.randf(idx) - 0.5
    z = wp.randf(idx) - 0.5
    n = wp.sqrt(x * x + y * y + z * z)
    if n > 0.0:
        return wp.vec3(x / n, y / n, z / n)
    return wp.vec3(0.0, 0.0, 0.0)


@wp.func
def _gradient_4d(state: wp.uint32, ix: int, iy: int, iz: int, it: int):
    idx = (wp.uint32(ix) * wp.uint32(_P1)) ^ (wp.uint32(iy) * wp.uint32(_P2)) \
        ^ (wp.uint32(iz) * wp.uint32(_P3)) ^ (wp.uint32(it) * wp.uint32(_P4) + state)
    x = wp.randf(idx) - 0.5
    y = wp.randf(idx) - 0.5
    z = wp.randf(idx) - 0.5
    t = wp.randf(idx) - 0.5
    n = wp.sqrt(x * x + y * y + z * z + t * t)
    if n > 0.0:
        return wp.vec4(x / n, y / n, z / n, t / n)
    return wp.vec4(0.0, 0.0, 0.0, 0.0)


# Noise values -------------------------------------------------------------------------------
@wp.func
def _noise_1d(state: wp.uint32, x0: int, x1: int, dx: float):
    v0 = dx * _gradient_1d(state, x0)
    v1 = (dx - 1.0) * _gradient_1d(state, x1)
    return _interpolate(v0, v1, dx)


@wp.func
def _corner_2d(state: wp.uint32, ix: int, iy: int, dx: float, dy: float):
    g = _gradient_2d(state, ix, iy)
    return dx * g[0] + dy * g[1]


@wp.func
def _noise_2d(state: wp.uint32, x0: int, y0: int, x1: int, y1: int, dx: float, dy: float):
    xi0 = _interpolate(_corner_2d(state, x0, y0, dx, dy), _corner_2d(state, x1, y0, dx - 1.0, dy), dx)
    xi1 = _interpolate(_corner_2d(state, x0, y1, dx, dy - 1.0), _corner_2d(state, x1, y1, dx - 1.0, dy - 1.0), dx)
    return _interpolate(xi0, xi1, dy)


@wp.func
def _corner_3d(state: wp.uint32, ix: int, iy: int, iz: int, dx: float, dy: float, dz: float):
    g = _gradient_3d(state, ix, iy, iz)
    return dx * g[0] + dy * g[1] + dz * g[2]


@wp.func
def _noise_3d_plane(state: wp.uint32, x0: int, y0: int, x1: int, y1: int, z: int,
                    dx: float, dy: float, dz: float):
    xi0 = _interpolate(_corner_3d(state, x0, y0, z, dx, dy, dz), _corner_3d(state, x1, y0, z, dx - 1.0, dy, dz), dx)
    xi1 = _interpolate(_corner_3d(state, x0, y1, z, dx, dy - 1.0, dz),
                       _corner_3d(state, x1, y1, z, dx - 1.0, dy - 1.0, dz), dx)
    return _interpolate(xi0, xi1, dy)


@wp.func
def _noise_3d(state: wp.uint32, x0: int, y0: int, z0: int, x1: int, y1: int, z1: int,
              dx: float, dy: float, dz: float):
    yi0 = _noise_3d_plane(state, x0, y0, x1, y1, z0, dx, dy, dz)
    yi1 = _noise_3d_plane(state, x0, y0, x1, y1, z1, dx, dy, dz - 1.0)
    return _interpolate(yi0, yi1, dz)


@wp.func
def _corner_4d(state: wp.uint32, ix: int, iy: int, iz: int, it: int, dx: float, dy: float, dz: float, dt: float):
    g = _gradient_4d(state, ix, iy, iz, it)
    return dx * g[0] + dy * g[1] + dz * g[2] + dt * g[3]


@wp.func
def _noise_4d_plane(state: wp.uint32, x0: int, y0: int, x1: int, y1: int, z: int, t: int,
                    dx: float, dy: float, dz: float, dt: float):
    xi0 = _interpolate(_corner_4d(state, x0, y0, z, t, dx, dy, dz, dt),
                       _corner_4d(state, x1, y0, z, t, dx - 1.0, dy, dz, dt), dx)
    xi1 = _interpolate(_corner_4d(state, x0, y1, z, t, dx, dy - 1.0, dz, dt),
                       _corner_4d(state, x1, y1, z, t, dx - 1.0, dy - 1.0, dz, dt), dx)
    return _interpolate(xi0, xi1, dy)


@wp.func
def _noise_4d(state: wp.uint32, x0: int, y0: int, z0: int, t0: int, x1: int, y1: int, z1: int, t1: int,
              dx: float, dy: float, dz: float, dt: float):
    yi00 = _noise_4d_plane(state, x0, y0, x1, y1, z0, t0, dx, dy, dz, dt)
    yi10 = _noise_4d_plane(state, x0, y0, x1, y1, z1, t0, dx, dy, dz - 1.0, dt)
    zi0 = _interpolate(yi00, yi10, dz)
    yi01 = _noise_4d_plane(state, x0, y0, x1, y1, z0, t1, dx, dy, dz, dt - 1.0)
    yi11 = _noise_4d_plane(state, x0, y0, x1, y1, z1, t1, dx, dy, dz - 1.0, dt - 1.0)
    zi1 = _interpolate(yi01, yi11, dz)
    return _interpolate(zi0, zi1, dt)


@wp.func
def _fract(x: float):
    return x - wp.floor(x)


@wp.func
def _cell(x: float):
    return int(wp.floor(x))


@wp.func
def noise1(state: wp.uint32, x: float):
    x0 = _cell(x)
    return _noise_1d(state, x0, x0 + 1, _fract(x))


@wp.func
def noise2(state: wp.uint32, p: wp.vec2):
    x0 = _cell(p[0])
    y0 = _cell(p[1])
    return _noise_2d(state, x0, y0, x0 + 1, y0 + 1, _fract(p[0]), _fract(p[1]))


@wp.func
def noise3(state: wp.uint32, p: wp.vec3):
    x0 = _cell(p[0])
    y0 = _cell(p[1])
    z0 = _cell(p[2])
    return _noise_3d(state, x0, y0, z0, x0 + 1, y0 + 1, z0 + 1, _fract(p[0]), _fract(p[1]), _fract(p[2]))


@wp.func
def noise4(state: wp.uint32, p: wp.vec4):
    x0 = _cell(p[0])
    y0 = _cell(p[1])
    z0 = _cell(p[2])
    t0 = _cell(p[3])
    return _noise_4d(state, x0, y0, z0, t0, x0 + 1, y0 + 1, z0 + 1, t0 + 1,
                     _fract(p[0]), _fract(p[1]), _fract(p[2]), _fract(p[3]))


# Periodic noise: the lattice wraps with C's remainder (Warp's `mod` on integers) -------------
@wp.func
def pnoise1(state: wp.uint32, x: float, px: int):
    x0 = wp.mod(_cell(x), px)
    return _noise_1d(state, x0, wp.mod(x0 + 1, px), _fract(x))


@wp.func
def pnoise2(state: wp.uint32, p: wp.vec2, px: int, py: int):
    x0 = wp.mod(_cell(p[0]), px)
    y0 = wp.mod(_cell(p[1]), py)
    return _noise_2d(state, x0, y0, wp.mod(x0 + 1, px), wp.mod(y0 + 1, py), _fract(p[0]), _fract(p[1]))


@wp.func
def pnoise3(state: wp.uint32, p: wp.vec3, px: int, py: int, pz: int):
    x0 = wp.mod(_cell(p[0]), px)
    y0 = wp.mod(_cell(p[1]), py)
    z0 = wp.mod(_cell(p[2]), pz)
    return _noise_3d(state, x0, y0, z0, wp.mod(x0 + 1, px), wp.mod(y0 + 1, py), wp.mod(z0 + 1, pz),
                     _fract(p[0]), _fract(p[1]), _fract(p[2]))


@wp.func
def pnoise4(state: wp.uint32, p: wp.vec4, px: int, py: int, pz: int, pt: int):
    x0 = wp.mod(_cell(p[0]), px)
    y0 = wp.mod(_cell(p[1]), py)
    z0 = wp.mod(_cell(p[2]), pz)
    t0 = wp.mod(_cell(p[3]), pt)
    return _noise_4d(state, x0, y0, z0, t0, wp.mod(x0 + 1, px), wp.mod(y0 + 1, py), wp.mod(z0 + 1, pz),
                     wp.mod(t0 + 1, pt), _fract(p[0]), _fract(p[1]), _fract(p[2]), _fract(p[3]))


# Analytic gradients of the noise (what curl noise is made of) --------------------------------
@wp.func
def _grad_noise_2d(state: wp.uint32, p: wp.vec2):
    x0 = _cell(p[0])
    y0 = _cell(p[1])
    dx = _fract(p[0])
    dy = _fract(p[1])
    g00 = _gradient_2d(state, x0, y0)
    g10 = _gradient_2d(state, x0 + 1, y0)
    g01 = _gradient_2d(state, x0, y0 + 1)
    g11 = _gradient_2d(state, x0 + 1, y0 + 1)
    v00 = wp.dot(wp.vec2(dx, dy), g00)
    v10 = wp.dot(wp.vec2(dx - 1.0, dy), g10)
    v01 = wp.dot(wp.vec2(dx, dy - 1.0), g01)
    v11 = wp.dot(wp.vec2(dx - 1.0, dy - 1.0), g11)
    ex = wp.vec2(1.0, 0.0)
    gxi0 = _interpolate_gradient(v00, v10, dx, g00, g10, ex)
    gxi1 = _interpolate_gradient(v01, v11, dx, g01, g11, ex)
    return _interpolate_gradient(_interpolate(v00, v10, dx), _interpolate(v01, v11, dx), dy, gxi0, gxi1,
                                 wp.vec2(0.0, 1.0))


@wp.func
def _dot3(dx: float, dy: float, dz: float, g: wp.vec3):
    return dx * g[0] + dy * g[1] + dz * g[2]


@wp.func
def _grad_noise_3d(state: wp.uint32, p: wp.vec3):
    x0 = _cell(p[0])
    y0 = _cell(p[1])
    z0 = _cell(p[2])
    x1 = x0 + 1
    y1 = y0 + 1
    z1 = z0 + 1
    dx = _fract(p[0])
    dy = _fract(p[1])
    dz = _fract(p[2])
    ex = dx - 1.0
    ey = dy - 1.0
    ez = dz - 1.0
    g000 = _gradient_3d(state, x0, y0, z0)
    g100 = _gradient_3d(state, x1, y0, z0)
    g010 = _gradient_3d(state, x0, y1, z0)
    g110 = _gradient_3d(state, x1, y1, z0)
    g001 = _gradient_3d(state, x0, y0, z1)
    g101 = _gradient_3d(state, x1, y0, z1)
    g011 = _gradient_3d(state, x0, y1, z1)
    g111 = _gradient_3d(state, x1, y1, z1)
    v000 = _dot3(dx, dy, dz, g000)
    v100 = _dot3(ex, dy, dz, g100)
    v010 = _dot3(dx, ey, dz, g010)
    v110 = _dot3(ex, ey, dz, g110)
    v001 = _dot3(dx, dy, ez, g001)
    v101 = _dot3(ex, dy, ez, g101)
    v011 = _dot3(dx, ey, ez, g011)
    v111 = _dot3(ex, ey, ez, g111)
    ux = wp.vec3(1.0, 0.0, 0.0)
    xi00 = _interpolate(v000, v100, dx)
    xi10 = _interpolate(v010, v110, dx)
    xi01 = _interpolate(v001, v101, dx)
    xi11 = _interpolate(v011, v111, dx)
    gxi00 = _interpolate_gradient(v000, v100, dx, g000, g100, ux)
    gxi10 = _interpolate_gradient(v010, v110, dx, g010, g110, ux)
    gxi01 = _interpolate_gradient(v001, v101, dx, g001, g101, ux)
    gxi11 = _interpolate_gradient(v011, v111, dx, g011, g111, ux)
    uy = wp.vec3(0.0, 1.0, 0.0)
    yi0 = _interpolate(xi00, xi10, dy)
    yi1 = _interpolate(xi01, xi11, dy)
    gyi0 = _interpolate_gradient(xi00, xi10, dy, gxi00, gxi10, uy)
    gyi1 = _interpolate_gradient(xi01, xi11, dy, gxi01, gxi11, uy)
    return _interpolate_gradient(yi0, yi1, dz, gyi0, gyi1, wp.vec3(0.0, 0.0, 1.0))


@wp.func
def _dot4(d: wp.vec4, g: wp.vec4):
    return d[0] * g[0] + d[1] * g[1] + d[2] * g[2] + d[3] * g[3]


@wp.func
def _grad_noise_4d_plane(state: wp.uint32, x0: int, y0: int, z: int, t: int, d: wp.vec4):
    """The gradient interpolated along x, then y, on one (z, t) face of the cell
    (_value_4d_plane gives the value there)."""
    ux = wp.vec4(1.0, 0.0, 0.0, 0.0)
    uy = wp.vec4(0.0, 1.0, 0.0, 0.0)
    g00 = _gradient_4d(state, x0, y0, z, t)
    g10 = _gradient_4d(state, x0 + 1, y0, z, t)
    g01 = _gradient_4d(state, x0, y0 + 1, z, t)
    g11 = _gradient_4d(state, x0 + 1, y0 + 1, z, t)
    v00 = _dot4(d, g00)
    v10 = _dot4(wp.vec4(d[0] - 1.0, d[1], d[2], d[3]), g10)
    v01 = _dot4(wp.vec4(d[0], d[1] - 1.0, d[2], d[3]), g01)
    v11 = _dot4(wp.vec4(d[0] - 1.0, d[1] - 1.0, d[2], d[3]), g11)
    xi0 = _interpolate(v00, v10, d[0])
    xi1 = _interpolate(v01, v11, d[0])
    gxi0 = _interpolate_gradient(v00, v10, d[0], g00, g10, ux)
    gxi1 = _interpolate_gradient(v01, v11, d[0], g01, g11, ux)
    return _interpolate_gradient(xi0, xi1, d[1], gxi0, gxi1, uy)


@wp.func
def _value_4d_plane(state: wp.uint32, x0: int, y0: int, z: int, t: int, d: wp.vec4):
    v00 = _dot4(d, _gradient_4d(state, x0, y0, z, t))
    v10 = _dot4(wp.vec4(d[0] - 1.0, d[1], d[2], d[3]), _gradient_4d(state, x0 + 1, y0, z, t))
    v01 = _dot4(wp.vec4(d[0], d[1] - 1.0, d[2], d[3]), _gradient_4d(state, x0, y0 + 1, z, t))
    v11 = _dot4(wp.vec4(d[0] - 1.0, d[1] - 1.0, d[2], d[3]), _gradient_4d(state, x0 + 1, y0 + 1, z, t))
    return _interpolate(_interpolate(v00, v10, d[0]), _interpolate(v01, v11, d[0]), d[1])


@wp.func
def _grad_noise_4d(state: wp.uint32, p: wp.vec4):
    x0 = _cell(p[0])
    y0 = _cell(p[1])
    z0 = _cell(p[2])
    t0 = _cell(p[3])
    dx = _fract(p[0])
    dy = _fract(p[1])
    dz = _fract(p[2])
    dt = _fract(p[3])
    d00 = wp.vec4(dx, dy, dz, dt)
    d10 = wp.vec4(dx, dy, dz - 1.0, dt)
    d01 = wp.vec4(dx, dy, dz, dt - 1.0)
    d11 = wp.vec4(dx, dy, dz - 1.0, dt - 1.0)
    yi00 = _value_4d_plane(state, x0, y0, z0, t0, d00)
    yi10 = _value_4d_plane(state, x0, y0, z0 + 1, t0, d10)
    yi01 = _value_4d_plane(state, x0, y0, z0, t0 + 1, d01)
    yi11 = _value_4d_plane(state, x0, y0, z0 + 1, t0 + 1, d11)
    gyi00 = _grad_noise_4d_plane(state, x0, y0, z0, t0, d00)
    gyi10 = _grad_noise_4d_plane(state, x0, y0, z0 + 1, t0, d10)
    gyi01 = _grad_noise_4d_plane(state, x0, y0, z0, t0 + 1, d01)
    gyi11 = _grad_noise_4d_plane(state, x0, y0, z0 + 1, t0 + 1, d11)
    uz = wp.vec4(0.0, 0.0, 1.0, 0.0)
    zi0 = _interpolate(yi00, yi10, dz)
    zi1 = _interpolate(yi01, yi11, dz)
    gzi0 = _interpolate_gradient(yi00, yi10, dz, gyi00, gyi10, uz)
    gzi1 = _interpolate_gradient(yi01, yi11, dz, gyi01, gyi11, uz)
    return _interpolate_gradient(zi0, zi1, dt, gzi0, gzi1, wp.vec4(0.0, 0.0, 0.0, 1.0))


# Curl noise: octaves of noise gradients (2D: rotated; 3D, 4D: three fields, their curl) ------
@wp.func
def curlnoise2(state: wp.uint32, p: wp.vec2, octaves: wp.uint32, lacunarity: float, gain: float):
    curl = wp.vec2(0.0, 0.0)
    freq = 1.0
    amplitude = 1.0
    for _i in range(int(octaves)):
        curl = curl + amplitude * _grad_noise_2d(state, freq * p)
        amplitude = amplitude * gain
        freq = freq * lacunarity
    return wp.vec2(-curl[1], curl[0])


@wp.func
def _grad_noise(state: wp.uint32, p: wp.vec3):
    return _grad_noise_3d(state, p)


@wp.func
def _grad_noise(state: wp.uint32, p: wp.vec4):  # an overload, by parameter type
    return _grad_noise_4d(state, p)


@wp.func
def _curl_of_three_fields(state: wp.uint32, p: Any, zero: Any, octaves: wp.uint32, lacunarity: float,
                          gain: float):
    """The curl of three noise fields (seeded state, then two rand_init steps on): a vec3 for
    a 3-D or 4-D position p; `zero` is p's zero vector (the gradient sums start there)."""
    s = state
    c1 = zero
    c2 = zero
    c3 = zero
    freq = 1.0
    amplitude = 1.0
    for _i in range(int(octaves)):
        pt = freq * p
        c1 = c1 + amplitude * _grad_noise(s, pt)
        s = wp.rand_init(s, 10019689)
        c2 = c2 + amplitude * _grad_noise(s, pt)
        s = wp.rand_init(s, 13112221)
        c3 = c3 + amplitude * _grad_noise(s, pt)
        amplitude = amplitude * gain
        freq = freq * lacunarity
    return wp.vec3(c3[1] - c2[2], c1[2] - c3[0], c2[0] - c1[1])


@wp.func
def curlnoise3(state: wp.uint32, p: wp.vec3, octaves: wp.uint32, lacunarity: float, gain: float):
    return _curl_of_three_fields(state, p, wp.vec3(0.0, 0.0, 0.0), octaves, lacunarity, gain)


@wp.func
def curlnoise4(state: wp.uint32, p: wp.vec4, octaves: wp.uint32, lacunarity: float, gain: float):
    return _curl_of_three_fields(state, p, wp.vec4(0.0, 0.0, 0.0, 0.0), octaves, lacunarity, gain)
