"""Elements of tiles: `t[i, j]`, `t[i, j] = x`, `t[i] += x`, `tile_extract`.

`t[i, j] = x` makes a new tile value (the frontend rebinds `t`), so a tile assigned inside
branches and loops keeps its gradient chain like any other value; the compiled code writes
in place when the old value is dead (codegen/tile_ops.py).
"""

from __future__ import annotations

from ...ir.core import Value
from ...types import Scalar, TileType
from ..registry import builtin
from .args import index_value, tile_arg
from .core import TILE_GET, TILE_SET


def _index(ctx, t: TileType, key) -> list[Value]:
    key = list(key)
    if len(key) != t.ndim:
        ctx.error(f"a tile of shape {t.shape} takes {t.ndim} index(es), got {len(key)}"
                  + ("; slices of tiles are not supported, use tile_view" if any(isinstance(k, slice) for k in key)
                     else ""), kind=IndexError)
    out = []
    for k, n in zip(key, t.shape):
        if not isinstance(k, Value) and isinstance(k, int) and not -n <= k < n:
            ctx.error(f"index {k} is out of range for a tile dimension of size {n}", kind=IndexError)
        if not isinstance(k, Value) and isinstance(k, int) and k < 0:
            k += n
        out.append(index_value(ctx, k, "tile indices"))
    return out


def get_element(ctx, t: Value, key) -> Value:
    if any(isinstance(k, Value) and isinstance(k.type, TileType) for k in key):
        from .indexed import slice_indexed  # t[indices, :]
        return slice_indexed(ctx, t, key)
    return ctx.b.call(TILE_GET, [t, *_index(ctx, t.type, key)])


def set_element(ctx, t: Value, key, value) -> Value:
    dtype = t.type.dtype
    x = value if isinstance(value, Value) and value.type is dtype else _coerce(ctx, value, dtype)
    return ctx.b.call(TILE_SET, [t, *_index(ctx, t.type, key), x])


def _coerce(ctx, value, dtype):
    if isinstance(value, Value) and isinstance(value.type, Scalar) and isinstance(dtype, Scalar) \
            and value.type is not dtype and not (value.type.is_float and dtype.is_int):
        return ctx.b.cast(value, dtype)
    return ctx.coerce(value, dtype, what="tile element")


@builtin("tile_extract")
def tile_extract(ctx, args, kwargs):
    """tile_extract(a, i, ...): one element of a tile."""
    a = tile_arg(ctx, args[0] if args else kwargs.get("a"), "tile_extract's tile")
    idx = list(args[1:]) or [kwargs[k] for k in ("i", "j", "k", "l") if k in kwargs]
    t = a.type
    if len(idx) == t.ndim + 1 and t.dtype is not None and not isinstance(t.dtype, Scalar):
        # a component of a vector/matrix element: tile_extract(a, i, c)
        from .. import arith
        return arith.get_item(ctx, get_element(ctx, a, idx[:t.ndim]), tuple(idx[t.ndim:]))
    return get_element(ctx, a, idx)
