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


def _expand_load(ctx, args, kwargs):
    arr, index = args
    return ctx.b.op("load", [arr, ctx.coerce(index, wp.int32)], [arr.type.dtype],
                    {"in_bounds": True, "constant": True}).result


# an unchecked load from the texture's own (validated) buffers; a constant to autodiff
_load = Builtin("texture_load", _expand_load, doc="an unchecked load of a texture's own data")

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
    def fetch(d: wp.uint64, lvl: int, x: wp.int64, y: wp.int64, z: wp.int64):
        """Texel (x, y, z) of level lvl (zero outside it, and in channels it lacks)."""
        k = D_LEVEL0 + 4 * lvl
        w = _word(d, k)
        h = _word(d, k + 1)
        dd = _word(d, k + 2)
        r = T(0.0)
        if x >= wp.int64(0) and x < w and y >= wp.int64(0) and y < h and z >= wp.int64(0) and z < dd:
            nc = _word(d, D_CHANNELS)
            addr = wp.uint64(_word(d, k + 3)) + wp.uint64(wp.int64(4) * ((z * h + y) * w + x) * nc)
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
        x = _nearest(u, norm, _word(d, D_BASE), _word(d, k), _word(d, D_ADDRESS))
        y = wp.int64(0)
        z = wp.int64(0)
        if wp.static(ndim >= 2):
            y = _nearest(v, norm, _word(d, D_BASE + 1), _word(d, k + 1), _word(d, D_ADDRESS + 1))
        if wp.static(ndim == 3):
            z = _nearest(w, norm, _word(d, D_BASE + 2), _word(d, k + 2), _word(d, D_ADDRESS + 2))
        return fetch(d, lvl, x, y, z)

    @wp.func
    def linear(d: wp.uint64, lvl: int, u: float, v: float, w: float):
        k = D_LEVEL0 + 4 * lvl
        norm = _word(d, D_NORMALIZED)
        sx = _word(d, k)
        mx = _word(d, D_ADDRESS)
        tx = _texel(u, norm, _word(d, D_BASE), sx, mx, 0.0)
        fx = wp.floor(tx)
        x0 = wp.int64(fx)
        fx = tx - fx
        xa = _index(x0, sx, mx)
        xb = _index(x0 + wp.int64(1), sx, mx)
        r = T(0.0)
        if wp.static(ndim == 1):
            r = fetch(d, lvl, xa, wp.int64(0), wp.int64(0)) * (1.0 - fx) + \
                fetch(d, lvl, xb, wp.int64(0), wp.int64(0)) * fx
        else:
            sy = _word(d, k + 1)
            my = _word(d, D_ADDRESS + 1)
            ty = _texel(v, norm, _word(d, D_BASE + 1), sy, my, 0.0)
            fy = wp.floor(ty)
            y0 = wp.int64(fy)
            fy = ty - fy
            ya = _index(y0, sy, my)
            yb = _index(y0 + wp.int64(1), sy, my)
            za = wp.int64(0)
            zb = wp.int64(0)
            fz = 0.0
            if wp.static(ndim == 3):
                sz = _word(d, k + 2)
                mz = _word(d, D_ADDRESS + 2)
                tz = _texel(w, norm, _word(d, D_BASE + 2), sz, mz, 0.0)
                fz = wp.floor(tz)
                z0 = wp.int64(fz)
                fz = tz - fz
                za = _index(z0, sz, mz)
                zb = _index(z0 + wp.int64(1), sz, mz)
            a = (fetch(d, lvl, xa, ya, za) * (1.0 - fx) + fetch(d, lvl, xb, ya, za) * fx) * (1.0 - fy) + \
                (fetch(d, lvl, xa, yb, za) * (1.0 - fx) + fetch(d, lvl, xb, yb, za) * fx) * fy
            r = a
            if wp.static(ndim == 3):
                b = (fetch(d, lvl, xa, ya, zb) * (1.0 - fx) + fetch(d, lvl, xb, ya, zb) * fx) * (1.0 - fy) + \
                    (fetch(d, lvl, xa, yb, zb) * (1.0 - fx) + fetch(d, lvl, xb, yb, zb) * fx) * fy
                r = a * (1.0 - fz) + b * fz
        return r

    @wp.func
    def at_level(d: wp.uint64, lvl: int, u: float, v: float, w: float):
        r = T(0.0)
        if _word(d, D_FILTER) == wp.int64(CLOSEST):
            r = closest(d, lvl, u, v, w)
        else:
            r = linear(d, lvl, u, v, w)
        return r

    @wp.func
    def sample(d: wp.uint64, u: float, v: float, w: float, lod: float):
        r = T(0.0)
        if d != wp.uint64(0):
            n = int(_word(d, D_LEVELS))
            if n <= 1:
                r = at_level(d, 0, u, v, w)
            else:
                top = float(n - 1)
                cl = lod
                if lod < 0.0:
                    cl = 0.0
                if lod > top:
                    cl = top
                if _word(d, D_MIP_FILTER) == wp.int64(CLOSEST):
                    r = at_level(d, wp.min(int(wp.floor(cl + 0.5)), n - 1), u, v, w)
                else:
                    l0 = int(wp.floor(cl))
                    l1 = wp.min(l0 + 1, n - 1)
                    fl = cl - float(l0)
                    r = at_level(d, l0, u, v, w)
                    if l1 != l0 and fl != 0.0:
                        r = r * (1.0 - fl) + at_level(d, l1, u, v, w) * fl
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
        the sample's corner texel, the sample minus that texel)."""
        k = D_LEVEL0 + 4 * lvl
        norm = _word(d, D_NORMALIZED)
        sx = _word(d, k)
        mx = _word(d, D_ADDRESS)
        tx = _texel(u, norm, _word(d, D_BASE), sx, mx, -1.0)
        fx = wp.floor(tx)
        x0 = wp.int64(fx)
        fx = tx - fx
        xa = _index(x0, sx, mx)
        xb = _index(x0 + wp.int64(1), sx, mx)
        g = wp.vec3(0.0)
        anchor = T(0.0)
        rest = T(0.0)
        zero = wp.int64(0)
        if wp.static(ndim == 1):
            v0 = fetch(d, lvl, xa, zero, zero)
            ex = fetch(d, lvl, xb, zero, zero) - v0
            g[0] = weight * _scale(norm, sx, _word(d, D_BASE)) * gdot(seed, ex)
            anchor = v0
            rest = ex * fx
        else:
            sy = _word(d, k + 1)
            my = _word(d, D_ADDRESS + 1)
            ty = _texel(v, norm, _word(d, D_BASE + 1), sy, my, -1.0)
            fy = wp.floor(ty)
            y0 = wp.int64(fy)
            fy = ty - fy
            ya = _index(y0, sy, my)
            yb = _index(y0 + wp.int64(1), sy, my)
            v00 = fetch(d, lvl, xa, ya, zero)
            e0 = fetch(d, lvl, xb, ya, zero) - v00         # x differences on rows y0, y1
            e1 = fetch(d, lvl, xb, yb, zero) - fetch(d, lvl, xa, yb, zero)
            f0 = fetch(d, lvl, xa, yb, zero) - v00         # y differences on columns x0, x1
            f1 = fetch(d, lvl, xb, yb, zero) - fetch(d, lvl, xb, ya, zero)
            if wp.static(ndim == 2):
                g[0] = weight * _scale(norm, sx, _word(d, D_BASE)) * gdot(seed, e0 * (1.0 - fy) + e1 * fy)
                g[1] = weight * _scale(norm, sy, _word(d, D_BASE + 1)) * gdot(seed, f0 * (1.0 - fx) + f1 * fx)
                anchor = v00
                a0 = e0 * fx
                rest = a0 + (f0 + e1 * fx - a0) * fy
            else:
                sz = _word(d, k + 2)
                mz = _word(d, D_ADDRESS + 2)
                tz = _texel(w, norm, _word(d, D_BASE + 2), sz, mz, -1.0)
                fz = wp.floor(tz)
                z0 = wp.int64(fz)
                fz = tz - fz
                za = _index(z0, sz, mz)
                zb = _index(z0 + wp.int64(1), sz, mz)
                c000 = fetch(d, lvl, xa, ya, za)
                c100 = fetch(d, lvl, xb, ya, za)
                c010 = fetch(d, lvl, xa, yb, za)
                c110 = fetch(d, lvl, xb, yb, za)
                c001 = fetch(d, lvl, xa, ya, zb)
                c101 = fetch(d, lvl, xb, ya, zb)
                c011 = fetch(d, lvl, xa, yb, zb)
                c111 = fetch(d, lvl, xb, yb, zb)
                gx = ((c100 - c000) * (1.0 - fy) + (c110 - c010) * fy) * (1.0 - fz) + \
                    ((c101 - c001) * (1.0 - fy) + (c111 - c011) * fy) * fz
                gy = ((c010 - c000) * (1.0 - fx) + (c110 - c100) * fx) * (1.0 - fz) + \
                    ((c011 - c001) * (1.0 - fx) + (c111 - c101) * fx) * fz
                gz = ((c001 - c000) * (1.0 - fx) + (c101 - c100) * fx) * (1.0 - fy) + \
                    ((c011 - c010) * (1.0 - fx) + (c111 - c110) * fx) * fy
                g[0] = weight * _scale(norm, sx, _word(d, D_BASE)) * gdot(seed, gx)
                g[1] = weight * _scale(norm, sy, _word(d, D_BASE + 1)) * gdot(seed, gy)
                g[2] = weight * _scale(norm, sz, _word(d, D_BASE + 2)) * gdot(seed, gz)
                anchor = c000
                b0 = (c100 - c000) * fx                                 # rows, less c000
                b1 = (c010 - c000) + (c110 - c010) * fx
                b2 = (c001 - c000) + (c101 - c001) * fx
                b3 = (c011 - c000) + (c111 - c011) * fx
                p0 = b0 + (b1 - b0) * fy
                p1 = b2 + (b3 - b2) * fy
                rest = p0 + (p1 - p0) * fz
        if weight == 0.0:
            g = wp.vec3(0.0)
        return g, anchor, rest

    @wp.func_grad(sample)
    def adj_sample(d: wp.uint64, u: float, v: float, w: float, lod: float, adj_ret: T):
        g = wp.vec3(0.0)
        glod = 0.0
        if d != wp.uint64(0):
            n = int(_word(d, D_LEVELS))
            linear_mip = _word(d, D_MIP_FILTER) == wp.int64(LINEAR)
            mipmapped = n > 1 and lod >= 0.0
            grad_lod = mipmapped and linear_mip and lod < float(n - 1)
            l0 = 0
            l1 = 0
            fl = 0.0
            if grad_lod:
                l0 = int(wp.floor(lod))
                l1 = l0 + 1
                fl = lod - float(l0)
            if _word(d, D_FILTER) == wp.int64(LINEAR):
                if grad_lod:
                    g0, a0, r0 = grad_level(d, l0, u, v, w, 1.0 - fl, adj_ret)
                    g1, a1, r1 = grad_level(d, l1, u, v, w, fl, adj_ret)
                    g = g0 + g1
                    diff = (a1 - a0) + (r1 - r0)
                    if not wp.isfinite(diff):
                        diff = linear(d, l1, u, v, w) - linear(d, l0, u, v, w)
                    glod = gdot(adj_ret, diff)
                elif n <= 1:
                    g, a0, r0 = grad_level(d, 0, u, v, w, 1.0, adj_ret)
                else:
                    top = float(n - 1)
                    cl = wp.max(0.0, wp.min(lod, top))
                    if linear_mip:
                        m0 = int(wp.floor(cl))
                        m1 = wp.min(m0 + 1, n - 1)
                        fm = cl - float(m0)
                        g, a0, r0 = grad_level(d, m0, u, v, w, 1.0 - fm, adj_ret)
                        if m1 != m0 and fm != 0.0:
                            g1, a1, r1 = grad_level(d, m1, u, v, w, fm, adj_ret)
                            g = g + g1
                    else:
                        m = wp.min(int(wp.floor(cl + 0.5)), n - 1)
                        g, a0, r0 = grad_level(d, m, u, v, w, 1.0, adj_ret)
            elif grad_lod:
                glod = gdot(adj_ret, closest(d, l1, u, v, w) - closest(d, l0, u, v, w))
        wp.adjoint[u] += g[0]
        wp.adjoint[v] += g[1]
        wp.adjoint[w] += g[2]
        wp.adjoint[lod] += glod

    return sample
