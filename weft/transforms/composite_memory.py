"""Vectors and matrices indexed at run time, kept in the thread's memory.

In the IR (and in LLVM, codegen/composite_ops.py) a vector or matrix is a list of scalar
values. A component picked by a run-time index (`acc[d]`, `d` a loop counter) is then a
select over every component, and an update a select per component: a length-64
accumulator updated in a loop costs 128 selects per access, where C (and so Warp) indexes
a local array. This pass gives such a variable a buffer (a `local_array` of one element),
as a C compiler gives it a stack slot: a run-time index reads or writes one component of
the buffer (a `component` view, which checks the index as `extract_dyn` did), and every
other use loads the whole value from there.

Which values share a buffer is SSA destruction with copy coalescing. The values an
update (`insert_dyn`: its result replaces its operand) or a join (a loop's carried slot,
an `if`'s result, an inlined func's argument and result) relates are candidates for one
buffer, and two of them are put in one *web* unless one is live where the other is
defined (liveness on the structured IR's control-flow graph): then the buffer holds, at
every point, the one value of the web the program can still read, and an update writes it
in place. Related values left in different webs are copied from one buffer to the other
(`p = q` between two matrices in a loop). A web moves where a loop updates it at a
run-time index, or reads at one a value made outside the loop; the rest, and tile maps'
values, stay values. Even a vec2 or vec3 gains: in the vector body (codegen/spmd.py,
spmd_buffers.py) `v[k]` in a `range(3)` loop ran 5x faster from a buffer, a vec2 1.4x.

The pass runs on the IR codegen lowers (forward and adjoint kernels alike), after
automatic differentiation, which sees values only.
"""

from __future__ import annotations

import copy

from ..ir.core import Block, Function, Op, Value, free_values
from ..ir.passes import clone_block
from ..types import ArrayType, Matrix, Vector, int32

#: the fewest components a web needs to move into memory (measured: a vec2 gains)
MIN_COMPONENTS = 2

_LOOPS = ("for", "while")


def composites_in_memory(fn: Function) -> Function:
    """`fn`, or a copy of it in which the webs worth it live in buffers (module docstring)."""
    webs = _webs_to_move(fn)
    if not webs:
        return fn
    out, renamed = copy.copy(fn), {}
    out.body = clone_block(fn.body, renamed)
    _Rewriter(out, {renamed[k].id: web for k, web in webs.items()}).run()
    return out


# Candidates ----------------------------------------------------------------------------------
def _movable(t) -> bool:
    return isinstance(t, (Vector, Matrix)) and t.num_components >= MIN_COMPONENTS


def _walk(block: Block, loop=None):
    """(op, the innermost loop op it runs in, or None) for the ops of `block` and its
    regions, tile maps' regions left out."""
    for op in block.ops:
        yield op, loop
        if op.name != "tile_map":
            for region in op.regions:
                yield from _walk(region, op if op.name in _LOOPS else loop)


def _related(op: Op):
    """The (value, value) pairs of movable values that `op` relates, updates first (the
    order in which they are coalesced)."""
    pairs = []
    if op.name == "insert_dyn":
        pairs.append((op.operands[0], op.result))
    elif op.name == "for":
        body = op.regions[0]
        for init, arg, out, res in zip(op.operands[3:], body.args[1:], body.ops[-1].operands, op.results):
            pairs += [(out, arg), (init, arg), (res, arg)]
    elif op.name == "while":
        cond, body = op.regions
        for init, c_arg, b_arg, out, res in zip(op.operands, cond.args, body.args, body.ops[-1].operands,
                                                op.results):
            pairs += [(b_arg, c_arg), (out, c_arg), (init, c_arg), (res, c_arg)]
    elif op.name == "if":
        for k, res in enumerate(op.results):
            pairs += [(region.ops[-1].operands[k], res) for region in op.regions]
    elif op.name == "func_region":
        body = op.regions[0]
        pairs += list(zip(op.operands, body.args)) + list(zip(body.ops[-1].operands, op.results))
    return [(a, b) for a, b in pairs if a.type is b.type and _movable(a.type)]


class _UnionFind:
    def __init__(self):
        self.parent: dict[int, int] = {}

    def find(self, k: int) -> int:
        root = k
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while k != root:
            self.parent[k], k = root, self.parent.get(k, k)
        return root


def _defined_values(fn: Function):
    yield from fn.body.args
    for op, _loop in _walk(fn.body):
        yield from op.results
        if op.name != "tile_map":
            for region in op.regions:
                yield from region.args


def _webs_to_move(fn: Function) -> dict[int, int]:
    """{value id: its web's id} for the values this pass moves."""
    related, indexed = [], []
    loop_of = {}  # value id -> the innermost loop that defines it anew each iteration
    for op, loop in _walk(fn.body):
        related += _related(op)
        for v in op.results:
            loop_of[v.id] = loop
        for region in op.regions:
            for a in region.args:
                loop_of[a.id] = op if op.name in _LOOPS else loop
        if loop is None or not _movable(op.operands[0].type if op.operands else None):
            continue
        # an update in a loop, or a read in a loop of a value made outside it, pays for the
        # stores that move a value (a value read once where it is made does not)
        agg = op.operands[0]
        if op.name == "insert_dyn" or op.name == "extract_dyn" and loop_of.get(agg.id) is not loop:
            indexed.append(agg)
    if not indexed:
        return {}
    # the values related to a value indexed in a loop, directly or not, are the candidates
    groups = _UnionFind()
    for a, b in related:
        groups.parent[groups.find(a.id)] = groups.find(b.id)
    wanted = {groups.find(v.id) for v in indexed}
    candidates = [v.id for v in _defined_values(fn) if groups.find(v.id) in wanted]
    liveness = _Liveness(fn, candidates)
    clashing = liveness.interference()
    # coalesce: join two webs when no value of one is live where a value of the other is made
    webs = _UnionFind()
    members = dict(liveness.bit)
    for a, b in related:
        ra, rb = webs.find(a.id), webs.find(b.id)
        if ra != rb and ra in members and rb in members and not clashing[ra] & members[rb]:
            webs.parent[rb] = ra
            members[ra] |= members.pop(rb)
            clashing[ra] |= clashing.pop(rb)
    moved = {webs.find(v.id) for v in indexed}
    return {k: webs.find(k) for k in candidates if webs.find(k) in moved}


# Liveness --------------------------------------------------------------------------------------
class _Liveness:
    """Liveness of some values on the structured IR's control-flow graph: a node per op, a
    head node where a loop or region binds its arguments and an end node where an op with
    regions defines its results. Sets of values are bits of Python ints."""

    def __init__(self, fn: Function, tracked: list[int]):
        self.bit = {k: 1 << n for n, k in enumerate(tracked)}
        self.uses: list[int] = []
        self.defs: list[list[int]] = []
        self.succ: list[list[int]] = []
        start = self._node(defs=fn.body.args)
        first, _ = self._block(fn.body)
        self.succ[start].append(first)

    def _node(self, uses=(), defs=()) -> int:
        mask = 0
        for v in uses:
            mask |= self.bit.get(v.id, 0)
        self.uses.append(mask)
        self.defs.append([v.id for v in defs if v.id in self.bit])
        self.succ.append([])
        return len(self.uses) - 1

    def _block(self, block: Block) -> tuple[int, int]:
        """(entry node, exit node) of `block`'s ops in order; the exit is its terminator."""
        entry = prev = None
        for op in block.ops:
            first, last = self._op(op)
            if prev is None:
                entry = first
            else:
                self.succ[prev].append(first)
            prev = last
        return entry, prev

    def _op(self, op: Op) -> tuple[int, int]:
        """(first node, last node) of `op`; control leaves through the last."""
        name = op.name
        if not op.regions:
            return (n := self._node(op.operands, op.results)), n
        if name == "tile_map":  # (one node: it reads what its body uses, defines its results)
            return (n := self._node(free_values([op]), op.results)), n
        start, end = self._node(op.operands), self._node(defs=op.results)
        link = self.succ
        if name == "if":
            for region in op.regions:
                entry, exit_ = self._block(region)
                link[start].append(entry)
                link[exit_].append(end)
        elif name in ("for", "func_region"):
            body = op.regions[0]
            head = self._node(defs=body.args)
            entry, exit_ = self._block(body)
            link[start].append(head)
            link[head].append(entry)
            if name == "for":
                link[exit_].append(head)
                link[head].append(end)
            else:
                link[exit_].append(end)
        elif name == "while":
            cond, body = op.regions
            c_head, b_head = self._node(defs=cond.args), self._node(defs=body.args)
            c_entry, c_exit = self._block(cond)
            b_entry, b_exit = self._block(body)
            link[start].append(c_head)
            link[c_head].append(c_entry)
            link[c_exit] += [b_head, end]
            link[b_head].append(b_entry)
            link[b_exit].append(c_head)
        else:
            raise NotImplementedError(f"liveness across '{name}'")
        return start, end

    def _live_out(self) -> list[int]:
        n = len(self.uses)
        defs = [sum(self.bit[k] for k in d) for d in self.defs]
        live_in, live_out = [0] * n, [0] * n
        changed = True
        while changed:
            changed = False
            for k in reversed(range(n)):
                out = 0
                for s in self.succ[k]:
                    out |= live_in[s]
                new_in = self.uses[k] | (out & ~defs[k])
                if out != live_out[k] or new_in != live_in[k]:
                    live_out[k], live_in[k], changed = out, new_in, True
        return live_out

    def interference(self) -> dict[int, int]:
        """{value id k: the values live where k is defined, or defined where it is live, or
        defined at the same place}."""
        mask = dict.fromkeys(self.bit, 0)
        for out, defs in zip(self._live_out(), self.defs):
            together = sum(self.bit[k] for k in defs)
            for k in defs:
                mask[k] |= (out | together) & ~self.bit[k]
        ids = list(self.bit)
        for k in ids:  # (symmetric: j clashes with k where k clashes with j)
            rest = mask[k]
            while rest:
                low = rest & -rest
                mask[ids[low.bit_length() - 1]] |= self.bit[k]
                rest ^= low
        return mask


# Rewriting -------------------------------------------------------------------------------------
class _Rewriter:
    """Moves each web into its buffer (module docstring): run-time indexed reads and writes
    go to the buffer, values made by other ops are stored into it, joins drop the slots
    whose values a buffer carries (copying into it what comes from another web), and other
    uses load the value before they run."""

    def __init__(self, fn: Function, webs: dict[int, int]):
        self.fn = fn
        self.webs = webs
        self.buffers: dict[int, Value] = {}
        self.prologue: list[Op] = []
        self.zero = self._emit(self.prologue, "const", [], int32, {"value": 0}, fn.loc)

    def run(self):
        body = self.fn.body
        self._block(body)
        body.ops[:0] = self.prologue

    # helpers
    def _emit(self, ops: list, name, operands, result_type=None, attrs=None, loc=None) -> Value | None:
        op = Op(name, operands, [result_type] if result_type is not None else [], attrs, (), loc)
        ops.append(op)
        return op.results[0] if op.results else None

    def moved(self, v: Value) -> bool:
        return v.id in self.webs

    def same_web(self, a: Value, b: Value) -> bool:
        return self.moved(a) and self.webs[a.id] == self.webs.get(b.id)

    def buffer(self, v: Value) -> Value:
        web = self.webs[v.id]
        if web not in self.buffers:
            self.buffers[web] = self._emit(self.prologue, "local_array", [], ArrayType(v.type, 1),
                                           {"shape": (1,)}, self.fn.loc)
        return self.buffers[web]

    def _copy_all(self, ops, pairs, loc):
        """Store the value of each (web value, value) pair into the web value's buffer, as
        one parallel copy: every value is loaded before any buffer is written (a value may
        live in another pair's buffer: `a, b = b, a` between two webs)."""
        loaded = [(web_value, self._loaded(ops, x, loc)) for web_value, x in pairs]
        for web_value, x in loaded:
            self._emit(ops, "store", [self.buffer(web_value), self.zero, x], attrs={"in_bounds": True}, loc=loc)

    def _store_if_moved(self, ops, v: Value, loc):
        if self.moved(v):
            self._emit(ops, "store", [self.buffer(v), self.zero, v], attrs={"in_bounds": True}, loc=loc)

    def _loaded(self, ops, v: Value, loc) -> Value:
        if not self.moved(v):
            return v
        return self._emit(ops, "load", [self.buffer(v), self.zero], v.type, {"in_bounds": True}, loc)

    def _define_by_load(self, ops, v: Value, array: Value, loc):
        """Make `v` (taken from the op that defined it) the load of `array`'s element 0."""
        op = Op("load", [array, self.zero], (), {"in_bounds": True}, (), loc)
        op.results, v.owner = [v], op
        ops.append(op)

    def _part(self, ops, op: Op, indices, web_value: Value) -> Value:
        """The component of `web_value`'s buffer that `op`'s run-time indices pick."""
        t = web_value.type
        return self._emit(ops, "component", [self.buffer(web_value), *indices], ArrayType(t.dtype, 1),
                          {"path": (0,), "of": t}, op.loc)

    # blocks and ops
    def _block(self, block: Block, keep=None, dests=()) -> None:
        """Rewrite `block`. A join's region: `keep` marks the terminator's operands it keeps;
        the others go to the buffers of `dests` (the web values they become)."""
        out: list[Op] = []
        for a in block.args:
            self._store_if_moved(out, a, self.fn.loc)
        *ops, term = block.ops
        for op in ops:
            self._op(op, out)
        if keep is None:
            term.operands = [self._loaded(out, v, term.loc) for v in term.operands]
        else:
            term.operands = self._pass_on(out, term.operands, keep, dests, term.loc)
        out.append(term)
        block.ops = out

    def _pass_on(self, ops, values, keep, dests, loc) -> list[Value]:
        """The values a join keeps (`keep`), loaded where they are moved; the others are
        copied into the buffers of `dests` (unless already theirs). One parallel copy: all
        are loaded before any buffer is written (`a, b = b, a` between two webs)."""
        kept = [self._loaded(ops, v, loc) for v, k in zip(values, keep, strict=True) if k]
        self._copy_all(ops, [(d, v) for v, d, k in zip(values, dests, keep) if not k and not self.same_web(v, d)],
                       loc)
        return kept

    def _op(self, op: Op, out: list):
        name = op.name
        if name == "extract_dyn" and self.moved(op.operands[0]):
            agg, *indices = op.operands
            self._define_by_load(out, op.result, self._part(out, op, indices, agg), op.loc)
        elif name == "insert_dyn" and self.moved(op.result):
            agg, *indices, x = op.operands
            if not self.same_web(agg, op.result):  # (a copy, then the update in place)
                self._copy_all(out, [(op.result, agg)], op.loc)
            part = self._part(out, op, indices, op.result)
            self._emit(out, "store", [part, self.zero, x], attrs={"in_bounds": True}, loc=op.loc)
        elif name in ("if", "for", "while", "func_region"):
            getattr(self, "_join_" + name)(op, out)
        else:
            for region in op.regions:  # (a tile map's)
                self._block(region)
            op.operands = [self._loaded(out, v, op.loc) for v in op.operands]
            out.append(op)
            for r in op.results:
                self._store_if_moved(out, r, op.loc)

    # joins: a slot whose value a buffer carries is dropped
    def _finish(self, op, out, kept_results, carried_by):
        """Append `op` with the results `kept_results` marks; each dropped result is loaded
        from the buffer of `carried_by[k]`, and stored into its own if that differs."""
        out.append(op)
        slots = list(zip(op.results, kept_results, carried_by))
        for r, keep, web_value in slots:  # (all loaded before any is stored: as `_copy_all`)
            if not keep and not self.same_web(r, web_value):
                self._define_by_load(out, r, self.buffer(web_value), op.loc)
        for r, keep, web_value in slots:
            if keep or not self.same_web(r, web_value):
                self._store_if_moved(out, r, op.loc)
        op.results = [r for r, keep in zip(op.results, kept_results) if keep]

    def _join_if(self, op, out):
        keep = [not self.moved(r) for r in op.results]
        for region in op.regions:
            self._block(region, keep, op.results)
        op.operands = [self._loaded(out, v, op.loc) for v in op.operands]
        self._finish(op, out, keep, op.results)

    def _join_for(self, op, out):
        body = op.regions[0]
        bounds, inits, args = op.operands[:3], op.operands[3:], body.args[1:]
        keep = [not self.moved(a) for a in args]
        body.args = body.args[:1] + [a for a, k in zip(args, keep) if k]
        self._block(body, keep, args)
        op.operands = bounds + self._pass_on(out, inits, keep, args, op.loc)
        self._finish(op, out, keep, args)

    def _join_while(self, op, out):
        cond, body = op.regions
        carried = cond.args
        keep = [not (self.moved(c) and self.same_web(b, c)) for c, b in zip(cond.args, body.args)]
        cond.args = [a for a, k in zip(cond.args, keep) if k]
        body.args = [a for a, k in zip(body.args, keep) if k]
        self._block(cond)
        self._block(body, keep, carried)
        op.operands = self._pass_on(out, op.operands, keep, carried, op.loc)
        self._finish(op, out, keep, carried)

    def _join_func_region(self, op, out):
        body = op.regions[0]
        args = body.args
        keep_args = [not self.moved(a) for a in args]
        keep = [not self.moved(r) for r in op.results]
        body.args = [a for a, k in zip(args, keep_args) if k]
        self._block(body, keep, op.results)
        op.operands = self._pass_on(out, op.operands, keep_args, args, op.loc)
        self._finish(op, out, keep, op.results)
