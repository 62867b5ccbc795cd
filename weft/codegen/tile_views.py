"""Tiles read in place: a `tile_load` whose only use is an operand of a tile product.

A loaded tile is a value: `tile_load` copies the elements into a buffer of the tile's own,
so a later write to the array is not seen through it. When the copy's only reader is an
operand of a `tile_matmul` that follows it in the same block, with no op in between that
may write memory, the product may as well read the array itself: it sees the elements the
copy would have held. That saves the copy, and for a tall, narrow tile of a wide array
(the 64 x 8 tile of A in Warp's example_tile_matmul, whose rows are 4096 bytes apart and
so all fall in one set of the L1 cache) it is the copy's cache misses that cost most of
the time; the product's register blocks touch a few rows at a time instead.

Only the fast path of `tile_load` (the whole tile inside the array: a `tile_map` of
unchecked loads at `offset + coordinate`) becomes such a view, and a right operand only
where the array's rows are contiguous (the kernel's specialisation says so: the
micro-kernel reads B's rows as vectors). The checked path (a tile across the array's edge,
padded with zeros) stays a packed copy; the `if` that picks between the two then carries
the tile's row and column strides (in bytes) next to its pointer, and the product reads
either through them.

The same holds for a 1-D tile of a contiguous array that a `tile_map` (elementwise
arithmetic, `tile_sum`, a store) reads and that nothing writes in between, the map
included: its elements lie in the array as in the tile's own packed buffer, so the map reads
them there (`tile_sum(tile_load(x, ...))` streams the array once instead of copying it
first).

`view_loads(fn)` finds the candidates; the lowering (tile_ops.op_tile_map, control_ops'
`if`, builtins/tiles/linalg.py) reads the strides from `cg.tile_strides`.
"""

from __future__ import annotations

from ..ir.core import Block, Op, Value
from ..ir.ops import SPECS
from ..types import ArrayType, TileType

#: tile products whose operands may be views
PRODUCTS = ("tile_matmul", "tile_matmul_acc")
#: the "side" of a 1-D tile that a `tile_map` reads: a view only of a contiguous array, whose
#: elements then lie as the tile's packed buffer would hold them (any map reads it as one)
PACKED = 2


def view_loads(fn) -> dict[int, tuple[Op, Value, list[Value], int]]:
    """{id of a tile_map op: (its load op, the array, the offsets, 0 for the product's left
    operand, 1 for its right one, PACKED for a 1-D tile a map reads)} for each in-bounds
    tile load that may be read in place (see the module docstring)."""
    uses: dict[int, int] = {}
    _count_uses(fn.body, uses)
    found: dict[int, tuple] = {}
    _visit(fn.body, uses, found)
    return found


def _count_uses(block: Block, uses: dict):
    for op in block.ops:
        for v in op.operands:
            uses[v.id] = uses.get(v.id, 0) + 1
        for region in op.regions:
            _count_uses(region, uses)


def _visit(block: Block, uses: dict, found: dict):
    position = {id(op): k for k, op in enumerate(block.ops)}
    for k, op in enumerate(block.ops):
        for region in op.regions:
            _visit(region, uses, found)
        if op.name == "tile_map":  # a map reading a loaded 1-D tile: its elements as they lie in the array
            if _writes(op):  # (it could write the elements it reads next)
                continue
            candidates = [(PACKED, x) for x in op.operands[:op.attrs["n_inputs"]]]
        elif op.name == "call" and getattr(op.attrs.get("fn"), "name", None) in PRODUCTS:
            candidates = list(enumerate(op.operands[:2]))
        else:
            continue
        for side, x in candidates:
            owner = x.owner
            if not (isinstance(owner, Op) and owner.name == "if" and id(owner) in position and uses.get(x.id) == 1):
                continue
            if any(_writes(between) for between in block.ops[position[id(owner)] + 1:k]):
                continue
            then_region = owner.regions[0]
            yielded = then_region.ops[-1].operands[owner.results.index(x)]
            load = _pure_load(yielded, then_region, uses, ndim=1 if side == PACKED else 2)
            if load is not None:
                found[id(yielded.owner)] = (*load, side)


def _writes(op: Op) -> bool:
    """Whether `op` (or an op in its regions) may write memory."""
    if SPECS[op.name].effects or op.name == "call_func":  # (a @func call that was not inlined)
        return True
    if op.name == "call" and (getattr(op.attrs["fn"], "effects", False) or getattr(op.attrs["fn"], "inout", ())):
        return True
    return any(_writes(inner) for region in op.regions for inner in region.ops)


def _pure_load(t: Value, region: Block, uses: dict, ndim: int = 2):
    """(load op, array, offsets) when `t` (float32 or float64: the dtypes of the product's
    micro-kernel) is made in `region` by an `ndim`-D `tile_map` whose body only loads
    array[offset0 + i, offset1 + j] (array[offset + i] in 1-D) unchecked, and the region's
    yield is its only use; else None."""
    m = t.owner
    if not (isinstance(m, Op) and m.name == "tile_map" and uses.get(t.id) == 1 and not m.operands
            and (m.attrs.get("n_inputs"), m.attrs.get("n_out"), m.attrs.get("n_sums")) == (0, 1, 0)
            and isinstance(t.type, TileType) and t.type.ndim == ndim and m in region.ops
            and getattr(t.type.dtype, "kind", None) == "f" and getattr(t.type.dtype, "bits", 0) in (32, 64)):
        return None
    body = m.regions[0]
    if len(body.args) != ndim or not body.ops or body.ops[-1].name != "yield":
        return None
    (x,) = body.ops[-1].operands
    load = x.owner
    if not (isinstance(load, Op) and load.name == "load" and load.attrs.get("in_bounds") and load in body.ops):
        return None
    arr, *idx = load.operands
    if not (isinstance(arr.type, ArrayType) and not arr.type.indexed and arr.type.ndim == ndim
            and arr.type.dtype is t.type.dtype and len(idx) == ndim):
        return None
    offsets = []
    for index, coord in zip(idx, body.args):
        offset = _offset_of(index, coord, body)
        if offset is None:
            return None
        offsets.append(offset)
    allowed = {id(load)} | {id(i.owner) for i in idx} | {id(o.owner) for i in idx for o in i.owner.operands}
    if any(id(op) not in allowed for op in body.ops[:-1]):
        return None
    return load, arr, offsets


def _offset_of(index: Value, coord: Value, body: Block):
    """o when `index` is `cast(o) + cast(coord)` (o defined outside `body`), else None."""
    add = index.owner
    if not (isinstance(add, Op) and add.name == "binary" and add.attrs.get("op") == "add" and add in body.ops):
        return None
    x, y = add.operands
    if not all(isinstance(v.owner, Op) and v.owner.name == "cast" and v.owner in body.ops for v in (x, y)):
        return None
    (o,), (c,) = x.owner.operands, y.owner.operands
    if c is not coord or o.owner is body or (isinstance(o.owner, Op) and o.owner in body.ops):
        return None
    if not (getattr(o.type, "is_int", False) and getattr(c.type, "is_int", False)):
        return None
    return o
