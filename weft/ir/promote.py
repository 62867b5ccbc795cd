"""Promote array elements that a loop updates in place to loop-carried values.

    for j in range(n):                     v = y[i]
        y[i] = y[i] + a[i, j] * x[j]  ->   for j in range(n): v = v + a[i, j] * x[j]
                                           y[i] = v

The rewrite applies when, inside the loop, an array (defined outside it) is only loaded and
stored directly in the loop body (not in nested branches), always at the same index values
defined outside the loop, and never updated atomically. It is exact for one thread; other
threads writing that element during the loop would race in the original too. Where the loop
stores parts of the element only (`v[i].x = ...`), so does the store after it.

Why: the reverse pass cannot replay a load that reads what an earlier iteration stored,
but it reverses loop-carried values exactly (AD stack). The forward kernel gains too: the
element lives in a register instead of memory. (Nested loops are promoted inside out, so
an update in an inner loop reaches the outer one as a load before and a store after.)
Caveat: the element is read and written once even when the loop runs no iteration.
"""

from __future__ import annotations

from .core import Block, Function, Op, Value, rename_uses, walk


def promote_loop_elements(fn: Function) -> Function:
    _promote_in(fn.body)
    return fn


def _promote_in(block: Block):
    k = 0
    while k < len(block.ops):
        op = block.ops[k]
        for region in op.regions:
            _promote_in(region)
        if op.name in ("for", "while"):
            while (target := _candidate(op)) is not None:
                k += _promote(block, k, op, *target)
        k += 1


def _defined_inside(op: Op) -> set:
    ids = set()
    for region in op.regions:
        ids.update(a.id for a in region.args)
        for inner in walk(region):
            ids.update(r.id for r in inner.results)
            for r in inner.regions:
                ids.update(a.id for a in r.args)
    return ids


def _candidate(loop: Op):
    """(array, indices) of an element the loop can carry instead, or None."""
    body = loop.regions[-1]
    inside = _defined_inside(loop)
    top_level = {id(op) for op in body.ops}
    for store in body.ops:
        if store.name != "store" or store.operands[0].id in inside:
            continue
        arr = store.operands[0]
        indices = store.operands[1:-1]
        if any(i.id in inside for i in indices):
            continue
        if all(_fits(op, arr, indices, top_level) for region in loop.regions for op in walk(region)):
            return arr, indices
    return None


def _fits(op: Op, arr: Value, indices, top_level) -> bool:
    """Whether `op` leaves element arr[indices] promotable."""
    if not any(v is arr for v in op.operands) or op.name == "array_shape":
        return True
    if op.name not in ("load", "store") or id(op) not in top_level or op.operands[0] is not arr:
        return False
    end = len(op.operands) - (op.name == "store")
    return [v.id for v in op.operands[1:end]] == [v.id for v in indices]


def _promote(block: Block, k: int, loop: Op, arr: Value, indices) -> int:
    """Rewrite loop `block.ops[k]` to carry arr[indices]; returns the ops inserted before it."""
    t = arr.type.dtype
    body = loop.regions[-1]
    accesses = [op for op in body.ops if op.name in ("load", "store") and op.operands[0] is arr]
    initial = Op("load", [arr, *indices], [t], loc=accesses[0].loc)
    block.ops.insert(k, initial)
    loop.operands.append(initial.result)
    carried = Value(t, body, arr.hint)
    body.args.append(carried)
    if loop.name == "while":
        loop.regions[0].args.append(Value(t, loop.regions[0], arr.hint))
    current, mapping, kept = carried, {}, []
    for op in body.ops:
        rename_uses(op, mapping)
        if op in accesses and op.name == "load":
            mapping[op.result.id] = current
        elif op in accesses:
            current = op.operands[-1]
        else:
            kept.append(op)
    body.ops = kept
    body.ops[-1].operands.append(current)
    final = Value(t, loop, arr.hint)
    loop.results.append(final)
    # stores of parts of the element (lang/array_parts.py) stay stores of those parts: other
    # threads may write the rest of it
    stores = [op for op in accesses if op.name == "store"]
    parts = [] if any("part" not in op.attrs for op in stores) else \
        list(dict.fromkeys(op.attrs["part"] for op in stores))
    for n, part in enumerate(parts or [None]):
        block.ops.insert(k + 2 + n, Op("store", [arr, *indices, final], attrs={"part": part} if part else {},
                                       loc=accesses[-1].loc))
    return 1
