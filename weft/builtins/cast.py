"""cast(a, dtype): the bytes of `a` read as another type of the same size (Warp's
`wp.cast`; `int32(x)` and friends convert values instead). `a` and `dtype` are numeric
scalars, vectors, matrices or (for `a`) structs. Not differentiable."""

from __future__ import annotations

import ctypes

import llvmlite.ir as ir
import numpy as np

from ..ir.core import Value
from ..types import Matrix, Scalar, StructType, Vector, bfloat16, resolve
from ..types.layout import ctype_of
from .registry import builtin, primitive


def _lower_bitcast(cg, args, op):
    from ..codegen.llvm_types import I8, I64, PTR, llvm_type
    src, dst = op.operands[0].type, op.results[0].type
    b = cg.builder
    if isinstance(src, Scalar) and isinstance(dst, Scalar):
        if src is bfloat16:  # (a float in registers: its 16 bits are those in memory)
            return b.bitcast(cg.bf16_bits(args[0]), llvm_type(dst))
        if dst is bfloat16:
            return cg.bf16_from_bits(b.bitcast(args[0], llvm_type(dst, True)))
        return b.bitcast(args[0], llvm_type(dst))
    with b.goto_entry_block():  # (one slot per function, not one per loop iteration)
        typed = b.alloca(ir.ArrayType(I8, ctypes.sizeof(ctype_of(src))))
    slot = b.inttoptr(b.ptrtoint(typed, I64), PTR)  # an untyped pointer, for any member type
    cg.store_value(slot, args[0], src)  # composites are lowered component by component
    return cg.load_value(slot, dst)


def _no_type_rule(arg_types):
    raise TypeError("bitcast takes its result type from the call")


BITCAST = primitive("bitcast", _no_type_rule, _lower_bitcast, doc="reinterpret the bits of a scalar")


def _target(dtype):
    t = resolve(dtype)
    if not _reinterpretable(t) or isinstance(t, StructType):
        raise TypeError(f"cast(a, dtype): dtype must be a numeric scalar, vector or matrix type, got {dtype!r}")
    return t


def _reinterpretable(t) -> bool:
    if isinstance(t, Scalar):
        return not t.is_bool
    if isinstance(t, (Vector, Matrix)):
        return not t.dtype.is_bool
    return isinstance(t, StructType)


def _py_cast(a, dtype):
    t = _target(dtype)
    value = np.asarray(a)
    if value.ndim != 0 or value.dtype.itemsize != t.np_dtype.itemsize:
        raise TypeError(f"cast(a, {t!r}): a must be a scalar of {t.bits} bits")
    return value.view(t.np_dtype)[()]


@builtin("cast", py_impl=_py_cast)
def cast(ctx, args, kwargs):
    """cast(a, dtype): reinterpret scalar a's bits as dtype (the same number of bits)."""
    if len(args) != 2 or kwargs:
        ctx.error("cast(a, dtype) takes a value and a type")
    a, dtype = args
    if isinstance(dtype, Value):
        ctx.error(f"cast(a, dtype): dtype is a value of type {dtype.type!r}, not a type (in a kernel, as in Warp, "
                  "`wp.types.vector(length=3, dtype=...)` is a zero vector: name the type outside the kernel, "
                  "e.g. `vec3i = wp.types.vector(3, wp.int32)`)", kind=TypeError)
    try:
        t = _target(dtype)
    except TypeError as e:
        ctx.error(str(e), kind=TypeError)
    a = ctx.materialize(a) if not isinstance(a, Value) else a
    src = a.type
    if not _reinterpretable(src):
        ctx.error(f"cast(a, {t!r}): cannot reinterpret a {src!r}", kind=TypeError)
    size, want = ctypes.sizeof(ctype_of(src)), ctypes.sizeof(ctype_of(t))
    if size != want:
        ctx.error(f"cast(a, {t!r}): a is {src!r} ({size} bytes, {t!r} has {want}); the types must have "
                  "the same size", kind=TypeError)
    if src is t:
        return a
    return ctx.b.call(BITCAST, [a], [t])
