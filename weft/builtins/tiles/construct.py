"""Making tiles: `tile_zeros/ones/full/empty/arange`, `tile(x)`, `untile`, `tile_from_thread`,
and `block_dim()`.

On the CPU a block has one thread (Warp's CPU tile semantics), so `tile(x)` is a tile whose
last dimension is 1 and `untile` takes that one element back.
"""

from __future__ import annotations

import math

from ...ir.core import Value
from ...types import Matrix, Scalar, TileType, Vector, float32, int32
from .. import arith
from ..registry import builtin
from .args import dtype_arg, no_more, option, shape_arg, tile_arg
from .core import map_tiles

#: threads per block on the CPU
CPU_BLOCK_DIM = 1


def _constant_tile(ctx, shape, dtype, value_of):
    """A tile of `shape` whose element is `value_of(coords)` (emitted in the map's body)."""
    if 0 in shape or not shape:
        ctx.error("a tile needs at least one element", kind=ValueError)
    (t,) = map_tiles(ctx.b, shape, [], lambda coords, elems, states: ([value_of(coords)], [], []))
    if t.type.dtype is not dtype:
        ctx.error(f"internal: tile element {t.type.dtype!r} is not {dtype!r}")
    return t


def _shape_dtype(ctx, name, args, kwargs, n_value=0):
    kwargs = dict(kwargs)
    args = list(args)
    shape = option(kwargs, "shape", args.pop(0) if args else None)
    value = None
    if n_value:
        value = option(kwargs, "value", args.pop(0) if args else None)
    dtype = option(kwargs, "dtype", args.pop(0) if args else None)
    option(kwargs, "storage", None)
    if args:
        option(kwargs, "storage", args.pop(0))
    no_more(ctx, name, kwargs)
    if shape is None:
        ctx.error(f"{name}() needs a shape", kind=TypeError)
    return shape_arg(ctx, shape), value, dtype


@builtin("tile_zeros")
def tile_zeros(ctx, args, kwargs):
    """tile_zeros(shape, dtype=float, storage="register")"""
    shape, _, dtype = _shape_dtype(ctx, "tile_zeros", args, kwargs)
    t = dtype_arg(ctx, dtype)
    return _constant_tile(ctx, shape, t, lambda c: arith.zero(ctx, t))


@builtin("tile_empty")
def tile_empty(ctx, args, kwargs):
    """tile_empty(shape, dtype=float, storage="register"): zeros in weft (never garbage)."""
    shape, _, dtype = _shape_dtype(ctx, "tile_empty", args, kwargs)
    t = dtype_arg(ctx, dtype)
    return _constant_tile(ctx, shape, t, lambda c: arith.zero(ctx, t))


@builtin("tile_ones")
def tile_ones(ctx, args, kwargs):
    """tile_ones(shape, dtype=float, storage="register")"""
    shape, _, dtype = _shape_dtype(ctx, "tile_ones", args, kwargs)
    t = dtype_arg(ctx, dtype)
    return _constant_tile(ctx, shape, t, lambda c: _filled(ctx, t, 1))


def _filled(ctx, t, x):
    if isinstance(t, Scalar):
        return ctx.coerce(x, t) if not isinstance(x, Value) else arith.construct(ctx, t, [x], {})
    comp = ctx.coerce(x, t.dtype) if not isinstance(x, Value) or isinstance(x.type, Scalar) else None
    if comp is None:
        return ctx.coerce(x, t)
    return ctx.b.construct(t, [comp] * t.num_components)


@builtin("tile_full")
def tile_full(ctx, args, kwargs):
    """tile_full(shape, value, dtype=type(value), storage="register")"""
    shape, value, dtype = _shape_dtype(ctx, "tile_full", args, kwargs, n_value=1)
    if dtype is None:
        value = ctx.materialize(value)
        t = value.type
    else:
        t = dtype_arg(ctx, dtype)
    v = _filled(ctx, t, value)  # (outside the map: the same value for every element)
    return _constant_tile(ctx, shape, t, lambda c: v)


@builtin("tile_arange")
def tile_arange(ctx, args, kwargs):
    """tile_arange(stop) / (start, stop) / (start, stop, step), dtype=...: a 1D tile."""
    kwargs = dict(kwargs)
    dtype = option(kwargs, "dtype", None)
    option(kwargs, "storage", None)
    no_more(ctx, "tile_arange", kwargs)
    if not 1 <= len(args) <= 3 or any(isinstance(a, Value) for a in args):
        ctx.error("tile_arange takes 1 to 3 compile-time numbers: (stop), (start, stop) or "
                  "(start, stop, step)", kind=TypeError)
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    if step == 0:
        ctx.error("tile_arange: step cannot be zero", kind=ValueError)
    n = max(int(math.ceil((stop - start) / step)), 0)
    t = dtype_arg(ctx, dtype, default=float32)

    def element(coords):
        k = ctx.b.cast(coords[0], t)
        return ctx.b.add(ctx.coerce(start, t), ctx.b.mul(k, ctx.coerce(step, t)))
    return _constant_tile(ctx, (n,), t, element)


@builtin("tile")
def tile(ctx, args, kwargs):
    """tile(x, preserve_type=False): the block's per-thread values as a tile (one thread on
    the CPU: the last dimension is 1)."""
    kwargs = dict(kwargs)
    x = args[0] if args else option(kwargs, "x", None)
    preserve = option(kwargs, "preserve_type", args[1] if len(args) > 1 else False)
    no_more(ctx, "tile", kwargs)
    x = ctx.materialize(x)
    t = x.type
    if isinstance(t, Scalar) or preserve:
        return _per_lane(_constant_tile(ctx, (CPU_BLOCK_DIM,), t, lambda c: x))
    if isinstance(t, Vector):
        return _per_lane(_constant_tile(ctx, (t.length, CPU_BLOCK_DIM), t.dtype,
                                        lambda c: ctx.b.op("extract_dyn", [x, c[0]], [t.dtype]).result))
    if isinstance(t, Matrix):
        return _per_lane(_constant_tile(ctx, (t.rows, t.cols, CPU_BLOCK_DIM), t.dtype,
                                        lambda c: ctx.b.op("extract_dyn", [x, c[0], c[1]], [t.dtype]).result))
    ctx.error(f"tile(x): x must be a scalar, vector or matrix, got {t!r}", kind=TypeError)


@builtin("untile")
def untile(ctx, args, kwargs):
    """untile(a): this thread's value of a tile made by tile(x)."""
    a = tile_arg(ctx, args[0] if args else kwargs.get("a"), "untile's argument")
    t: TileType = a.type
    if t.shape[-1] != CPU_BLOCK_DIM:
        ctx.error(f"untile: the tile's last dimension must be the block size ({CPU_BLOCK_DIM} on the CPU), "
                  f"got shape {t.shape}", kind=ValueError)
    from .elements import get_element
    zero = _per_lane(ctx.b.const(0, int32))  # (this thread's lane)
    if t.ndim == 1:
        return get_element(ctx, a, [zero])
    if t.ndim == 2:
        from ...types import vector
        vt = vector(t.shape[0], t.dtype)
        return ctx.b.construct(vt, [get_element(ctx, a, [ctx.b.const(i, int32), zero]) for i in range(t.shape[0])])
    if t.ndim == 3:
        from ...types import matrix
        rows, cols = t.shape[:2]
        return ctx.b.construct(matrix((rows, cols), t.dtype),
                               [get_element(ctx, a, [ctx.b.const(r, int32), ctx.b.const(c, int32), zero])
                                for r in range(rows) for c in range(cols)])
    ctx.error(f"untile: a tile of shape {t.shape} has no per-thread value type", kind=ValueError)


@builtin("tile_from_thread")
def tile_from_thread(ctx, args, kwargs):
    """tile_from_thread(shape, value, thread_idx=0, storage="register"): the one thread's value."""
    kwargs = dict(kwargs)
    args = list(args)
    shape = shape_arg(ctx, option(kwargs, "shape", args.pop(0) if args else None))
    value = ctx.materialize(option(kwargs, "value", args.pop(0) if args else None))
    option(kwargs, "thread_idx", None)
    option(kwargs, "storage", None)
    no_more(ctx, "tile_from_thread", kwargs)
    return _per_lane(_constant_tile(ctx, shape, value.type, lambda c: value))


@builtin("block_dim")
def block_dim(ctx, args, kwargs):
    """block_dim(): threads per block (1 on the CPU)."""
    return _per_lane(ctx.b.const(CPU_BLOCK_DIM, int32))


def _per_lane(value: Value) -> Value:
    """Mark the op making `value` as depending on the block's threads (tile(x), untile,
    block_dim): launch_tiled cannot run such a kernel one thread per block when Warp's
    cooperative CPU blocks are asked for (see runtime/launch.py)."""
    value.owner.attrs["per_lane"] = True
    return value
