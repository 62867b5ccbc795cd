"""Adjoints of half-precision arrays are accumulated in float32.

An adjoint kernel adds into its adjoint arrays with atomics, one contribution per thread
that read the element. In float16 (11 significant bits) or bfloat16 (8) such a sum stops
growing long before it is done: adding 1.0 ten thousand times gives 2048 in float16 and
256 in bfloat16, since past those values one more unit rounds away. The adjoint of an
element read by every thread (a broadcast weight, the input of a reduction's backward
through a shared value) is exactly such a sum. Warp accumulates in the array's own type
and gets those gradients wrong; weft does not:

- the adjoint kernel's parameter for the adjoint of a float16/bfloat16 array (scalars,
  vectors and matrices of them) is an array of float32 (`widened_array`); the reverse pass
  converts what it adds, loads and stores there (`to_type`);
- the launcher (`runtime/half_adjoints.py`) hands the kernel float32 copies of the `.grad`
  arrays and, after the launch, rounds each element that changed back into the half array
  once. The result is the half array's old value plus the exact-ish float32 sum of all
  contributions, rounded once, instead of one rounding per contribution.

Not widened, and accumulated in half as Warp does: arrays held in struct parameters (the
adjoint struct has the primal's layout) and arrays passed to a function with a custom
gradient (`@func_grad`, whose adjoint code is typed for the primal's arrays). A gradient
beyond the half type's range (65504 for float16) is still infinite once rounded back.
"""

from __future__ import annotations

from ..ir.core import Function, Value, walk
from ..types import ArrayType, Matrix, Scalar, Vector, bfloat16, float16, float32
from .arrays import array_origin

HALF = (float16, bfloat16)


def is_half(t) -> bool:
    """Whether `t` is a float16/bfloat16 scalar, or a vector or matrix of one."""
    if isinstance(t, (Vector, Matrix)):
        t = t.dtype
    return t in HALF


def widened(t):
    """Element type `t` with float16/bfloat16 replaced by float32 (same shape and flavor)."""
    if isinstance(t, Scalar):
        return float32 if t in HALF else t
    if isinstance(t, Vector) and t.dtype in HALF:
        return Vector(t.length, float32, t.flavor)
    if isinstance(t, Matrix) and t.dtype in HALF:
        return Matrix(t.shape, float32)
    return t


def widened_array(t: ArrayType) -> ArrayType:
    """The array type an adjoint of array type `t` has in the adjoint kernel."""
    return type(t)(widened(t.dtype), t.ndim)


def widened_params(fn: Function) -> set:
    """Ids of the array parameters of kernel IR `fn` whose adjoint arrays are float32 in the
    adjoint kernel: those of half elements, except arrays given to a custom-gradient func."""
    params = {p.id for p in fn.params if isinstance(p.type, ArrayType) and is_half(p.type.dtype)}
    for op in walk(fn.body):
        if op.name == "func_region" and getattr(op.attrs["func"], "custom_grad", None) is not None:
            for v in op.operands:
                if isinstance(v.type, ArrayType):
                    params.discard(array_origin(v)[0].id)
    return params


def to_type(b, v: Value, t) -> Value:
    """Value `v` (a float scalar, vector or matrix) converted componentwise to type `t` of
    the same shape (float32 <-> float16/bfloat16)."""
    if v.type is t:
        return v
    if isinstance(t, Scalar):
        return b.cast(v, t)
    return b.construct(t, [b.cast(c, t.dtype) for c in b.components(v)])
