"""Loops whose trip count differs between the lanes, run masked in the vector body (spmd.py).

A `while` whose condition varies, or a `for` whose bounds or step vary, runs as one loop for
all the lanes, as ISPC runs it: every iteration evaluates the condition for the lanes still
looping (`mask`), runs the body while any lane is, and a lane that has left keeps its values
(a select per carried value). Inside, `mask` says which lanes are live: loads, stores and
atomics at varying indices send the other lanes to the context's scratch element (and check
only the live lanes' indices), and ops run lane by lane skip them, so a lane that has left
the loop has no effect, as a thread that has left it has none. Arithmetic runs on every lane
(it has no effects; the values of lanes that have left are dropped by the selects).

Ops without lanes (uniform ones) run whenever some lane is live: a uniform store or assert
then happens as it would for that lane's thread. Loops with AD stack pushes or pops, or
returns, inside stay lane by lane (`maskable`).

A `while` whose lanes leave at very different iterations (Collatz sequences, rejection
sampling, escape-time loops) would keep the whole vector iterating for its slowest lane, and
pay every lane's arithmetic for it. So the masked loop runs while more than TAIL_LANES lanes
loop; the few left then finish one after another in the scalar lowering of the same loop,
restarted from their carried values (a loop iteration boundary), inside a run-time loop over
the lanes (one copy of the scalar code). A loop whose condition has effects
(`mesh_query_aabb_next` advances its query) would run it twice there, so it stays masked to
the end (`has_scalar_tail`).
"""

from __future__ import annotations

import llvmlite.ir as ir

from ..ir.core import walk
from .llvm_types import I1, I64, llvm_type

#: a masked `while` hands its lanes to the scalar code once no more than this many loop
TAIL_LANES = 2
_CONDITION_EFFECTS = frozenset(("store", "atomic", "print", "assert", "push", "pop", "return"))


def maskable(op) -> bool:
    """Whether loop `op` may run masked (see the module docstring)."""
    return not any(inner.name in ("push", "pop", "return") for region in op.regions for inner in walk(region))


def has_scalar_tail(op, buffer_ops) -> bool:
    """Whether masked loop `op` may finish its last lanes in scalar code: a `while` whose
    condition has no effects (it runs again when the scalar loop restarts), and no lane
    buffers inside (spmd_buffers.py addresses them by a lane known when compiling)."""
    if op.name != "while":
        return False
    inner = [o for region in op.regions for o in walk(region)]
    condition = walk(op.regions[0])
    return not any(o.name in _CONDITION_EFFECTS or o.name == "call" and o.attrs["fn"].effects for o in condition) \
        and not any(id(o) in buffer_ops for o in inner)


class SpmdMasked:
    """The `SpmdOps` part that lowers masked loops. `mask`: the live lanes (an i1 vector),
    None where every lane is."""

    mask = None

    def live(self):
        """The live lanes as an i1 vector (all of them outside masked loops)."""
        if self.mask is not None:
            return self.mask
        return ir.Constant(ir.VectorType(I1, self._width()), [1] * self._width())

    def any_lane(self, bits):
        """Whether any element of i1 vector `bits` is set."""
        b = self.builder
        as_int = ir.IntType(bits.type.count)
        return b.icmp_unsigned("!=", b.bitcast(bits, as_int), ir.Constant(as_int, 0))

    def emit_masked_loop(self, op):
        """Lower loop `op` (in `SpmdPlan.masked`) as one loop for the group, masked."""
        if op.name == "while":
            cond, body = op.regions
            initial = [self.widen(self.v(x)) for x in op.operands]

            def condition(carried):
                (go,) = self._region(cond, carried)
                return self.widen(go)

            def step(carried):
                return self._region(body, carried)
            if has_scalar_tail(op, self.plan.buffer_ops):
                carried, left = self._masked_loop(op, initial, condition, step, tail=TAIL_LANES)
                results = self._finish_lanes(op, carried, left)
            else:
                results = self._masked_loop(op, initial, condition, step)[0]
        else:
            start, stop, step_value, *inits = op.operands
            t = start.type
            # (the counter in 64 bits: a step past the type's range cannot wrap around)
            ext = self.builder.sext if t.is_signed else self.builder.zext
            wide = ir.VectorType(I64, self._width())
            lo, hi, st = (ext(self.widen(self.v(x)), wide) for x in (start, stop, step_value))
            b = self.builder
            up = b.icmp_signed(">", st, ir.Constant(wide, 0))
            cmp = b.icmp_signed if t.is_signed else b.icmp_unsigned

            def condition(carried):
                i = carried[0]
                if not t.is_signed:
                    return cmp("<", i, hi)
                return b.select(up, cmp("<", i, hi), cmp(">", i, hi))

            def step(carried):
                i, *values = carried
                narrow = b.trunc(i, ir.VectorType(llvm_type(t), self._width())) if t.bits < 64 else i
                out = self._region(op.regions[0], [narrow, *values])
                return [b.add(i, st), *out]
            initial = [lo] + [self.widen(self.v(x)) for x in inits]
            results = self._masked_loop(op, initial, condition, step, counter=True)[0][1:]
        for r, rep in zip(op.results, results):
            self.values[r.id] = rep

    def _masked_loop(self, op, initial, condition, step, counter=False, tail=0):
        """The loop: `condition(carried)` (an i1 vector) for the live lanes, `step(carried)`
        the next values, run while more than `tail` lanes loop; returns the carried values
        then and the lanes that still loop (an i1 vector, none if `tail` is 0)."""
        b = self.builder
        types = ([None] if counter else []) + [r.type for r in op.results]
        outer = self.mask
        pre = b.block
        header = self.func.append_basic_block("masked.header")
        body = self.func.append_basic_block("masked.body")
        exit_ = self.func.append_basic_block("masked.exit")
        b.branch(header)
        b.position_at_end(header)
        mask = b.phi(ir.VectorType(I1, self._width()), "lanes")
        mask.add_incoming(self.live(), pre)
        phis, carried = [], []
        for rep, t in zip(initial, types):
            leaves = [rep] if t is None else self.leaves(rep, t)
            row = [b.phi(leaf.type) for leaf in leaves]
            for phi, leaf in zip(row, leaves):
                phi.add_incoming(leaf, pre)
            phis.append(row)
            carried.append(row[0] if t is None else self.from_leaves(t, iter(row)))
        self.mask = mask
        active = b.and_(mask, condition(carried))
        b.cbranch(self.more_lanes_than(active, tail), body, exit_)
        b.position_at_end(body)
        self.mask = active
        new = step(carried)
        for row, rep, old, t in zip(phis, new, carried, types):
            leaves = [self.widen(rep)] if t is None else [self.widen(x) for x in self.leaves(rep, t)]
            olds = [old] if t is None else self.leaves(old, t)
            for phi, leaf, was in zip(row, leaves, olds):
                phi.add_incoming(b.select(active, leaf, was), b.block)
        mask.add_incoming(active, b.block)
        b.branch(header)
        b.position_at_end(exit_)
        self.mask = outer
        return carried, active

    def more_lanes_than(self, bits, count: int):
        """Whether more than `count` elements of i1 vector `bits` are set."""
        if count == 0:
            return self.any_lane(bits)
        b = self.builder
        as_int = ir.IntType(bits.type.count)
        ctpop = self.module.declare_intrinsic("llvm.ctpop", [as_int])
        return b.icmp_unsigned(">", b.call(ctpop, [b.bitcast(bits, as_int)]), ir.Constant(as_int, count))

    def _finish_lanes(self, op, carried, left):
        """Run `while` op to its end for each lane set in `left`, one after another, in the
        scalar lowering restarted from that lane's `carried` values; the final values of
        every lane (the others' are `carried`)."""
        b = self.builder
        types = [r.type for r in op.results]
        per_result = [self.leaves(self.widen(rep), t) for rep, t in zip(carried, types)]
        leaves = [leaf for group in per_result for leaf in group]
        start = b.block
        lanes = self.func.append_basic_block("tail.lanes")
        run = self.func.append_basic_block("tail.run")
        step = self.func.append_basic_block("tail.next")
        done = self.func.append_basic_block("tail.done")
        b.cbranch(self.any_lane(left), lanes, done)
        b.position_at_end(lanes)
        lane = b.phi(ir.IntType(32), "lane")
        lane.add_incoming(ir.Constant(ir.IntType(32), 0), start)
        accumulated = [b.phi(leaf.type) for leaf in leaves]
        for phi, leaf in zip(accumulated, leaves):
            phi.add_incoming(leaf, start)
        b.cbranch(b.extract_element(left, lane), run, step)
        b.position_at_end(run)
        outer_mask = self.mask
        self.vector_mode, self.lane, self.mask = False, lane, None
        self.restart = (op, [self.lane_of(rep, lane) for rep in carried])
        try:
            self.emit_scalar(op)
            finished = [leaf for r in op.results for leaf in self.leaves(self.values[r.id], r.type)]
        finally:
            self.vector_mode, self.lane, self.mask, self.restart = True, None, outer_mask, None
        inserted = [b.insert_element(acc, leaf, lane) for acc, leaf in zip(accumulated, finished)]
        ran = b.block
        b.branch(step)
        b.position_at_end(step)
        merged = []
        for acc, new in zip(accumulated, inserted):
            phi = b.phi(acc.type)
            phi.add_incoming(acc, lanes)
            phi.add_incoming(new, ran)
            merged.append(phi)
            acc.add_incoming(phi, step)
        following = b.add(lane, ir.Constant(ir.IntType(32), 1))
        lane.add_incoming(following, step)
        b.cbranch(b.icmp_unsigned("<", following, ir.Constant(ir.IntType(32), self._width())), lanes, done)
        b.position_at_end(done)
        old_leaves, new_leaves = iter(leaves), iter(merged)
        results = []
        for group, t in zip(per_result, types):
            finals = []
            for _ in group:
                old = next(old_leaves)
                phi = b.phi(old.type)
                phi.add_incoming(old, start)
                phi.add_incoming(next(new_leaves), step)
                finals.append(phi)
            results.append(self.from_leaves(t, iter(finals)))
        return results

    def lanes_guarded(self, lane: int, emit):
        """`emit()` for one lane, skipped where that lane is not live; returns the result
        leaves of `emit` (zero where skipped) as `emit` returns them (a list of LLVM values)."""
        if self.mask is None:
            return emit()
        b = self.builder
        pre = b.block
        live = b.extract_element(self.mask, ir.Constant(ir.IntType(32), lane))
        with b.if_then(live):
            leaves = emit()
            inner = b.block
        out = []
        for leaf in leaves:
            phi = b.phi(leaf.type)
            phi.add_incoming(leaf, inner)
            phi.add_incoming(ir.Constant(leaf.type, None), pre)
            out.append(phi)
        return out
