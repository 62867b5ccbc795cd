"""Stack buffers of vectors and matrices (transforms/composite_memory.py) in the vector body.

In the vector body (spmd.py) such a buffer holds one vector or matrix per lane, component
by component: component c of lane l lies c * WIDTH + l scalars from its start. A component
the lanes pick with one (uniform) index is then one vector load or store, and one they
pick with indices that differ between lanes is a scalar access per lane. In a masked loop
the lanes that have left it keep their components (a store blends with the old values).
An op run lane by lane (a varying `if` with stores) reaches the same memory through its
lane's addresses. The scalar body (the threads left over) has buffers of its own, laid out
as usual.

A buffer qualifies when the kernel body allocates it at its top level, holds a vector or
matrix of numbers (not bools or half floats: `component_scalar`), and is used only through
`component` views and loads and stores of its one element: what the pass emits. Any other `local_array` keeps the kernel
scalar.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ..ir.core import Function, constant_value, operand_uses
from ..types import Matrix, Vector
from .llvm_types import I64, llvm_type
from .memory_ops import _part_offset
from .spmd_memory import component_scalar

I8, I32 = ir.IntType(8), ir.IntType(32)


def lane_buffer_ops(fn: Function) -> set[int]:
    """ids of the ops that allocate, view, load and store the qualifying buffers (above)."""
    uses = operand_uses(fn.body)

    def element_access(op, pos) -> bool:
        return op.name in ("load", "store") and pos == 0 and constant_value(op.operands[1]) == 0

    out = set()
    for op in fn.body.ops:
        if op.name != "local_array" or tuple(op.attrs["shape"]) != (1,):
            continue
        t = op.result.type.dtype
        if not isinstance(t, (Vector, Matrix)) or component_scalar(t) is None:
            continue
        ops = [op]
        for user, pos in uses.get(op.result.id, ()):
            if user.name == "component" and pos == 0 and user.attrs["of"] is not None:
                if not all(element_access(*use) for use in uses.get(user.result.id, ())):
                    break
                ops += [user] + [u for u, _ in uses.get(user.result.id, ())]
            elif element_access(user, pos):
                ops.append(user)
            else:
                break
        else:
            out.update(id(o) for o in ops)
    return out


class SpmdBuffers:
    """The `SpmdOps` part that lowers lane buffers. A buffer (or view) is represented by
    (base address, offset in scalars: an i64, or an i64 vector where the lanes' differ)."""

    def emit_buffer_op(self, op):
        getattr(self, "_buffer_" + op.name)(op)

    def _buffer_local_array(self, op):
        t = op.result.type.dtype
        nbytes = t.num_components * component_scalar(t).size * self._width()
        buf = self.stack_buffer(nbytes, "lanebuffer", align=32)
        self.fill_zero(buf, nbytes)
        self.values[op.result.id] = (buf, I64(0))

    def _buffer_component(self, op):
        b = self.builder
        arr, *dynamic = op.operands
        base, offset = self.values[arr.id]
        scalar = component_scalar(op.attrs["of"])
        start = _part_offset(arr.type.dtype, op.attrs["path"]) // scalar.size
        if self.lane is not None:  # (one lane's view, in code run lane by lane)
            offset = self.lane_of(offset, self.lane)
        if self.lane is None and any(self.plan.is_varying(x) for x in dynamic):
            k = self._lanes_component_index(op, op.attrs["of"], dynamic)
            offset = self.widen(offset)
            start = ir.Constant(k.type, [start] * self._width())
        else:
            k = self._component_index(op, op.attrs["of"], dynamic)
            start = I64(start)
        self.values[op.result.id] = (base, b.add(offset, b.add(k, start)))

    def _lanes_component_index(self, op, of, dynamic):
        """`_component_index` for indices that differ between lanes: all lanes checked at
        once (the first bad live lane's error recorded); a bad lane takes component 0."""
        b = self.builder
        width = self._width()
        flat = ok = None
        for index, extent in zip(dynamic, of.shape):
            i = self.widen(self._lane_index(index))
            in_range = b.icmp_unsigned("<", i, self.splat(I64(extent)))
            ok = in_range if ok is None else b.and_(ok, in_range)
            flat = i if flat is None else b.add(b.mul(flat, self.splat(I64(extent))), i)
        fine = ok if self.mask is None else b.or_(ok, b.not_(self.mask))
        bits = b.bitcast(fine, ir.IntType(width))
        first_bad = b.zext(b.cttz(b.xor(bits, ir.Constant(bits.type, -1)), ir.Constant(ir.IntType(1), 0)), I32)
        self._check(op, b.icmp_unsigned("==", bits, ir.Constant(bits.type, -1)),
                    [b.extract_element(self.widen(self._lane_index(x)), first_bad) for x in dynamic],
                    [I64(e) for e in of.shape])
        return b.select(ok, flat, ir.Constant(flat.type, [0] * width))

    def _buffer_addresses(self, base, offset, scalar, k):
        """Component `k` (past `offset`) of the buffer: one address for all lanes (the
        first lane's, the rest follow), or one per lane."""
        b = self.builder
        width = self._width()
        size = scalar.size
        if self.lane is not None or not isinstance(offset.type, ir.VectorType):
            first = b.mul(b.add(offset, I64(k)), I64(width * size))
            if self.lane is not None:
                first = b.add(first, I64(self.lane * size))
            return b.gep(base, [first], source_etype=I8, inbounds=True)
        return [b.gep(base, [b.add(b.mul(b.add(b.extract_element(offset, I32(lane)), I64(k)), I64(width * size)),
                                    I64(lane * size))], source_etype=I8, inbounds=True)
                for lane in range(width)]

    def _buffer_load(self, op):
        b = self.builder
        base, offset = self.values[op.operands[0].id]
        t = op.result.type
        scalar = component_scalar(t)
        leaf, width = llvm_type(scalar), self._width()
        parts = []
        for k in range(t.num_components if isinstance(t, (Vector, Matrix)) else 1):
            where = self._buffer_addresses(base, offset, scalar, k)
            if isinstance(where, list):
                vec = ir.Constant(ir.VectorType(leaf, width), ir.Undefined)
                for lane, p in enumerate(where):
                    vec = b.insert_element(vec, b.load(p, typ=leaf), I32(lane))
                parts.append(vec)
            else:
                typ = leaf if self.lane is not None else ir.VectorType(leaf, width)
                x = b.load(where, typ=typ)
                x.align = scalar.size
                parts.append(x)
        self.values[op.result.id] = parts if isinstance(t, (Vector, Matrix)) else parts[0]

    def _buffer_store(self, op):
        b = self.builder
        arr, _, value = op.operands
        base, offset = self.values[arr.id]
        t = value.type
        scalar = component_scalar(t)
        leaf = llvm_type(scalar)
        rep = self.v(value) if self.lane is not None else self.widen(self.values[value.id])
        parts = rep if isinstance(t, (Vector, Matrix)) else [rep]
        for k, part in enumerate(parts):
            where = self._buffer_addresses(base, offset, scalar, k)
            if isinstance(where, list):
                for lane, p in enumerate(where):
                    x = b.extract_element(part, I32(lane))
                    if self.mask is not None:
                        x = b.select(b.extract_element(self.mask, I32(lane)), x, b.load(p, typ=leaf))
                    b.store(x, p)
                continue
            if self.lane is None and self.mask is not None:
                part = b.select(self.mask, part, b.load(where, typ=part.type))
            b.store(part, where).align = scalar.size

