"""What the reverse pass knows about array values: where an array comes from (a parameter,
a field of a struct parameter, a view of one, a field of a struct built in the kernel),
keys that identify the same memory or index across ops, which arrays a kernel reads and
writes, and which ones each thread owns alone."""

from __future__ import annotations

from ..ir.core import Function, Op, Value, walk
from ..types import ArrayType, StructType


def private_arrays(fn: Function) -> set:
    """Array parameters that every access indexes by exactly the thread index: each thread
    owns its elements, so their adjoints can be accumulated without atomics."""
    params = {p.id: p for p in fn.params if isinstance(p.type, ArrayType)}
    private = {k for k, p in params.items() if not p.type.indexed}  # indices may repeat
    for op in walk(fn.body):
        if op.name in ("view", "slice"):
            private.discard(op.operands[0].id)
        if op.name not in ("load", "store", "atomic") or op.operands[0].id not in params:
            continue
        arr = op.operands[0]
        indices = op.operands[1:1 + arr.type.ndim]
        if not indexed_by_thread(indices):
            private.discard(arr.id)
    return private


def array_root(arr: Value) -> Value:
    """The array an array value views into (itself if it is not a view), seen through
    structs built in the kernel (`State(state.x, ...).x` is `state.x`)."""
    while isinstance(arr.owner, Op):
        if arr.owner.name in ("view", "slice"):
            arr = arr.owner.operands[0]
            continue
        source = field_source(arr)
        if source is None:
            break
        arr = source
    return arr


def field_source(v: Value) -> Value | None:
    """For `v`, a field extracted from a struct built in the kernel (by `construct` and
    `insert`), the value that field was built from; else None."""
    if not (isinstance(v.owner, Op) and v.owner.name == "extract"):
        return None
    agg, k = v.owner.operands[0], v.owner.attrs["index"]
    while isinstance(agg.owner, Op) and isinstance(agg.type, StructType):
        if agg.owner.name == "construct":
            return agg.owner.operands[k]
        if agg.owner.name != "insert":
            return None
        if agg.owner.attrs["index"] == k:
            return agg.owner.operands[1]
        agg = agg.owner.operands[0]
    return None


def array_origin(arr: Value) -> tuple[Value, tuple]:
    """Where array value `arr` comes from: the value it views into (a parameter, usually)
    or, for an array held in a struct, the struct value the field path leads from (through
    nested structs), and that path of field indices (empty for a plain array)."""
    arr = array_root(arr)
    path = []
    while isinstance(arr.owner, Op) and arr.owner.name == "extract" and \
            isinstance(arr.owner.operands[0].type, StructType):
        path.append(arr.owner.attrs["index"])
        arr = arr.owner.operands[0]
        while (source := field_source(arr)) is not None:  # a struct built from another one's field
            arr = source
    return arr, tuple(reversed(path))


def array_key(arr: Value) -> tuple:
    """An identity of the memory an array value reaches: (origin value id, field path)."""
    origin, path = array_origin(arr)
    return origin.id, path


def value_key(v: Value):
    """What identifies an array or index value across separate ops that compute the same
    thing: a constant by its value, an array by where it comes from (field path, views with
    their indices); anything else by the value itself."""
    owner = v.owner
    if isinstance(owner, Op):
        if owner.name == "const":
            return ("const", repr(v.type), owner.attrs["value"])
        if owner.name == "view":
            return ("view", value_key(owner.operands[0]), tuple(value_key(i) for i in owner.operands[1:]))
        if owner.name == "extract" and isinstance(v.type, ArrayType):
            return ("field", array_key(v))
    return v.id


def array_final_reads(fn: Function) -> set:
    """Ids of the array parameters whose contents after the launch the adjoint reads: the
    targets of float atomic_min/max (the final element tells which value won)."""
    from .reverse import active_types
    return {array_root(op.operands[0]).id for op in walk(fn.body)
            if op.name == "atomic" and op.attrs["op"] in ("min", "max") and active_types(op.result.type)}


def arrays_written(blocks) -> set:
    return {array_key(op.operands[0]) for blk in blocks for op in walk(blk)
            if op.name in ("store", "atomic")}


def array_effects(fn: Function) -> tuple[set, set]:
    """(keys of the arrays read, keys of those written) by the kernel: see `array_key`."""
    reads = {array_key(op.operands[0]) for op in walk(fn.body) if op.name == "load"}
    return reads, arrays_written([fn.body])


def indexed_by_thread(indices) -> bool:
    owners = [i.owner for i in indices]
    if not all(isinstance(o, Op) and o.name == "tid" for o in owners):
        return False
    if len(owners) == 1:
        return owners[0].attrs["dim"] == -1 or owners[0].attrs["of"] == 1
    return all(o.attrs["of"] == len(owners) and o.attrs["dim"] == d for d, o in enumerate(owners))
