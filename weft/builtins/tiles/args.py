"""Checking the arguments of tile builtins: shapes, dtypes, offsets, tiles."""

from __future__ import annotations

import numpy as np

from ...ir.core import Value, constant_value
from ...types import PYTHON_TYPES, Scalar, TileType, Type, float32, int32


def shape_arg(ctx, shape, what="shape") -> tuple[int, ...]:
    """A tile shape: an int or a tuple of ints known at compile time."""
    parts = shape if isinstance(shape, (tuple, list)) else (shape,)
    dims = []
    for d in parts:
        if isinstance(d, Value) and constant_value(d) is not None:  # a local variable holding a constant
            d = constant_value(d)
        if isinstance(d, Value) or isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            ctx.error(f"tile {what} must be compile-time integer constants (the shape is part of the "
                      f"tile's type), got {d!r}", kind=TypeError)
        if d < 0:
            ctx.error(f"tile {what} cannot be negative, got {d}", kind=ValueError)
        dims.append(int(d))
    return tuple(dims)


def dtype_arg(ctx, dtype, default=float32) -> Type:
    if dtype is None:
        return default
    t = PYTHON_TYPES.get(dtype, dtype)
    if not isinstance(t, Type):
        ctx.error(f"tile dtype must be a weft type, got {dtype!r}", kind=TypeError)
    return t


def tile_arg(ctx, x, what="argument") -> Value:
    if not (isinstance(x, Value) and isinstance(x.type, TileType)):
        got = x.type if isinstance(x, Value) else x
        ctx.error(f"{what} must be a tile, got {got!r}", kind=TypeError)
    return x


def offsets_arg(ctx, offset, ndim: int, what="offset") -> list[Value]:
    """One int32 Value per dimension (0 where `offset` is None)."""
    if offset is None:
        return [ctx.b.const(0, int32) for _ in range(ndim)]
    parts = offset if isinstance(offset, (tuple, list)) else (offset,)
    if isinstance(offset, Value) and not isinstance(offset.type, Scalar):
        parts = ctx.b.components(offset)
    if len(parts) != ndim:
        ctx.error(f"{what} has {len(parts)} value(s) but the tile has {ndim} dimension(s)", kind=ValueError)
    return [index_value(ctx, p, what) for p in parts]


def index_value(ctx, p, what="index", kinds="integers") -> Value:
    if isinstance(p, Value):
        if not (isinstance(p.type, Scalar) and p.type.is_int):
            ctx.error(f"{what} must be {kinds}, got {p.type!r}", kind=TypeError)
        return p if p.type is int32 else ctx.b.cast(p, int32)
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        ctx.error(f"{what} must be {kinds}, got {p!r}", kind=TypeError)
    return ctx.b.const(int(p), int32)


def option(kwargs, name, default):
    return kwargs.pop(name, default)


def no_more(ctx, name, kwargs):
    if kwargs:
        ctx.error(f"{name}() got unexpected keyword argument(s) {', '.join(sorted(kwargs))}", kind=TypeError)


#: the bytes of Warp's CPU shared-memory arena, which its shared tiles are allocated from
CPU_SHARED_ARENA = 256 * 1024


def shared(ctx, value: Value, storage) -> Value:
    """`value`, remembered as a tile made with storage="shared" (printed so, as Warp does)."""
    if storage == "shared":
        ctx.__dict__.setdefault("_tile_shared", set()).add(value.id)
    return value


def storage_arg(ctx, name, storage, tile: TileType):
    """Check `storage` ("register" or "shared", which weft accepts and does not act on: see
    weft/types/tile.py); a shared tile larger than Warp's CPU shared arena is refused, as Warp
    does at launch, rather than running where Warp cannot."""
    if storage is None:
        return
    if storage not in ("register", "shared"):
        ctx.error(f"{name}(): storage must be 'register' or 'shared', got {storage!r}", kind=ValueError)
    if storage == "shared" and tile.nbytes > CPU_SHARED_ARENA:
        ctx.error(f"{name}(): a shared tile of shape {tile.shape} ({tile.nbytes} bytes) exceeds the 256 KiB arena "
                  "Warp gives a CPU block's shared tiles; use storage='register' or a smaller tile",
                  kind=ValueError)
