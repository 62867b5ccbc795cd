"""Lowering of structured control flow (if, for, while, func regions) and the AD stack (push, pop)."""

from __future__ import annotations

import llvmlite.ir as ir

from ..ir.core import Block, constant_value, walk
from ..types import TileType
from .llvm_types import (
    CTX_TYPE,
    I1,
    I8,
    I32,
    I64,
    PTR,
    STACK_SLOT,
    STACK_TYPE,
    TileBytes,
    _all_of,
    _indices,
    _slot_offsets,
    llvm_type,
)
from .spmd import WIDTH


class ControlOps:
    """Control-flow and AD-stack lowerings of `KernelCodegen`."""

    #: (a `while` op, the values it starts from instead of its operands): set for the next
    #: lowering of that op (spmd_masked.py finishes a lane's loop from where it had got to)
    restart = None

    # Control flow --------------------------------------------------------------------------
    def _region(self, block: Block, args=()):
        """Emit a region's ops; return the LLVM values it yields."""
        for a, v in zip(block.args, args):
            self.values[a.id] = v
        for op in block.ops[:-1]:
            self.emit(op)
        return [self.v(x) for x in block.ops[-1].operands]

    def op_func_region(self, op):
        for x, arg in zip(op.operands, op.regions[0].args):
            if x.id in self.plain_adds:  # (an array the kernel owns a private copy of)
                self.plain_adds[arg.id] = self.plain_adds[x.id]
        return self._region(op.regions[0], [self.v(x) for x in op.operands])

    def op_if(self, op):
        b = self.builder
        then_bb = self.func.append_basic_block("if.then")
        else_bb = self.func.append_basic_block("if.else")
        merge = self.func.append_basic_block("if.end")
        b.cbranch(self.v(op.operands[0]), then_bb, else_bb)
        incoming = []
        for bb, region in ((then_bb, op.regions[0]), (else_bb, op.regions[1])):
            b.position_at_end(bb)
            vals = self.conform(op.results, self._region(region))
            incoming.append((vals, b.block))
            b.branch(merge)
        b.position_at_end(merge)
        self._merge_strides(op, [bb for _, bb in incoming])
        return self._merge([r.type for r in op.results], incoming)

    def _merge_strides(self, op, exits):
        """Phis joining the strides of each tile result that is a view (tile_views.py) on
        one branch at least; `exits`: the blocks each branch ends in."""
        if not self.tile_views():
            return
        for k, r in enumerate(op.results):
            ys = [region.ops[-1].operands[k] for region in op.regions]
            if not any(y.id in self.tile_strides for y in ys):
                continue
            strides = [self.packed_strides(y) for y in ys]
            phis = []
            for d in range(2):
                phis.append(phi := self.builder.phi(I64))
                for s, bb in zip(strides, exits):
                    phi.add_incoming(s[d], bb)
            self.tile_strides[r.id] = tuple(phis)

    def _merge(self, types, incoming):
        """Phis joining the values each (values, block) pair brings, leaf by leaf."""
        results = []
        for k, t in enumerate(types):
            # (leaf types from the values: in a vector body, vectors where they vary)
            phis = [self.builder.phi(leaf.type) for leaf in self.leaves(incoming[0][0][k], t)]
            for vals, bb in incoming:
                for phi, leaf in zip(phis, self.leaves(vals[k], t)):
                    phi.add_incoming(leaf, bb)
            results.append(self.from_leaves(t, iter(phis)))
        return results

    def _carry_tiles(self, values, args) -> dict:
        """Before a loop: a buffer of the loop's for each carried tile (tile_ops.py), filled
        with its initial value; `args` are the body's block arguments for `values`."""
        bufs = {}
        for x, arg in zip(values, args):
            if isinstance(x.type, TileType):
                bufs[x.id] = buf = self.tile_buffer(x.type, "carried")
                self.tile_copy(buf, self.v(x), x.type)
                self.carried_tiles.add(arg.id)
        return bufs

    def _loop_phis(self, values, initial, pre, tiles):
        """Header phis for loop-carried values entering from block `pre`: (reps, phi lists).
        `initial`: the values' representations as the loop carries them (`conform`).
        Carried tiles (`tiles`: from _carry_tiles) need none: their buffer is the value."""
        reps, all_phis = [], []
        for x, rep in zip(values, initial):
            if tiles and x.id in tiles:
                reps.append(tiles[x.id])
                all_phis.append((tiles[x.id], x.type))
                continue
            leaves = self.leaves(rep, x.type)
            phis = [self.builder.phi(leaf.type) for leaf in leaves]
            for phi, leaf in zip(phis, leaves):
                phi.add_incoming(leaf, pre)
            reps.append(self.from_leaves(x.type, iter(phis)))
            all_phis.append((phis, x.type))
        return reps, all_phis

    def _close_loop(self, all_phis, new_values):
        tiles = [(buf, t, rep) for (buf, t), rep in zip(all_phis, new_values) if isinstance(t, TileType)]
        if len(tiles) > 1:  # one may yield another's buffer (a swap): copy through temporaries
            tiles = [(buf, t, self._tile_temp(rep, t)) for buf, t, rep in tiles]
        for buf, t, rep in tiles:
            self.tile_copy(buf, rep, t)
        for (phis, t), rep in zip(all_phis, new_values):
            if isinstance(t, TileType):
                continue
            for phi, leaf in zip(phis, self.leaves(rep, t)):
                phi.add_incoming(leaf, self.builder.block)

    def op_for(self, op):
        start, stop, step, *inits = op.operands
        guard = self._loop_guard(op) if self.bounds_checks else None
        if guard is None:
            return self._emit_for(op, self.active)
        b = self.builder
        fast_bb = self.func.append_basic_block("for.fast")
        slow_bb = self.func.append_basic_block("for.checked")
        merge = self.func.append_basic_block("for.done")
        b.cbranch(guard, fast_bb, slow_bb)
        incoming = []
        for bb, active in ((fast_bb, self.active | {("loop", id(op))}), (slow_bb, self.active)):
            b.position_at_end(bb)
            incoming.append((self._emit_for(op, active), b.block))
            b.branch(merge)
        b.position_at_end(merge)
        return self._merge([r.type for r in op.results], incoming)

    def _loop_guard(self, op):
        """For a loop with a positive constant step: the condition under which every access in
        its body indexed by the loop variable (and otherwise by proven indices) is in bounds."""
        start, stop, step = op.operands[:3]
        step_value = constant_value(step)
        if step_value is None or step_value <= 0:
            return None
        iv = op.regions[0].args[0]
        b = self.builder
        conds = []
        nested = self._nested_ranges(op)
        for inner in walk(op.regions[0]):
            site = self.site_of.get(id(inner))
            if site is None or inner.name not in ("load", "store", "atomic", "view"):
                continue
            arr = inner.operands[0]
            idx = _indices(inner)
            if arr.id not in self.param_ids or arr.type.fabric or not any(i is iv for i in idx):
                continue
            conds_here, requires = [], {("loop", id(op))}
            for d, i in enumerate(idx):
                extent = self._shape(self.values[arr.id], d)
                kind = self._index_kind(i)
                if i is iv:
                    conds_here.append(self._range_in_bounds(start, stop, extent))
                elif i.id in nested:  # (an inner loop's variable, over a range known here)
                    conds_here.append(self._range_in_bounds(*nested[i.id], extent))
                elif kind is not None and kind[0] == "const":
                    conds_here.append(self._constant_in_bounds(kind[1], extent))
                elif kind is not None and getattr(site, "tid_proven", False):
                    requires.add("tid")  # proven by the thread guard, in the fast copy only
                else:
                    conds_here = None
                    break
            if conds_here is None:
                continue
            conds.extend(conds_here)
            site.requires = frozenset(requires)
        if not conds:
            return None
        ok = _all_of(b, conds)
        cmp = b.icmp_signed if start.type.is_signed else b.icmp_unsigned
        empty = cmp(">=", self.v(start), self.v(stop))
        return b.or_(empty, ok)

    def _nested_ranges(self, op) -> dict:
        """{variable id: (start, stop)} of the `for` loops inside loop `op` that step up by a
        constant and whose bounds are constants or values made before `op`: the guard of
        `op` can prove their accesses too (`K[b, j, d]` in `for j: for d in range(64)`)."""
        inside = {a.id for a in op.regions[0].args}
        for inner in walk(op.regions[0]):
            inside.update(r.id for r in inner.results)
            inside.update(a.id for region in inner.regions for a in region.args)
        ranges = {}
        for inner in walk(op.regions[0]):
            if inner.name != "for":
                continue
            start, stop, step = inner.operands[:3]
            step_value = constant_value(step)
            known = all(constant_value(v) is not None or v.id not in inside for v in (start, stop))
            if known and isinstance(step_value, int) and step_value > 0:
                ranges[inner.regions[0].args[0].id] = (start, stop)
        return ranges

    def _emit_for(self, op, active):
        saved_active = self.active
        self.active = active
        start, stop, step, *inits = op.operands
        b = self.builder
        t = start.type
        step_value = constant_value(step)
        # A unit step cannot overflow the counter (it stops at `stop`); any other step can
        # jump past the type's range, so such counters run in 64 bits.
        wide = step_value not in (1, -1) and t.bits < 64
        ext = (b.sext if t.is_signed else b.zext) if wide else (lambda v, _ty: v)
        ctype = I64 if wide else llvm_type(t)
        signed = t.is_signed or wide
        lo, hi, st = (ext(self.v(x), I64) for x in (start, stop, step))
        tiles = self._carry_tiles(inits, op.regions[0].args[1:])
        initial = self.conform(op.regions[0].args[1:], [self.v(x) for x in inits])
        pre = b.block
        header = self.func.append_basic_block("for.header")
        body = self.func.append_basic_block("for.body")
        exit_ = self.func.append_basic_block("for.exit")
        b.branch(header)
        b.position_at_end(header)
        iv = b.phi(ctype, "i")
        iv.add_incoming(lo, pre)
        carried, phis = self._loop_phis(inits, initial, pre, tiles)
        cmp = b.icmp_signed if signed else b.icmp_unsigned
        if step_value is not None:
            go = cmp("<" if step_value > 0 else ">", iv, hi)
        elif not t.is_signed:
            go = cmp("<", iv, hi)
        else:
            up = b.icmp_signed(">", st, st.type(0))
            go = b.select(up, cmp("<", iv, hi), cmp(">", iv, hi))
        b.cbranch(go, body, exit_)
        b.position_at_end(body)
        iv_value = b.trunc(iv, llvm_type(t)) if wide else iv
        vals = self.conform(op.regions[0].args[1:], self._region(op.regions[0], [iv_value] + carried))
        next_iv = b.add(iv, st, flags=("nsw",) if signed else ())
        self._close_loop(phis, vals)  # (carried tiles' copies may add blocks)
        iv.add_incoming(next_iv, b.block)
        b.branch(header)
        b.position_at_end(exit_)
        self.active = saved_active
        return carried

    def op_while(self, op):
        b = self.builder
        tiles = self._carry_tiles(op.operands, op.regions[1].args)
        for a, x in zip(op.regions[0].args, op.operands):
            if x.id in tiles:
                self.carried_tiles.discard(a.id)  # (the condition only reads)
        if self.restart is not None and self.restart[0] is op:
            starts, self.restart = self.restart[1], None
        else:
            starts = [self.v(x) for x in op.operands]
        initial = self.conform(op.regions[1].args, starts)
        pre = b.block
        header = self.func.append_basic_block("while.header")
        body = self.func.append_basic_block("while.body")
        exit_ = self.func.append_basic_block("while.exit")
        b.branch(header)
        b.position_at_end(header)
        carried, phis = self._loop_phis(op.operands, initial, pre, tiles)
        (go,) = self._region(op.regions[0], carried)
        b.cbranch(go, body, exit_)
        b.position_at_end(body)
        vals = self.conform(op.regions[1].args, self._region(op.regions[1], carried))
        self._close_loop(phis, vals)
        b.branch(header)
        b.position_at_end(exit_)
        return carried

    # AD stack -----------------------------------------------------------------------------
    def _stack_field(self, k):
        return self.builder.gep(self.stack, [I32(0), I32(k)])  # a typed pointer (alloca)

    def _scratch(self):
        return self.scratch

    def op_push(self, op):
        """Append the operands' scalars to the stack, growing it (realloc) when full. If it
        cannot grow (the limit in the launch context, or no memory) the error is recorded
        and the values go to scratch memory, so the launch ends cleanly and reports it."""
        b = self.builder
        leaves = [leaf for v in op.operands for leaf in self.leaves(self.v(v), v.type)]
        types = [lt for v in op.operands for lt in self.stack_leaf_types(v.type)]
        if self.vector_mode:  # (every lane's values: spmd.py pushes numbers as vectors)
            types = self.stack_lane_types(types)
            leaves = [self.widen(x) if isinstance(t, ir.VectorType) else x for x, t in zip(leaves, types)]
        offsets, frame = _slot_offsets(types)
        size_ptr, cap_ptr = self._stack_field(1), self._stack_field(2)
        size = b.load(size_ptr, typ=I64)
        need = b.add(size, I64(frame))
        fits = b.icmp_unsigned("<=", need, b.load(cap_ptr, typ=I64))
        before = b.block
        with b.if_then(b.not_(fits), likely=False):
            limit = b.load(b.gep(self.ctx_ptr, [I32(0), I32(6)], source_etype=CTX_TYPE), typ=I64)
            stack = b.bitcast(self.stack, PTR)
            grown = b.call(self._stack_grow(), [stack, need, limit])
            grow_block = b.block
        ok = b.phi(I1)
        ok.add_incoming(I1(1), before)
        ok.add_incoming(grown, grow_block)
        self._check(op, ok, [], [])
        top = b.gep(b.load(self._stack_field(0), typ=PTR), [size], source_etype=I8)
        ptr = b.select(ok, top, self._scratch())
        for offset, leaf, lt in zip(offsets, leaves, types):
            slot = b.gep(ptr, [I64(offset)], source_etype=I8)
            if isinstance(lt, TileBytes):  # a tile: its elements
                b.call(self._memcpy(), [slot, leaf, I64(int(lt)), I1(0)])
                continue
            if isinstance(lt, ir.VectorType):
                bools = lt.element == I1
                b.store(b.zext(leaf, ir.VectorType(I8, lt.count)) if bools else leaf, slot, align=STACK_SLOT)
                continue
            b.store(b.zext(leaf, I8) if leaf.type == I1 else leaf, slot)
        b.store(b.select(ok, need, size), size_ptr)

    def op_pop(self, op):
        b = self.builder
        types = [lt for r in op.results for lt in self.stack_leaf_types(r.type)]
        if self.vector_mode:
            types = self.stack_lane_types(types)
        offsets, frame_bytes = _slot_offsets(types)
        size_ptr = self._stack_field(1)
        size = b.load(size_ptr, typ=I64)
        frame = I64(frame_bytes)
        ok = b.icmp_unsigned(">=", size, frame)  # false only after a failed push
        rest = b.sub(size, frame)
        top = b.gep(b.load(self._stack_field(0), typ=PTR), [rest], source_etype=I8)
        ptr = b.select(ok, top, self._scratch())
        leaves = []
        tile_types = iter([r.type for r in op.results if isinstance(r.type, TileType)])
        for offset, lt in zip(offsets, types):
            slot = b.gep(ptr, [I64(offset)], source_etype=I8)
            if isinstance(lt, TileBytes):
                buf = self.tile_buffer(next(tile_types), "popped")
                b.call(self._memcpy(), [buf, slot, I64(int(lt)), I1(0)])
                leaves.append(buf)
                continue
            if isinstance(lt, ir.VectorType):
                bools = lt.element == I1
                x = b.load(slot, typ=ir.VectorType(I8, lt.count) if bools else lt, align=STACK_SLOT)
                leaves.append(b.icmp_unsigned("!=", x, ir.Constant(x.type, 0)) if bools else x)
                continue
            leaves.append(b.icmp_unsigned("!=", b.load(slot, typ=I8), I8(0)) if lt == I1 else b.load(slot, typ=lt))
        b.store(b.select(ok, rest, size), size_ptr)
        it = iter(leaves)
        return [self.from_leaves(r.type, it) for r in op.results]

    def stack_lane_types(self, types) -> list:
        """In the vector body: number leaves as vectors (one element per lane); array
        descriptors (uniform) stay as they are."""
        return [ir.VectorType(lt, WIDTH) if isinstance(lt, (ir.IntType, ir.FloatType, ir.DoubleType)) else lt
                for lt in types]

    def stack_leaf_types(self, t) -> list:
        """`leaf_types`, with a tile's elements as one `TileBytes` leaf (pushed by value)."""
        return [TileBytes(t.nbytes)] if isinstance(t, TileType) else self.leaf_types(t)

    def _stack_grow(self):
        """`grow(stack, need, limit) -> ok`: realloc to max(need, 2 x capacity, 4 KiB), never
        beyond `limit` bytes."""
        f = self.module.globals.get("weft_stack_grow")
        if f is not None:
            return f
        f = ir.Function(self.module, ir.FunctionType(I1, [PTR, I64, I64]), "weft_stack_grow")
        f.linkage = "internal"
        f.attributes.add("noinline")
        f.attributes.add("cold")
        realloc = ir.Function(self.module, ir.FunctionType(PTR, [PTR, I64]), "realloc")
        st, need, limit = f.args
        b = ir.IRBuilder(f.append_basic_block())
        fail, attempt, done = (f.append_basic_block(n) for n in ("fail", "attempt", "done"))
        field = [b.gep(st, [I32(0), I32(k)], source_etype=STACK_TYPE) for k in range(3)]
        b.cbranch(b.icmp_unsigned(">", need, limit), fail, attempt)
        b.position_at_end(attempt)
        cap = b.mul(b.load(field[2], typ=I64), I64(2))
        cap = b.select(b.icmp_unsigned(">", cap, need), cap, need)
        cap = b.select(b.icmp_unsigned(">", cap, I64(4096)), cap, I64(4096))
        cap = b.select(b.icmp_unsigned(">", cap, limit), limit, cap)
        data = b.call(realloc, [b.load(field[0], typ=PTR), cap])
        b.cbranch(b.icmp_unsigned("==", data, ir.Constant(PTR, None)), fail, done)
        b.position_at_end(done)
        b.store(data, field[0])
        b.store(cap, field[2])
        b.ret(I1(1))
        b.position_at_end(fail)
        b.ret(I1(0))
        return f

