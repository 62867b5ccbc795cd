"""Warp's type introspection helpers (`wp.types.type_is_vector`, `type_size`, ...) and the
numpy dtype mapping, over weft's types."""

from __future__ import annotations

import builtins
import ctypes
import typing

import numpy as np

from .array_type import AnyArray, ArrayType
from .composite import CompositeValue, Matrix, TupleType, Vector
from .generic import TypePattern
from .scalars import (
    _ON_RESOLVE,
    PYTHON_TYPES,
    SCALAR_VALUES,
    SCALARS,
    Scalar,
    _DeferredScalar,
    bool_,
    scalar_from_numpy,
)
from .struct import StructType, StructValue

int_types = tuple(s for s in SCALARS if s.is_int)
float_types = tuple(s for s in SCALARS if s.is_float)
scalar_types = int_types + float_types
scalar_and_bool_types = (*scalar_types, bool_)
#: Scalars whose atomic updates are not supported (Warp's list: 8- and 16-bit integers);
#: `a[i] += x` on such arrays is a plain, non-atomic update.
non_atomic_types = tuple(s for s in SCALARS if s.is_int and s.bits in (8, 16))


def _weft(t):
    """`t` as a weft type where it is a Python one (float -> float32) or the class of a
    vector/matrix value (`type(weft.vec3())` -> vec3f)."""
    if isinstance(t, type):
        return getattr(t, "_weft_type", None) or PYTHON_TYPES.get(t, t)
    return t


def type_is_int(t) -> bool:
    return _weft(t) in int_types


def type_is_float(t) -> bool:
    return _weft(t) in float_types


def type_is_scalar(t) -> bool:
    return _weft(t) in scalar_types


def _is_vector_type(t, flavor) -> bool:
    t = _weft(t)
    return isinstance(t, Vector) and t.flavor == flavor


def type_is_vector(t) -> bool:
    return _is_vector_type(t, "vec")


def type_is_quaternion(t) -> bool:
    return _is_vector_type(t, "quat")


def type_is_transformation(t) -> bool:
    return _is_vector_type(t, "transform")


def type_is_matrix(t) -> bool:
    return isinstance(_weft(t), Matrix)


def type_is_composite(t) -> bool:
    return isinstance(_weft(t), (Vector, Matrix))


def type_is_value(t) -> bool:
    return t in (int, float, builtins.bool) or t in scalar_and_bool_types or type_is_composite(t)


def type_is_struct(t) -> bool:
    return isinstance(t, StructType)


def array_classes() -> tuple:
    """The array classes: `weft.array`, `indexedarray`, `fabricarray`, `indexedfabricarray`."""
    from ..runtime.array import array  # (the runtime's classes; types sit below the runtime)
    from ..runtime.fabric import fabricarray, indexedfabricarray
    from ..runtime.indexed_array import indexedarray
    return (array, indexedarray, fabricarray, indexedfabricarray)


def type_is_array(t) -> bool:
    """Whether `t` is an array class (`weft.array`); an annotation such as
    `weft.array(dtype=float)` is an array description, for `is_array` (as in Warp)."""
    return isinstance(t, type) and issubclass(t, array_classes())


def concrete_array_type(t):
    """The array class an array or array annotation belongs to (`weft.array`,
    `indexedarray`, `fabricarray`, `indexedfabricarray`; that of its base class for an
    instance of a user's subclass); `type(t)` for anything else."""
    from .array_type import AnyArray, ArrayType
    families = array_classes()
    if isinstance(t, (ArrayType, AnyArray)):
        array, indexedarray, fabricarray, indexedfabricarray = families
        return {(False, False): array, (True, False): indexedarray, (False, True): fabricarray,
                (True, True): indexedfabricarray}[(t.indexed, t.fabric)]
    return next((family for family in families if isinstance(t, family)), type(t))


def matches_array_class(t, cls) -> bool:
    """Whether `t` is an array of class `cls` or an annotation of that family."""
    return isinstance(t, cls) or concrete_array_type(t) is cls


def type_is_tile(t) -> bool:
    """Whether `t` is the tile class (`weft.tile`), as type_is_array is for arrays; a tile
    type such as `tile[float, 4]` describes tiles, for `is_tile` (as in Warp)."""
    from .tile import tile
    return isinstance(t, type) and issubclass(t, tile)


def _type_of(x):
    """The weft type of a Python-scope value, or None."""
    t = getattr(x, "type", None)
    if isinstance(t, (Vector, Matrix)):
        return t
    if isinstance(x, SCALAR_VALUES):
        return scalar_from_numpy(x.dtype)
    return PYTHON_TYPES.get(type(x))


def is_int(x) -> bool:
    return type_is_int(_type_of(x))


def is_float(x) -> bool:
    return type_is_float(_type_of(x))


def is_scalar(x) -> bool:
    return type_is_scalar(_type_of(x))


def is_vector(x) -> bool:
    return type_is_vector(_type_of(x))


def is_quaternion(x) -> bool:
    return type_is_quaternion(_type_of(x))


def is_transformation(x) -> bool:
    return type_is_transformation(_type_of(x))


def is_matrix(x) -> bool:
    return type_is_matrix(_type_of(x))


def is_composite(x) -> bool:
    return type_is_composite(_type_of(x))


def is_value(x) -> bool:
    return isinstance(x, (int, float, builtins.bool)) or is_scalar(x) or is_composite(x) \
        or _type_of(x) is bool_


def is_struct(x) -> bool:
    return isinstance(x, StructValue)


def is_array(x) -> bool:
    """Whether `x` is a weft array (or an array annotation)."""
    return isinstance(x, (ArrayType, AnyArray, *array_classes()))


def is_tile(x) -> bool:
    """Whether `x` describes a tile (a tile type: `tile[float, 4]`, `tile(dtype=float, shape=4)`);
    tile values exist only inside kernels."""
    from .tile import TileType
    return isinstance(x, TileType)


def type_size(t) -> int:
    """Number of components: 1 for scalars and structs, the length of vectors and matrices
    (of a type, or of a vector/matrix value as in Warp)."""
    t = _weft(_type_of(t) if isinstance(t, CompositeValue) else t)
    if isinstance(t, (Vector, Matrix)):
        return t.num_components
    return 1


def type_size_in_bytes(t) -> int:
    """Bytes of one value of type `t` (a value of a scalar, vector or matrix type: its type's)."""
    if isinstance(t, (*SCALAR_VALUES, CompositeValue)):
        t = _type_of(t)
    t = _weft(t)
    if t is typing.Any or isinstance(t, TypePattern):
        raise TypeError("a concrete type is required")
    if isinstance(t, (Scalar, Vector, Matrix, StructType)):
        return t.size
    if isinstance(t, type) and issubclass(t, (ctypes._SimpleCData, ctypes.Structure, ctypes.Array)):
        return ctypes.sizeof(t)
    raise TypeError(f"invalid data type: {t!r}")


def type_scalar_type(t):
    return getattr(_weft(t), "dtype", _weft(t))


def type_ctype(t):
    from .layout import ctype_of
    return ctype_of(_weft(t))


def type_length(t) -> int:
    t = _weft(t)
    if isinstance(t, (Vector, Matrix)):
        return t.shape[0]
    if isinstance(t, TupleType):
        return len(t.elements)
    return len(t)


def types_equal(a, b) -> bool:
    """Whether two types are the same once Python types are read as weft's (two arrays:
    whether their types, dtype and ndim, are)."""
    def kind(x):
        array_type = getattr(x, "_type", None)
        return array_type if isinstance(array_type, ArrayType) else _weft(x)
    return kind(a) is kind(b)


_SHORT_NAMES = {"float16": "h", "bfloat16": "bf", "float32": "f", "float64": "d", "int8": "b", "int16": "s",
                "int32": "i", "int64": "l", "uint8": "ub", "uint16": "us", "uint32": "ui", "uint64": "ul"}


def scalar_short_name(t):
    """The suffix of a scalar type in composite type names (`f` in `vec3f`), or None."""
    t = _weft(t)
    return _SHORT_NAMES.get(t.name) if isinstance(t, Scalar) else None


def type_repr(t) -> str:
    """A type (or an array) as Warp spells it: `vec3f`, `vector(length=5, dtype=float64)`,
    `mat23f`, `array(ndim=1, dtype=float32)`, `array(shape=(3,), dtype=float32)`."""
    if t is typing.Any:
        return "Any"
    if t in (float, int, builtins.bool):
        return t.__name__
    array_type = getattr(t, "_type", None)
    if isinstance(array_type, ArrayType) and hasattr(t, "shape"):  # an array
        return f"array(shape={tuple(t.shape)}, dtype={type_repr(array_type.dtype)})"
    t = _weft(t)
    if isinstance(t, ArrayType):
        return f"array(ndim={t.ndim}, dtype={type_repr(t.dtype)})"
    if isinstance(t, AnyArray):
        ndim = "Any" if t.ndim is typing.Any else t.ndim
        return f"array(ndim={ndim}, dtype={type_repr(t.dtype)})"
    if isinstance(t, Vector):
        sn = scalar_short_name(t.dtype)
        if t.flavor != "vec":
            name = "quat" if t.flavor == "quat" else "transform"
            return f"{name}{sn}" if sn else f"{name}(dtype={type_repr(t.dtype)})"
        if sn and t.length <= 4:
            return f"vec{t.length}{sn}"
        return f"vector(length={t.length}, dtype={type_repr(t.dtype)})"
    if isinstance(t, Matrix):
        sn = scalar_short_name(t.dtype)
        if sn and t.rows <= 4 and t.cols <= 4:
            return f"mat{t.rows}{t.cols}{sn}"
        return f"matrix(shape=({t.rows}, {t.cols}), dtype={type_repr(t.dtype)})"
    name = getattr(t, "name", None) or getattr(t, "__name__", None)
    return name if name is not None else repr(t)


# numpy dtypes to weft scalars and back (Warp's `np_dtype_to_warp_type` and its inverse)
class _Table(dict):
    """A dtype table whose bfloat16 entries appear when first asked for (`table[key]`:
    they need ml_dtypes, which weft imports on first use; see scalars._DeferredScalar)."""

    def __missing__(self, key):
        for s in SCALARS:
            if isinstance(s, _DeferredScalar) and (key is s or _names_dtype(key, s.name)):
                s.np_dtype  # noqa: B018 - resolves it, which adds its entries
                if key in self:
                    return self[key]
        raise KeyError(key)


def _names_dtype(key, name: str) -> bool:
    try:
        return np.dtype(key).name == name
    except TypeError:
        return False


np_dtype_to_warp_type = _Table()
warp_type_to_np_dtype = _Table()


def _add_to_tables(s) -> None:
    np_dtype_to_warp_type[s.np_dtype] = s
    np_dtype_to_warp_type[s.np_dtype.type] = s
    # (bfloat16: numpy's storage type for its bits, uint16, as in Warp: numpy has no bfloat16
    # of its own; `.numpy()` of a bfloat16 array still gives ml_dtypes' bfloat16 values)
    warp_type_to_np_dtype[s] = np.uint16 if s.name == "bfloat16" else s.np_dtype.type


for _s in SCALARS:
    if not isinstance(_s, _DeferredScalar):
        _add_to_tables(_s)
_ON_RESOLVE.append(_add_to_tables)  # (bfloat16's entries when ml_dtypes is imported)


def dtype_from_numpy(numpy_dtype):
    """The weft scalar type of a numpy dtype (or scalar type)."""
    t = np_dtype_to_warp_type.get(numpy_dtype)
    if t is None:
        try:
            t = scalar_from_numpy(numpy_dtype)
        except TypeError:
            t = None
    if t is None:
        raise TypeError(f"cannot convert {numpy_dtype!r} to a weft type")
    return t


def dtype_to_numpy(weft_dtype):
    """The numpy scalar type of a weft scalar type."""
    weft_dtype = _weft(weft_dtype)
    try:
        return warp_type_to_np_dtype[weft_dtype]  # (bfloat16 resolved on the way: _Table)
    except KeyError:
        raise TypeError(f"cannot convert {weft_dtype!r} to a numpy type") from None


def strides_from_shape(shape: tuple, dtype) -> tuple:
    """Byte strides of a C-ordered (row-major) array of `shape` holding `dtype`."""
    strides, step = [], type_size_in_bytes(dtype)
    for extent in reversed(tuple(shape)):
        strides.append(step)
        step *= int(extent)
    return tuple(reversed(strides))


__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "annotations", "builtins", "ctypes", "typing", "np", "AnyArray", "ArrayType", "Matrix", "TupleType",
    "Vector", "CompositeValue", "TypePattern", "PYTHON_TYPES", "SCALARS", "Scalar", "bool_", "StructType",
    "StructValue")]
