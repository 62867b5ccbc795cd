"""Tiles in LLVM: a tile value is a pointer to a buffer of its elements (row-major, packed
as in an array), allocated on the kernel's stack.

Tiles are values in the IR, so no op writes a buffer that another value may still read:
each op that makes a tile writes a buffer of its own (allocated once, in the entry block;
an op inside a loop rewrites its buffer each iteration, when the previous value is dead),
and a tile carried by a loop lives in a buffer of the loop's, into which each iteration's
yielded value is copied. `if` results and `select` merely pick a pointer. The exception is
an update whose input has no other use (`t[i] = x`, an adjoint's `add_at`): it may write
the input's buffer in place (`in_place`), which turns a loop that fills a tile element by
element into stores instead of copies.

`tile_map` (the op behind elementwise arithmetic, loads, stores and reductions) runs its
region once per element, in row-major order. Its float sums are added with the `reassoc`
flag (on that add only), so LLVM vectorises them: the order of the additions is then a
fixed tree of partial sums chosen at compile time (deterministic from run to run), not
sequential; Warp leaves the order of a tile reduction unspecified.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ..ir.core import Op, Value
from ..types import TileType
from .llvm_types import I8, I32, I64, PTR
from .tile_views import view_loads


class TileOps:
    """Tile lowerings of `KernelCodegen`."""

    # Buffers --------------------------------------------------------------------------------
    def tile_buffer(self, t: TileType, name: str = "tile"):
        """A fresh stack buffer for a tile of type `t` (allocated once per call however often
        the op runs: `stack_buffer`)."""
        self.tile_stack_bytes += t.nbytes
        return self.stack_buffer(t.nbytes, name)

    def stack_buffer(self, nbytes: int, name: str, align: int = 16):
        """`nbytes` of this call's stack memory as an opaque pointer, as the other addresses
        in a kernel (an alloca in the entry block: allocated once per call)."""
        buf = self._entry_alloca(ir.ArrayType(I8, max(nbytes, 1)), name)
        buf.align = align
        buf.type = PTR
        return buf

    def fill_zero(self, buf, nbytes: int):
        """Zero `nbytes` at `buf`."""
        memset = self.module.declare_intrinsic("llvm.memset", [PTR, I64])
        self.builder.call(memset, [buf, I8(0), I64(nbytes), ir.Constant(ir.IntType(1), 0)])

    def tile_element_ptr(self, buf, t: TileType, flat):
        """The address of element `flat` (an i64 or i32 row-major index) of tile `buf`."""
        b = self.builder
        if flat.type != I64:
            flat = b.sext(flat, I64)
        offset = b.mul(flat, I64(t.dtype.size), flags=("nsw",))
        return b.gep(buf, [offset], source_etype=I8, inbounds=True)

    def tile_get(self, buf, t: TileType, flat):
        return self.load_value(self.tile_element_ptr(buf, t, flat), t.dtype)

    def tile_set(self, buf, t: TileType, flat, rep):
        self.store_value(self.tile_element_ptr(buf, t, flat), rep, t.dtype)

    def tile_copy(self, dst, src, t: TileType):
        """dst <- src (skipped when they are the same buffer)."""
        b = self.builder
        with b.if_then(b.icmp_unsigned("!=", dst, src)):
            b.call(self._memcpy(), [dst, src, I64(t.nbytes), ir.Constant(ir.IntType(1), 0)])

    def _tile_temp(self, src, t: TileType):
        """A copy of tile `src` in a buffer of its own."""
        tmp = self.tile_buffer(t, "temp")
        self.tile_copy(tmp, src, t)
        return tmp

    def tile_fill_zero(self, buf, t: TileType):
        self.fill_zero(buf, t.nbytes)

    def _memcpy(self):
        return self.module.declare_intrinsic("llvm.memcpy", [PTR, PTR, I64])

    def in_place(self, value: Value, user: Op) -> bool:
        """Whether `user` (an update) may write `value`'s buffer: it is `value`'s only use,
        it runs at most once per definition of `value` (no loop between them), and the
        buffer is `value`'s own (made by a tile op, or a loop's carried buffer), not one it
        shares with another value through an `if`, a `select` or a loop result."""
        uses, scope = self._tile_uses()
        if uses.get(value.id, 0) != 1 or scope.get(value.id) != scope.get(id(user)):
            return False
        owner = value.owner
        if isinstance(owner, Op):
            return owner.name in ("call", "tile_map", "pop")
        return value.id in self.carried_tiles  # a loop's or a tile_map's carried tile

    def _tile_uses(self):
        """(uses per tile value, the innermost repeating region of each op and tile value)."""
        if getattr(self, "_tile_use_info", None) is None:
            uses, scope = {}, {}

            def visit(block, key):
                for a in block.args:
                    scope[a.id] = key
                for op in block.ops:
                    scope[id(op)] = key
                    for v in op.operands:
                        if isinstance(v.type, TileType):
                            uses[v.id] = uses.get(v.id, 0) + 1
                    for r in op.results:
                        scope[r.id] = key
                    repeats = op.name in ("for", "while", "tile_map")
                    for region in op.regions:
                        visit(region, id(region) if repeats else key)

            visit(self.fn.body, 0)
            self._tile_use_info = (uses, scope)
        return self._tile_use_info

    # Loops over elements --------------------------------------------------------------------
    def tile_loops(self, shape, body):
        """Emit nested loops over `shape` (row-major); `body(coords, flat)` emits one element
        (coords: i32 values, flat: the i32 row-major index)."""
        b = self.builder
        coords = []
        flat_slot = self._entry_alloca(I32, "flat")
        b.store(I32(0), flat_slot)
        exits = []
        for extent in shape:
            i, exit_ = self._loop_header(I32(0), I32(extent), "tile")
            coords.append(i)
            exits.append((i, exit_))
        flat = b.load(flat_slot)
        body(coords, flat)
        b.store(b.add(flat, I32(1)), flat_slot)
        for depth, (i, exit_) in reversed(list(enumerate(exits))):
            self._loop_latch(i, b.add(i, I32(1), flags=("nsw",)))
            if depth < len(shape) - 1 and shape[-1] >= 4:
                # rows are contiguous: vectorise along them (LLVM would otherwise unroll a
                # short row and vectorise across rows with gathers)
                b.block.terminator.set_metadata("llvm.loop", self._no_vectorize_md())
            b.position_at_end(exit_)

    def _no_vectorize_md(self):
        """Fresh `llvm.loop` metadata (self-referencing, as LLVM requires) that keeps the
        loop vectoriser off a loop."""
        m = self.module
        props = m.add_metadata([ir.MetaDataString(m, "llvm.loop.vectorize.width"), I32(1)])
        node = ir.values.MDValue(m, [], name=str(len(m.metadata)))
        node.operands = (node, props)
        return node

    def _entry_alloca(self, typ, name):
        """An alloca at the top of the entry block (allocated once per call)."""
        entry = self.func.entry_basic_block
        b = ir.IRBuilder(entry)
        if entry.instructions:
            b.position_before(entry.instructions[0])
        return b.alloca(typ, name=name)

    # Views (tile_views.py) -------------------------------------------------------------------
    def tile_views(self) -> dict:
        """The tile loads lowered as views of their array (tile_views.view_loads)."""
        if getattr(self, "_tile_views", None) is None:
            self._tile_views = view_loads(self.fn)
            self.tile_strides = {}  # tile value id -> (row, column) strides in bytes, i64
        return self._tile_views

    def _view_of(self, op, load, arr, offsets):
        """The address of the tile's first element in the array (its strides go to
        `tile_strides`): the tile_map is not run."""
        ptr = self._address(load, arr, offsets)
        if arr.type.ndim == 1:  # (PACKED: read as the tile's own buffer)
            return ptr
        a = self.v(arr)
        col = I64(self._elem_size(arr.type.dtype)) if arr.id in self.contiguous else \
            self.builder.extract_value(a, [2, 1])
        self.tile_strides[op.results[0].id] = (self.builder.extract_value(a, [2, 0]), col)
        return ptr

    def packed_strides(self, value: Value):
        """(row, column) strides in bytes (i64) of a 2D tile's buffer: a view's, or those of
        a packed tile."""
        self.tile_views()
        t = value.type
        return self.tile_strides.get(value.id) or (I64(t.shape[1] * t.dtype.size), I64(t.dtype.size))

    # tile_map ------------------------------------------------------------------------------
    def op_tile_map(self, op):
        view = self.tile_views().get(id(op))
        if view is not None and not any(isinstance(self.v(o).type, ir.VectorType) for o in view[2]) \
                and (view[3] == 0 or view[1].id in self.contiguous):  # (b's rows are read as vectors)
            return [self._view_of(op, *view[:3])]
        n_in, n_out, n_sums = op.attrs["n_inputs"], op.attrs["n_out"], op.attrs["n_sums"]
        shape = op.attrs["shape"]
        inputs = [(self.v(x), x.type) for x in op.operands[:n_in]]
        states = op.operands[n_in:]
        region = op.regions[0]
        b = self.builder
        out_types = [r.type for r in op.results[:n_out]]
        outs = [self.tile_buffer(t, "map") for t in out_types]
        sum_types = [r.type for r in op.results[n_out:n_out + n_sums]]
        sum_slots = [[self._entry_alloca(lt, "sum") for lt in self.leaf_types(t)] for t in sum_types]
        for slots, t in zip(sum_slots, sum_types):
            for slot, lt in zip(slots, self.leaf_types(t)):
                b.store(ir.Constant(lt, 0) if not isinstance(lt, ir.IntType) else lt(0), slot)
        state_slots = []  # per state: a tile buffer, or one alloca per leaf
        for x in states:
            if isinstance(x.type, TileType):
                buf = self.tile_buffer(x.type, "state")
                self.tile_copy(buf, self.v(x), x.type)
                state_slots.append(buf)
            else:
                slots = [self._entry_alloca(lt, "state") for lt in self.leaf_types(x.type)]
                for slot, leaf in zip(slots, self.leaves(self.v(x), x.type)):
                    b.store(leaf, slot)
                state_slots.append(slots)

        def element(coords, flat):
            args = list(coords)
            args += [self.tile_get(buf, t, flat) for buf, t in inputs]
            for x, slot, arg in zip(states, state_slots, region.args[len(coords) + n_in:]):
                if isinstance(x.type, TileType):
                    self.carried_tiles.add(arg.id)
                    args.append(slot)
                else:
                    args.append(self.from_leaves(x.type, iter([b.load(s) for s in slot])))
            vals = self._region(region, args)
            for buf, t, v in zip(outs, out_types, vals[:n_out]):
                self.tile_set(buf, t, flat, v)
            for slots, t, v in zip(sum_slots, sum_types, vals[n_out:n_out + n_sums]):
                for slot, leaf in zip(slots, self.leaves(v, t)):
                    cur = b.load(slot)
                    b.store(b.fadd(cur, leaf, flags=("reassoc",))
                            if isinstance(leaf.type, (ir.FloatType, ir.DoubleType, ir.HalfType))
                            else b.add(cur, leaf), slot)
            for x, slot, v in zip(states, state_slots, vals[n_out + n_sums:]):
                if isinstance(x.type, TileType):
                    self.tile_copy(slot, v, x.type)
                else:
                    for s, leaf in zip(slot, self.leaves(v, x.type)):
                        b.store(leaf, s)

        self.tile_loops(shape, element)
        results = list(outs)
        for slots, t in zip(sum_slots, sum_types):
            results.append(self.from_leaves(t, iter([b.load(s) for s in slots])))
        for x, slot in zip(states, state_slots):
            if isinstance(x.type, TileType):
                results.append(slot)
            else:
                results.append(self.from_leaves(x.type, iter([b.load(s) for s in slot])))
        return results
