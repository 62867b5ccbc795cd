"""Lowering of memory: array addresses with bounds checks, loads, stores, atomics, views, thread indices."""

from __future__ import annotations

import ctypes

import llvmlite.ir as ir

from ..ir.core import Value
from ..types import ArrayType, Matrix, Scalar, StructType, Vector, bfloat16, bool_, uint16, uint32, uint64
from ..types.layout import ctype_of
from .llvm_types import (
    I8,
    I16,
    I32,
    I64,
    PTR,
    _all_of,
    _member_offsets,
    _members,
    llvm_type,
)

GRAD = 3  # the gradient address in a (not indexed) array value (llvm_types.llvm_type)

_UINT = {16: uint16, 32: uint32, 64: uint64}


def _part_offset(t, path) -> int:
    """Byte offset in an element of type `t` of the part `path` names (struct field indices,
    then one flat component index of a vector or matrix; see lang/array_parts.py)."""
    offset = 0
    for k in path:
        offset += _member_offsets(t)[k]
        if isinstance(t, StructType):
            t = list(t.fields.values())[k]
    return offset


def _part_of(rep, t, path, part_type):
    """The part `path` names of value representation `rep` of type `t`."""
    for k in path:
        if isinstance(t, StructType):
            rep, t = rep[k], list(t.fields.values())[k]
            continue
        return list(rep[k:k + part_type.num_components]) if isinstance(part_type, Vector) else rep[k]
    return rep


class MemoryOps:
    """Array and memory op lowerings of `KernelCodegen`."""

    def tbaa(self, kind: str):
        """The type-based alias tag of `kind` ("stack": builtins/bvh.py's traversal stacks,
        "data": the reads of geometry data in the builtins' own funcs). Accesses with
        different tags never alias; untagged ones may alias anything."""
        tags = self.__dict__.setdefault("_tbaa_tags", {})
        if kind not in tags:
            if "" not in tags:
                tags[""] = self.module.add_metadata(["weft tbaa"])
            node = self.module.add_metadata([f"weft {kind}", tags[""], I64(0)])
            tags[kind] = self.module.add_metadata([node, node, I64(0)])
        return tags[kind]

    def load_value(self, ptr, t, tbaa=None):
        """Load a value of type `t` from memory, component by component (each load tagged
        with the alias tag `tbaa` if given)."""
        b = self.builder
        if isinstance(t, ArrayType):
            return b.load(ptr, typ=llvm_type(t))
        if isinstance(t, Scalar):
            v = b.load(ptr, typ=llvm_type(t, True))
            if tbaa is not None:
                v.set_metadata("tbaa", self.tbaa(tbaa))
            if t is bfloat16:
                return self.bf16_from_bits(v)
            return b.icmp_unsigned("!=", v, I8(0)) if t is bool_ else v
        return [self.load_value(self._member_ptr(ptr, t, k), ct, tbaa) for k, ct in enumerate(_members(t))]

    def store_value(self, ptr, rep, t):
        b = self.builder
        if isinstance(t, Scalar):
            if t is bfloat16:
                rep = self.bf16_bits(rep)
            b.store(b.zext(rep, I8) if t is bool_ else rep, ptr)
            return
        if isinstance(t, ArrayType):
            b.store(rep, ptr)
            return
        for k, (part, ct) in enumerate(zip(rep, _members(t))):
            self.store_value(self._member_ptr(ptr, t, k), part, ct)

    def _member_ptr(self, ptr, t, k):
        offset = _member_offsets(t)[k]
        return self.builder.gep(ptr, [I64(offset)], source_etype=I8, inbounds=True) if offset else ptr

    # Thread index and arrays ---------------------------------------------------------------
    def op_tid(self, op):
        dim, of = op.attrs["dim"], op.attrs["of"]
        rep = self.thread_index if dim < 0 or of == 1 else self.tids[of][dim]
        return rep if self.lane is None else self.lane_of(rep, self.lane)

    def _shape(self, arr, d):
        return self.builder.extract_value(arr, [1, d])

    def op_local_array(self, op):
        """A zero-filled array in this call's stack memory (an alloca in the entry block, so
        that it is allocated once per call; zeroed each time the op runs)."""
        b = self.builder
        t, shape = op.result.type, op.attrs["shape"]
        elem = self._elem_size(t.dtype)
        nbytes = elem
        for n in shape:
            nbytes *= n
        buf = self.stack_buffer(nbytes, "fixedarray")
        if nbytes:
            self.fill_zero(buf, nbytes)
        out = ir.Constant(llvm_type(t), ir.Undefined)
        out = b.insert_value(b.insert_value(out, buf, 0), ir.Constant(PTR, None), GRAD)
        stride = elem
        for d in reversed(range(t.ndim)):
            out = b.insert_value(out, I64(shape[d]), [1, d])
            out = b.insert_value(out, I64(stride), [2, d])
            stride *= shape[d]
        self.contiguous.add(op.result.id)
        return out

    def op_null_array(self, op):
        return ir.Constant(llvm_type(op.result.type), None)  # null pointer, shape 0

    def op_array_ptr(self, op):
        return self.builder.ptrtoint(self.builder.extract_value(self.v(op.operands[0]), 0), I64)

    def op_make_array(self, op):
        b = self.builder
        ptr, *extents = op.operands
        grad = ir.Constant(PTR, None)
        if op.attrs.get("grad"):
            grad = b.inttoptr(self.v(extents[0]), PTR)
            extents = extents[1:]
        t = op.result.type
        dims = [self._int64(e) for e in extents]
        out = ir.Constant(llvm_type(t), ir.Undefined)
        out = b.insert_value(out, b.inttoptr(self.v(ptr), PTR), 0)
        out = b.insert_value(out, grad, GRAD)
        stride = I64(self._elem_size(t.dtype))
        for d in reversed(range(t.ndim)):
            out = b.insert_value(out, dims[d], [1, d])
            out = b.insert_value(out, stride, [2, d])
            stride = b.mul(stride, dims[d])
        return out

    def _int64(self, v: Value):
        x = self.v(v)
        if v.type.bits == 64:
            return x
        return self.builder.sext(x, I64) if v.type.is_signed else self.builder.zext(x, I64)

    def op_slice(self, op):
        """A view by Python's slicing rules (see builtins/array_ops.py); integer keys are
        bounds-checked (a view at a bad index has no elements)."""
        b = self.builder
        arr, *vals = op.operands
        src = self.v(arr)
        given = iter(vals)
        zero, one = I64(0), I64(1)
        offset, shapes, strides, oks, bad_index, bad_extent = zero, [], [], [], [], []
        for d in range(arr.type.ndim):
            n = self._shape(src, d)
            s = b.extract_value(src, [2, d])
            key = op.attrs["keys"][d] if d < len(op.attrs["keys"]) else (False, False, False)
            if key == "i":
                i = self._int64(next(given))
                i = b.select(b.icmp_signed("<", i, zero), b.add(i, n), i)
                oks.append(b.icmp_unsigned("<", i, n))
                bad_index.append(i)
                bad_extent.append(n)
                offset = b.add(offset, b.mul(i, s))
                continue
            start, stop, step = (self._int64(next(given)) if has else None for has in key)
            step = one if step is None else b.select(b.icmp_signed("==", step, zero), one, step)
            back = b.icmp_signed("<", step, zero)
            lo, hi = b.select(back, I64(-1), zero), b.select(back, b.sub(n, one), n)

            def bound(x, default, lo=lo, hi=hi, n=n):
                if x is None:
                    return default
                x = b.select(b.icmp_signed("<", x, zero), b.add(x, n), x)
                x = b.select(b.icmp_signed("<", x, lo), lo, x)
                return b.select(b.icmp_signed(">", x, hi), hi, x)
            first = bound(start, b.select(back, b.sub(n, one), zero))
            last = bound(stop, b.select(back, I64(-1), n))
            span = b.select(back, b.sub(first, last), b.sub(last, first))
            pace = b.select(back, b.neg(step), step)
            count = b.sdiv(b.add(span, b.sub(pace, one)), pace)
            count = b.select(b.icmp_signed("<", count, zero), zero, count)
            offset = b.add(offset, b.mul(b.select(b.icmp_signed(">", count, zero), first, zero), s))
            shapes.append(count)
            strides.append(b.mul(s, step))
        ok = None
        if oks and not self._elided(op):
            ok = _all_of(b, oks)
            self._check(op, ok, bad_index, bad_extent)
        out = ir.Constant(llvm_type(op.result.type), ir.Undefined)
        data = b.gep(b.extract_value(src, 0), [offset], source_etype=I8)
        out = b.insert_value(out, data, 0)
        out = self._offset_grad(src, arr.type, out, op.result.type, offset)
        for d, (extent, stride) in enumerate(zip(shapes, strides)):
            out = b.insert_value(out, extent if ok is None else b.select(ok, extent, zero), [1, d])
            out = b.insert_value(out, stride, [2, d])
        return out

    def _offset_grad(self, src, src_type, out, out_type, offset):
        """A view's gradient address: its array's, moved by the view's byte offset (null
        stays null)."""
        if out_type.indexed:
            return out
        b = self.builder
        null = ir.Constant(PTR, None)
        grad = null if src_type.indexed else b.extract_value(src, GRAD)
        moved = b.gep(grad, [offset], source_etype=I8)
        return b.insert_value(out, b.select(b.icmp_unsigned("==", grad, null), null, moved), GRAD)

    def op_component(self, op):
        """The array of a part of `arr`'s elements: its address moved to the part (in the
        gradient memory too), the same shape and strides."""
        arr, *dynamic = op.operands
        b = self.builder
        src = self.v(arr)
        offset = I64(_part_offset(arr.type.dtype, op.attrs["path"]))
        if dynamic:  # checked (row[, column]) indices; a bad one records the error, takes part 0
            scalar = op.attrs["of"].dtype
            k = self._component_index(op, op.attrs["of"], dynamic)
            offset = b.add(offset, b.mul(k, I64(scalar.size)))
        part = b.gep(b.extract_value(src, 0), [offset], source_etype=I8)
        if arr.id in self.plain_adds:  # (adds into a private copy of the array: transforms/scatter.py)
            self.plain_adds[op.result.id] = self.plain_adds[arr.id]
        # (an array value's LLVM type depends on its ndim alone: the rest of `src` carries over)
        return self._offset_grad(src, arr.type, b.insert_value(src, part, 0), op.result.type, offset)

    def op_array_grad(self, op):
        """The array over `arr`'s gradient memory (its shape and strides; no elements and a
        null address where it has no gradient)."""
        b = self.builder
        src = self.v(op.operands[0])
        grad = b.extract_value(src, GRAD)
        absent = b.icmp_unsigned("==", grad, ir.Constant(PTR, None))
        out = b.insert_value(b.insert_value(src, grad, 0), ir.Constant(PTR, None), GRAD)
        for d in range(op.result.type.ndim):
            out = b.insert_value(out, b.select(absent, I64(0), self._shape(src, d)), [1, d])
        return out

    def op_array_shape(self, op):
        return self.builder.trunc(self._shape(self.v(op.operands[0]), op.attrs["dim"]), I32)

    def _address(self, op, arr_value: Value, indices):
        """Address of an element (or sub-array), bounds-checked unless proven in bounds."""
        if arr_value.type.fabric:
            return self._fabric_address(op, arr_value, indices)
        if arr_value.type.indexed:
            return self._indexed_address(op, arr_value, indices)
        b = self.builder
        arr = self.v(arr_value)
        t = arr_value.type
        elem_size = self._elem_size(t.dtype)
        offset = None
        oks, idx64, extents = [], [], []
        check = not self._elided(op)
        for d, index in enumerate(indices):
            i = self.v(index)
            i = b.sext(i, I64) if index.type.is_signed else b.zext(i, I64)
            if check:
                extent = self._shape(arr, d)
                oks.append(b.icmp_unsigned("<", i, extent))
                idx64.append(i)
                extents.append(extent)
            if d == t.ndim - 1 and arr_value.id in self.contiguous:
                stride = I64(elem_size)
            else:
                stride = b.extract_value(arr, [2, d])
            term = b.mul(i, stride, flags=("nsw",))
            offset = term if offset is None else b.add(offset, term, flags=("nsw",))
        data = b.extract_value(arr, 0)
        ptr = b.gep(data, [offset], source_etype=I8, inbounds=True)
        if check:
            ok = _all_of(b, oks)
            self._check(op, ok, idx64, extents)
            scratch = self.scratch
            ptr = b.select(ok, ptr, scratch)
            self.last_ok = ok
        else:
            self.last_ok = None
        return ptr

    def _indexed_address(self, op, arr_value: Value, indices):
        """Address of an element of an indexed array: index `i` of a dimension with an index
        array reads the data at `indices[d][i]`. Both `i` (against the indexed shape) and
        the index read (against the data's extent) are bounds-checked."""
        b = self.builder
        arr = self.v(arr_value)
        scratch = self.scratch
        offset = I64(0)
        oks_i, oks_j, idx_i, idx_j, shape_i, shape_j = [], [], [], [], [], []
        for d, index in enumerate(indices):
            i = self._int64(index)
            n = self._shape(arr, d)
            ok_i = b.icmp_unsigned("<", i, n)
            table = b.extract_value(arr, [3, d])
            has_table = b.icmp_unsigned("!=", b.ptrtoint(table, I64), I64(0))
            slot = b.gep(table, [b.mul(i, I64(4))], source_etype=I8)
            read = b.load(b.select(b.and_(has_table, ok_i), slot, scratch), typ=I32)
            j = b.select(has_table, b.sext(read, I64), i)
            extent = b.extract_value(arr, [4, d])
            oks_i.append(ok_i)
            oks_j.append(b.icmp_unsigned("<", j, extent))
            idx_i.append(i)
            idx_j.append(j)
            shape_i.append(n)
            shape_j.append(extent)
            offset = b.add(offset, b.mul(j, b.extract_value(arr, [2, d])))
        ptr = b.gep(b.extract_value(arr, 0), [offset], source_etype=I8)
        self.last_ok = None
        if self.bounds_checks:
            ok_i, ok_j = _all_of(b, oks_i), _all_of(b, oks_j)
            if not self._elided(op):
                self._check(op, ok_i, idx_i, shape_i)
            self._check(op, ok_j, idx_j, shape_j)  # the index arrays' entries: never proven
            ok = b.and_(ok_i, ok_j)
            ptr = b.select(ok, ptr, scratch)
            self.last_ok = ok
        return ptr

    def _indexed_view(self, op, arr, idx):
        """`a[i]` of an indexed array: the leading indices go through their index arrays to
        an address; the view keeps the remaining dimensions' shapes, strides, index arrays
        and data extents (no elements where an index was out of bounds)."""
        b = self.builder
        ptr = self._indexed_address(op, arr, idx)
        ok = self.last_ok
        src = self.v(arr)
        k = len(idx)
        out = ir.Constant(llvm_type(op.result.type), ir.Undefined)
        out = b.insert_value(out, ptr, 0)
        for d in range(op.result.type.ndim):
            extent = b.extract_value(src, [1, d + k])
            out = b.insert_value(out, extent if ok is None else b.select(ok, extent, I64(0)), [1, d])
            for field in (2, 3, 4):  # strides, index arrays, data extents
                out = b.insert_value(out, b.extract_value(src, [field, d + k]), [field, d])
        return out

    def _fabric_slot(self, op, arr, index):
        """(address of the table entry of element `index`, ok) in a Fabric array value
        (types.layout.FabricDesc): the index goes through the index array if there is one;
        both it (against the size seen) and the index read (against the Fabric array's size)
        are checked. A bad index gives the scratch buffer's address and ok false."""
        b = self.builder
        scratch = self.scratch
        i = self._int64(index)
        n = self._shape(arr, 0)
        ok_i = b.icmp_unsigned("<", i, n)
        table = b.extract_value(arr, [3, 0])
        has_table = b.icmp_unsigned("!=", b.ptrtoint(table, I64), I64(0))
        slot = b.gep(table, [b.mul(i, I64(4))], source_etype=I8)
        read = b.load(b.select(b.and_(has_table, ok_i), slot, scratch), typ=I32)
        j = b.select(has_table, b.sext(read, I64), i)
        extent = b.extract_value(arr, [4, 0])
        ok_j = b.icmp_unsigned("<", j, extent)
        if self.bounds_checks:
            self._check(op, ok_i, [i], [n])
            self._check(op, ok_j, [j], [extent])
        ok = b.and_(ok_i, ok_j)
        entry = b.gep(b.extract_value(arr, 0), [b.mul(j, I64(8))], source_etype=I8)
        return b.select(ok, entry, scratch), ok, j, scratch

    def _fabric_row(self, op, arr, index):
        """(data address, length) of row `index` of a Fabric array of arrays; a bad index
        gives the scratch buffer and length 0."""
        b = self.builder
        entry, ok, j, scratch = self._fabric_slot(op, arr, index)
        row_slot = b.inttoptr(b.load(entry, typ=I64), PTR)
        lengths = b.inttoptr(b.extract_value(arr, [2, 0]), PTR)
        length_entry = b.gep(lengths, [b.mul(j, I64(8))], source_etype=I8)
        length_slot = b.inttoptr(b.load(b.select(ok, length_entry, scratch), typ=I64), PTR)
        data = b.load(b.select(ok, row_slot, scratch), typ=PTR)
        length = b.load(b.select(ok, length_slot, scratch), typ=I64)
        return b.select(ok, data, scratch), b.select(ok, length, I64(0))

    def _fabric_address(self, op, arr_value: Value, indices):
        """Address of an element of a Fabric array (`a[i]`), or of an element of a row of
        a Fabric array of arrays (`a[i, j]`, j checked against the row's length). Accesses
        at bad indices go to the scratch buffer (and are reported when bounds checks are on)."""
        b = self.builder
        arr = self.v(arr_value)
        if len(indices) == 1:
            entry, ok, _, scratch = self._fabric_slot(op, arr, indices[0])
            ptr = b.inttoptr(b.load(entry, typ=I64), PTR)
        else:
            data, length = self._fabric_row(op, arr, indices[0])
            scratch = self.scratch
            k = self._int64(indices[1])
            ok = b.icmp_unsigned("<", k, length)
            if self.bounds_checks:  # (reported against (size, the row's length))
                self._check(op, ok, [self._int64(indices[0]), k], [self._shape(arr, 0), length])
            ptr = b.gep(data, [b.mul(k, I64(self._elem_size(arr_value.type.dtype)))], source_etype=I8)
        self.last_ok = ok if self.bounds_checks else None
        return b.select(ok, ptr, scratch)

    def _elem_size(self, t) -> int:
        return ctypes.sizeof(ctype_of(t))

    def op_load(self, op):
        arr, *idx = op.operands
        return self.load_value(self._address(op, arr, idx), op.result.type,
                               "data" if op.attrs.get("in_bounds") else None)

    def op_store(self, op):
        arr, *idx, value = op.operands
        ptr = self._address(op, arr, idx)
        part = op.attrs.get("part")
        if part is None:
            self.store_value(ptr, self.v(value), value.type)
            return
        # only one part of the element reaches memory (lang/array_parts.py)
        path, part_type = part
        offset = _part_offset(value.type, path)
        ptr = self.builder.gep(ptr, [I64(offset)], source_etype=I8, inbounds=True) if offset else ptr
        self.store_value(ptr, _part_of(self.v(value), value.type, path, part_type), part_type)

    def op_atomic(self, op):
        """An atomic update of one element (vectors/matrices: of each component); the
        result is the old element."""
        arr, *idx, value = op.operands
        ptr = self._address(op, arr, idx)
        t = arr.type.dtype
        b = self.builder
        kind = op.attrs["op"]
        if isinstance(t, StructType):  # (adjoints of arrays of structs) each float leaf atomically
            old = self.load_value(ptr, t)
            self._atomic_members(kind, t, ptr, self.v(value))
            return old
        if id(op) in self.uniform_adds:  # one element all threads add to (uniform_acc.py)
            return self.accumulate(op, ptr, self.v(value))
        if op.attrs.get("private"):
            # an adjoint accumulating into elements only this thread touches: a plain
            # read-add-write, which vectorises
            old = self.load_value(ptr, t)
            new = [b.fadd(o, x, flags=self.fmf) for o, x in zip(self.leaves(old, t), self.leaves(self.v(value), t))]
            self.store_value(ptr, new[0] if isinstance(t, Scalar) else new, t)
            return old
        operand = self.v(value)
        if kind == "cas":
            compare, operand = operand
        else:
            compare = None
        # plain when this call runs alone, or owns a private copy of the array (scatter.py)
        plain = self.plain_adds.get(arr.id, self.serial)
        if isinstance(t, Scalar):
            return self._atomic_scalar(kind, t, ptr, operand, compare, plain)
        scalar = t.dtype
        old = []
        for k in range(t.num_components):
            p = b.gep(ptr, [I64(k * scalar.size)], source_etype=I8, inbounds=True) if k else ptr
            old.append(self._atomic_scalar(kind, scalar, p, operand[k],
                                           None if compare is None else compare[k], plain))
        return old

    def _atomic_members(self, kind, t, ptr, rep):
        """Atomic `kind` of each float member of composite value `rep` (of type `t`) into `ptr`."""
        for k, (part, ct) in enumerate(zip(rep, _members(t))):
            if isinstance(ct, Scalar):
                if ct.is_float:
                    self._atomic_scalar(kind, ct, self._member_ptr(ptr, t, k), part)
            elif isinstance(ct, (Vector, Matrix, StructType)):
                self._atomic_members(kind, ct, self._member_ptr(ptr, t, k), part)

    _RMW = {
        "f": {"add": "fadd", "sub": "fsub", "min": "fmin", "max": "fmax"},
        "i": {"add": "add", "sub": "sub", "min": "min", "max": "max",
              "and": "and", "or": "or", "xor": "xor", "exch": "xchg"},
        "u": {"add": "add", "sub": "sub", "min": "umin", "max": "umax",
              "and": "and", "or": "or", "xor": "xor", "exch": "xchg"},
    }

    def _atomic_scalar(self, kind, t, ptr, x, compare=None, plain=None):
        """One scalar atomic. Exchanges and compare-and-swaps are sequentially consistent
        (they build locks); the arithmetic updates need only atomicity, and none where
        `plain` (an i1; default: the launch runs in this one call) holds."""
        b = self.builder
        if t is bfloat16:
            return self._atomic_bfloat16(kind, ptr, x, compare)
        if kind == "claim":  # adjoints only: take the element (leaving 0) where x != 0
            bits = ir.IntType(t.bits)
            wants = b.fcmp_unordered("!=", x, ir.Constant(x.type, 0.0))
            mask = b.select(wants, ir.Constant(bits, 0), ir.Constant(bits, -1))
            old = b.atomic_rmw("and", ptr, mask, "monotonic")
            return b.select(wants, b.bitcast(old, llvm_type(t)), ir.Constant(llvm_type(t), 0.0))
        if kind in ("exch", "cas") and t.is_float:  # on the float's bits
            bits = ir.IntType(t.bits)
            x = b.bitcast(x, bits)
            compare = None if compare is None else b.bitcast(compare, bits)
            return b.bitcast(self._atomic_scalar(kind, _UINT[t.bits], ptr, x, compare), llvm_type(t))
        if kind == "cas":
            pair = b.cmpxchg(ptr, compare, x, "seq_cst", "seq_cst")
            return b.extract_value(pair, 0)
        rmw = self._RMW[t.kind][kind]
        plain = getattr(self, "serial", None) if plain is None else plain
        if kind in ("add", "sub") and plain is not None:
            return self._serial_or_atomic(rmw, plain, ptr, x)
        if kind in ("min", "max"):
            return self._min_max_unless_kept(rmw, t, ptr, x)
        return b.atomic_rmw(rmw, ptr, x, "seq_cst" if kind == "exch" else "monotonic")

    def _min_max_unless_kept(self, rmw, t, ptr, x):
        """An atomic min or max that first reads the element and leaves it alone where the
        update would keep it (x above the minimum, or NaN, ...): the same result, and threads
        that keep a running bound (a bounding box, a CFL maximum) stop fighting over one
        cache line with read-modify-writes. Where x equals the element the update runs (the
        sign of a zero may change)."""
        b = self.builder
        current = b.load_atomic(ptr, "monotonic", max(t.bits // 8, 1), typ=x.type)
        keeps = {"fmin": ">", "fmax": "<", "min": ">", "max": "<", "umin": ">", "umax": "<"}[rmw]
        if t.is_float:  # (minnum: a NaN x leaves the element; a NaN element takes x)
            kept = b.or_(b.fcmp_ordered(keeps, x, current), b.fcmp_unordered("uno", x, x))
        else:
            kept = (b.icmp_signed if t.is_signed else b.icmp_unsigned)(keeps, x, current)
        return self._either(kept, lambda: current, lambda: b.atomic_rmw(rmw, ptr, x, "monotonic"))

    def _either(self, cond, if_true, if_false):
        """The value `if_true()` emits where `cond` (an i1) holds, else `if_false()`'s."""
        b = self.builder
        with b.if_else(cond) as (then, otherwise):
            with then:
                true_value, true_block = if_true(), b.block
            with otherwise:
                false_value, false_block = if_false(), b.block
        out = b.phi(true_value.type)
        out.add_incoming(true_value, true_block)
        out.add_incoming(false_value, false_block)
        return out

    def _serial_or_atomic(self, rmw, plain, ptr, x):
        """An add or subtract: a plain read-modify-write when `plain` (this call runs the
        whole launch, ctx.serial, or owns a private copy of the array; a compare-and-swap
        loop costs several times more for floats), else the atomic update. The flag is
        loop-invariant: LLVM unswitches on it."""
        b = self.builder

        def alone():
            old = b.load(ptr, typ=x.type)
            b.store({"fadd": b.fadd, "fsub": b.fsub, "add": b.add, "sub": b.sub}[rmw](old, x), ptr)
            return old
        return self._either(plain, alone, lambda: b.atomic_rmw(rmw, ptr, x, "monotonic"))

    def _atomic_bfloat16(self, kind, ptr, x, compare=None):
        """An atomic update of a bfloat16 element (16 bits; `x` a float): add/sub/min/max by
        a compare-and-swap loop on the 16-bit word (the result rounded to bfloat16, as each
        bfloat16 operation is), exchanges on the bits."""
        b = self.builder
        if kind == "claim":  # (see _atomic_scalar)
            wants = b.fcmp_unordered("!=", x, x.type(0.0))
            old = b.atomic_rmw("and", ptr, b.select(wants, I16(0), I16(-1)), "monotonic")
            return b.select(wants, self.bf16_from_bits(old), x.type(0.0))
        if kind in ("exch", "cas"):
            if kind == "exch":
                return self.bf16_from_bits(b.atomic_rmw("xchg", ptr, self.bf16_bits(x), "seq_cst"))
            pair = b.cmpxchg(ptr, self.bf16_bits(compare), self.bf16_bits(x), "seq_cst", "seq_cst")
            return self.bf16_from_bits(b.extract_value(pair, 0))
        first = b.load_atomic(ptr, "monotonic", 2, typ=I16)
        before = b.block
        loop = self.func.append_basic_block("bf16_atomic.loop")
        done = self.func.append_basic_block("bf16_atomic.done")
        b.branch(loop)
        b.position_at_end(loop)
        seen = b.phi(I16)
        seen.add_incoming(first, before)
        old = self.bf16_from_bits(seen)
        if kind in ("add", "sub"):
            new = self._float_binary(kind, old, x)
        else:
            fn = self.module.declare_intrinsic(f"llvm.{kind}num", [self.f32],  # (as atomicrmw fmin/fmax)
                                               ir.FunctionType(self.f32, [self.f32, self.f32]))
            new = b.call(fn, [old, x])
        pair = b.cmpxchg(ptr, seen, self.bf16_bits(new), "monotonic", "monotonic")
        seen.add_incoming(b.extract_value(pair, 0), loop)
        b.cbranch(b.extract_value(pair, 1), done, loop)
        b.position_at_end(done)
        return old

    def op_view(self, op):
        arr, *idx = op.operands
        b = self.builder
        if arr.type.fabric:  # a row of a Fabric array of arrays: a contiguous 1-d array
            data, length = self._fabric_row(op, self.v(arr), idx[0])
            out = ir.Constant(llvm_type(op.result.type), ir.Undefined)
            out = b.insert_value(b.insert_value(out, data, 0), ir.Constant(PTR, None), GRAD)
            out = b.insert_value(out, length, [1, 0])
            return b.insert_value(out, I64(self._elem_size(arr.type.dtype)), [2, 0])
        if arr.type.indexed:
            return self._indexed_view(op, arr, idx)
        ptr = self._address(op, arr, idx)
        src = self.v(arr)
        k = len(idx)
        out_t = op.result.type
        out = ir.Constant(llvm_type(out_t), ir.Undefined)
        out = b.insert_value(out, ptr, 0)
        offset = b.sub(b.ptrtoint(ptr, I64), b.ptrtoint(b.extract_value(src, 0), I64))
        out = self._offset_grad(src, arr.type, out, out_t, offset)
        ok = self.last_ok
        for d in range(out_t.ndim):
            extent = b.extract_value(src, [1, d + k])
            if ok is not None:  # a view at a bad index has no elements: later accesses fail too
                extent = b.select(ok, extent, I64(0))
            out = b.insert_value(out, extent, [1, d])
            out = b.insert_value(out, b.extract_value(src, [2, d + k]), [2, d])
        if arr.id in self.contiguous:
            self.contiguous.add(op.result.id)
        return out

