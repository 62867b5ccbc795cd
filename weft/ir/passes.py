"""IR passes. Each is `run(fn) -> fn`: valid IR in, valid IR out.

The pipeline is a literal list (`PIPELINE`); `run_pipeline(fn, dump=True)` prints the IR
after each stage.
"""

from __future__ import annotations

from collections import Counter

from .core import Block, Function, Op, rename_uses
from .forward_if import forward_stores_through_ifs
from .loop_slots import drop_invariant_loop_slots
from .ops import SPECS
from .printer import format_function
from .promote import promote_loop_elements
from .verify import verify


def clone_block(block: Block, mapping: dict) -> Block:
    """A copy of `block` with operands renamed through `mapping` (updated in place)."""
    new = Block([a.type for a in block.args], [a.hint for a in block.args])
    for old_arg, new_arg in zip(block.args, new.args):
        mapping[old_arg.id] = new_arg
    new.ops = [clone_op(op, mapping) for op in block.ops]
    return new


def clone_op(op: Op, mapping: dict) -> Op:
    operands = [mapping.get(v.id, v) for v in op.operands]
    regions = [clone_block(r, mapping) for r in op.regions]
    new = Op(op.name, operands, [r.type for r in op.results], op.attrs, regions, op.loc)
    for old, fresh in zip(op.results, new.results):
        fresh.hint = old.hint
        mapping[old.id] = fresh
    return new


def inline_calls(fn: Function) -> Function:
    """Replace every `call_func` by the callee's body (callees are already call-free)."""
    _inline_block(fn.body)
    return fn


def _inline_block(block: Block):
    out = []
    mapping: dict = {}
    for op in block.ops:
        rename_uses(op, mapping)
        for region in op.regions:
            _inline_block(region)
        if op.name != "call_func" or "body" in op.attrs:  # (a call kept: ir/outline.py)
            out.append(op)
            continue
        instance = op.attrs["func"]
        callee: Function = instance.ir()
        if getattr(instance, "custom_grad", None) or getattr(instance, "custom_replay", None):
            out.append(_func_region(op, callee))  # kept whole: the reverse pass swaps it out
            continue
        inner = dict(zip((p.id for p in callee.params), op.operands))
        body = [clone_op(inner_op, inner) for inner_op in callee.body.ops]
        ret = body[-1]
        out.extend(body[:-1])  # ops keep the callee's locations: errors point into it
        for r, v in zip(op.results, ret.operands):
            mapping[r.id] = v
    block.ops = out


def _func_region(call: Op, callee: Function) -> Op:
    """A `func_region` op in place of `call`: the callee's body with its `return` as `yield`.
    The body reads the call's operands directly (its arguments stay, unused), so that the
    analyses see which array each of its loads and stores reaches."""
    body = clone_block(callee.body, {})
    arguments = {a.id: v for a, v in zip(body.args, call.operands)}
    for op in body.ops:
        rename_uses(op, arguments)
    ret = body.ops[-1]
    body.ops[-1] = Op("yield", ret.operands, (), None, (), ret.loc)
    region = Op("func_region", call.operands, [r.type for r in call.results], {"func": call.attrs["func"]},
                [body], call.loc)
    region.results = call.results
    for r in region.results:
        r.owner = region
    return region


def dead_code(fn: Function) -> Function:
    """Remove ops without effects whose results are unused.

    One backward sweep per block with use counts: removing an op releases its operands, so a
    whole dead chain goes in the same sweep (a fixpoint over a `used` set removed one link per
    pass, which made big unrolled bodies such as 8x8 matrix adjoints quadratic)."""
    uses = Counter()
    _count_uses(fn.body, uses)
    effects: dict = {}  # (op id -> whether it has effects: removing dead ops never changes it)
    while _sweep_block(fn.body, uses, effects):
        pass
    return fn


def _count_uses(block: Block, uses: Counter, step: int = 1):
    for op in block.ops:
        for v in op.operands:
            uses[v.id] += step
        for region in op.regions:
            _count_uses(region, uses, step)


def _release(op: Op, uses: Counter):
    """Take back the uses of a removed op (its operands and those of its regions' ops)."""
    for v in op.operands:
        uses[v.id] -= 1
    for region in op.regions:
        _count_uses(region, uses, -1)


def _has_effects(op: Op, memo: dict) -> bool:
    """Whether `op` has effects (its regions' ops included), remembered in `memo` (an `if`
    nested n deep is asked about by each of the n ops around it)."""
    known = memo.get(id(op))
    if known is not None:
        return known
    if SPECS[op.name].effects or SPECS[op.name].terminator:
        result = True
    elif op.name == "call":
        result = bool(op.attrs["fn"].effects)
    else:
        # (a region's own `yield` only hands back its values: a loop or branch whose results
        # nobody uses, and whose body stores nothing, is dead)
        result = any(_has_effects(inner, memo) for region in op.regions for inner in region.ops
                     if not SPECS[inner.name].terminator)
    memo[id(op)] = result
    return result


def _prune_tile_map_outputs(op: Op, uses: Counter) -> bool:
    """Drop the output tiles of a `tile_map` that nothing uses (and what its body yields for
    them), so that e.g. the old values of a `tile_atomic_add` nobody reads are not computed."""
    n_out = op.attrs["n_out"]
    dead = [k for k in range(n_out) if not uses[op.results[k].id]]
    if not dead:
        return False
    _drop_yielded(op.regions[0].ops[-1], dead, uses)
    op.results = [r for k, r in enumerate(op.results) if k not in dead]
    op.attrs = {**op.attrs, "n_out": n_out - len(dead)}
    return True


def _prune_tile_map_inputs(op: Op, uses: Counter) -> bool:
    """Drop the input tiles of a `tile_map` whose elements its body does not read (a map
    kept for its shape only: an adjoint's zeros), so that what made them may go too."""
    n_in, body = op.attrs["n_inputs"], op.regions[0]
    first = len(op.attrs["shape"])
    dead = [k for k in range(n_in) if not uses[body.args[first + k].id]]
    if not dead:
        return False
    for k in dead:
        uses[op.operands[k].id] -= 1
    op.operands = [v for k, v in enumerate(op.operands) if k not in dead]
    body.args = [a for k, a in enumerate(body.args) if k - first not in dead]
    op.attrs = {**op.attrs, "n_inputs": n_in - len(dead)}
    return True


def _prune_if_results(op: Op, uses: Counter) -> bool:
    """Drop the results of an `if` (kept for its effects) that nothing uses."""
    dead = [k for k, r in enumerate(op.results) if not uses[r.id]]
    if not dead:
        return False
    for region in op.regions:
        _drop_yielded(region.ops[-1], dead, uses)
    op.results = [r for k, r in enumerate(op.results) if k not in dead]
    return True


def _drop_yielded(term: Op, dead: list, uses: Counter):
    for k in dead:
        uses[term.operands[k].id] -= 1
    term.operands = [v for k, v in enumerate(term.operands) if k not in dead]


def _sweep_block(block: Block, uses: Counter, effects: dict) -> bool:
    """Remove dead ops last to first (a value's uses all come after its definition, so its
    count is final when the sweep reaches it); True if anything changed."""
    changed = False
    kept = []
    for op in reversed(block.ops):
        has_effects = _has_effects(op, effects)
        if op.name == "tile_map":
            changed |= _prune_tile_map_outputs(op, uses)
        elif op.name == "if" and has_effects:
            changed |= _prune_if_results(op, uses)
        if not has_effects and not any(uses[r.id] for r in op.results):
            _release(op, uses)
            changed = True
            continue
        for region in op.regions:
            changed |= _sweep_block(region, uses, effects)
        if op.name == "tile_map":
            changed |= _prune_tile_map_inputs(op, uses)
        kept.append(op)
    kept.reverse()
    block.ops = kept
    return changed


PIPELINE = [("inline", inline_calls), ("invariant slots", drop_invariant_loop_slots),
            ("promote", promote_loop_elements), ("forward through ifs", forward_stores_through_ifs),
            ("dce", dead_code)]


def run_pipeline(fn: Function, dump: bool = False, check: bool = True) -> Function:
    """`fn` through PIPELINE. `check`: verify the IR before and after, and after every stage
    too under `config.verify_ir` (each check walks the whole function: a kernel of 40,000
    ops spent 2 s in them)."""
    from .. import config
    if check:
        verify(fn)
    for name, stage in PIPELINE:
        fn = stage(fn)
        if check and config.verify_ir:
            verify(fn)
        if dump:
            print(f"--- after {name} ---\n{format_function(fn)}")
    if check and not config.verify_ir:
        verify(fn)
    return fn
