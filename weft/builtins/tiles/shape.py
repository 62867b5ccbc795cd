"""Tiles rearranged: `tile_transpose`, `tile_broadcast`, `tile_reshape`, `tile_squeeze`,
`tile_view`, `tile_assign`, `tile_diag_add`.

Each result element reads one element of the source (`tile_get` in a `tile_map` over the
result), so the gradient flows back element by element into the source's adjoint. Warp's
views (and its transpose) alias their source; in weft they are values that remember their
source, so that a write through one reaches it (core.py, `mark_view`).
"""

from __future__ import annotations

import numpy as np

from ...ir.core import Block, Value
from ...types import TileType, int32
from .. import arith
from ..registry import builtin
from .args import offsets_arg, shape_arg, shared, tile_arg
from .core import TILE_GET, is_dense, map_tiles, mark_view, ravel, set_strides, strides_of, unravel


def gather(b, src: Value, shape, index_of) -> Value:
    """A tile of `shape` whose element at `coords` is `src[index_of(coords)]`."""
    def body(coords, elems, states):
        return [b.call(TILE_GET, [src, *index_of(coords)])], [], []
    (t,) = map_tiles(b, shape, [], body)
    return t


def transpose(b, a: Value) -> Value:
    m, n = a.type.shape
    return gather(b, a, (n, m), lambda c: [c[1], c[0]])


@builtin("tile_transpose")
def tile_transpose(ctx, args, kwargs):
    """tile_transpose(a): a 2D tile's transpose."""
    a = tile_arg(ctx, args[0] if args else kwargs.get("a"), "tile_transpose's tile")
    if a.type.ndim != 2:
        ctx.error(f"tile_transpose needs a 2D tile, got shape {a.type.shape}", kind=ValueError)
    b = ctx.b

    def read(source):  # (Warp's transpose is a view of shared memory, its strides swapped)
        return set_strides(ctx, shared(ctx, transpose(b, source), "shared"), reversed(strides_of(ctx, source)))
    if not any(v is a for v in ctx.scope.values()):
        return read(a)  # a temporary's transpose: nothing else can see a write through it
    return mark_view(ctx, read(a), a, lambda source, new: transpose(b, new), get=read)


@builtin("tile_broadcast")
def tile_broadcast(ctx, args, kwargs):
    """tile_broadcast(a, shape): `a` repeated along its dimensions of size 1 (numpy's rules)."""
    a = tile_arg(ctx, args[0] if args else kwargs.get("a"), "tile_broadcast's tile")
    shape = shape_arg(ctx, args[1] if len(args) > 1 else kwargs.get("shape"))
    src = a.type.shape
    if len(shape) > 4:
        ctx.error(f"tile_broadcast() output must have between one and four dimensions, got {len(shape)}",
                  kind=ValueError)
    if len(src) > len(shape) or any(s not in (1, d) for s, d in zip(reversed(src), reversed(shape))):
        ctx.error(f"tile_broadcast: a tile of shape {src} cannot be broadcast to {shape}", kind=ValueError)
    lead = len(shape) - len(src)
    b = ctx.b
    zero = b.const(0, int32)

    def read(source):
        return gather(b, source, shape, lambda c: [zero if s == 1 else c[lead + k] for k, s in enumerate(src)])
    def get(source):
        return set_strides(ctx, read(source),
                           [0] * lead + [0 if s == 1 else k for s, k in zip(src, strides_of(ctx, source))])
    return mark_view(ctx, get(a), a, lambda source, new: _put_broadcast(ctx, source, new), read, get)


def _put_broadcast(ctx, source: Value, new: Value) -> Value:
    """`source` after its broadcast view became `new`: the view's elements that share one
    element of `source` (Warp's broadcast has stride 0 there) each add their change to it,
    as Warp's atomic updates of a broadcast tile do (tile_axpy, `+=`, one element set)."""
    from .reduce import loop
    b = ctx.b
    src, shape = source.type.shape, new.type.shape
    lead = len(shape) - len(src)
    # the view's dimensions that map onto one place of the source: added ones and size-1 ones
    shared = [d for d in range(len(shape)) if d < lead or src[d - lead] == 1 and shape[d] != 1]
    extents = tuple(shape[d] for d in shared)
    count = 1
    for n in extents:
        count *= n

    def body(coords, elems, states):
        old = elems[0]

        def step(k, acc):
            where = dict(zip(shared, unravel(b, k, extents)))
            view_coords = [where[d] if d in where else coords[d - lead] for d in range(len(shape))]
            change = arith.binary(ctx, "sub", b.call(TILE_GET, [new, *view_coords]), old)
            return [arith.binary(ctx, "add", acc[0], change)]
        (x,) = loop(ctx, count, [old], step)
        return [x], [], []
    (out,) = map_tiles(b, src, [source], body)
    return out


@builtin("tile_reshape")
def tile_reshape(ctx, args, kwargs):
    """tile_reshape(t, shape): the elements in row-major order, in a new shape (one -1 allowed)."""
    t = tile_arg(ctx, args[0] if args else kwargs.get("t"), "tile_reshape's tile")
    raw = args[1] if len(args) > 1 else kwargs.get("shape")
    parts = list(raw) if isinstance(raw, (tuple, list)) else [raw]
    n = t.type.num_elements
    if parts.count(-1) == 1:
        known = 1
        for p in parts:
            known *= p if p != -1 else 1
        parts[parts.index(-1)] = n // known if known else 0
    shape = shape_arg(ctx, tuple(parts))
    if TileType(t.type.dtype, shape).num_elements != n:
        ctx.error(f"tile_reshape: cannot reshape a tile of shape {t.type.shape} ({n} elements) to {shape}",
                  kind=ValueError)
    strides = strides_of(ctx, t)
    if not is_dense(t.type.shape, strides):
        ctx.error(f"tile_reshape() requires a contiguous tile; a tile view with shape {t.type.shape} and strides "
                  f"{strides} (in elements, as Warp lays it out) cannot be reshaped in place. Copy the view into "
                  "a new tile first, e.g. with wp.tile_assign()", kind=ValueError)
    b = ctx.b
    return mark_view(ctx, _same_elements(b, t, shape), t, lambda src, new: _same_elements(b, new, src.type.shape),
                     get=lambda src: _same_elements(b, src, shape))


@builtin("tile_squeeze")
def tile_squeeze(ctx, args, kwargs):
    """tile_squeeze(t, axis=None): without its dimensions of size 1 (or only those in `axis`)."""
    t = tile_arg(ctx, args[0] if args else kwargs.get("t"), "tile_squeeze's tile")
    axis = args[1] if len(args) > 1 else kwargs.get("axis")
    src = t.type.shape
    nd = len(src)
    if axis is None:
        axes = [k for k, d in enumerate(src) if d == 1]
    else:
        axes = []
        for a in (axis if isinstance(axis, (tuple, list)) else (axis,)):
            if isinstance(a, Value) or not -nd <= a < nd:
                ctx.error(f"tile_squeeze() axis {a} is out of bounds for tile with {nd} dimensions",
                          kind=ValueError)
            if src[a % nd] != 1:
                ctx.error(f"tile_squeeze: axis {a} has size {src[a % nd]}, not 1", kind=ValueError)
            axes.append(a % nd)
    kept = [k for k in range(nd) if k not in axes]
    shape = tuple(src[k] for k in kept) or (1,)
    zero = ctx.b.const(0, int32)

    def index_of(c):
        it = iter(c)
        return [next(it) if k in kept else zero for k in range(nd)] if kept else [zero] * nd
    return mark_view(ctx, gather(ctx.b, t, shape, index_of), t,
                     lambda src, new: _same_elements(ctx.b, new, src.type.shape),
                     get=lambda src: gather(ctx.b, src, shape, index_of))


def _same_elements(b, t: Value, shape) -> Value:
    """`t`'s elements in row-major order, in `shape` (as many elements)."""
    return gather(b, t, shape, lambda c: unravel(b, ravel(b, c, shape), t.type.shape))


def _put_region(ctx, src: Value, new: Value, entries) -> Value:
    """`src` with `new` written at the region `entries` describes: per dimension of `src`,
    ("index", v): the view dropped it at v; ("range", start): the view covers
    start .. start + its extent."""
    b = ctx.b
    bool_t = _bool()

    def body(coords, elems, states):
        inside, local = b.const(True, bool_t), []
        dims = iter(new.type.shape)
        for c, (kind, v) in zip(coords, entries):
            if kind == "index":
                inside = b.select(inside, b.cmp("eq", c, v), b.const(False, bool_t))
                continue
            j = b.sub(c, v)
            here = b.select(b.cmp("ge", j, b.const(0, int32)), b.cmp("lt", j, b.const(next(dims), int32)),
                            b.const(False, bool_t))
            inside = b.select(inside, here, b.const(False, bool_t))
            local.append(j)
        then_block, else_block = Block(), Block()
        with b.at(then_block):
            b.op("yield", [b.call(TILE_GET, [new, *(local or [b.const(0, int32)])])])
        with b.at(else_block):
            b.op("yield", [elems[0]])
        return [b.op("if", [inside], [src.type.dtype], {}, [then_block, else_block]).result], [], []
    (out,) = map_tiles(b, src.type.shape, [src], body)
    return out


@builtin("tile_view")
def tile_view(ctx, args, kwargs):
    """tile_view(t, offset, shape=None): the sub-tile at `offset` (leading dimensions fixed,
    the rest whole), or of `shape` at `offset`; slices in `offset` select as t[...] does."""
    t = tile_arg(ctx, args[0] if args else kwargs.get("t"), "tile_view's tile")
    offset = args[1] if len(args) > 1 else kwargs.get("offset")
    shape = args[2] if len(args) > 2 else kwargs.get("shape")
    src = t.type.shape
    offs = tuple(offset) if isinstance(offset, (tuple, list)) else (offset,)
    if len(offs) > len(src):
        ctx.error(f"tile_view: {len(offs)} offsets for a tile of {len(src)} dimension(s)", kind=ValueError)
    if any(isinstance(o, slice) for o in offs):
        if shape is not None:
            ctx.error("tile_view does not take 'shape' together with a slice in 'offset' (the slice gives the "
                      "shape)", kind=ValueError)
        from .elements import get_element
        return get_element(ctx, t, offs)
    for d, o in enumerate(offs):
        if not isinstance(o, Value) and (isinstance(o, bool) or not isinstance(o, (int, np.integer))):
            ctx.error(f"tile_view offsets must be integers or slices, got {o!r}", kind=ValueError)
        extent = shape_arg(ctx, shape)[d] if shape is not None and d < len(shape_arg(ctx, shape)) else 1
        if not isinstance(o, Value) and not 0 <= o <= src[d] - extent:
            ctx.error(f"tile_view offset {o} is out of bounds for dimension {d} of a tile of shape {src}",
                      kind=ValueError)
    offs = offsets_arg(ctx, offs, len(offs))
    b = ctx.b
    if shape is None:
        shape = src[len(offs):]
        fixed = offs
        entries = [("index", o) for o in fixed] + [("range", b.const(0, int32))] * len(shape)
        def read(source):
            view = gather(b, source, shape or (1,), lambda c: [*fixed, *c] if shape else fixed)
            return set_strides(ctx, view, strides_of(ctx, source)[len(fixed):] or (1,))
        return mark_view(ctx, read(t), t, lambda src_value, new: _put_region(ctx, src_value, new, entries),
                         get=read)
    shape = shape_arg(ctx, shape)
    if len(shape) != len(src):
        ctx.error(f"tile_view: the shape {shape} must have {len(src)} dimension(s)", kind=ValueError)
    offs = offs + [b.const(0, int32)] * (len(src) - len(offs))
    def read(source):
        return set_strides(ctx, gather(b, source, shape, lambda c: [b.add(o, x) for o, x in zip(offs, c)]),
                           strides_of(ctx, source))
    return mark_view(ctx, read(t), t,
                     lambda src_value, new: _put_region(ctx, src_value, new, [("range", o) for o in offs]),
                     get=read)


@builtin("tile_assign", inout=(0,))
def tile_assign(ctx, args, kwargs):
    """tile_assign(dst, src, offset=(0, ...)): src written into dst at offset (dst updated)."""
    dst = tile_arg(ctx, args[0], "tile_assign's dst")
    src = tile_arg(ctx, args[1] if len(args) > 1 else kwargs.get("src"), "tile_assign's src")
    offset = args[2] if len(args) > 2 else kwargs.get("offset")
    d, s = dst.type, src.type
    if d.ndim != s.ndim:
        ctx.error(f"tile_assign: dst has {d.ndim} dimension(s), src {s.ndim}", kind=ValueError)
    offs = offsets_arg(ctx, offset, d.ndim)
    b = ctx.b
    convert = (lambda x: x) if s.dtype is d.dtype else (lambda x: arith.construct(ctx, d.dtype, [x], {}))

    def body(coords, elems, states):
        local = [b.sub(c, o) for c, o in zip(coords, offs)]
        inside = None
        for x, n in zip(local, s.shape):
            here = b.select(b.cmp("ge", x, b.const(0, int32)), b.cmp("lt", x, b.const(n, int32)),
                            b.const(False, _bool()))
            inside = here if inside is None else b.select(inside, here, b.const(False, _bool()))
        then_block, else_block = Block(), Block()
        with b.at(then_block):
            b.op("yield", [convert(b.call(TILE_GET, [src, *local]))])
        with b.at(else_block):
            b.op("yield", [elems[0]])
        (x,) = b.op("if", [inside], [d.dtype], {}, [then_block, else_block]).results
        return [x], [], []
    (new,) = map_tiles(b, d.shape, [dst], body)
    return [new], None


def _bool():
    from ...types import bool_
    return bool_


@builtin("tile_diag_add")
def tile_diag_add(ctx, args, kwargs):
    """tile_diag_add(a, d): a with d added to its diagonal."""
    a = tile_arg(ctx, args[0], "tile_diag_add's a")
    d = tile_arg(ctx, args[1], "tile_diag_add's d")
    b = ctx.b

    def body(coords, elems, states):
        i, j = coords
        on_diag = b.cmp("eq", i, j)
        then_block, else_block = Block(), Block()
        with b.at(then_block):
            b.op("yield", [arith.binary(ctx, "add", elems[0], b.call(TILE_GET, [d, i]))])
        with b.at(else_block):
            b.op("yield", [elems[0]])
        (x,) = b.op("if", [on_diag], [a.type.dtype], {}, [then_block, else_block]).results
        return [x], [], []
    (t,) = map_tiles(b, a.type.shape, [a], body)
    return t
