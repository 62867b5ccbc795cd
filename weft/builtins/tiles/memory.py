"""Tiles and arrays: `tile_load`, `tile_store`, `tile_atomic_add`.

Each is a `tile_map` whose body loads, stores or atomically adds one array element, so
the adjoint rules of array accesses apply element by element (a load's adjoint is added
into the array's adjoint; a store's adjoint is read and then cleared), and the tape sees
which arrays a kernel reads and writes. With `bounds_check` (the default) an element past
the array's extent (or before its start) reads as zero and is not written, as in Warp;
without it, an out-of-range element is the usual IndexError after the launch.
"""

from __future__ import annotations

from ...ir.core import Block, Value
from ...types import ArrayType, Scalar, TileType, bool_, int32, int64
from ..array_ops import shape_of
from ..registry import builtin
from .args import no_more, offsets_arg, option, shape_arg, shared, storage_arg, tile_arg
from .construct import lanes_active, when_owner_runs
from .core import map_tiles, zero_of


def _array(ctx, a, name):
    if not (isinstance(a, Value) and isinstance(a.type, ArrayType)):
        ctx.error(f"{name}: the first argument must be an array, got {a.type if isinstance(a, Value) else a!r}",
                  kind=TypeError)
    return a


def _indices(ctx, offsets, coords):
    return [ctx.b.add(o, c) for o, c in zip(offsets, coords)]


def _wide_indices(ctx, offsets, coords):
    """The indices in int64 (for a tile proven inside its array, where they cannot wrap):
    LLVM then sees consecutive elements of a row at consecutive addresses and vectorises
    the row's copy, which the wrapping int32 sum hides from it."""
    b = ctx.b
    return [b.add(b.cast(o, int64), b.cast(c, int64)) for o, c in zip(offsets, coords)]


def _in_bounds(ctx, arr, indices) -> Value:
    b = ctx.b
    extents = shape_of(ctx, arr)
    ok = None
    for i, n in zip(indices, extents):
        here = _and(b, b.cmp("ge", i, b.const(0, i.type)), b.cmp("lt", i, n))
        ok = here if ok is None else _and(b, ok, here)
    return ok


def _and(b, x, y):
    return b.select(x, y, b.const(False, bool_))


def _guarded(ctx, cond, then, result_types):
    """`if cond: then() else: zeros` as an `if` op; returns its results."""
    b = ctx.b
    then_block, else_block = Block(), Block()
    with b.at(then_block):
        b.op("yield", then())
    with b.at(else_block):
        b.op("yield", [zero_of(b, t) for t in result_types])
    return b.op("if", [cond], result_types, {}, [then_block, else_block]).results


def _whole_tile_in_bounds(ctx, arr, offsets, shape) -> Value:
    """Whether every element of a tile of `shape` at `offsets` lies inside `arr`:
    0 <= offset and offset <= extent - size in each dimension (no overflow: extents are
    never negative and sizes are positive)."""
    b = ctx.b
    ok = None
    for o, n, size in zip(offsets, shape_of(ctx, arr), shape):
        here = _and(b, b.cmp("ge", o, b.const(0, int32)), b.cmp("le", o, b.sub(n, b.const(size, int32))))
        ok = here if ok is None else _and(b, ok, here)
    return ok


def _split_on_bounds(ctx, arr, offsets, shape, fast, checked, result_types):
    """`fast()` when the whole tile is inside `arr` (one check per tile: its accesses are
    then unchecked and vectorise), else `checked()` (a check per element); an `if` op."""
    b = ctx.b
    then_block, else_block = Block(), Block()
    with b.at(then_block):
        b.op("yield", fast())
    with b.at(else_block):
        b.op("yield", checked())
    cond = _whole_tile_in_bounds(ctx, arr, offsets, shape)
    return b.op("if", [cond], result_types, {}, [then_block, else_block]).results


def _layout(ctx, name, a, shape, offset):
    ndim = a.type.ndim
    if len(shape) != ndim:
        ctx.error(f"{name}: the tile has {len(shape)} dimension(s) but the array has {ndim}; they must match",
                  kind=ValueError)
    return offsets_arg(ctx, offset, ndim)


@builtin("tile_load")
def tile_load(ctx, args, kwargs):
    """tile_load(a, shape, offset=None, storage="register", bounds_check=True, aligned=False)"""
    kwargs = dict(kwargs)
    a, shape, offset, *rest = [*args, None, None][:max(len(args), 3)]
    a = _array(ctx, a, "tile_load")
    shape = shape_arg(ctx, option(kwargs, "shape", shape))
    offset = option(kwargs, "offset", offset)
    checked = option(kwargs, "bounds_check", rest[1] if len(rest) > 1 else True)
    storage = option(kwargs, "storage", rest[0] if rest else None)
    option(kwargs, "aligned", None)
    no_more(ctx, "tile_load", kwargs)
    offsets = _layout(ctx, "tile_load", a, shape, offset)
    dtype = a.type.dtype
    storage_arg(ctx, "tile_load", storage, TileType(dtype, shape))

    def body(coords, elems, states, guard=True, attrs=None):
        idx = (_wide_indices if attrs else _indices)(ctx, offsets, coords)
        if not guard:
            return [ctx.b.op("load", [a, *idx], [dtype], attrs or {}).result], [], []
        (x,) = _guarded(ctx, _in_bounds(ctx, a, idx), lambda: [ctx.b.op("load", [a, *idx], [dtype]).result], [dtype])
        return [x], [], []

    if shape == () or 0 in shape:
        ctx.error("tile_load: a tile needs at least one element", kind=ValueError)
    if not checked:
        (t,) = map_tiles(ctx.b, shape, [], lambda c, e, s: body(c, e, s, guard=False))
        return shared(ctx, t, storage)
    (t,) = _split_on_bounds(
        ctx, a, offsets, shape,
        lambda: map_tiles(ctx.b, shape, [], lambda c, e, s: body(c, e, s, guard=False, attrs={"in_bounds": True})),
        lambda: map_tiles(ctx.b, shape, [], body), [TileType(dtype, shape)])
    return shared(ctx, t, storage)


def _write_args(ctx, name, args, kwargs):
    """(array, tile, offsets, bounds_check) of tile_store / tile_atomic_add(a, t, offset=None,
    bounds_check=True, aligned=False)."""
    kwargs = dict(kwargs)
    a, t, offset, checked = [*args, None, None, None][:4] if len(args) < 4 else args[:4]
    a = _array(ctx, a, name)
    t = tile_arg(ctx, option(kwargs, "t", t), f"{name}'s tile")
    offset = option(kwargs, "offset", offset)
    checked = option(kwargs, "bounds_check", True if checked is None else checked)
    option(kwargs, "aligned", None)
    no_more(ctx, name, kwargs)
    return a, t, _layout(ctx, name, a, t.type.shape, offset), checked


@builtin("tile_store")
def tile_store(ctx, args, kwargs):
    """tile_store(a, t, offset=None, bounds_check=True, aligned=False)"""
    a, t, offsets, checked = _write_args(ctx, "tile_store", args, kwargs)
    value = _converter(ctx, t.type.dtype, a.type.dtype, "tile_store")
    active = lanes_active(ctx)  # (cooperative blocks: the lanes that do not run store nothing)
    shape = t.type.shape

    def body(coords, elems, states, guard=True, attrs=None):
        idx = (_wide_indices if attrs else _indices)(ctx, offsets, coords)
        x = value(elems[0])
        cond = when_owner_runs(ctx.b, active, coords, shape, _in_bounds(ctx, a, idx) if guard else None)
        if cond is None:
            ctx.b.op("store", [a, *idx, x], [], attrs or {})
        else:
            def store():
                ctx.b.op("store", [a, *idx, x])
                return []
            _guarded(ctx, cond, store, [])
        return [], [], []

    if not checked or active is not None:
        map_tiles(ctx.b, shape, [t], lambda c, e, s: body(c, e, s, guard=checked))
        return None
    _split_on_bounds(
        ctx, a, offsets, shape,
        lambda: map_tiles(ctx.b, shape, [t], lambda c, e, s: body(c, e, s, guard=False, attrs={"in_bounds": True})),
        lambda: map_tiles(ctx.b, shape, [t], body), [])
    return None


@builtin("tile_atomic_add")
def tile_atomic_add(ctx, args, kwargs):
    """tile_atomic_add(a, t, offset=None, bounds_check=True): adds t into a; returns the old values."""
    a, t, offsets, checked = _write_args(ctx, "tile_atomic_add", args, kwargs)
    dtype = a.type.dtype
    scalar = getattr(dtype, "dtype", dtype)  # (a struct's fields are added where they can be)
    if isinstance(scalar, Scalar) and (scalar.is_bool or (scalar.is_int and scalar.bits < 32)):
        ctx.error(f"tile_atomic_add only supports float16/32/64 and 32- or 64-bit integer elements (vectors, "
                  f"matrices and structs of them), got {dtype!r}", kind=None)
    value = _converter(ctx, t.type.dtype, dtype, "tile_atomic_add")
    active = lanes_active(ctx)  # (cooperative blocks: the lanes that do not run add nothing)

    def body(coords, elems, states):
        idx = _indices(ctx, offsets, coords)
        x = value(elems[0])

        def add():
            return [ctx.b.op("atomic", [a, *idx, x], [dtype], {"op": "add"}).result]
        cond = when_owner_runs(ctx.b, active, coords, t.type.shape, _in_bounds(ctx, a, idx) if checked else None)
        old = add() if cond is None else _guarded(ctx, cond, add, [dtype])
        return old, [], []

    (old,) = map_tiles(ctx.b, t.type.shape, [t], body)
    return old


def _converter(ctx, have, want, name):
    if have is want:
        return lambda x: x
    ctx.error(f"{name}: the tile's dtype {have!r} differs from the array's {want!r}", kind=TypeError)

