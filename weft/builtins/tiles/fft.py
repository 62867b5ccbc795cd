"""`tile_fft` / `tile_ifft`: the discrete Fourier transform of each row (the last
dimension) of a tile of complex numbers (vec2f / vec2d: component 0 real, 1 imaginary),
in place, unnormalised as in Warp and numpy.fft.fft: X[k] = Σ_n x[n] exp(∓2πi kn/N).

Each row is copied into a buffer of doubles (so float32 tiles are transformed in double
precision and rounded once), transformed, and written back. A power-of-two N runs an
iterative radix-2 Cooley–Tukey FFT (bit-reversed load, log2 N butterfly stages); any other
N a direct O(N²) sum, limited to 4096 points as in Warp's CPU path. The twiddle factors
exp(∓2πi k/N) are a constant table computed at compile time.

Rule: the transform is linear, X = F x with F symmetric, and its adjoint (under the real
inner product of the (re, im) pairs) is conj(F), the unnormalised inverse transform:
tile_fft's rule is tile_ifft of the adjoint and vice versa, as in Warp.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir
import numpy as np

from ...types import TileType, Vector, float32, float64
from ..registry import builtin, primitive
from .args import no_more, tile_arg

I8, I32, I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
F64 = ir.DoubleType()
MAX_DFT = 4096  # the largest non-power-of-two transform (Warp's CPU limit)


def _fft_rule(name):
    def rule(arg_types):
        (t,) = arg_types
        check(t, name)
        return [t]
    return rule


def check(t, name):
    """TypeError/ValueError unless `t` is a tile Warp's tile_fft accepts."""
    if not isinstance(t, TileType):
        raise TypeError(f"{name}() argument must be a tile, got {t!r}")
    d = t.dtype
    if not (isinstance(d, Vector) and d.length == 2 and d.dtype in (float32, float64)):
        raise TypeError(f"{name}() argument must be a tile of vec2f or vec2d (interpreted as complex) "
                        f"entries, got {d!r}")
    if t.ndim < 2:
        raise ValueError(f"{name}() argument must be a tile with at least 2 dimensions, got {t.ndim}D")
    n = t.shape[-1]
    if n & (n - 1) and n > MAX_DFT:
        raise ValueError(f"{name}(): a transform of {n} points is not a power of two, and the direct "
                         f"transform supports at most {MAX_DFT}")


def _table(cg, name, ty, values):
    """A constant global array holding `values`; returns its address."""
    arr = ir.ArrayType(ty, len(values))
    g = ir.GlobalVariable(cg.module, arr, cg.module.get_unique_name(name))
    g.linkage = "internal"
    g.global_constant = True
    g.initializer = ir.Constant(arr, [ty(v) for v in values])
    return cg.builder.bitcast(g, ir.PointerType())


def _lower_fft(sign: int):
    def lower(cg, args, op):
        (x_buf,) = args
        t = op.operands[0].type
        n = t.shape[-1]
        batch = t.num_elements // max(n, 1)
        out = x_buf if cg.in_place(op.operands[0], op) else cg.tile_buffer(t, "fft")
        if n == 0 or batch == 0:
            return out
        bld = cg.builder
        sty = ir.DoubleType() if t.dtype.dtype is float64 else ir.FloatType()
        ssize = t.dtype.dtype.size
        angles = sign * 2.0 * np.pi * np.arange(n) / n
        tw = np.empty(2 * n)
        tw[0::2], tw[1::2] = np.cos(angles), np.sin(angles)
        tw_g = _table(cg, "fft.tw", F64, tw.tolist())
        work = cg.tile_buffer(TileType(float64, (2 * n,)), "fft.work")
        pow2 = n & (n - 1) == 0
        acc = None if pow2 else cg.tile_buffer(TileType(float64, (2,)), "fft.acc")
        rev = None
        if pow2 and n > 1:
            bits = n.bit_length() - 1
            rev = _table(cg, "fft.rev", I32, [int(format(j, f"0{bits}b")[::-1], 2) for j in range(n)])

        def slot(buf, idx, comp):  # the address of buf[idx].comp among doubles
            return bld.gep(buf, [bld.add(bld.mul(bld.sext(idx, I64), I64(2)), I64(comp))],
                           source_etype=F64, inbounds=True)

        def elem(buf, flat, comp):  # the address of a tile element's component
            off = bld.add(bld.mul(bld.sext(flat, I64), I64(2 * ssize)), I64(comp * ssize))
            return bld.gep(buf, [off], source_etype=I8, inbounds=True)

        def load_tw(idx):
            return [bld.load(slot(tw_g, idx, c), typ=F64) for c in (0, 1)]

        def row(b):
            base = bld.mul(b, I32(n))

            def load(j):
                dst = bld.load(bld.gep(rev, [bld.sext(j, I64)], source_etype=I32, inbounds=True), typ=I32) \
                    if rev is not None else j
                for c in (0, 1):
                    v = bld.load(elem(x_buf, bld.add(base, j), c), typ=sty)
                    bld.store(v if sty == F64 else bld.fpext(v, F64), slot(work, dst, c))
            _counted(cg, I32(0), I32(n), "fft.ld", load)
            if pow2:
                _butterflies(cg, n, work, slot, load_tw)
                src = work
            else:
                src = _direct(cg, n, work, slot, load_tw, acc)

            def store(j):
                for c in (0, 1):
                    v = bld.load(slot(src, j, c), typ=F64)
                    bld.store(v if sty == F64 else bld.fptrunc(v, sty), elem(out, bld.add(base, j), c))
            _counted(cg, I32(0), I32(n), "fft.st", store)

        _counted(cg, I32(0), I32(batch), "fft.row", row)
        return out
    return lower


def _cmul(bld, a, w):
    (ar, ai), (wr, wi) = a, w
    return [bld.fsub(bld.fmul(ar, wr), bld.fmul(ai, wi)), bld.fadd(bld.fmul(ar, wi), bld.fmul(ai, wr))]


def _butterflies(cg, n, work, slot, load_tw):
    """Radix-2 stages over `work` (loaded in bit-reversed order)."""
    bld = cg.builder
    for s in range(int(math.log2(n))):
        half = 1 << s
        span, step = 2 * half, n // (2 * half)

        def group(g, half=half, span=span, step=step):
            def pair(j):
                p = bld.add(bld.mul(g, I32(span)), j)
                q = bld.add(p, I32(half))
                u = [bld.load(slot(work, p, c), typ=F64) for c in (0, 1)]
                v = _cmul(bld, [bld.load(slot(work, q, c), typ=F64) for c in (0, 1)], load_tw(bld.mul(j, I32(step))))
                for c in (0, 1):
                    bld.store(bld.fadd(u[c], v[c]), slot(work, p, c))
                    bld.store(bld.fsub(u[c], v[c]), slot(work, q, c))
            _counted(cg, I32(0), I32(half), "fft.j", pair)
        _counted(cg, I32(0), I32(n // span), "fft.g", group)


def _direct(cg, n, work, slot, load_tw, acc):
    """X[k] = Σ_m x[m] w[(k m) mod n], into a second buffer (returned)."""
    bld = cg.builder
    res = cg.tile_buffer(TileType(float64, (2 * n,)), "fft.res")

    def bin_(k):
        for c in (0, 1):
            bld.store(F64(0.0), slot(acc, I32(0), c))

        def term(m):
            idx = bld.urem(bld.mul(k, m), I32(n))
            v = _cmul(bld, [bld.load(slot(work, m, c), typ=F64) for c in (0, 1)], load_tw(idx))
            for c in (0, 1):
                bld.store(bld.fadd(bld.load(slot(acc, I32(0), c), typ=F64), v[c]), slot(acc, I32(0), c))
        _counted(cg, I32(0), I32(n), "dft.m", term)
        for c in (0, 1):
            bld.store(bld.load(slot(acc, I32(0), c), typ=F64), slot(res, k, c))
    _counted(cg, I32(0), I32(n), "dft.k", bin_)
    return res


def _counted(cg, start, stop, name, body):
    i, exit_ = cg._loop_header(start, stop, name)
    body(i)
    cg._loop_latch(i, cg.builder.add(i, I32(1), flags=("nsw",)))
    cg.builder.position_at_end(exit_)


def _vjp(other):
    def vjp(b, args, results, g):
        return [b.call(PRIMS[other], [g])]
    return vjp


PRIMS = {name: primitive(name, _fft_rule(name), _lower_fft(sign), _vjp(other),
                         doc=f"{name}: the unnormalised DFT of each row, exponent sign {sign:+d}")
         for name, sign, other in (("tile_fft", -1, "tile_ifft"), ("tile_ifft", 1, "tile_fft"))}


def _expand(name):
    def expand(ctx, args, kwargs):
        kwargs = dict(kwargs)
        if len(args) + len(kwargs) != 1 or (kwargs and "inout" not in kwargs):
            no_more(ctx, name, {k: v for k, v in kwargs.items() if k != "inout"})
            ctx.error(f"{name}() takes exactly 1 argument (the tile to transform in place), "
                      f"got {len(args) + len(kwargs)}", kind=TypeError)
        x = tile_arg(ctx, args[0] if args else kwargs["inout"], f"{name}'s argument")
        try:
            check(x.type, name)
        except (TypeError, ValueError) as e:
            ctx.error(str(e), kind=type(e))
        return [ctx.b.call(PRIMS[name], [x])], None
    expand.__doc__ = (f"{name}(inout): the unnormalised {'inverse ' if name == 'tile_ifft' else ''}DFT "
                      "of each row (last dimension) of a vec2f/vec2d tile, in place.")
    return expand


tile_fft = builtin("tile_fft", inout=(0,))(_expand("tile_fft"))
tile_ifft = builtin("tile_ifft", inout=(0,))(_expand("tile_ifft"))
