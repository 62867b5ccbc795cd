"""LLVM types and layouts shared by the kernel code generator: value types, the launch
context, AD stack slots, access sites."""

from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir

from ..ir.core import Op, Value
from ..types import ArrayType, Matrix, Scalar, StructType, TileStackType, TileType, TupleType, Vector, bfloat16
from ..types.layout import ctype_of

I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)


PTR = ir.PointerType()


MAX_DIMS = 4


@dataclass
class Site:
    """An access that is bounds-checked at run time; reported by id in the error record."""

    id: int
    op: Op
    what: str  # "array 'x'" or "vector index"


def _all_of(b, conditions):
    """The conjunction of one or more i1 values."""
    result = conditions[0]
    for c in conditions[1:]:
        result = b.and_(result, c)
    return result


def _indices(op: Op) -> list[Value]:
    """The index operands of a load, store, atomic or view."""
    end = len(op.operands) - (op.name in ("store", "atomic"))
    return op.operands[1:end]


def _members(t) -> list:
    """Member types of a composite, in memory order."""
    if isinstance(t, (Vector, Matrix)):
        return [t.dtype] * t.num_components
    if isinstance(t, StructType):
        return list(t.fields.values())
    if isinstance(t, TupleType):
        return list(t.elements)
    raise TypeError(f"{t!r} has no members")


def _member_offsets(t) -> list[int]:
    """Byte offsets of the members of `t` in memory (C layout, as types.layout)."""
    if isinstance(t, (Vector, Matrix)):
        return [k * t.dtype.size for k in range(t.num_components)]
    if isinstance(t, StructType):
        ct = ctype_of(t)
        return [getattr(ct, name).offset for name in t.field_names]
    raise TypeError(f"{t!r} is not stored in memory")


def llvm_type(t, in_memory: bool = False):
    """The LLVM type of a weft value; bools are i1 in registers and i8 in memory/aggregates;
    bfloat16 is a float (rounded to bfloat16 after each operation) in registers and its 16
    bits (i16) in memory/aggregates (see ScalarOps.bf16_bits)."""
    if isinstance(t, Scalar):
        if t.is_bool:
            return I8 if in_memory else I1
        if t is bfloat16:
            return I16 if in_memory else ir.FloatType()
        if t.is_float:
            return {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}[t.bits]
        return ir.IntType(t.bits)
    if isinstance(t, (Vector, Matrix)):
        return ir.ArrayType(llvm_type(t.dtype, True), t.num_components)
    if isinstance(t, StructType):
        return ir.LiteralStructType([llvm_type(f, True) for f in t.fields.values()])
    if isinstance(t, TupleType):
        return ir.LiteralStructType([llvm_type(e, True) for e in t.elements])
    if isinstance(t, (TileType, TileStackType)):
        return PTR  # the address of its buffer (codegen/tile_ops.py, builtins/tiles/stack.py)
    if isinstance(t, ArrayType) and t.fabric:  # (types.layout.FabricDesc: a 1-d indexed layout)
        return ir.LiteralStructType([PTR, ir.ArrayType(I64, 1), ir.ArrayType(I64, 1), ir.ArrayType(PTR, 1),
                                     ir.ArrayType(I64, 1)])
    if isinstance(t, ArrayType):
        fields = [PTR, ir.ArrayType(I64, t.ndim), ir.ArrayType(I64, t.ndim)]
        if t.indexed:  # + index arrays and the data's extents (types.layout.indexed_descriptor)
            fields += [ir.ArrayType(PTR, t.ndim), ir.ArrayType(I64, t.ndim)]
        else:  # + the gradient's address (memory_ops.GRAD) and ndim (types.layout.array_descriptor)
            fields += [PTR, I32]
        return ir.LiteralStructType(fields)
    raise TypeError(f"no LLVM type for {t!r}")


# The launch context, mirrored by runtime.launch.LaunchContext.
CTX_TYPE = ir.LiteralStructType([
    ir.ArrayType(I32, MAX_DIMS),  # 0 launch shape
    I32,                          # 1 launch ndim
    I32,                          # 2 error site (0: none)
    ir.ArrayType(I64, MAX_DIMS),  # 3 error index
    ir.ArrayType(I64, MAX_DIMS),  # 4 error extent
    PTR,                          # 5 scratch for redirected accesses (scratch_size bytes)
    I64,                          # 6 AD stack limit in bytes (adjoint kernels)
    I32,                          # 7 1: this call runs alone (atomics may be plain updates)
    I64,                          # 8 bit k: parameter k is this chunk's own copy (plain adds)
])


# A thread's AD stack (adjoint kernels with dynamic loops): malloc'd bytes, used, capacity.
STACK_TYPE = ir.LiteralStructType([PTR, I64, I64])


STACK_SLOT = 8  # bytes per pushed scalar; an array descriptor (in a struct) takes its size


class TileBytes(int):
    """A pushed tile's leaf in a stack frame: its elements' bytes (a `leaf_types` entry)."""


def _slot_offsets(leaf_types) -> tuple[list[int], int]:
    """Byte offsets of pushed leaves in a stack frame, and the frame size."""
    offsets, at = [], 0
    for lt in leaf_types:
        offsets.append(at)
        if isinstance(lt, TileBytes):
            at += (int(lt) + 7) // 8 * 8
            continue
        # an array descriptor {ptr, [n x i64] shape, [n x i64] strides}: 8 + 16 n bytes
        # (indexed: + [n x ptr] indices, [n x i64] data extents: 8 + 32 n)
        if isinstance(lt, ir.LiteralStructType):
            at += 8 + (16 if len(lt.elements) == 3 else 32) * lt.elements[1].count
        elif isinstance(lt, ir.VectorType):  # (a vector body's values: one slot per lane)
            at += STACK_SLOT * lt.count
        else:
            at += STACK_SLOT
    return offsets, at
