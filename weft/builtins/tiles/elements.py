"""Elements of tiles: `t[i, j]`, `t[i, j] = x`, `t[i] += x`, `tile_extract`.

`t[i, j] = x` makes a new tile value (the frontend rebinds `t`), so a tile assigned inside
branches and loops keeps its gradient chain like any other value; the compiled code writes
in place when the old value is dead (codegen/tile_ops.py).
"""

from __future__ import annotations

from ...ir.core import Block, Value
from ...types import Scalar, TileType, int32
from ..registry import builtin
from .args import index_value, tile_arg
from .core import TILE_GET, TILE_SET, mark_view, set_strides, strides_of, write_through


def _index(ctx, t: TileType, key) -> list[Value]:
    key = list(key)
    if len(key) != t.ndim:
        ctx.error(f"a tile of shape {t.shape} takes {t.ndim} index(es), got {len(key)}"
                  + ("; slices of tiles are not supported, use tile_view" if any(isinstance(k, slice) for k in key)
                     else ""), kind=IndexError)
    out = []
    for k, n in zip(key, t.shape):
        if not isinstance(k, Value) and isinstance(k, int) and not -n <= k < n:
            ctx.error(f"index {k} is out of bounds for a tile dimension of size {n}", kind=IndexError)
        if not isinstance(k, Value) and isinstance(k, int) and k < 0:
            k += n
        out.append(index_value(ctx, k, "tile indices", "integers or slices"))
    return out


def _is_element(t: TileType, key) -> bool:
    return len(key) == t.ndim and not any(isinstance(k, slice) or _is_tile(k) for k in key)


def _is_tile(k) -> bool:
    return isinstance(k, Value) and isinstance(k.type, TileType)


def get_element(ctx, t: Value, key) -> Value:
    """`t[key]`: an element (one index per dimension), else a sub-tile (a copy: slices with
    constant bounds, integer indices that drop their dimension, missing trailing dims whole,
    or one 1D tile of indices with full slices elsewhere)."""
    key = tuple(key)
    if any(_is_tile(k) for k in key):
        from .indexed import slice_indexed  # t[indices, :]
        return mark_view(ctx, slice_indexed(ctx, t, key))
    if not _is_element(t.type, key):
        plan, shape = _view_plan(ctx, t.type, key)
        from .shape import gather

        def read(source):
            view = gather(ctx.b, source, shape, lambda c: _source_index(ctx, plan, c))
            source_strides = strides_of(ctx, source)
            return set_strides(ctx, view, [s * p[2] for s, p in zip(source_strides, plan) if p[0] == "slice"] or [1])
        return mark_view(ctx, read(t), t, lambda src, new: _set_view(ctx, src, key, new), get=read)
    return ctx.b.call(TILE_GET, [t, *_index(ctx, t.type, key)])


def _view_plan(ctx, t: TileType, key):
    """Per dimension ("index", Value) or ("slice", start, step, count); and the view's shape."""
    if len(key) > t.ndim:
        ctx.error(f"too many indices ({len(key)}) for a tile of shape {t.shape}", kind=IndexError)
    plan, shape = [], []
    for k, n in zip(list(key) + [slice(None)] * (t.ndim - len(key)), t.shape):
        if _is_tile(k):
            ctx.error("assigning through a tile of indices (t[idx, :] = ...) is not supported; use "
                      "tile_scatter_add or tile_assign", kind=TypeError)
        if isinstance(k, slice):
            bounds = (k.start, k.stop, k.step)
            if any(isinstance(x, Value) or not (x is None or isinstance(x, int)) for x in bounds):
                ctx.error("slice bounds of tiles must be compile-time constants (the result's shape is "
                          "part of its type)", kind=ValueError)
            if k.step == 0:
                ctx.error("slice step cannot be zero", kind=ValueError)
            r = range(*k.indices(n))
            if len(r) == 0:
                ctx.error(f"the slice {k} of a tile dimension of size {n} is an empty tile (zero-length)",
                          kind=ValueError)
            plan.append(("slice", r.start, r.step, len(r)))
            shape.append(len(r))
        else:
            plan.append(("index", _wrapped_index(ctx, k, n)))
    return plan, tuple(shape) or (1,)


def _wrapped_index(ctx, k, n) -> Value:
    """An index into a dimension of size n; negative counts from the end (as numpy)."""
    if isinstance(k, Value):
        i = index_value(ctx, k, "tile indices", "integers or slices")
        b = ctx.b
        return b.select(b.cmp("lt", i, b.const(0, i.type)), b.add(i, b.const(n, i.type)), i)
    (i,) = _index(ctx, TileType(int32, (n,)), (k,))
    return i


def _source_index(ctx, plan, coords):
    b = ctx.b
    it = iter(coords)
    out = []
    for entry in plan:
        if entry[0] == "index":
            out.append(entry[1])
        else:
            _, start, step, _n = entry
            c = next(it)
            out.append(b.add(b.const(start, int32), b.mul(c, b.const(step, int32))))
    return out


def set_element(ctx, t: Value, key, value) -> Value:
    """`t[key] = value` as a new tile: an element, or a sub-tile (`t[1:] = t[:-1]`, `t[i] = row`;
    the right side is read before anything is written, as numpy does)."""
    key = tuple(key)
    new = _set_view(ctx, t, key, value) if not _is_element(t.type, key) else _set_one(ctx, t, key, value)
    return write_through(ctx, t, new, "assigning to an element of a tile view")


def _set_one(ctx, t: Value, key, value) -> Value:
    dtype = t.type.dtype
    x = value if isinstance(value, Value) and value.type is dtype else _coerce(ctx, value, dtype)
    return ctx.b.call(TILE_SET, [t, *_index(ctx, t.type, key), x])


def _set_view(ctx, t: Value, key, value) -> Value:
    plan, shape = _view_plan(ctx, t.type, key)
    if not (isinstance(value, Value) and isinstance(value.type, TileType)) or value.type.shape != shape:
        got = value.type if isinstance(value, Value) else value
        ctx.error(f"assigning to a tile slice of shape {shape} requires a tile of matching shape "
                  f"(shape mismatch: got {got!r})",
                  kind=ValueError)
    b = ctx.b
    from ...types import bool_
    from .core import map_tiles

    def body(coords, elems, states):
        inside, local = b.const(True, bool_), []
        for c, entry in zip(coords, plan):
            if entry[0] == "index":
                inside = b.select(inside, b.cmp("eq", c, entry[1]), b.const(False, bool_))
                continue
            _, start, step, n = entry
            offset = b.sub(c, b.const(start, int32))
            j = b.binary("floordiv", offset, b.const(step, int32))
            hit = b.cmp("eq", b.mul(j, b.const(step, int32)), offset)
            hit = b.select(hit, b.cmp("ge", j, b.const(0, int32)), b.const(False, bool_))
            hit = b.select(hit, b.cmp("lt", j, b.const(n, int32)), b.const(False, bool_))
            inside = b.select(inside, hit, b.const(False, bool_))
            local.append(j)
        then_block, else_block = Block(), Block()
        with b.at(then_block):
            src = b.call(TILE_GET, [value, *(local or [b.const(0, int32)])])
            b.op("yield", [src if src.type is t.type.dtype else _coerce(ctx, src, t.type.dtype)])
        with b.at(else_block):
            b.op("yield", [elems[0]])
        return [b.op("if", [inside], [t.type.dtype], {}, [then_block, else_block]).result], [], []
    (new,) = map_tiles(b, t.type.shape, [t], body)
    return new


def _coerce(ctx, value, dtype):
    if isinstance(value, Value) and isinstance(value.type, Scalar) and isinstance(dtype, Scalar) \
            and value.type is not dtype and not (value.type.is_float and dtype.is_int):
        return ctx.b.cast(value, dtype)
    return ctx.coerce(value, dtype, what="tile element")


@builtin("tile_extract")
def tile_extract(ctx, args, kwargs):
    """tile_extract(a, i, ...): one element of a tile."""
    a = tile_arg(ctx, args[0] if args else kwargs.get("a"), "tile_extract's tile")
    idx = list(args[1:]) or [kwargs[k] for k in ("i", "j", "k", "l", "m", "n") if k in kwargs]
    t = a.type
    if len(idx) > t.ndim and t.dtype is not None and not isinstance(t.dtype, Scalar):
        # the indices past the tile's select within its vector/matrix element: a component,
        # a matrix row (one index) or a matrix entry (two)
        from .. import arith
        return arith.get_item(ctx, get_element(ctx, a, idx[:t.ndim]), tuple(idx[t.ndim:]))
    return get_element(ctx, a, idx)
