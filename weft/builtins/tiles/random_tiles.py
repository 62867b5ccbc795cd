"""Random tiles: `tile_randf`, `tile_randi`, drawn as Warp draws them on the CPU.

Warp hashes the state once per thread (`pcg(thread index + rng)`) and then draws each of
the thread's elements in turn from that stream with randf/randi. A CPU block has one
thread (index 0), so element k of the row-major order is the (k+1)-th draw of the stream
that starts at `pcg(rng)`: a `tile_map` carrying the state from element to element. `rng`
itself is left unchanged, as in Warp (two calls with one state give one tile).

Under Warp's cooperative CPU blocks (`compile_lanes()` threads) element k belongs to
thread k % block_dim, which draws its elements in turn from the stream at pcg(rng + thread).
"""

from __future__ import annotations

from ...ir.core import Block, Value
from ...lang.module import compile_lanes
from ...types import Scalar, float32, int32, uint32
from ..random import PCG, _uniform01
from ..registry import builtin
from .args import no_more, option, shape_arg
from .construct import _per_lane
from .core import map_tiles, ravel


def _args(ctx, name, args, kwargs):
    kwargs = dict(kwargs)
    args = list(args)
    shape = option(kwargs, "shape", args.pop(0) if args else None)
    rng = option(kwargs, "rng", args.pop(0) if args else None)
    bounds = [option(kwargs, n, None) for n in ("min", "max")]
    bounds = [args.pop(0) if args and b is None else b for b in bounds]
    option(kwargs, "storage", args.pop(0) if args else None)
    no_more(ctx, name, kwargs)
    if args:
        ctx.error(f"{name}(shape, rng, min=..., max=..., storage=...) got too many arguments", kind=TypeError)
    if shape is None:
        ctx.error(f"{name}() needs a shape", kind=TypeError)
    shape = shape_arg(ctx, shape)
    if not shape or 0 in shape:
        ctx.error(f"{name}: a tile needs at least one element", kind=ValueError)
    if not (isinstance(rng, Value) and rng.type is uint32):
        got = rng.type if isinstance(rng, Value) else rng
        ctx.error(f"{name}: rng must be a random state (a uint32 from rand_init), got {got!r}", kind=TypeError)
    if (bounds[0] is None) != (bounds[1] is None):
        ctx.error(f"{name}: give both min and max, or neither", kind=TypeError)
    return shape, rng, None if bounds[0] is None else bounds


def _draws(ctx, shape, rng, draw, dtype):
    """A tile whose k-th row-major element is draw(state) on the stream from pcg(rng)."""
    b = ctx.b
    lanes = compile_lanes()
    if lanes > 1:
        return _lane_draws(ctx, shape, rng, draw, lanes, dtype)
    start = b.call(PCG, [rng])

    def body(coords, elems, states):
        state, value = draw(states[0])
        return [value], [], [state]
    tile, _ = map_tiles(b, shape, [], body, states=[start])
    return _per_lane(tile)


def _lane_draws(ctx, shape, rng, draw, lanes: int, shape_dtype):
    """Cooperative blocks: element k (row-major) belongs to thread k % lanes, whose stream
    starts at pcg(rng + thread), and is that stream's (k // lanes + 1)-th draw."""
    b = ctx.b

    def body(coords, elems, states):
        flat = ravel(b, coords, shape)
        n = b.const(lanes, int32)
        lane = b.binary("mod", flat, n)
        start = b.call(PCG, [b.add(rng, b.cast(lane, uint32))])
        loop = Block([int32, uint32, shape_dtype], ["k", "state", "value"])
        with b.at(loop):
            state, value = draw(loop.args[1])
            b.op("yield", [state, value])
        trips = b.add(b.binary("floordiv", flat, n), b.const(1, int32))
        result = b.op("for", [b.const(0, int32), trips, b.const(1, int32), start, zero], [uint32, shape_dtype],
                      {}, [loop]).results
        return [result[1]], [], []
    zero = b.const(0, shape_dtype)
    (tile,) = map_tiles(b, shape, [], body)
    return tile


def _bound(ctx, name, x, t: Scalar):
    if isinstance(x, Value):
        if not (isinstance(x.type, Scalar) and (x.type.is_int or x.type.is_float)):
            ctx.error(f"{name}: min and max must be numbers, got {x.type!r}", kind=TypeError)
        return x if x.type is t else ctx.b.cast(x, t)
    if isinstance(x, bool) or not isinstance(x, (int, float)) or (t.is_int and not float(x).is_integer()):
        ctx.error(f"{name}: min and max must be {'integers' if t.is_int else 'numbers'}, got {x!r}", kind=TypeError)
    return ctx.b.const(int(x) if t.is_int else float(x), t)


def _check_order(ctx, name, lo, hi, t):
    if not isinstance(lo, Value) and not isinstance(hi, Value):
        to = (lambda v: int(v)) if t.is_int else (lambda v: float(__import__("numpy").float32(v)))
        if not to(hi) > to(lo):
            ctx.error(f"{name}: max ({hi}) must be greater than min ({lo})", kind=ValueError)


@builtin("tile_randf")
def tile_randf(ctx, args, kwargs):
    """tile_randf(shape, rng, min=0, max=1, storage="register"): float32 in [min, max)."""
    shape, rng, bounds = _args(ctx, "tile_randf", args, kwargs)
    b = ctx.b
    if bounds is None:
        return _draws(ctx, shape, rng, lambda s: _uniform01(ctx, s), float32)
    _check_order(ctx, "tile_randf", *bounds, float32)
    lo, hi = (_bound(ctx, "tile_randf", x, float32) for x in bounds)
    span = b.sub(hi, lo)

    def draw(state):
        state, u = _uniform01(ctx, state)
        return state, b.add(b.mul(span, u), lo)
    return _draws(ctx, shape, rng, draw, float32)


@builtin("tile_randi")
def tile_randi(ctx, args, kwargs):
    """tile_randi(shape, rng, min=None, max=None, storage="register"): int32, any value or
    in [min, max)."""
    shape, rng, bounds = _args(ctx, "tile_randi", args, kwargs)
    b = ctx.b
    if bounds is None:
        def draw(state):
            state = b.call(PCG, [state])
            return state, b.cast(state, int32)
        return _draws(ctx, shape, rng, draw, int32)
    _check_order(ctx, "tile_randi", *bounds, int32)
    lo, hi = (b.cast(_bound(ctx, "tile_randi", x, int32), uint32) for x in bounds)
    span = b.sub(hi, lo)

    def draw_in(state):
        state = b.call(PCG, [state])
        return state, b.cast(b.add(b.binary("mod", state, span), lo), int32)
    return _draws(ctx, shape, rng, draw_in, int32)
