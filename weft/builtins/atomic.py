"""Atomic array updates: `atomic_add/sub/min/max`, the bitwise `atomic_and/or/xor`, and
`atomic_exch` / `atomic_cas` for locks and slots. Each returns the element's old value.

Vectors and matrices are updated component by component (each component atomically).
The element types an explicit call accepts are Warp's (32/64-bit integers and floats,
float16 for add/sub, bfloat16 for add/sub/min/max; no bitwise ops on floats); `a[i] += x` and friends on narrower
integer arrays stay allowed, as in Warp (weft still updates them atomically).

Derivative rules (in autodiff/reverse.py, `rev_atomic`): add passes the element's adjoint
to the value, sub its negation; min/max pass it to the values equal to the element's final
value (ties share it, as a subgradient); exch, cas and the bitwise ops have none.
"""

from __future__ import annotations

from ..ir.core import Value
from ..types import (
    ArrayType,
    Matrix,
    Scalar,
    TupleType,
    Vector,
    bfloat16,
    float16,
    float32,
    float64,
    int32,
    int64,
    uint32,
    uint64,
)
from .registry import builtin

_WORDS = (int32, uint32, int64, uint64)
SUPPORTED = {
    "add": (*_WORDS, float16, bfloat16, float32, float64),
    "sub": (*_WORDS, float16, bfloat16, float32, float64),
    "min": (*_WORDS, bfloat16, float32, float64),
    "max": (*_WORDS, bfloat16, float32, float64),
    "exch": (*_WORDS, float32, float64),
    "cas": (*_WORDS, float32, float64),
    "and": _WORDS,
    "or": _WORDS,
    "xor": _WORDS,
}
_SPELLED = {
    SUPPORTED["add"]: "[u]int32, [u]int64, float16, bfloat16, float32, or float64",
    SUPPORTED["min"]: "[u]int32, [u]int64, bfloat16, float32, or float64",
    SUPPORTED["exch"]: "[u]int32, [u]int64, float32, or float64",
    _WORDS: "[u]int32 or [u]int64",
}


def element_scalar(dtype):
    """The scalar type of an array element (its components' for a vector or matrix)."""
    if isinstance(dtype, Scalar):
        return dtype
    if isinstance(dtype, (Vector, Matrix)):
        return dtype.dtype
    return None


def emit(ctx, kind: str, arr: Value, indices, value, compare=None) -> Value:
    """The `atomic` op updating `arr[indices]` with `value` (and `compare` for cas); its
    result is the old element. No element-type policy here (see `_expand`)."""
    t = arr.type
    if not isinstance(t, ArrayType):
        ctx.error(f"atomic_{kind}() needs an array, got {t!r}")
    if len(indices) != t.ndim:
        ctx.error(f"atomic_{kind}() needs {t.ndim} index(es) for this array, got {len(indices)}")
    scalar = element_scalar(t.dtype)
    if scalar is None or scalar.is_bool:
        ctx.error(f"atomic_{kind}() is not supported for arrays of {t.dtype!r}")
    if kind in ("and", "or", "xor") and not scalar.is_int:
        ctx.error(f"atomic_{kind}() needs integer elements, got {t.dtype!r}")
    v = ctx.coerce(value, t.dtype, what=f"the atomic_{kind} value", bit_patterns=True)
    if kind == "cas":
        c = ctx.coerce(compare, t.dtype, what="the atomic_cas compare value")
        v = ctx.b.construct(TupleType((t.dtype, t.dtype)), [c, v])
    return ctx.b.op("atomic", [arr, *indices, v], [t.dtype], {"op": kind}).result


def _expand(kind: str):
    n_values = 2 if kind == "cas" else 1
    form = "array, index..., compare, value" if kind == "cas" else "array, index..., value"

    def expand(ctx, args, kwargs):
        if kwargs or len(args) < 2 + n_values:
            ctx.error(f"atomic_{kind}({form}) needs an array, its indices and "
                      f"{'two values' if n_values == 2 else 'a value'}")
        arr, indices, values = args[0], list(args[1:-n_values]), args[-n_values:]
        if not (isinstance(arr, Value) and isinstance(arr.type, ArrayType)):
            ctx.error(f"atomic_{kind}() needs an array as first argument")
        idx = [i if isinstance(i, Value) else ctx.coerce(i, int32, what="index") for i in indices]
        for i in idx:
            if not (isinstance(i.type, Scalar) and i.type.is_int):
                ctx.error(f"atomic_{kind}() index arguments must be of integer type, got index "
                          f"of type {i.type!r}")
        if len(idx) > arr.type.ndim:
            ctx.error(f"Num indices > num dimensions for atomic_{kind}(), received {len(idx)}, "
                      f"but array only has {arr.type.ndim}")
        scalar = element_scalar(arr.type.dtype)
        allowed = SUPPORTED[kind]
        if scalar not in allowed:
            ctx.error(f"atomic_{kind}() operations only work on arrays with {_SPELLED[allowed]} as "
                      f"the underlying scalar types, but got {arr.type.dtype!r} (with scalar "
                      f"type {getattr(scalar, 'name', scalar)})")
        if kind == "cas":
            return emit(ctx, kind, arr, idx, values[1], compare=values[0])
        return emit(ctx, kind, arr, idx, values[0])

    expand.__doc__ = f"atomic_{kind}({form}): update the element atomically; returns its old value."
    return expand


for _kind in SUPPORTED:
    builtin(f"atomic_{_kind}")(_expand(_kind))
