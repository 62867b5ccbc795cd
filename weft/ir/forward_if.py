"""Forward array elements to the loads that read them back, through `if`s.

    a = mu[p]                      a = mu[p]
    if c:                          v = if c: mu[p] = 0.0; yield 0.0
        mu[p] = 0.0          ->        else: yield a
    b = mu[p]                      b = v

Walking a block in order, the pass knows the value of each element (array, index values)
that was loaded or stored since its array was last written in another way. A load of a
known element becomes that value. An `if` that stores known elements yields their values
at the end of each branch, and an element's value after it is the `if`'s result. A loop
body starts knowing nothing, and a loop forgets the arrays it writes. Elements are the same
only with the same index values; a store forgets the other elements of its array (another
index may be the same number). It is exact for one thread; another thread writing those
elements would race in the original too.

Why: the reverse pass replays loads from one state of an array's memory, as the launch
found it or as it left it. A thread that reads an element, may overwrite it and reads it
again needs both (PhysDreamer's material models: `von_mises_return_mapping_with_damage`
zeroes `model.mu[p]` under a condition, reading it before and after). After the rewrite
only the first read is a read of memory. The forward kernel gains too: fewer loads.
"""

from __future__ import annotations

from ..types import ArrayType, StructType
from .core import Block, Function, Op, Value, rename_uses, walk

# ops that read an array value without writing its memory
_PURE = frozenset({"load", "array_shape", "array_ptr", "view", "slice", "component", "extract"})


def forward_stores_through_ifs(fn: Function) -> Function:
    """Forward `fn`'s elements; the arrays of the loads it removes are kept in
    `fn.forwarded_reads` (the kernel still reads them, as Warp's Tape checks see it)."""
    forward = _Forward()
    forward.block(fn.body, {})
    fn.forwarded_reads = getattr(fn, "forwarded_reads", []) + forward.removed
    return fn


def _root(arr: Value) -> tuple:
    """The memory an array value reaches: the value it views into, through the fields of
    structs (`model.mu` read twice is one array) and views."""
    path = []
    while isinstance(arr.owner, Op):
        owner = arr.owner
        if owner.name in ("view", "slice", "component"):
            path = []  # (views of one array are that array's memory)
            arr = owner.operands[0]
        elif owner.name == "extract" and isinstance(owner.operands[0].type, StructType):
            path.append(owner.attrs["index"])
            arr = owner.operands[0]
        else:
            break
    return arr.id, tuple(reversed(path))


def _element(op: Op) -> tuple | None:
    """(array, index ids) of a plain load or whole-element store of a plain array value
    (not a view); None for other ops."""
    if op.name not in ("load", "store") or "part" in op.attrs:
        return None
    arr = op.operands[0]
    if isinstance(arr.owner, Op) and arr.owner.name in ("view", "slice", "component"):
        return None
    end = len(op.operands) - (op.name == "store")
    return _root(arr), tuple(v.id for v in op.operands[1:end])


def _written(op: Op) -> set:
    """The roots of the arrays `op` (or an op inside it) may write."""
    roots = set()
    for inner in [op, *(o for region in op.regions for o in walk(region))]:
        if inner.name in _PURE:
            continue
        roots.update(_root(v) for v in inner.operands if isinstance(v.type, ArrayType))
    return roots


def _forget(known: dict, roots) -> None:
    for element in [e for e in known if e[0] in roots]:
        del known[element]


class _Forward:
    def __init__(self):
        self.sample: dict = {}  # element -> a load or store of it (its array and index values)
        self.removed: list[Value] = []  # the arrays of the loads removed

    def block(self, block: Block, known: dict) -> dict:
        """Forward the elements `known` (element -> its value) through `block`; returns
        what is known at its end."""
        mapping: dict = {}
        kept = []
        for op in block.ops:
            rename_uses(op, mapping)
            element = _element(op)
            if element is not None:
                self.sample.setdefault(element, op)
            if op.name == "load" and element is not None:
                value = known.get(element)
                if value is not None and value.type is op.result.type:
                    mapping[op.result.id] = value
                    self.removed.append(op.operands[0])
                    continue  # (the load is gone: its uses read the value)
                known[element] = op.result
            elif op.name == "store" and element is not None:
                _forget(known, {element[0]})
                if op.operands[-1].type is op.operands[0].type.dtype:
                    known[element] = op.operands[-1]
            elif op.name == "if":
                kept.extend(self.branches(op, known))
            elif op.regions:
                for region in op.regions:
                    self.block(region, {})
                _forget(known, _written(op))
            else:
                _forget(known, _written(op))
            kept.append(op)
        block.ops = kept
        return known

    def branches(self, op: Op, known: dict) -> list:
        """Forward through `if` op `op`: its branches start from `known`; the elements of
        the arrays it writes that every branch ends knowing (or leaves alone: then they are
        read before it) become its results. Returns the loads to put before it."""
        ends = [self.block(region, dict(known)) for region in op.regions]
        writes = [set().union(*(_written(inner) for inner in region.ops)) for region in op.regions]
        written = set().union(*writes)
        before = []
        elements = {e for end in ends for e in end if e[0] in written} | {e for e in known if e[0] in written}
        for element in sorted(elements):  # (in a fixed order: the results are part of the code's key)
            values = [end.get(element) for end in ends]
            if any(v is None and element[0] in w for v, w in zip(values, writes)):
                known.pop(element, None)  # (a branch wrote the array elsewhere: unknown there)
                continue
            if any(v is None for v in values):  # branches that leave the array alone: read it before
                load = self._load_before(op, element)
                if load is None:
                    known.pop(element, None)
                    continue
                before.extend(load)
                values = [load[-1].result if v is None else v for v in values]
            if any(v.type is not values[0].type for v in values):
                known.pop(element, None)
            elif all(v is values[0] for v in values):
                known[element] = values[0]
            else:
                result = Value(values[0].type, op, "")
                op.results.append(result)
                for region, value in zip(op.regions, values):
                    region.ops[-1].operands.append(value)
                known[element] = result
        return before

    def _load_before(self, branch: Op, element) -> list | None:
        """Ops that load `element` before `if` op `branch`, reading its array again from a
        parameter (through struct fields), or None where that cannot be done there."""
        sample = self.sample[element]
        inside = {r.id for region in branch.regions for op in walk(region) for r in op.results}
        end = len(sample.operands) - (sample.name == "store")
        indices = sample.operands[1:end]
        if any(i.id in inside for i in indices):
            return None
        ops = []
        arr = _from_parameter(sample.operands[0], ops)
        if arr is None:
            return None
        ops.append(Op("load", [arr, *indices], [arr.type.dtype], loc=sample.loc))
        return ops


def _from_parameter(arr: Value, ops: list) -> Value | None:
    """`arr` made again from the parameter (or loop value) it is read from through struct
    fields, the `extract` ops appended to `ops`; None for an array made another way. (The
    parameter is visible wherever the element is accessed; the sample's own fields may
    have been read in another branch.)"""
    owner = arr.owner
    if not isinstance(owner, Op):
        return arr
    if owner.name != "extract" or not isinstance(owner.operands[0].type, StructType):
        return None
    base = _from_parameter(owner.operands[0], ops)
    if base is None:
        return None
    field = Op("extract", [base], [arr.type], dict(owner.attrs), loc=owner.loc)
    ops.append(field)
    return field.result
