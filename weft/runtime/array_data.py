"""Data given to weft arrays in Python: lists, tuples, numpy arrays and objects with an
array interface as numpy arrays of a dtype's elements (vector and matrix components, struct
records), and the dtype Warp gives data passed without one."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..types import (
    CompositeValue,
    Matrix,
    Scalar,
    StructType,
    StructValue,
    Type,
    Vector,
    bfloat16,
    float32,
    scalar_from_numpy,
)
from ..types.scalars import BoxedScalar, np_float32_to_bfloat16_bits
from .array_memory import element_numpy, type_name


class DataShapeError(ValueError, RuntimeError):
    """Data whose shape does not fit an array's: a ValueError, and the RuntimeError Warp raises."""


class DataTypeError(TypeError, RuntimeError):
    """Data that cannot make an array: a TypeError, and the RuntimeError Warp raises."""


class ArrayIndexError(IndexError, RuntimeError):
    """An index out of range at Python scope: an IndexError, and the RuntimeError Warp raises."""


class DataRangeError(ValueError, RuntimeError):
    """Python numbers out of an integer dtype's range: a ValueError, and Warp's RuntimeError."""


def _dtype_of_data(data) -> Type:
    """The dtype Warp gives data passed without one: the numpy dtype's scalar type, so that a
    list of vectors or matrices makes an array of their scalars with the components as inner
    dimensions (`[vec3(...), vec3(...)]`: float32, shape (2, 3)), as numpy sees them. (Warp
    cannot build an array from a list of structs without a dtype; weft takes the struct's.)"""
    if isinstance(data, (list, tuple)) and data:
        first = data[0]
        if isinstance(first, CompositeValue):
            return first.type.dtype
        if isinstance(first, StructValue):
            return first._type
    src = _asarray(data)
    t = scalar_from_numpy(src.dtype)
    if t is None:
        if src.dtype.kind == "f":
            return float32
        raise TypeError(f"cannot infer a weft dtype from numpy dtype {src.dtype}; pass dtype=")
    return t


def _numpy_of(data, t: Type) -> np.ndarray:
    """`data` (list, tuple, numpy array, array-interface object) as a numpy array. Vector and
    matrix values become their components; for an array of scalars (no dtype was given) a
    matrix's components are flat, as numpy sees Warp's matrices (`[mat22(...)]`: shape (1, 4))."""
    if isinstance(t, StructType) and isinstance(data, (list, tuple)):
        return struct_records(t, data)
    flat = isinstance(t, Scalar)
    if isinstance(data, CompositeValue) and flat:
        return np.asarray(data).reshape(-1)
    if isinstance(data, (list, tuple)) and data and isinstance(data[0], CompositeValue):
        kind = data[0].type
        if all(isinstance(v, CompositeValue) and v.type is kind for v in data):  # (their flat components)
            stacked = np.stack([v._data for v in data])
            return stacked if flat else stacked.reshape((len(data), *kind.np_shape))
        return np.array([np.asarray(v).reshape(-1) if flat else np.asarray(v) for v in data])
    src = _asarray(data)
    if src.dtype.kind == "f" and isinstance(data, (list, tuple)) and element_numpy(t)[0].kind in "iu":
        # Python ints beyond int64 and below 0 together make numpy choose float64, which
        # loses 2**64 - 1: keep them exact (as Python ints) for the integer dtype
        exact = np.asarray(data, dtype=object)
        if all(isinstance(v, numbers.Integral) for v in exact.ravel()):
            return exact
    return src


def _asarray(data) -> np.ndarray:
    """np.asarray(data), also for sequences of bfloat16 values (ml_dtypes takes none of
    weft's boxed values into an array: they are unboxed first)."""
    try:
        return np.asarray(data)
    except TypeError:
        if not isinstance(data, (list, tuple)):
            raise
        return np.asarray(_unboxed(data))


def _unboxed(data):
    if isinstance(data, (list, tuple)):
        return [_unboxed(x) for x in data]
    return data.unbox() if isinstance(data, BoxedScalar) else data


def _converted(src: np.ndarray, scalar: np.dtype) -> np.ndarray:
    """`src` converted to numpy dtype `scalar`. For bfloat16, as Warp: uint16 data is taken
    as the bits of bfloat16 values, other numbers are rounded through float32."""
    if scalar == bfloat16.np_dtype:
        if src.dtype == np.uint16:
            return np.ascontiguousarray(src).view(scalar)
        return np_float32_to_bfloat16_bits(src).view(scalar)
    return src.astype(scalar, order="C")


def _group_components(src: np.ndarray, trailing: tuple, t) -> np.ndarray:
    """Numpy scalars `src` grouped into elements whose components take the trailing shape
    `trailing`: data already ending in that shape keeps it; otherwise the last dimension
    is split into elements (`(4, 6)` holds `(4, 2)` vec3; `(3, 4)` holds 3 mat22); inner
    dimensions of extent 1 are dropped first (`(n, 3, 1)` holds n vec3)."""
    if not trailing or src.shape[src.ndim - len(trailing):] == trailing:
        return src
    while src.ndim > 1 and src.shape[-1] == 1:  # inner dimensions of 1 (column vectors)
        src = src.reshape(src.shape[:-1])
    if src.shape[src.ndim - len(trailing):] == trailing:
        return src
    m = math.prod(trailing)
    last = src.shape[-1] if src.ndim else 1
    if src.ndim == 0 or last % m:
        raise DataShapeError(f"data of shape {src.shape} does not hold {type_name(t)} elements "
                             f"({m} components each)")
    lead = src.shape[:-1] + (() if last == m else (last // m,))
    return src.reshape(lead + trailing)


def struct_record(t: StructType, value) -> np.void:
    """A struct value as one element of a `t` array's numpy storage."""
    from .launch import pack_value
    packed = pack_value(None, f"{t.name} value", t, value)
    return np.frombuffer(bytes(packed), dtype=element_numpy(t)[0])[0]


def struct_records(t: StructType, values) -> np.ndarray:
    """A list of `t` instances as a `t` array's numpy storage, field by field: a column of
    numbers per scalar, vector or matrix field, nested structs likewise. Anything else (array
    fields, other values, which pack_value checks and reports) element by element."""
    dtype = element_numpy(t)[0]
    if not all(type(v) is t.instance_type for v in values) or not all(_plain_field(ft) for ft in t.fields.values()):
        return np.array([struct_record(t, v) for v in values], dtype=dtype)
    out = np.zeros(len(values), dtype=dtype)
    for name, ft in t.fields.items() if values else ():
        column = [getattr(v, name) for v in values]
        field = out.dtype[name]
        if isinstance(ft, StructType):
            out[name] = struct_records(ft, column)
        elif isinstance(ft, (Vector, Matrix)):  # (each field holds a value of its type)
            out[name] = np.concatenate([c._data for c in column]).reshape((len(values),) + field.shape)
        else:
            out[name] = np.asarray(column, field.base)
    return out


def _plain_field(t) -> bool:
    """Whether a field's values convert to its numpy storage as numbers (see struct_records)."""
    if isinstance(t, StructType):
        return all(_plain_field(ft) for ft in t.fields.values())
    scalar = t.dtype if isinstance(t, (Vector, Matrix)) else t
    return isinstance(scalar, Scalar) and scalar.name != "bfloat16"
