"""Lowering of memory: array addresses with bounds checks, loads, stores, atomics, views, thread indices."""

from __future__ import annotations

import ctypes

import llvmlite.ir as ir

from ..ir.core import Value
from ..types import ArrayType, Matrix, Scalar, StructType, Vector, bool_
from ..types.layout import ctype_of
from .llvm_types import (
    CTX_TYPE,
    I8,
    I32,
    I64,
    PTR,
    _all_of,
    _member_offsets,
    _members,
    llvm_type,
)


class MemoryOps:
    """Array and memory op lowerings of `KernelCodegen`."""

    def load_value(self, ptr, t):
        """Load a value of type `t` from memory, component by component."""
        b = self.builder
        if isinstance(t, ArrayType):
            return b.load(ptr, typ=llvm_type(t))
        if isinstance(t, Scalar):
            v = b.load(ptr, typ=llvm_type(t, True))
            return b.icmp_unsigned("!=", v, I8(0)) if t is bool_ else v
        return [self.load_value(self._member_ptr(ptr, t, k), ct) for k, ct in enumerate(_members(t))]

    def store_value(self, ptr, rep, t):
        b = self.builder
        if isinstance(t, Scalar):
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
        if dim < 0 or of == 1:
            return self.thread_index
        return self.tids[of][dim]

    def _shape(self, arr, d):
        return self.builder.extract_value(arr, [1, d])

    def op_null_array(self, op):
        return ir.Constant(llvm_type(op.result.type), None)  # null pointer, shape 0

    def op_array_shape(self, op):
        return self.builder.trunc(self._shape(self.v(op.operands[0]), op.attrs["dim"]), I32)

    def _address(self, op, arr_value: Value, indices):
        """Address of an element (or sub-array), bounds-checked unless proven in bounds."""
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
            scratch = b.load(b.gep(self.ctx_ptr, [I32(0), I32(5)], source_etype=CTX_TYPE), typ=PTR)
            ptr = b.select(ok, ptr, scratch)
            self.last_ok = ok
        else:
            self.last_ok = None
        return ptr

    def _elem_size(self, t) -> int:
        return ctypes.sizeof(ctype_of(t))

    def op_load(self, op):
        arr, *idx = op.operands
        return self.load_value(self._address(op, arr, idx), op.result.type)

    def op_store(self, op):
        arr, *idx, value = op.operands
        self.store_value(self._address(op, arr, idx), self.v(value), value.type)

    def op_atomic(self, op):
        arr, *idx, value = op.operands
        ptr = self._address(op, arr, idx)
        t = value.type
        b = self.builder
        kind = op.attrs["op"]
        if isinstance(t, StructType):  # (adjoints of arrays of structs) each float leaf atomically
            old = self.load_value(ptr, t)
            self._atomic_members(kind, t, ptr, self.v(value))
            return old
        if op.attrs.get("private"):
            # an adjoint accumulating into elements only this thread touches: a plain
            # read-add-write, which vectorises
            old = self.load_value(ptr, t)
            new = [b.fadd(o, x, flags=self.fmf) for o, x in zip(self.leaves(old, t), self.leaves(self.v(value), t))]
            self.store_value(ptr, new[0] if isinstance(t, Scalar) else new, t)
            return old
        if isinstance(t, Scalar):
            return self._atomic_scalar(kind, t, ptr, self.v(value))
        comp_size = t.dtype.size
        old = []
        for k, x in enumerate(self.v(value)):
            p = b.gep(ptr, [I64(k * comp_size)], source_etype=I8, inbounds=True)
            old.append(self._atomic_scalar(kind, t.dtype, p, x))
        return old

    def _atomic_members(self, kind, t, ptr, rep):
        """Atomic `kind` of each float member of composite value `rep` (of type `t`) into `ptr`."""
        for k, (part, ct) in enumerate(zip(rep, _members(t))):
            if isinstance(ct, Scalar):
                if ct.is_float:
                    self._atomic_scalar(kind, ct, self._member_ptr(ptr, t, k), part)
            elif isinstance(ct, (Vector, Matrix, StructType)):
                self._atomic_members(kind, ct, self._member_ptr(ptr, t, k), part)

    def _atomic_scalar(self, kind, t, ptr, x):
        if t.is_float:
            rmw = {"add": "fadd", "sub": "fsub", "min": "fmin", "max": "fmax"}[kind]
        elif t.is_signed:
            rmw = {"add": "add", "sub": "sub", "min": "min", "max": "max"}[kind]
        else:
            rmw = {"add": "add", "sub": "sub", "min": "umin", "max": "umax"}[kind]
        return self.builder.atomic_rmw(rmw, ptr, x, "monotonic")

    def op_view(self, op):
        arr, *idx = op.operands
        ptr = self._address(op, arr, idx)
        b = self.builder
        src = self.v(arr)
        k = len(idx)
        out_t = op.result.type
        out = ir.Constant(llvm_type(out_t), ir.Undefined)
        out = b.insert_value(out, ptr, 0)
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

