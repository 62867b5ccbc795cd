"""Drop the loop-carried slots a loop passes through unchanged.

The frontend carries through a loop every name the body might rebind, which includes
names only passed to calls (`range(n)`, `float(i)`: a call may update its first argument
in place, as the random-number builtins do). A slot whose body yields its own argument
back holds the initial value in every iteration and after the loop: its argument and its
result are that value. Replacing them by it leaves fewer phis and lets analyses see a
loop-invariant value as one (the bounds of an inner loop, proven in bounds by the outer
loop's guard: codegen/control_ops.py).
"""

from __future__ import annotations

from .core import Block, Function, Op, Value


def drop_invariant_loop_slots(fn: Function) -> Function:
    """Remove pass-through slots of `for` and `while` loops (inner loops first, so that a
    slot an inner loop passes through makes the outer one's a pass-through too)."""
    replaced: dict[int, Value] = {}
    _visit(fn.body, replaced)
    if replaced:
        _rename(fn.body, replaced)
    return fn


def _resolve(v: Value, replaced: dict) -> Value:
    while v.id in replaced:
        v = replaced[v.id]
    return v


def _visit(block: Block, replaced: dict):
    for op in block.ops:
        for region in op.regions:
            _visit(region, replaced)
        if op.name == "for":
            _drop_for(op, replaced)
        elif op.name == "while":
            _drop_while(op, replaced)


def _drop_for(op: Op, replaced: dict):
    body = op.regions[0]
    term = body.ops[-1]
    inits, args = op.operands[3:], body.args[1:]
    keep = [_resolve(y, replaced) is not a for y, a in zip(term.operands, args)]
    if all(keep):
        return
    for init, arg, res, k in zip(inits, args, op.results, keep):
        if not k:
            replaced[arg.id] = replaced[res.id] = init
    op.operands = op.operands[:3] + [v for v, k in zip(inits, keep) if k]
    body.args = body.args[:1] + [a for a, k in zip(args, keep) if k]
    term.operands = [v for v, k in zip(term.operands, keep) if k]
    op.results = [r for r, k in zip(op.results, keep) if k]


def _drop_while(op: Op, replaced: dict):
    cond, body = op.regions
    term = body.ops[-1]
    keep = [_resolve(y, replaced) is not a for y, a in zip(term.operands, body.args)]
    if all(keep):
        return
    for init, c_arg, b_arg, res, k in zip(op.operands, cond.args, body.args, op.results, keep):
        if not k:
            replaced[c_arg.id] = replaced[b_arg.id] = replaced[res.id] = init
    op.operands = [v for v, k in zip(op.operands, keep) if k]
    cond.args = [a for a, k in zip(cond.args, keep) if k]
    body.args = [a for a, k in zip(body.args, keep) if k]
    term.operands = [v for v, k in zip(term.operands, keep) if k]
    op.results = [r for r, k in zip(op.results, keep) if k]


def _rename(block: Block, replaced: dict):
    for op in block.ops:
        op.operands = [_resolve(v, replaced) for v in op.operands]
        for region in op.regions:
            _rename(region, replaced)
