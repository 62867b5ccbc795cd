"""Warp's type-introspection helpers (`wp.types.type_is_vector`, `type_size`, `types_equal`,
`dtype_from_numpy`, ...), over weft's types. Warp's types are classes and its values their
instances; weft's types are objects and Python-scope values `CompositeValue`/`StructValue`s
or numpy scalars, so each `is_*` helper of a value looks at the value's weft type."""

from __future__ import annotations

import ctypes

import numpy as np

from .array_type import ArrayType
from .composite import CompositeValue, GenericComposite, Matrix, TupleType, Vector
from .layout import ctype_of
from .scalars import (
    PYTHON_TYPES,
    SCALARS,
    GenericScalar,
    Scalar,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    scalar_from_numpy,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .struct import StructType, StructValue

__all__ = [
    "int_types", "float_types", "scalar_types", "non_atomic_types", "np_dtype_to_warp_type",
    "warp_type_to_np_dtype", "dtype_from_numpy", "dtype_to_numpy", "type_is_vector",
    "type_is_quaternion", "type_is_transformation", "type_is_matrix", "type_is_scalar",
    "type_is_int", "type_is_float", "type_is_struct", "type_is_array", "type_is_composite",
    "type_is_value", "type_is_tile", "type_is_tuple", "type_scalar_type", "type_length",
    "type_size", "type_size_in_bytes", "type_ctype", "type_repr", "types_equal",
    "types_equal_generic", "strides_from_shape", "is_array", "is_vector", "is_matrix",
    "is_quaternion", "is_transformation", "is_composite", "is_scalar", "is_int", "is_float",
    "is_value", "is_struct", "is_tile", "is_tuple",
]

int_types = (int8, uint8, int16, uint16, int32, uint32, int64, uint64)
float_types = (float16, float32, float64)
scalar_types = int_types + float_types
non_atomic_types = (int8, uint8, int16, uint16, int64)  # as Warp lists them
np_dtype_to_warp_type = {np.dtype(t.np_dtype): t for t in SCALARS}
warp_type_to_np_dtype = {t: np.dtype(t.np_dtype) for t in SCALARS}


def _weft_type(t):
    return PYTHON_TYPES.get(t, t)


def dtype_from_numpy(numpy_dtype):
    """The weft scalar type of a numpy dtype (`np.float32` -> `float32`)."""
    t = scalar_from_numpy(numpy_dtype)
    if t is None:
        raise TypeError(f"Cannot convert {numpy_dtype} to a Warp type")
    return t


def dtype_to_numpy(warp_dtype):
    """The numpy dtype of a weft scalar type."""
    t = _weft_type(warp_dtype)
    if not isinstance(t, Scalar):
        raise TypeError(f"Cannot convert {warp_dtype} to a NumPy type")
    return np.dtype(t.np_dtype)


# Types ---------------------------------------------------------------------------------------
def type_is_vector(t) -> bool:
    t = _weft_type(t)
    return isinstance(t, Vector) and t.flavor == "vec" or isinstance(t, GenericComposite) and \
        t.kind == "vector" and t.flavor == "vec"


def type_is_quaternion(t) -> bool:
    return _flavor(t) == "quat"


def type_is_transformation(t) -> bool:
    return _flavor(t) == "transform"


def _flavor(t):
    t = _weft_type(t)
    if isinstance(t, (Vector, GenericComposite)):
        return t.flavor
    return None


def type_is_matrix(t) -> bool:
    t = _weft_type(t)
    return isinstance(t, Matrix) or isinstance(t, GenericComposite) and t.kind == "matrix"


def type_is_scalar(t) -> bool:
    return isinstance(_weft_type(t), (Scalar, GenericScalar))


def type_is_int(t) -> bool:
    t = _weft_type(t)
    return isinstance(t, Scalar) and t.is_int


def type_is_float(t) -> bool:
    t = _weft_type(t)
    return isinstance(t, Scalar) and t.is_float


def type_is_struct(t) -> bool:
    return isinstance(t, StructType)


def type_is_array(t) -> bool:
    return isinstance(t, ArrayType)


def type_is_composite(t) -> bool:
    t = _weft_type(t)
    return isinstance(t, (Vector, Matrix, GenericComposite))


def type_is_value(t) -> bool:
    """Whether `t` is a value type (a scalar, or Python's bool/int/float)."""
    return t in (bool, int, float) or isinstance(t, Scalar)


def type_is_tile(t) -> bool:
    return False  # weft has no tiles yet


def type_is_tuple(t) -> bool:
    return isinstance(t, TupleType)


def type_scalar_type(t):
    """The component type of a vector or matrix; a scalar type itself."""
    t = _weft_type(t)
    return getattr(t, "dtype", t)


def type_length(t) -> int:
    t = _weft_type(t)
    return t.num_components if isinstance(t, (Vector, Matrix)) else 1


type_size = type_length  # Warp's name: 1 for scalars and structs, components for vectors/matrices


def type_size_in_bytes(t) -> int:
    t = _weft_type(t)
    if isinstance(t, ArrayType):
        raise TypeError("an array type has no fixed size in bytes")
    return ctypes.sizeof(ctype_of(t))


def type_ctype(t):
    return ctype_of(_weft_type(t))


def type_repr(t) -> str:
    """Warp's readable name of a type (`vec3f`, `vector(length=5, dtype=float32)`, ...)."""
    import typing
    if t is typing.Any:
        return "Any"
    t = _weft_type(t)
    if isinstance(t, ArrayType):
        return f"array(ndim={t.ndim}, dtype={type_repr(t.dtype)})"
    if isinstance(t, TupleType):
        return f"tuple({', '.join(type_repr(x) for x in t.elements)})"
    if isinstance(t, Vector) and t.flavor == "vec" and not t.name.startswith("vec"):
        return f"vector(length={t.length}, dtype={t.dtype.name})"
    if isinstance(t, Matrix) and not t.name.startswith("mat"):
        return f"matrix(shape=({t.rows}, {t.cols}), dtype={t.dtype.name})"
    return getattr(t, "name", None) or getattr(t, "__name__", None) or repr(t)


def types_equal(a, b, match_generic: bool = False) -> bool:
    """Whether two types are the same (Python's float/int/bool as float32/int32/bool);
    with `match_generic`, an open annotation equals every type it admits."""
    a, b = _weft_type(a), _weft_type(b)
    if a is b or a == b:
        return True
    if match_generic:
        for x, y in ((a, b), (b, a)):
            matches = getattr(x, "matches", None)
            if getattr(x, "is_generic", False) and matches is not None and matches(y):
                return True
    return False


def types_equal_generic(a, b, match_generic: bool = True) -> bool:
    return types_equal(a, b, match_generic)


def strides_from_shape(shape: tuple, dtype) -> tuple:
    """C-order strides in bytes of an array of `dtype` elements with `shape`."""
    strides, step = [], type_size_in_bytes(dtype)
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


# Values --------------------------------------------------------------------------------------
def _type_of_value(x):
    if isinstance(x, CompositeValue):
        return x.type
    if isinstance(x, StructValue):
        return x._type
    if isinstance(x, np.generic):
        return scalar_from_numpy(x.dtype)
    if isinstance(x, (bool, int, float)):
        return PYTHON_TYPES[type(x)]
    return None


def is_array(x) -> bool:
    from ..runtime.array import array
    return isinstance(x, array)


def is_vector(x) -> bool:
    return type_is_vector(_type_of_value(x))


def is_matrix(x) -> bool:
    return type_is_matrix(_type_of_value(x))


def is_quaternion(x) -> bool:
    return type_is_quaternion(_type_of_value(x))


def is_transformation(x) -> bool:
    return type_is_transformation(_type_of_value(x))


def is_composite(x) -> bool:
    return type_is_composite(_type_of_value(x))


def is_scalar(x) -> bool:
    return isinstance(_type_of_value(x), Scalar)


def is_int(x) -> bool:
    return type_is_int(_type_of_value(x))


def is_float(x) -> bool:
    return type_is_float(_type_of_value(x))


def is_value(x) -> bool:
    return isinstance(x, (bool, int, float, np.generic))


def is_struct(x) -> bool:
    return isinstance(x, StructValue) or isinstance(x, StructType)


def is_tile(x) -> bool:
    return False


def is_tuple(x) -> bool:
    return isinstance(x, tuple)
