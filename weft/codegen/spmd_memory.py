"""Loads, stores and atomics at varying indices in the vector body (spmd.py).

Run lane by lane through the scalar lowering, an access at a varying index costs a bounds
check, a branch and a select per lane. Here the lanes are checked together (one vector
compare), and then:
- where the last index is `tid() + uniform` (`SpmdPlan.lane_step` 1), the other indices
  are uniform and the array's rows are contiguous, the lanes' elements lie side by side:
  one vector load or store (components of vectors and matrices de-interleaved by shuffles);
  a load at `k * tid() + uniform` (k up to 4: `springs[2 * s + 1]`) reads the k * WIDTH
  elements from lane 0's as one vector and picks every k-th (when they are all in bounds);
- otherwise each lane reads or writes its own element, in lane order (two lanes that store
  to one element leave the later thread's value, as the scalar loop does); atomics update
  element by element, plain or atomic as in the scalar lowering (one branch on that for all
  lanes, not one per component).
In a masked loop (spmd_masked.py) the lanes that have left it are sent to the scratch
element and their indices are not checked. A lane out of bounds does what the scalar code
does: its error is recorded (the first such
lane's, in a cold branch), it reads and writes the context's scratch element instead, and
the launch raises IndexError afterwards. Two differences from running the threads one at
a time, neither of which a program may rely on: with several errors in one group of
lanes, the one recorded is the first op's (not the first thread's), and the float adds of
several lanes into one element land op by op rather than thread by thread (float atomics
fix no order either).
"""

from __future__ import annotations

import llvmlite.ir as ir

from ..types import ArrayType, Matrix, Scalar, Vector, bfloat16, bool_, float16
from .llvm_types import llvm_type

I8, I32, I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)


def vector_access_type(arr_type) -> Scalar | None:
    """The scalar type of the components of an array's elements when an access to it can
    take the vector path (plain arrays of numbers, vectors and matrices), else None."""
    if not isinstance(arr_type, ArrayType) or arr_type.fabric or arr_type.indexed:
        return None
    return component_scalar(arr_type.dtype)


def component_scalar(t) -> Scalar | None:
    """The scalar type of the components of a number, vector or matrix type `t` that the
    vector body reads and writes whole, or None (bools, half precision, other types)."""
    scalar = t.dtype if isinstance(t, (Vector, Matrix)) else t
    if not isinstance(scalar, Scalar) or scalar in (bool_, float16, bfloat16):
        return None
    return scalar


class SpmdMemory:
    """The `SpmdOps` part that lowers varying-index memory ops (see the module docstring)."""

    def vector_memory(self, op) -> bool:
        """Lower load / store / atomic `op` here if it qualifies; whether it did."""
        arr_value = op.operands[0]
        if op.name == "atomic" and (op.attrs["op"] not in ("add", "sub") or id(op) in self.uniform_adds):
            return False
        scalar = vector_access_type(arr_value.type)
        if scalar is None or self.plan.is_varying(arr_value):
            return False
        ndim = arr_value.type.ndim
        b = self.builder
        idx = [self.widen(self._lane_index(x)) for x in op.operands[1:1 + ndim]]  # (i64 vectors)
        arr = self.v(arr_value)
        t = arr_value.type.dtype
        count = t.num_components if isinstance(t, (Vector, Matrix)) else 1
        data = b.extract_value(arr, 0)
        offset = None
        for d, i in enumerate(idx):
            stride = ir.Constant(I64, scalar.size * count) if d == ndim - 1 and arr_value.id in self.contiguous \
                else b.extract_value(arr, [2, d])
            term = b.mul(i, self.splat(stride), flags=("nsw",))
            offset = term if offset is None else b.add(offset, term, flags=("nsw",))
        last = op.operands[ndim]
        uniform_rows = arr_value.id in self.contiguous and not any(self.plan.is_varying(x) for x in op.operands[1:ndim])
        step = self.plan.lane_step.get(last.id) if uniform_rows else None
        if step is not None and step > 1 and op.name != "load":
            step = None  # (a strided store or add would touch the elements in between)
        side_by_side = None  # (a run-time test that the lanes' elements are consecutive)
        if step is None and self.plan.flat:
            # lanes along the linear thread index cross rows, so no index is tid() plus a
            # constant; but `a[i, j]` over an array shaped like the launch, or a neighbour of
            # it, is consecutive in most groups
            elem = scalar.size * count
            first = self.splat(b.extract_element(offset, I32(0)))
            expect = b.add(first, ir.Constant(offset.type, [lane * elem for lane in range(self._width())]))
            side_by_side = b.icmp_unsigned("==", b.bitcast(b.icmp_signed("==", offset, expect), I8), I8(-1))
            step = 1
        lane_ptrs = [b.gep(data, [b.extract_element(offset, I32(lane))], source_etype=I8, inbounds=True)
                     for lane in range(self._width())]
        mask = self.mask  # (in a masked loop: the live lanes, spmd_masked.py)
        checked = not self._elided(op)
        if not checked and mask is None and step is None:
            self._lane_access(op, lane_ptrs, scalar, count)
            return True
        every = None  # (every lane live and in bounds; None: known)
        safe_ptrs = lane_ptrs
        if checked or mask is not None:
            valid = mask
            if checked:
                ok = None
                for d, i in enumerate(idx):
                    in_d = b.icmp_unsigned("<", i, self.splat(b.extract_value(arr, [1, d])))
                    ok = in_d if ok is None else b.and_(ok, in_d)
                fine = ok if mask is None else b.or_(ok, b.not_(mask))  # (lanes not live raise nothing)
                # as the scalar code does: the error of the first lane out of bounds is recorded
                # (a cold branch), and such a lane reads and writes the context's scratch element
                first_bad = b.zext(b.cttz(b.xor(b.bitcast(fine, I8), I8(-1)), ir.Constant(ir.IntType(1), 0)), I32)
                self._check(op, b.icmp_unsigned("==", b.bitcast(fine, I8), I8(-1)),
                            [b.extract_element(i, first_bad) for i in idx],
                            [b.extract_value(arr, [1, d]) for d in range(ndim)])
                valid = ok if mask is None else b.and_(ok, mask)
            every = b.icmp_unsigned("==", b.bitcast(valid, I8), I8(-1))
            scratch = self.scratch
            safe_ptrs = [b.select(b.extract_element(valid, I32(lane)), p, scratch) for lane, p in enumerate(lane_ptrs)]
        if step is None:
            self._lane_access(op, safe_ptrs, scalar, count)
            return True
        if side_by_side is not None:
            every = side_by_side if every is None else b.and_(every, side_by_side)
        if step > 1:  # a wide load also reads the elements between the lanes' and after the last
            extent = b.extract_value(arr, [1, ndim - 1])
            first = b.extract_element(idx[-1], I32(0))
            room = b.icmp_unsigned("<=", b.add(first, I64(step * self._width())), extent)
            every = room if every is None else b.and_(every, room)
        if every is None:
            self._contiguous_access(op, lane_ptrs[0], scalar, count, step)
            return True
        incoming = []
        with b.if_else(every, likely=True) as (fast, slow):
            with fast:
                self._contiguous_access(op, lane_ptrs[0], scalar, count, step)
                incoming.append(([self.values[r.id] for r in op.results], b.block))
            with slow:
                self._lane_access(op, safe_ptrs, scalar, count)
                incoming.append(([self.values[r.id] for r in op.results], b.block))
        for r, joined in zip(op.results, self._merge([r.type for r in op.results], incoming)):
            self.values[r.id] = joined
        return True

    def _lane_index(self, index):
        """An index as i64 (a vector when it varies)."""
        i = self.v(index)
        vt = i.type
        wide = ir.VectorType(I64, vt.count) if isinstance(vt, ir.VectorType) else I64
        return self.builder.sext(i, wide) if index.type.is_signed else self.builder.zext(i, wide)

    # Side by side: one vector access ------------------------------------------------------------
    def _contiguous_access(self, op, base, scalar, count, step=1):
        """One vector access to the elements of lanes 0..WIDTH-1 at `base`, `step` elements
        apart (loads only when step > 1: the elements between are read too)."""
        b = self.builder
        leaf = self._leaf_type(scalar)
        width = self._width()
        whole = ir.VectorType(leaf, width * count)
        if op.name == "load":
            flat = b.load(base, typ=ir.VectorType(leaf, width * count * step))
            flat.align = scalar.size
            self.values[op.result.id] = self._split(flat, scalar, count, op.result.type, step)
            return
        value = op.operands[-1]
        parts = self._parts(self.widen(self.v(value)), count)
        if op.name == "store":
            b.store(self._interleave(parts, count), base).align = scalar.size
            return
        # an add into side-by-side elements (distinct within the op): one vector read-add-write
        # where adds may be plain (a thread-owned adjoint, a launch in one call, a private
        # copy), else each lane's atomic update (another op or chunk may add to them too)
        plain = self._plain_flag(op)
        if op.attrs.get("private"):
            flat_old = self._plain_vector_add(op, base, whole, parts, count, scalar)
        else:
            with b.if_else(plain) as (alone, shared):
                with alone:
                    plain_old = self._plain_vector_add(op, base, whole, parts, count, scalar)
                    plain_bb = b.block
                with shared:
                    ptrs = [b.gep(base, [I64(lane * scalar.size * count)], source_etype=I8, inbounds=True)
                            for lane in range(width)]
                    shared_old = self._atomic_lanes(op, ptrs, parts, scalar, count)
                    shared_old = self._interleave(shared_old, count)
                    shared_bb = b.block
            flat_old = b.phi(whole)
            flat_old.add_incoming(plain_old, plain_bb)
            flat_old.add_incoming(shared_old, shared_bb)
        self.values[op.result.id] = self._split(flat_old, scalar, count, op.result.type)

    def _plain_vector_add(self, op, base, whole, parts, count, scalar):
        b = self.builder
        old = b.load(base, typ=whole)
        old.align = scalar.size
        x = self._interleave(parts, count)
        kind = op.attrs["op"]
        new = (b.fadd if scalar.is_float else b.add)(old, x) if kind == "add" else \
            (b.fsub if scalar.is_float else b.sub)(old, x)
        b.store(new, base).align = scalar.size
        return old

    def _split(self, flat, scalar, count, t, step=1):
        """The lanes' values in a flat vector of elements (`count` components each, lane k's
        element `step` elements after lane k-1's) as the value's representation."""
        if count == 1 and step == 1 and not isinstance(t, (Vector, Matrix)):
            return flat
        b = self.builder
        width = self._width()
        parts = [b.shuffle_vector(flat, ir.Constant(flat.type, ir.Undefined),
                                  ir.Constant(ir.VectorType(I32, width),
                                              [(lane * step) * count + k for lane in range(width)]))
                 for k in range(count)]
        return parts if isinstance(t, (Vector, Matrix)) else parts[0]

    def _interleave(self, parts, count):
        """Inverse of `_split`: component vectors to one flat vector, lane by lane."""
        if count == 1:
            return parts[0]
        b = self.builder
        width = self._width()
        flat = ir.Constant(ir.VectorType(parts[0].type.element, width * count), ir.Undefined)
        for lane in range(width):  # (LLVM turns these into shuffles)
            for k in range(count):
                flat = b.insert_element(flat, b.extract_element(parts[k], I32(lane)), I32(lane * count + k))
        return flat

    # Lane by lane, unchecked --------------------------------------------------------------------
    def _lane_access(self, op, ptrs, scalar, count):
        b = self.builder
        leaf = self._leaf_type(scalar)
        t = op.operands[0].type.dtype
        if op.name == "load":
            parts = []
            for k in range(count):
                vec = ir.Constant(ir.VectorType(leaf, len(ptrs)), ir.Undefined)
                for lane, p in enumerate(ptrs):
                    x = b.load(self._component(p, k, scalar), typ=leaf)
                    vec = b.insert_element(vec, x, I32(lane))
                parts.append(vec)
            self.values[op.result.id] = parts if isinstance(t, (Vector, Matrix)) else parts[0]
            return
        value = op.operands[-1]
        parts = self._parts(self.widen(self.v(value)), count)
        if op.name == "store":
            for lane, p in enumerate(ptrs):
                for k in range(count):
                    b.store(b.extract_element(parts[k], I32(lane)), self._component(p, k, scalar))
            return
        plain = self._plain_flag(op)

        def as_value(components):  # (component vectors as the element's representation)
            return components if isinstance(t, (Vector, Matrix)) else components[0]
        if op.attrs.get("private"):
            old = as_value(self._plain_lane_adds(op, ptrs, parts, scalar, count))
        else:
            incoming = []
            with b.if_else(plain) as (alone, shared):
                with alone:
                    incoming.append(([as_value(self._plain_lane_adds(op, ptrs, parts, scalar, count))], b.block))
                with shared:
                    incoming.append(([as_value(self._atomic_lanes(op, ptrs, parts, scalar, count))], b.block))
            (old,) = self._merge([t], incoming)
        self.values[op.result.id] = old

    def _plain_lane_adds(self, op, ptrs, parts, scalar, count) -> list:
        """Each lane's read-add-write in lane order (lanes may share an element); the old
        values as component vectors."""
        b = self.builder
        leaf = self._leaf_type(scalar)
        add = (b.fadd if scalar.is_float else b.add) if op.attrs["op"] == "add" else \
            (b.fsub if scalar.is_float else b.sub)
        old = [ir.Constant(ir.VectorType(leaf, len(ptrs)), ir.Undefined) for _ in range(count)]
        for lane, p in enumerate(ptrs):
            for k in range(count):
                q = self._component(p, k, scalar)
                before = b.load(q, typ=leaf)
                b.store(add(before, b.extract_element(parts[k], I32(lane))), q)
                old[k] = b.insert_element(old[k], before, I32(lane))
        return old

    def _atomic_lanes(self, op, ptrs, parts, scalar, count) -> list:
        b = self.builder
        rmw = self._RMW[scalar.kind][op.attrs["op"]]
        leaf = self._leaf_type(scalar)
        old = [ir.Constant(ir.VectorType(leaf, len(ptrs)), ir.Undefined) for _ in range(count)]
        for lane, p in enumerate(ptrs):
            for k in range(count):
                before = b.atomic_rmw(rmw, self._component(p, k, scalar),
                                      b.extract_element(parts[k], I32(lane)), "monotonic")
                old[k] = b.insert_element(old[k], before, I32(lane))
        return old

    # Helpers -----------------------------------------------------------------------------------
    def _plain_flag(self, op):
        """The i1 saying an add may be a plain read-modify-write (as `op_atomic` decides)."""
        return self.plain_adds.get(op.operands[0].id, self.serial)

    def _component(self, ptr, k, scalar):
        return self.builder.gep(ptr, [I64(k * scalar.size)], source_etype=I8, inbounds=True) if k else ptr

    def _parts(self, rep, count) -> list:
        return list(rep) if isinstance(rep, list) else [rep]

    def _leaf_type(self, scalar):
        return llvm_type(scalar)

    def _width(self) -> int:
        from .spmd import WIDTH
        return WIDTH
