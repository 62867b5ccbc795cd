"""The tile IR every tile builtin is made of.

- `map_tiles`: a `tile_map` op (its body runs once per element: elementwise arithmetic,
  loads and stores of arrays, sums). Its derivative is its body's, by the reverse pass
  (weft/autodiff/tiles.py), so the builtins built from it need no rule of their own.
- Element access: the primitives `tile_get` (`t[i, j]`), `tile_set` (`t[i, j] = x`, a new
  tile) and `tile_add_at` (a new tile with `x` added at one element: the adjoint of a read).

On the CPU a block is one thread (Warp's CPU tile semantics), so `block_dim()` is 1 and a
tile is a value of the thread that makes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import llvmlite.ir as ir

from ...ir.builder import Builder
from ...ir.core import Block, Value
from ...types import ArrayType, Scalar, TileType, int32
from ..registry import primitive


def map_tiles(b: Builder, shape, inputs, body: Callable, states=()):
    """A `tile_map` over `shape`: `body(coords, elements, states)` emits one element's code
    and returns (output elements, sum contributions, new states). Returns the op's results
    (output tiles, sums, final states)."""
    shape = tuple(shape)
    arg_types = [int32] * len(shape) + [x.type.dtype for x in inputs] + [s.type for s in states]
    block = Block(arg_types, [f"__i{k}" for k in range(len(shape))])
    coords = block.args[:len(shape)]
    elems = block.args[len(shape):len(shape) + len(inputs)]
    state_args = block.args[len(shape) + len(inputs):]
    with b.at(block):
        outs, sums, new_states = body(list(coords), list(elems), list(state_args))
        b.op("yield", [*outs, *sums, *new_states])
    result_types = [TileType(v.type, shape) for v in outs] + [v.type for v in sums] + [s.type for s in states]
    op = b.op("tile_map", [*inputs, *states], result_types,
              {"shape": shape, "n_inputs": len(inputs), "n_out": len(outs), "n_sums": len(sums)}, [block])
    return op.results


def ravel(b: Builder, coords, shape) -> Value:
    """The row-major index (an int32 Value) of IR coordinates `coords` in `shape`."""
    flat = None
    for c, n in zip(coords, shape):
        flat = c if flat is None else b.add(b.mul(flat, b.const(n, int32)), c)
    return flat if flat is not None else b.const(0, int32)


def unravel(b: Builder, flat: Value, shape) -> list[Value]:
    """The coordinates (int32 Values) in `shape` of row-major index `flat`."""
    out = []
    for n in reversed(shape[1:]):
        out.append(b.binary("mod", flat, b.const(n, int32)))
        flat = b.binary("floordiv", flat, b.const(n, int32))
    out.append(flat)
    return out[::-1]


def flat_index(cg, t: TileType, indices):
    """The row-major index (i64) of element `indices` (LLVM integers) of a tile of type `t`."""
    bld = cg.builder
    flat = None
    for k, i in enumerate(indices):
        i = _to_i64(bld, i)
        flat = i if flat is None else bld.add(bld.mul(flat, ir.Constant(ir.IntType(64), t.shape[k])), i)
    return flat if flat is not None else ir.Constant(ir.IntType(64), 0)


def _to_i64(bld, v):
    width = v.type.width
    if width == 64:
        return v
    return bld.sext(v, ir.IntType(64)) if width < 64 else bld.trunc(v, ir.IntType(64))


def checked_index(cg, op, t: TileType, indices):
    """`flat_index`, with each index checked against its extent: an index out of range
    records an IndexError for the launch and reads element 0 instead."""
    bld = cg.builder
    idx64 = [_to_i64(bld, i) for i in indices]
    i64 = ir.IntType(64)
    conds = [bld.icmp_unsigned("<", i, i64(n)) for i, n in zip(idx64, t.shape)]
    ok = conds[0]
    for c in conds[1:]:
        ok = bld.and_(ok, c)
    cg._check(op, ok, idx64, [i64(n) for n in t.shape])
    flat = flat_index(cg, t, idx64)
    return bld.select(ok, flat, i64(0))


def _elem_rule(arg_types):
    t, *idx = arg_types
    if not isinstance(t, TileType):
        raise TypeError(f"expected a tile, got {t!r}")
    if len(idx) != t.ndim or not all(isinstance(i, Scalar) and i.is_int for i in idx):
        raise TypeError(f"a tile of shape {t.shape} takes {t.ndim} integer index(es)")
    return t


def _get_rule(arg_types):
    return [_elem_rule(arg_types).dtype]


def _set_rule(arg_types):
    t = _elem_rule(arg_types[:-1])
    if arg_types[-1] is not t.dtype:
        raise TypeError(f"a {t!r} element is a {t.dtype!r}, got {arg_types[-1]!r}")
    return [t]


def _lower_get(cg, args, op):
    t = op.operands[0].type
    return cg.tile_get(args[0], t, checked_index(cg, op, t, args[1:]))


def _lower_update(add: bool):
    def lower(cg, args, op):
        t = op.operands[0].type
        src, *idx, x = args
        dst = src if cg.in_place(op.operands[0], op) else cg.tile_buffer(t, "update")
        cg.tile_copy(dst, src, t)
        flat = checked_index(cg, op, t, idx)
        if add:
            old = cg.leaves(cg.tile_get(dst, t, flat), t.dtype)
            new = [cg.builder.fadd(o, n) if isinstance(o.type, (ir.FloatType, ir.DoubleType, ir.HalfType))
                   else cg.builder.add(o, n) for o, n in zip(old, cg.leaves(x, t.dtype))]
            x = cg.from_leaves(t.dtype, iter(new))
        cg.tile_set(dst, t, flat, x)
        return dst
    return lower


def _vjp_set(b, args, results, g):
    t, *idx, x = args
    zero = zero_of(b, t.type.dtype)
    return [b.call(TILE_SET, [g, *idx, zero]), *([None] * len(idx)), b.call(TILE_GET, [g, *idx])]


def _vjp_add_at(b, args, results, g):
    t, *idx, x = args
    return [g, *([None] * len(idx)), b.call(TILE_GET, [g, *idx])]


def zero_of(b: Builder, t):
    """The zero of a tile element type (a scalar, vector, matrix or struct)."""
    if isinstance(t, Scalar):
        return b.const(False if t.is_bool else 0, t)
    if isinstance(t, ArrayType):
        return b.op("null_array", [], [t]).result
    from ...ir.ops import component_type
    return b.construct(t, [zero_of(b, component_type(t, k)) for k in range(t.num_components)])


# tile_get's adjoint is not a whole tile per read: autodiff/tiles.py adds `g` into the
# tile's adjoint in place (tile_add_at), so its rule lives there.
TILE_GET = primitive("tile_get", _get_rule, _lower_get, doc="t[i, j, ...]: one element")
TILE_SET = primitive("tile_set", _set_rule, _lower_update(False), _vjp_set,
                     doc="t with element [i, j, ...] replaced by x")
TILE_ADD_AT = primitive("tile_add_at", _set_rule, _lower_update(True), _vjp_add_at,
                        doc="t with x added to element [i, j, ...]")
for _p in (TILE_GET, TILE_SET, TILE_ADD_AT):
    _p.checks = "tile element"  # codegen gives each call a site for its IndexError


def zeros(b: Builder, t: TileType) -> Value:
    """A tile of zeros of type `t`."""
    (z,) = map_tiles(b, t.shape, [], lambda coords, elems, states: ([zero_of(b, t.dtype)], [], []))
    return z


def add(b: Builder, x: Value, y: Value) -> Value:
    """x + y, element by element (two tiles of one type; adjoints, so float leaves add and
    other leaves keep x's value)."""
    def body(coords, elems, states):
        return [_add_values(b, *elems)], [], []
    (z,) = map_tiles(b, x.type.shape, [x, y], body)
    return z


def _add_values(b: Builder, p: Value, q: Value) -> Value:
    t = p.type
    if isinstance(t, Scalar):
        return b.add(p, q) if not t.is_bool else p
    if isinstance(t, ArrayType):
        return p
    from ...ir.ops import component_type
    return b.construct(t, [_add_values(b, b.extract(p, k), b.extract(q, k)) if _has_float(component_type(t, k))
                           else b.extract(p, k) for k in range(t.num_components)])


def _has_float(t) -> bool:
    if isinstance(t, Scalar):
        return t.is_float
    if isinstance(t, ArrayType) or not hasattr(t, "num_components"):
        return False
    from ...ir.ops import component_type
    return any(_has_float(component_type(t, k)) for k in range(t.num_components))


# Warp's tile views (`t[i]`, `t[1:]`, tile_view, tile_squeeze, tile_reshape,
# tile_broadcast, tile_transpose) alias their source: writing through one changes the
# source, and a write into the source shows in the view. weft's views are copies that
# remember where they came from: when a view held in a variable is updated (`row[j] = x`,
# `row += x`, tile_assign(row, ...), a func updating it), the new value is also written
# into the source (`write_through`; a view of a view passes it on to its own source); when
# a tile is updated in place, the variables that hold views of it are read again from the
# new value (`refresh_views`). Where a write cannot reach the source (the source is not a
# variable, or it changed since the view was taken), it is refused rather than silently
# lost (a transpose of a temporary is a plain value). A view whose elements share storage
# (a broadcast) also has a `refresh`: after a write, the view is read again from the
# updated source, so every element that shares a place sees the write, as in Warp.
class ViewRecord(NamedTuple):
    name: str | None  # the variable holding the source (None: a temporary, or writes refused)
    source: Value | None
    put: Callable | None  # put(source value, new view value) -> new source value
    refresh: Callable | None  # for views whose elements share storage (see above)
    get: Callable | None = None  # get(source value) -> the view of it


def mark_view(ctx, value: Value, source: Value | None = None, put=None, refresh=None, get=None) -> Value:
    """Record `value` as a view of `source`; `put(new_source_value, new_view)` writes a new
    view value back into a source value (None: writes cannot be written back);
    `refresh(source_value)` reads the view again (for views whose elements share storage);
    `get(source_value)` takes the same view of another value of the source."""
    name = None
    if source is not None and put is not None:
        name = next((n for n, v in ctx.scope.items() if v is source), None)
    ctx.__dict__.setdefault("_tile_views", {})[value.id] = ViewRecord(name, source, put, refresh, get)
    return value


def refresh_views(ctx, old: Value, new: Value) -> None:
    """Tile `old` was updated in place to `new`: the variables holding views of it (directly,
    or through views that are not variables: `tile_squeeze(tile_view(t, ...))`) take the same
    views of `new`, as Warp's views, which alias their source."""
    views = ctx.__dict__.get("_tile_views")
    if not views or old is new:
        return
    # inside a loop body, `old` may be the block argument of a tile whose views were taken
    # before the loop: those are views of the value the loop started from
    same = {old.id, getattr(ctx.__dict__.get("_tile_loop_entry", {}).get(old.id), "id", None)}
    for name, value in list(ctx.scope.items()):
        if value is old or not isinstance(value, Value) or value.id not in views:
            continue
        fresh = _view_again(ctx, views, value, same, new)
        if fresh is not None:
            ctx.rebind(name, fresh, f"the tile view '{name}' follows an update of its source")
            refresh_views(ctx, value, fresh)


def _view_again(ctx, views, view: Value, old_ids: set, new: Value) -> Value | None:
    """`view` taken again from `new` where its chain of sources reaches `old_ids`, else None."""
    record = views.get(view.id)
    if record is None or record.get is None or record.source is None:
        return None
    if record.source.id in old_ids:
        source = new
    else:
        source = _view_again(ctx, views, record.source, old_ids, new)
        if source is None:
            return None
    fresh = record.get(source)
    views[fresh.id] = record._replace(source=source)
    return fresh


def write_through(ctx, old: Value, new: Value, what: str) -> Value:
    """`old` (a tile) was updated in place to `new`: if `old` is a view, update its source too
    (and so on, for a view of a view), and the variables holding views of what was updated
    take them again (`refresh_views`). Returns the value the updated tile has (`new`, or
    for a broadcast, `new` read back)."""
    result = _pass_to_source(ctx, old, new, what)
    refresh_views(ctx, old, result)
    return result


def _pass_to_source(ctx, old: Value, new: Value, what: str) -> Value:
    """`write_through` without refreshing the views of `old` itself."""
    views = ctx.__dict__.get("_tile_views", {})
    record = views.get(old.id)
    if record is None:
        return new
    name, source, put, refresh, get = record
    if name is None and put is not None and (refresh is not None or source.id in views):
        # the source is a temporary: a view of another tile passes the write on to that one's
        # source (a view of a view); otherwise only the view itself sees the write
        updated = put(source, new)
        passed_on = write_through(ctx, source, updated, what)
        fresh = refresh(updated) if refresh is not None else new
        views[fresh.id] = ViewRecord(None, passed_on, put, refresh, get)
        return fresh
    if name is None or ctx.scope.get(name) is not source:
        ctx.error(f"{what}: this tile is a view of another tile (t[i], a slice, tile_view, tile_squeeze, "
                  "tile_reshape or tile_broadcast) whose source weft cannot update (it is not a variable, it "
                  "changed since the view was taken, or the view is a reshape); write into the source tile "
                  "instead (e.g. t[i] = row, or tile_assign(t, row, offset=(i, 0)))", kind=ValueError)
    updated = put(source, new)
    updated = write_through(ctx, source, updated, what)  # (the source may be a view too; its views follow)
    ctx.__dict__.setdefault("_tile_views_written", set()).add(put)
    ctx.rebind(name, updated, what)
    if refresh is not None:
        new = refresh(updated)
    views[new.id] = ViewRecord(name, updated, put, refresh, get)
    return new


# A loop carries a view variable as a block argument (and gives it back as the loop's
# result): the view's record follows it there, its source being what the loop carries for
# the source variable (a write inside the body makes the loop carry the source too:
# `rebind`). The record holds on after the loop only where the body left the variable the
# same view of the source's final value; a body that rebinds it after writing through it
# is refused (the next iteration could not tell which tile its writes go to).
def views_into_loop(ctx, carried, inits, args):
    """Give the block arguments `args` (for `carried` names, entering with `inits`) the view
    records of the values they start from."""
    views = ctx.__dict__.get("_tile_views", {})
    where = dict(zip(carried, args))
    entry = dict(zip(carried, inits))
    entries = ctx.__dict__.setdefault("_tile_loop_entry", {})
    for init, arg in zip(inits, args):
        if isinstance(init, Value) and isinstance(init.type, TileType):
            entries[arg.id] = init  # (refresh_views: views taken before the loop)
        record = views.get(init.id) if isinstance(init, Value) else None
        if record is None:
            continue
        src_name, source = record.name, record.source
        if src_name in where:
            views[arg.id] = record._replace(source=where[src_name]) if entry[src_name] is source \
                else ViewRecord(None, None, None, None)  # (the source changed since: writes are refused)
        else:
            views[arg.id] = record


def views_out_of_loop(ctx, carried, args, yielded, results, what="a loop"):
    """Give the loop's `results` the records of views the body kept as they were; check that
    a view written through in the body stayed that view."""
    views = ctx.__dict__.get("_tile_views", {})
    written = ctx.__dict__.get("_tile_views_written", set())
    at_end = dict(zip(carried, yielded))
    after = dict(zip(carried, results))
    for name, arg, y, r in zip(carried, args, yielded, results):
        record = views.get(arg.id)
        if record is None or record[2] is None:
            if record is not None:
                views[r.id] = record
            continue
        src_name, put = record.name, record.put
        kept = views.get(y.id)
        same = kept is not None and kept[2] is put and kept[0] == src_name and \
            (src_name not in at_end or kept[1] is at_end[src_name])
        if same:
            views[r.id] = record._replace(source=after.get(src_name, kept[1]))
            continue
        if put in written:
            ctx.error(f"the tile view '{name}' is written through and then given another value inside {what}; "
                      "weft cannot tell which tile later writes through it reach. Use separate variables",
                      kind=ValueError)
        views[r.id] = ViewRecord(None, None, None, None)  # (a view or not, depending on the trip count: refused)


# The strides (in elements) a view would have in Warp, where they are not the dense
# row-major ones: Warp's tile_reshape reinterprets the storage, so it refuses a view whose
# elements are not laid out densely (a stepped or partial slice, a broadcast).
def dense_strides(shape) -> tuple:
    out, n = [], 1
    for d in reversed(shape):
        out.append(n)
        n *= d
    return tuple(reversed(out))


def is_dense(shape, strides) -> bool:
    """Whether `strides` lay `shape` out densely, row-major (a dimension of size 1 has no say)."""
    return all(n == 1 or s == d for n, s, d in zip(shape, strides, dense_strides(shape)))


def strides_of(ctx, value: Value) -> tuple:
    return ctx.__dict__.get("_tile_strides", {}).get(value.id) or dense_strides(value.type.shape)


def set_strides(ctx, value: Value, strides) -> Value:
    strides = tuple(strides)
    if not is_dense(value.type.shape, strides):
        ctx.__dict__.setdefault("_tile_strides", {})[value.id] = strides
    return value


def views_after_branches(ctx, names, scopes, merged):
    """An `if` merged `names` (their values in each branch's `scopes`) into `merged`: a
    name that is the same view of the same source in both branches stays that view of the
    merged source; one that is a view on one path only is refused for writes."""
    views = ctx.__dict__.get("_tile_views", {})
    for name in names:
        result = merged.get(name)
        if not isinstance(result, Value):
            continue
        records = [views.get(scope[name].id) if isinstance(scope.get(name), Value) else None for scope in scopes]
        if all(r is None for r in records):
            continue
        first = records[0]
        same = all(r is not None and r[2] is not None and r[2] is first[2] and r[0] == first[0] and r[0] is not None
                   and scope.get(r[0]) is r[1] for r, scope in zip(records, scopes))
        views[result.id] = first._replace(source=merged.get(first.name)) if same \
            else ViewRecord(None, None, None, None)
