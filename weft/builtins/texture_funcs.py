"""Texture sampling in weft's kernel language (the descriptor: runtime/texture.py).

Per axis, a coordinate is first reduced by the address mode's period (WRAP: one texture,
MIRROR: two), made a texel position t = coord * size - 0.5 (unnormalized coordinates are
divided by the base level's size first, so all levels share one space), then:
CLOSEST reads texel floor(coord * size) (in float64, as Warp's CPU sampler); LINEAR blends
the texels floor(t) and floor(t) + 1 by the fraction of t. Texel indices outside the
texture are mapped by the address mode (BORDER: zero). Between mip levels the LOD picks
the nearest level (CLOSEST) or blends two (LINEAR).

The derivative is a custom rule (`adj_sample`) with Warp's conventions: coordinate
gradients interpolate differences of neighbouring texels (exact for small slopes on large
offsets); the LOD gradient is the difference of the two blended levels where the LOD is
inside [0, levels - 1) and the mip filter is LINEAR, else zero; CLOSEST filtering has zero
coordinate gradient; the texels themselves get no gradient.
"""

from typing import Any

import weft as wp

from ..runtime.texture import (
    D_ADDRESS,
    D_BASE,
    D_CHANNELS,
    D_FILTER,
    D_LEVEL0,
    D_LEVELS,
    D_MIP_FILTER,
    D_NORMALIZED,
)
from .registry import Builtin
from .unchecked import expand_constant_load

# an unchecked load from the texture's own (validated) buffers; a constant to autodiff
_load = Builtin("texture_load", expand_constant_load, doc="an unchecked load of a texture's own data")

WRAP, CLAMP, MIRROR, BORDER = 0, 1, 2, 3
CLOSEST, LINEAR = 0, 1


@wp.func
def _word(d: wp.uint64, k: int):
    return _load(wp.array(ptr=d + wp.uint64(8 * k), shape=1, dtype=wp.int64), 0)


@wp.func
def _f32(addr: wp.uint64):
    return _load(wp.array(ptr=addr, shape=1, dtype=wp.float32), 0)


@wp.func
def _reduced(c: float, norm: wp.int64, base: wp.int64, mode: wp.int64):
    """The coordinate after the periodic reduction, normalized to the base level."""
    x = c
    if mode == wp.int64(WRAP) or mode == wp.int64(MIRROR):
        period = 1.0
        if norm == wp.int64(0):
            period = float(base)
        if mode == wp.int64(MIRROR):
            period = period * 2.0
        x = x % period
        if x < 0.0:
            x = x + period
    if norm == wp.int64(0):
        x = x / float(base)
    return x


@wp.func
def _texel(c: float, norm: wp.int64, base: wp.int64, size: wp.int64, mode: wp.int64, low: float):
    """The texel position of coordinate c on a level of `size` texels; CLAMP bounds it to
    [low, size - 1], BORDER to [-2, size] (both neighbours then lie outside)."""
    t = _reduced(c, norm, base, mode) * float(size) - 0.5
    if mode == wp.int64(CLAMP):
        if t < low:
            t = low
        if t > float(size - wp.int64(1)):
            t = float(size - wp.int64(1))
    elif mode == wp.int64(BORDER):
        if t < -2.0:
            t = -2.0
        if t > float(size):
            t = float(size)
    return t


@wp.func
def _index(i: wp.int64, size: wp.int64, mode: wp.int64):
    """A texel index mapped into [0, size) by the address mode (BORDER: left as it is)."""
    r = i
    if mode == wp.int64(WRAP):
        r = i % size
        if r < wp.int64(0):
            r = r + size
    elif mode == wp.int64(CLAMP):
        r = wp.max(wp.int64(0), wp.min(i, size - wp.int64(1)))
    elif mode == wp.int64(MIRROR):
        period = size * wp.int64(2)
        r = i % period
        if r < wp.int64(0):
            r = r + period
        if r >= size:
            r = period - r - wp.int64(1)
    return r


@wp.func
def _nearest(c: float, norm: wp.int64, base: wp.int64, size: wp.int64, mode: wp.int64):
    """The texel index CLOSEST filtering reads for coordinate c (in float64, as Warp)."""
    r = wp.float64(c)
    periodic = mode == wp.int64(WRAP) or mode == wp.int64(MIRROR)
    if periodic:
        period = wp.float64(1.0)
        if norm == wp.int64(0):
            period = wp.float64(base)
        if mode == wp.int64(MIRROR):
            period = period * wp.float64(2.0)
        r = r % period
    t = r * wp.float64(size)
    if norm == wp.int64(0):
        t = t / wp.float64(base)
    if not periodic:
        t = wp.max(wp.float64(-1.0), wp.min(t, wp.float64(size)))
    return _index(wp.int64(wp.floor(t)), size, mode)


@wp.func
def _scale(norm: wp.int64, size: wp.int64, base: wp.int64):
    """d(texel position) / d(coordinate) on a level of `size` texels."""
    s = float(size)
    if norm == wp.int64(0):
        s = s / float(base)
    return s


_CACHE: dict = {}


def typed(ndim: int, channels: int):
    """The sample func (and its gradient) of an `ndim`-D texture read as `channels`
    channels (1: float32, 2: vec2f, 4: vec4f), cached."""
    key = (ndim, channels)
    if key not in _CACHE:
        _CACHE[key] = _make(ndim, channels)
    return _CACHE[key]


def _make(ndim, K):  # noqa: C901 - one sampler, its levels and its gradient
    T = wp.float32 if K == 1 else wp.types.vector(K, wp.float32)

    @wp.func
    def fetch(p: wp.uint64, nc: wp.int64, w: wp.int64, h: wp.int64, dd: wp.int64,
              x: wp.int64, y: wp.int64, z: wp.int64):
        """Texel (x, y, z) of the level at p (w x h x dd texels of nc channels): zero outside
        it and in channels it lacks."""
        r = T(0.0)
        if x >= wp.int64(0) and x < w and y >= wp.int64(0) and y < h and z >= wp.int64(0) and z < dd:
            addr = p + wp.uint64(wp.int64(4) * ((z * h + y) * w + x) * nc)
            if wp.static(K == 1):
                r = _f32(addr)
            else:
                r[0] = _f32(addr)
                if nc > wp.int64(1):
                    r[1] = _f32(addr + wp.uint64(4))
                if wp.static(K == 4):
                    if nc > wp.int64(2):
                        r[2] = _f32(addr + wp.uint64(8))
                    if nc > wp.int64(3):
                        r[3] = _f32(addr + wp.uint64(12))
        return r

    @wp.func
    def closest(d: wp.uint64, lvl: int, u: float, v: float, w: float):
        k = D_LEVEL0 + 4 * lvl
        norm = _word(d, D_NORMALIZED)
        sx = _word(d, k)
        sy = _word(d, k + 1)
        sz = _word(d, k + 2)
        x = _nearest(u, norm, _word(d, D_BASE), sx, _word(d, D_ADDRESS))
        y = wp.int64(0)
        z = wp.int64(0)
        if wp.static(ndim >= 2):
            y = _nearest(v, norm, _word(d, D_BASE + 1), sy, _word(d, D_ADDRESS + 1))
        if wp.static(ndim == 3):
            z = _nearest(w, norm, _word(d, D_BASE + 2), sz, _word(d, D_ADDRESS + 2))
        return fetch(wp.uint64(_word(d, k + 3)), _word(d, D_CHANNELS), sx, sy, sz, x, y, z)

    @wp.func
    def corners(d: wp.uint64, lvl: int, u: float, v: float, w: float, low: float):
        """The LINEAR footprint of (u, v, w) at level lvl: its 8 corner texels (x fastest;
        those of absent axes repeat), the fractions and the texel/coordinate scales."""
        k = D_LEVEL0 + 4 * lvl
        norm = _word(d, D_NORMALIZED)
        nc = _word(d, D_CHANNELS)
        p = wp.uint64(_word(d, k + 3))
        sx = _word(d, k)
        sy = _word(d, k + 1)
        sz = _word(d, k + 2)
        f = wp.vec3(0.0)
        s = wp.vec3(0.0)
        mx = _word(d, D_ADDRESS)
        tx = _texel(u, norm, _word(d, D_BASE), sx, mx, low)
        fx = wp.floor(tx)
        x0 = wp.int64(fx)
        f[0] = tx - fx
        s[0] = _scale(norm, sx, _word(d, D_BASE))
        xa = _index(x0, sx, mx)
        xb = _index(x0 + wp.int64(1), sx, mx)
        ya = wp.int64(0)
        yb = wp.int64(0)
        za = wp.int64(0)
        zb = wp.int64(0)
        if wp.static(ndim >= 2):
            my = _word(d, D_ADDRESS + 1)
            ty = _texel(v, norm, _word(d, D_BASE + 1), sy, my, low)
            fy = wp.floor(ty)
            y0 = wp.int64(fy)
            f[1] = ty - fy
            s[1] = _scale(norm, sy, _word(d, D_BASE + 1))
            ya = _index(y0, sy, my)
            yb = _index(y0 + wp.int64(1), sy, my)
        if wp.static(ndim == 3):
            mz = _word(d, D_ADDRESS + 2)
            tz = _texel(w, norm, _word(d, D_BASE + 2), sz, mz, low)
            fz = wp.floor(tz)
            z0 = wp.int64(fz)
            f[2] = tz - fz
            s[2] = _scale(norm, sz, _word(d, D_BASE + 2))
            za = _index(z0, sz, mz)
            zb = _index(z0 + wp.int64(1), sz, mz)
        c000 = fetch(p, nc, sx, sy, sz, xa, ya, za)
        c100 = fetch(p, nc, sx, sy, sz, xb, ya, za)
        c010 = c000
        c110 = c100
        if wp.static(ndim >= 2):
            c010 = fetch(p, nc, sx, sy, sz, xa, yb, za)
            c110 = fetch(p, nc, sx, sy, sz, xb, yb, za)
        c001 = c000
        c101 = c100
        c011 = c010
        c111 = c110
        if wp.static(ndim == 3):
            c001 = fetch(p, nc, sx, sy, sz, xa, ya, zb)
            c101 = fetch(p, nc, sx, sy, sz, xb, ya, zb)
            c011 = fetch(p, nc, sx, sy, sz, xa, yb, zb)
            c111 = fetch(p, nc, sx, sy, sz, xb, yb, zb)
        return c000, c100, c010, c110, c001, c101, c011, c111, f, s

    @wp.func
    def blend(c000: Any, c100: Any, c010: Any, c110: Any, c001: Any, c101: Any, c011: Any, c111: Any,
              f: wp.vec3):
        """The multilinear blend of the corners, in Warp's sampler's order of operations."""
        r = c000 * (1.0 - f[0]) + c100 * f[0]
        if wp.static(ndim >= 2):
            r = r * (1.0 - f[1]) + (c010 * (1.0 - f[0]) + c110 * f[0]) * f[1]
        if wp.static(ndim == 3):
            b = (c001 * (1.0 - f[0]) + c101 * f[0]) * (1.0 - f[1]) + (c011 * (1.0 - f[0]) + c111 * f[0]) * f[1]
            r = r * (1.0 - f[2]) + b * f[2]
        return r

    @wp.func
    def at_level(d: wp.uint64, lvl: int, u: float, v: float, w: float):
        r = T(0.0)
        if _word(d, D_FILTER) == wp.int64(CLOSEST):
            r = closest(d, lvl, u, v, w)
        else:
            c000, c100, c010, c110, c001, c101, c011, c111, f, s = corners(d, lvl, u, v, w, 0.0)
            r = blend(c000, c100, c010, c110, c001, c101, c011, c111, f)
        return r

    @wp.func
    def levels(d: wp.uint64, lod: float):
        """(first level, its weight, second level, its weight) the LOD selects."""
        n = int(_word(d, D_LEVELS))
        la = 0
        lb = 0
        wa = 1.0
        wb = 0.0
        if n > 1:
            top = float(n - 1)
            cl = wp.max(0.0, wp.min(lod, top))
            if _word(d, D_MIP_FILTER) == wp.int64(CLOSEST):
                la = wp.min(int(wp.floor(cl + 0.5)), n - 1)
            else:
                la = int(wp.floor(cl))
                lb = wp.min(la + 1, n - 1)
                if lb != la:
                    wb = cl - float(la)
                    wa = 1.0 - wb
        return la, wa, lb, wb

    @wp.func
    def sample(d: wp.uint64, u: float, v: float, w: float, lod: float):
        r = T(0.0)
        if d != wp.uint64(0):
            la, wa, lb, wb = levels(d, lod)
            r = at_level(d, la, u, v, w)
            if wb != 0.0:
                r = r * wa + at_level(d, lb, u, v, w) * wb
        return r

    @wp.func
    def gdot(seed: T, delta: T):
        """seed . delta, each channel with a zero seed skipped (no inf * 0 = nan)."""
        s = 0.0
        if wp.static(K == 1):
            if seed != 0.0:
                s = seed * delta
        else:
            for c in range(K):
                if seed[c] != 0.0:
                    s = s + seed[c] * delta[c]
        return s

    @wp.func
    def grad_level(d: wp.uint64, lvl: int, u: float, v: float, w: float, weight: float, seed: T):
        """(weight times the gradient of seed . sample at level lvl with respect to (u, v, w),
        the sample's first corner, the sample less that corner, the sample)."""
        c000, c100, c010, c110, c001, c101, c011, c111, f, s = corners(d, lvl, u, v, w, -1.0)
        g = wp.vec3(0.0)
        # differences along x on the 4 rows, along y on the 4 columns, along z on the 4 pillars
        ex0 = c100 - c000
        ex1 = c110 - c010
        ex2 = c101 - c001
        ex3 = c111 - c011
        rest = ex0 * f[0]
        if wp.static(ndim == 1):
            g[0] = gdot(seed, ex0)
        else:
            ey0 = c010 - c000
            ey1 = c110 - c100
            g[0] = gdot(seed, ex0 * (1.0 - f[1]) + ex1 * f[1])
            row1 = ey0 + ex1 * f[0]
            rest = rest + (row1 - rest) * f[1]
            if wp.static(ndim == 3):
                ey2 = c011 - c001
                ey3 = c111 - c101
                ez0 = c001 - c000
                ez1 = c101 - c100
                ez2 = c011 - c010
                ez3 = c111 - c110
                g[0] = gdot(seed, (ex0 * (1.0 - f[1]) + ex1 * f[1]) * (1.0 - f[2])
                            + (ex2 * (1.0 - f[1]) + ex3 * f[1]) * f[2])
                g[1] = gdot(seed, (ey0 * (1.0 - f[0]) + ey1 * f[0]) * (1.0 - f[2])
                            + (ey2 * (1.0 - f[0]) + ey3 * f[0]) * f[2])
                g[2] = gdot(seed, (ez0 * (1.0 - f[0]) + ez1 * f[0]) * (1.0 - f[1])
                            + (ez2 * (1.0 - f[0]) + ez3 * f[0]) * f[1])
                b0 = ez0 + ex2 * f[0]
                b1 = (c011 - c000) + ex3 * f[0]
                top = b0 + (b1 - b0) * f[1]
                rest = rest + (top - rest) * f[2]
            else:
                g[1] = gdot(seed, ey0 * (1.0 - f[0]) + ey1 * f[0])
        g = wp.cw_mul(g, s) * weight
        if weight == 0.0:
            g = wp.vec3(0.0)
        return g, c000, rest, blend(c000, c100, c010, c110, c001, c101, c011, c111, f)

    @wp.func
    def finite_or(x: T, fallback: T):
        r = x
        if wp.static(K == 1):
            if not wp.isfinite(x):
                r = fallback
        else:
            for c in range(K):
                if not wp.isfinite(x[c]):
                    r[c] = fallback[c]
        return r

    @wp.func_grad(sample)
    def adj_sample(d: wp.uint64, u: float, v: float, w: float, lod: float, adj_ret: T):
        g = wp.vec3(0.0)
        glod = 0.0
        if d != wp.uint64(0):
            n = int(_word(d, D_LEVELS))
            grad_lod = n > 1 and lod >= 0.0 and lod < float(n - 1) and \
                _word(d, D_MIP_FILTER) == wp.int64(LINEAR)
            la, wa, lb, wb = levels(d, lod)
            if grad_lod:  # (at an integer LOD too: the derivative toward larger LODs)
                la = int(wp.floor(lod))
                lb = la + 1
                wb = lod - float(la)
                wa = 1.0 - wb
            if _word(d, D_FILTER) == wp.int64(LINEAR):
                g, anchor_a, rest_a, value_a = grad_level(d, la, u, v, w, wa, adj_ret)
                if wb != 0.0 or grad_lod:
                    gb, anchor_b, rest_b, value_b = grad_level(d, lb, u, v, w, wb, adj_ret)
                    g = g + gb
                    if grad_lod:
                        diff = (anchor_b - anchor_a) + (rest_b - rest_a)
                        glod = gdot(adj_ret, finite_or(diff, value_b - value_a))
            elif grad_lod:
                glod = gdot(adj_ret, closest(d, lb, u, v, w) - closest(d, la, u, v, w))
        wp.adjoint[u] += g[0]
        wp.adjoint[v] += g[1]
        wp.adjoint[w] += g[2]
        wp.adjoint[lod] += glod

    return sample
