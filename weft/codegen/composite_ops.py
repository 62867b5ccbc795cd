"""Lowering of composite values (vectors, matrices, structs, tuples) kept as lists of scalar LLVM values."""

from __future__ import annotations

from ..types import Matrix, StructType, TupleType, Vector
from .llvm_types import (
    I64,
    _all_of,
    llvm_type,
)


class CompositeOps:
    """Composite op lowerings of `KernelCodegen`."""

    # Composites: lists of scalar values ------------------------------------------------
    def op_construct(self, op):
        return [self.v(x) for x in op.operands]

    def op_extract(self, op):
        return self.v(op.operands[0])[op.attrs["index"]]

    def op_insert(self, op):
        agg, x = op.operands
        parts = list(self.v(agg))
        parts[op.attrs["index"]] = self.v(x)
        return parts

    def _component_index(self, op, agg_type, indices):
        """The flat component index for dynamic (row[, column]) indices, each checked against
        its own extent; an out-of-range index records the error and reads component 0."""
        b = self.builder
        shape = agg_type.shape
        flat, oks, wide = None, [], []
        for index, extent in zip(indices, shape):
            i = self.v(index)
            i64 = b.sext(i, I64) if index.type.is_signed else b.zext(i, I64)
            oks.append(b.icmp_unsigned("<", i64, I64(extent)))
            wide.append(i64)
            flat = i64 if flat is None else b.add(b.mul(flat, I64(extent)), i64)
        ok = _all_of(b, oks)
        self._check(op, ok, wide, [I64(e) for e in shape])
        return b.select(ok, flat, I64(0))

    def op_extract_dyn(self, op):
        agg, *indices = op.operands
        i = self._component_index(op, agg.type, indices)
        b = self.builder
        parts = self.v(agg)
        result = parts[0]
        for k in range(1, len(parts)):  # a select chain vectorises; memory does not
            result = b.select(b.icmp_unsigned("==", i, I64(k)), parts[k], result)
        return result

    def op_insert_dyn(self, op):
        agg, *indices, x = op.operands
        i = self._component_index(op, agg.type, indices)
        b = self.builder
        xv = self.v(x)
        return [b.select(b.icmp_unsigned("==", i, I64(k)), xv, cur) for k, cur in enumerate(self.v(agg))]

    def leaves(self, rep, t) -> list:
        """The scalar LLVM values (and array descriptors) of a value, in order."""
        if isinstance(t, (Vector, Matrix)):
            return list(rep)
        if isinstance(t, (StructType, TupleType)):
            types = t.fields.values() if isinstance(t, StructType) else t.elements
            return [leaf for part, ft in zip(rep, types) for leaf in self.leaves(part, ft)]
        return [rep]

    def leaf_types(self, t) -> list:
        if isinstance(t, (Vector, Matrix)):
            return [llvm_type(t.dtype)] * t.num_components
        if isinstance(t, (StructType, TupleType)):
            types = t.fields.values() if isinstance(t, StructType) else t.elements
            return [lt for ft in types for lt in self.leaf_types(ft)]
        return [llvm_type(t)]

    def from_leaves(self, t, leaves):
        """Inverse of `leaves` (consumes an iterator)."""
        if isinstance(t, (Vector, Matrix)):
            return [next(leaves) for _ in range(t.num_components)]
        if isinstance(t, (StructType, TupleType)):
            types = t.fields.values() if isinstance(t, StructType) else t.elements
            return [self.from_leaves(ft, leaves) for ft in types]
        return next(leaves)

