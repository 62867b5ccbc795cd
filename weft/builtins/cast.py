"""cast(a, dtype): the bits of scalar `a` read as another scalar type of the same size
(Warp's `wp.cast`; `int32(x)` and friends convert values instead). Not differentiable."""

from __future__ import annotations

import numpy as np

from ..ir.core import Value
from ..types import Scalar, resolve
from .registry import builtin, primitive


def _lower_bitcast(cg, args, op):
    from ..codegen.llvm_types import llvm_type
    return cg.builder.bitcast(args[0], llvm_type(op.results[0].type))


def _no_type_rule(arg_types):
    raise TypeError("bitcast takes its result type from the call")


BITCAST = primitive("bitcast", _no_type_rule, _lower_bitcast, doc="reinterpret the bits of a scalar")


def _target(dtype):
    t = resolve(dtype)
    if not isinstance(t, Scalar) or t.is_bool:
        raise TypeError(f"cast(a, dtype): dtype must be a numeric scalar type, got {dtype!r}")
    return t


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
    try:
        t = _target(dtype)
    except TypeError as e:
        ctx.error(str(e), kind=TypeError)
    a = ctx.materialize(a) if not isinstance(a, Value) else a
    src = a.type
    if not isinstance(src, Scalar) or src.is_bool:
        ctx.error(f"cast(a, {t!r}): weft reinterprets numeric scalars only, got {src!r}", kind=TypeError)
    if src.bits != t.bits:
        ctx.error(f"cast(a, {t!r}): a is {src!r} ({src.bits} bits); the types must have the same size",
                  kind=TypeError)
    if src is t:
        return a
    return ctx.b.call(BITCAST, [a], [t])
