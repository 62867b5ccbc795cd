"""Memory layout of weft types as ctypes types (C layout, matching the LLVM types)."""

from __future__ import annotations

import ctypes
import functools

from .array_type import ArrayType, FabricArrayType, IndexedArrayType
from .composite import Matrix, TupleType, Vector
from .scalars import Scalar
from .struct import StructType

_SCALAR_CTYPES = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16,
    "int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
    "float16": ctypes.c_uint16,  # raw bits; ctypes has no half type
    "bfloat16": ctypes.c_uint16,  # raw bits (the top half of a float32's)
    "float32": ctypes.c_float, "float64": ctypes.c_double,
}


@functools.cache
def array_descriptor(ndim: int):
    """The ctypes struct a kernel receives for an array: data pointer, shape, byte strides,
    the address of its gradient (null without one; laid out as the data, as Warp's array_t
    carries it: an array held in a struct in memory differentiates into it), and the number
    of dimensions (0 in a null array; the fields Warp's array_t has, by name, for numpy views
    of structs holding arrays)."""
    return type(f"ArrayDesc{ndim}", (ctypes.Structure,), {"_fields_": [
        ("data", ctypes.c_void_p),
        ("shape", ctypes.c_int64 * ndim),
        ("strides", ctypes.c_int64 * ndim),
        ("grad", ctypes.c_void_p),
        ("ndim", ctypes.c_int32),
    ]})


@functools.cache
def indexed_descriptor(ndim: int):
    """The ctypes struct a kernel receives for an indexed array: an array descriptor whose
    shape is the indexed shape, then per dimension the int32 index array (or null) and the
    extent of the indexed array's data."""
    return type(f"IndexedArrayDesc{ndim}", (ctypes.Structure,), {"_fields_": [
        ("data", ctypes.c_void_p),
        ("shape", ctypes.c_int64 * ndim),
        ("strides", ctypes.c_int64 * ndim),
        ("indices", ctypes.c_void_p * ndim),
        ("data_shape", ctypes.c_int64 * ndim),
    ]})


class FabricDesc(ctypes.Structure):
    """The ctypes struct a kernel receives for a Fabric array (plain or indexed, of any
    ndim): laid out as a 1-d indexed array descriptor. `table`: the address of each
    element (for an array of arrays: of the slot holding its row's address); `shape`: the
    number of elements seen (the index array's size, when indexed); `lengths`: for an array
    of arrays, the address of the table of its rows' length-slot addresses; `indices`: the
    int32 index array or null; `data_shape`: the Fabric array's own size."""

    _fields_ = [
        ("table", ctypes.c_void_p),
        ("shape", ctypes.c_int64 * 1),
        ("lengths", ctypes.c_int64 * 1),
        ("indices", ctypes.c_void_p * 1),
        ("data_shape", ctypes.c_int64 * 1),
    ]


@functools.cache
def ctype_of(t):
    """The ctypes type with the same size and layout as a value of weft type `t`."""
    if isinstance(t, Scalar):
        return _SCALAR_CTYPES[t.name]
    if isinstance(t, (Vector, Matrix)):
        return ctype_of(t.dtype) * t.num_components
    if isinstance(t, StructType):
        if t.invalid_fields:  # (a field whose annotation is no weft type)
            raise TypeError(next(iter(t.invalid_fields.values())) + "; the struct has no memory layout")
        fields = [(name, ctype_of(ft)) for name, ft in t.fields.items()]
        return type(t.name, (ctypes.Structure,), {"_fields_": fields})
    if isinstance(t, FabricArrayType):
        return FabricDesc
    if isinstance(t, IndexedArrayType):
        return indexed_descriptor(t.ndim)
    if isinstance(t, ArrayType):
        return array_descriptor(t.ndim)
    if isinstance(t, TupleType):
        raise TypeError("tuples exist only inside kernels")
    raise TypeError(f"no memory layout for {t!r}")
