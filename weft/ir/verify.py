"""The IR verifier.

Invariants checked:
1. every op is a declared kind (`ops.SPECS`) with the declared operand/result/region counts
   and attributes, and passes its own check (types of operands and results);
2. every operand is defined before use, in the same block or an enclosing one (SSA
   dominance for structured control flow), and every value is defined once;
3. every region ends in exactly one terminator, and only there;
4. a function body ends in `return`; a kernel returns nothing, a func its return type.
A failure raises `VerifyError` with the function printed and the failing op marked.
"""

from __future__ import annotations

from .core import Block, Function
from .ops import SPECS, VerifyError


def verify(fn: Function) -> Function:
    """Check the invariants above; return `fn` unchanged so it can sit in a pipeline."""
    try:
        _verify_block(fn.body, set(), is_body=True)
        ret = fn.body.terminator
        if ret is None or ret.name != "return":
            raise VerifyError("function body must end in return")
        got = [v.type for v in ret.operands]
        want = [] if fn.ret_type is None else [fn.ret_type]
        want += [fn.params[k].type for k in getattr(fn, "tile_writeback", ())]  # (lang/frontend.py)
        if got != want:
            raise VerifyError(f"return types {got} do not match {want}")
    except VerifyError as e:
        from .printer import format_function
        failing = getattr(e, "op", None)
        raise VerifyError(f"{e}\n{format_function(fn, mark=failing)}") from None
    return fn


def _verify_block(block: Block, visible: set, is_body: bool = False):
    visible = set(visible)
    for a in block.args:
        _define(a, visible)
    for k, op in enumerate(block.ops):
        try:
            _verify_op(op, visible, last=(k == len(block.ops) - 1))
        except VerifyError as e:
            if not hasattr(e, "op"):
                e.op = op
            raise
        for v in op.results:
            _define(v, visible)
    if block.terminator is None:
        raise VerifyError("block does not end in a terminator")


def _define(v, visible):
    if v.id in visible:
        raise VerifyError(f"value {v} defined twice")
    visible.add(v.id)


def _verify_op(op, visible, last):
    spec = SPECS.get(op.name)
    if spec is None:
        raise VerifyError(f"unknown op '{op.name}'")
    if spec.n_operands is not None and len(op.operands) != spec.n_operands:
        raise VerifyError(f"{op.name} takes {spec.n_operands} operands, has {len(op.operands)}")
    if spec.n_results is not None and len(op.results) != spec.n_results:
        raise VerifyError(f"{op.name} defines {spec.n_results} results, has {len(op.results)}")
    if len(op.regions) != len(spec.regions):
        raise VerifyError(f"{op.name} has {len(spec.regions)} regions, got {len(op.regions)}")
    for attr in spec.attrs:
        if attr not in op.attrs:
            raise VerifyError(f"{op.name} needs attribute '{attr}'")
    if spec.terminator and not last:
        raise VerifyError(f"terminator {op.name} in the middle of a block")
    for v in op.operands:
        if v.id not in visible:
            raise VerifyError(f"operand {v} used before its definition")
    for region in op.regions:
        _verify_block(region, visible)
    if spec.check:
        spec.check(op)
