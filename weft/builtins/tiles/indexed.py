"""Indexed tile memory: `tile_load_indexed`, `tile_store_indexed`, `tile_atomic_add_indexed`
(an array gathered or scattered along one axis through a 1D tile of indices),
`tile_slice_indexed` (`t[indices, :]`) and the per-thread writes into a tile,
`tile_scatter_add` and `tile_scatter_masked`.

As in memory.py, the array forms are a `tile_map` whose body loads, stores or atomically
adds one array element, so the gradients are those of the scalar accesses. Every
coordinate is checked against both ends of the array, as Warp documents: an element whose
index is negative or past the end reads as zero and is not written (so -1 can mark a
padding row). `tile_slice_indexed` reads the tile with `tile_get` (an index out of range is
an IndexError after the launch; a negative index counts from the end).

The scatters update their tile in place in Warp; here they return the new value and the
frontend rebinds the variable. On the CPU a block is one thread, so one call writes at
most one element (under `if has_value`; Warp's cooperative CPU blocks, where every thread
of the block writes, are refused: `per_lane`): `tile_add_at` (the value's adjoint is the tile's
adjoint at the index) and `tile_set` (the same, and that adjoint is then cleared).
"""

from __future__ import annotations

from ...ir.core import Block, Value
from ...types import Scalar, TileType, bool_, int32
from ..registry import builtin
from .args import index_value, no_more, offsets_arg, option, shape_arg, tile_arg
from .construct import _per_lane, lanes_active, when_owner_runs
from .core import TILE_ADD_AT, TILE_GET, TILE_SET, map_tiles
from .elements import _coerce
from .memory import _array, _converter, _guarded, _in_bounds
from .shape import gather


def _axis(ctx, name, axis, ndim) -> int:
    if isinstance(axis, Value) or isinstance(axis, bool) or not isinstance(axis, int):
        ctx.error(f"{name}: axis must be a compile-time integer, got {axis!r}", kind=TypeError)
    if not -ndim <= axis < ndim:
        ctx.error(f"{name}: axis {axis} is out of range for an array of {ndim} dimension(s)", kind=ValueError)
    return axis % ndim


def _indices_tile(ctx, name, indices, extent) -> Value:
    indices = tile_arg(ctx, indices, f"{name}'s indices")
    t: TileType = indices.type
    if t.ndim != 1 or not (isinstance(t.dtype, Scalar) and t.dtype.is_int and not t.dtype.is_bool):
        ctx.error(f"{name}: indices must be a 1D tile of integers, got {t!r}", kind=TypeError)
    if t.shape[0] != extent:
        ctx.error(f"{name}: the indices tile holds {t.shape[0]} value(s) but the tile has {extent} along the "
                  "indexed axis; they must match", kind=ValueError)
    return indices


def _source_index(ctx, offsets, indices, axis, coords):
    """The array coordinates of tile element `coords`: offset + coordinate, and along `axis`
    offset + indices[coordinate]."""
    b = ctx.b
    out = []
    for d, (o, c) in enumerate(zip(offsets, coords)):
        if d == axis:
            k = b.call(TILE_GET, [indices, c])
            c = k if k.type is int32 else b.cast(k, int32)
        out.append(b.add(o, c))
    return out


def _parse(ctx, name, args, kwargs, names):
    """Positional and keyword arguments of `name` as a dict over `names` (None if absent)."""
    kwargs = dict(kwargs)
    if len(args) > len(names):
        ctx.error(f"{name}() takes at most {len(names)} arguments", kind=TypeError)
    got = dict(zip(names, args))
    for n in names:
        if n in kwargs:
            if n in got:
                ctx.error(f"{name}() got multiple values for argument '{n}'", kind=TypeError)
            got[n] = kwargs.pop(n)
    no_more(ctx, name, kwargs)
    return {n: got.get(n) for n in names}


def _layout(ctx, name, a, shape, offset, axis, indices):
    ndim = a.type.ndim
    if len(shape) != ndim:
        ctx.error(f"{name}: the tile has {len(shape)} dimension(s) but the array has {ndim}; they must match",
                  kind=ValueError)
    axis = _axis(ctx, name, 0 if axis is None else axis, ndim)
    return offsets_arg(ctx, offset, ndim), axis, _indices_tile(ctx, name, indices, shape[axis])


@builtin("tile_load_indexed")
def tile_load_indexed(ctx, args, kwargs):
    """tile_load_indexed(a, indices, shape, offset=None, axis=0, storage="register")"""
    p = _parse(ctx, "tile_load_indexed", args, kwargs, ("a", "indices", "shape", "offset", "axis", "storage"))
    a = _array(ctx, p["a"], "tile_load_indexed")
    shape = shape_arg(ctx, p["shape"])
    if shape == () or 0 in shape:
        ctx.error("tile_load_indexed: a tile needs at least one element", kind=ValueError)
    offsets, axis, indices = _layout(ctx, "tile_load_indexed", a, shape, p["offset"], p["axis"], p["indices"])
    dtype = a.type.dtype

    def body(coords, elems, states):
        idx = _source_index(ctx, offsets, indices, axis, coords)
        (x,) = _guarded(ctx, _in_bounds(ctx, a, idx), lambda: [ctx.b.op("load", [a, *idx], [dtype]).result], [dtype])
        return [x], [], []

    (t,) = map_tiles(ctx.b, shape, [], body)
    return t


@builtin("tile_store_indexed")
def tile_store_indexed(ctx, args, kwargs):
    """tile_store_indexed(a, indices, t, offset=None, axis=0)"""
    p = _parse(ctx, "tile_store_indexed", args, kwargs, ("a", "indices", "t", "offset", "axis"))
    a = _array(ctx, p["a"], "tile_store_indexed")
    t = tile_arg(ctx, p["t"], "tile_store_indexed's tile")
    offsets, axis, indices = _layout(ctx, "tile_store_indexed", a, t.type.shape, p["offset"], p["axis"],
                                     p["indices"])
    value = _converter(ctx, t.type.dtype, a.type.dtype, "tile_store_indexed")
    active = lanes_active(ctx)  # (cooperative blocks: the lanes that do not run store nothing)

    def body(coords, elems, states):
        idx = _source_index(ctx, offsets, indices, axis, coords)
        x = value(elems[0])

        def store():
            ctx.b.op("store", [a, *idx, x])
            return []
        _guarded(ctx, when_owner_runs(ctx.b, active, coords, t.type.shape, _in_bounds(ctx, a, idx)), store, [])
        return [], [], []

    map_tiles(ctx.b, t.type.shape, [t], body)


@builtin("tile_atomic_add_indexed")
def tile_atomic_add_indexed(ctx, args, kwargs):
    """tile_atomic_add_indexed(a, indices, t, offset=None, axis=0): adds t into a; returns the
    old values (zero where an index is out of range)."""
    p = _parse(ctx, "tile_atomic_add_indexed", args, kwargs, ("a", "indices", "t", "offset", "axis"))
    a = _array(ctx, p["a"], "tile_atomic_add_indexed")
    t = tile_arg(ctx, p["t"], "tile_atomic_add_indexed's tile")
    offsets, axis, indices = _layout(ctx, "tile_atomic_add_indexed", a, t.type.shape, p["offset"], p["axis"],
                                     p["indices"])
    dtype = a.type.dtype
    value = _converter(ctx, t.type.dtype, dtype, "tile_atomic_add_indexed")
    active = lanes_active(ctx)  # (cooperative blocks: the lanes that do not run add nothing)

    def body(coords, elems, states):
        idx = _source_index(ctx, offsets, indices, axis, coords)
        x = value(elems[0])

        def add():
            return [ctx.b.op("atomic", [a, *idx, x], [dtype], {"op": "add"}).result]
        cond = when_owner_runs(ctx.b, active, coords, t.type.shape, _in_bounds(ctx, a, idx))
        return _guarded(ctx, cond, add, [dtype]), [], []

    (old,) = map_tiles(ctx.b, t.type.shape, [t], body)
    return old


def slice_indexed(ctx, t: Value, key) -> Value:
    """`t[indices, :]` (one entry a 1D integer tile, the others full slices; trailing axes
    may be left out): the tile's slices along that axis gathered in the order of indices."""
    tt: TileType = t.type
    key = list(key) if isinstance(key, (tuple, list)) else [key]
    if len(key) > tt.ndim:
        ctx.error(f"a tile of shape {tt.shape} takes at most {tt.ndim} index(es), got {len(key)}", kind=IndexError)
    key += [slice(None)] * (tt.ndim - len(key))
    tiles = [d for d, k in enumerate(key) if isinstance(k, Value) and isinstance(k.type, TileType)]
    full = all(k == slice(None) for d, k in enumerate(key) if d not in tiles)
    if len(tiles) != 1 or not full:
        ctx.error("an indexed tile slice (t[indices, :]) takes exactly one 1D integer index tile and requires ':' "
                  "on all other axes", kind=ValueError)
    axis = tiles[0]
    indices = key[axis]
    it: TileType = indices.type
    if it.ndim != 1 or not (isinstance(it.dtype, Scalar) and it.dtype.is_int and not it.dtype.is_bool):
        ctx.error(f"tile indices must be an integer index tile (1D, of integers), got {it!r}", kind=ValueError)
    shape = tt.shape[:axis] + (it.shape[0],) + tt.shape[axis + 1:]
    b = ctx.b
    n = b.const(tt.shape[axis], int32)

    def index_of(coords):
        k = b.call(TILE_GET, [indices, coords[axis]])
        k = k if k.type is int32 else b.cast(k, int32)
        k = b.select(b.cmp("lt", k, b.const(0, int32)), b.add(k, n), k)  # -1: the last
        return [k if d == axis else c for d, c in enumerate(coords)]
    return gather(b, t, shape, index_of)


@builtin("tile_slice_indexed")
def tile_slice_indexed(ctx, args, kwargs):
    """tile_slice_indexed(t, indices): t[indices] with indices a tuple of one 1D integer tile
    and full slices."""
    p = _parse(ctx, "tile_slice_indexed", args, kwargs, ("t", "indices"))
    t = tile_arg(ctx, p["t"], "tile_slice_indexed's tile")
    return slice_indexed(ctx, t, p["indices"])


def _scatter(name, update):
    def expand(ctx, args, kwargs):
        kwargs = dict(kwargs)
        atomic = option(kwargs, "atomic", None)
        has_value = option(kwargs, "has_value", None)
        value = option(kwargs, "value", None)
        args = list(args)
        a = tile_arg(ctx, args.pop(0) if args else option(kwargs, "a", None), f"{name}'s tile")
        nd = a.type.ndim
        if name == "tile_scatter_add" and atomic is None and len(args) == nd + 3:
            atomic = args.pop()
        idx = [option(kwargs, n, None) for n in "ijkl"[:nd]]
        idx = [args.pop(0) if args and x is None else x for x in idx]
        if value is None and args:
            value = args.pop(0)
        if has_value is None and args:
            has_value = args.pop(0)
        no_more(ctx, name, kwargs)
        if args or value is None or has_value is None or any(x is None for x in idx):
            ctx.error(f"{name}(a, {', '.join('ijkl'[:nd])}, value, has_value) takes one index per dimension of "
                      f"the tile ({nd} for shape {a.type.shape}), a value and has_value", kind=TypeError)
        if atomic is not None and (isinstance(atomic, Value) or not isinstance(atomic, bool)):
            ctx.error(f"{name}: atomic must be a compile-time bool", kind=TypeError)
        idx = [index_value(ctx, x, f"{name}'s indices") for x in idx]
        x = _scatter_value(ctx, name, value, a.type.dtype)
        if not isinstance(has_value, Value):
            if not isinstance(has_value, (bool, int)):
                ctx.error(f"{name}: has_value must be a bool, got {has_value!r}", kind=TypeError)
            return [_per_lane(ctx.b.call(update, [a, *idx, x])) if has_value else a], None
        if has_value.type is not bool_:
            ctx.error(f"{name}: has_value must be a bool, got {has_value.type!r}", kind=TypeError)
        return [_per_lane(_when(ctx, has_value, lambda: ctx.b.call(update, [a, *idx, x]), a))], None
    expand.__doc__ = f"{name}(a, i, [j, k, l,] value, has_value): a updated at [i, ...] when has_value"
    return builtin(name, inout=(0,))(expand)


def _scatter_value(ctx, name, value, dtype):
    if isinstance(value, Value) and value.type is not dtype and not (isinstance(value.type, Scalar)
                                                                     and isinstance(dtype, Scalar)):
        ctx.error(f"{name}: the value's type {value.type!r} does not match the tile's dtype {dtype!r}",
                  kind=TypeError)
    return value if isinstance(value, Value) and value.type is dtype else _coerce(ctx, value, dtype)


def _when(ctx, cond: Value, then, otherwise: Value) -> Value:
    """`then() if cond else otherwise` as an `if` op (then's ops run only when cond holds)."""
    b = ctx.b
    then_block, else_block = Block(), Block()
    with b.at(then_block):
        b.op("yield", [then()])
    with b.at(else_block):
        b.op("yield", [otherwise])
    return b.op("if", [cond], [otherwise.type], {}, [then_block, else_block]).results[0]


tile_scatter_add = _scatter("tile_scatter_add", TILE_ADD_AT)
tile_scatter_masked = _scatter("tile_scatter_masked", TILE_SET)
