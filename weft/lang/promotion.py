"""Typing rules for mixing values: Warp's strict rules, plus weak Python literals.

Two typed values combine only if their scalar types are equal (as in Warp: `float32 +
float64` is an error that suggests a cast), except in comparisons of two scalars, where
Warp's generated C++ converts them as C++ does (`comparison_type`). A Python literal (or global constant) is weak,
as in JAX: it takes the type of the typed operand it meets, if it fits that type. A literal
that stands alone becomes int32, float32 or bool, as Warp's literals do.
"""

from __future__ import annotations

import numpy as np

from ..ir.core import Value
from ..types import Scalar, bool_, float32, float64, int32, scalar_from_numpy, uint32, uint64
from ..types.scalars import SCALAR_VALUES, wrap_int

WEAK_TYPES = (bool, int, float)


def is_weak(x) -> bool:
    return isinstance(x, WEAK_TYPES) or isinstance(x, SCALAR_VALUES)


def default_type(x) -> Scalar:
    """The type a lone constant takes: bool, int32, float32 (numpy scalars keep theirs)."""
    if isinstance(x, SCALAR_VALUES):
        t = scalar_from_numpy(x.dtype)
        if t is not None:
            return t
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return int32
    if isinstance(x, float):
        return float32
    raise TypeError(f"{type(x).__name__} is not a number")


def fits(x, t: Scalar) -> bool:
    """Whether weak constant `x` can become a value of type `t` without losing meaning."""
    if isinstance(x, SCALAR_VALUES):
        x = x.item()
    if t.is_bool:
        return isinstance(x, bool)
    if t.is_int:
        if isinstance(x, float):
            return False  # 1.5 -> int would silently truncate
        info = np.iinfo(t.np_dtype)
        return info.min <= int(x) <= info.max
    return isinstance(x, (bool, int, float))


def bit_pattern(x, t: Scalar):
    """An int literal that does not fit integer type `t` but is a bit pattern of its width
    (`0xFFFFFFFF`, `1 << 31` for int32) as the number those bits mean in `t`: C's wrap-around,
    which Warp's int32 literals have. Any other `x` unchanged."""
    if t.is_int and type(x) is int and not fits(x, t) and -(1 << (t.bits - 1)) <= x < (1 << t.bits):
        return wrap_int(x, t.bits, t.is_signed)
    return x


def scalar_of(t) -> Scalar | None:
    """The scalar type of a scalar, or the component type of a vector or matrix."""
    if isinstance(t, Scalar):
        return t
    return getattr(t, "dtype", None) if getattr(t, "is_composite", False) else None


def value_type(x):
    return x.type if isinstance(x, Value) else None


def comparison_type(a: Scalar, b: Scalar) -> Scalar:
    """The type in which two scalars of different types are compared (`f < n` with `f` a
    float32 and `n` an int32 is legal Warp): C++'s usual arithmetic conversions. A float
    operand wins (the wider of two floats; half precision types convert to float32, as
    Warp's half type converts to float); integers narrower than 32 bits (and bools) become
    int32; then the wider integer wins, and at equal width the unsigned one."""
    if a.is_float or b.is_float:
        bits = max(t.bits for t in (a, b) if t.is_float)
        return float64 if bits == 64 else float32
    a, b = (t if t.bits >= 32 and not t.is_bool else int32 for t in (a, b))
    if a is b:
        return a
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return uint64 if a.bits == 64 else uint32
