"""weft's value types. `weft.types.vector` / `weft.types.matrix` as in Warp."""

from .array_type import MAX_DIMS, ArrayType, IndexedArrayType
from .composite import (
    SUFFIXES,
    Composite,
    CompositeValue,
    GenericComposite,
    Matrix,
    TupleType,
    Vector,
    matrix,
    quaternion,
    transformation,
    vector,
)
from .introspect import *  # noqa: F403 - Warp's wp.types helpers (type_is_vector, type_size, ...)
from .introspect import dtype_from_numpy, dtype_to_numpy
from .scalars import (
    PYTHON_TYPES,
    SCALARS,
    AnyScalar,
    Float,
    GenericScalar,
    Int,
    Scalar,
    Type,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    scalar_by_name,
    scalar_from_numpy,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .struct import StructType, StructValue

half, float_, double = float16, float32, float64

_FLOATS = {"h": float16, "f": float32, "d": float64}
_named = {}
for _n in (2, 3, 4):
    _named[f"vec{_n}"] = vector(_n, float32)
    _named[f"mat{_n}{_n}"] = matrix((_n, _n), float32)
    for _s, _name in SUFFIXES.items():
        _named[f"vec{_n}{_s}"] = vector(_n, scalar_by_name(_name))
    for _s, _t in _FLOATS.items():
        _named[f"mat{_n}{_n}{_s}"] = matrix((_n, _n), _t)
for _s, _t in _FLOATS.items():
    _named[f"quat{_s}"] = quaternion(_t)
    _named[f"transform{_s}"] = transformation(_t)
    _named[f"spatial_vector{_s}"] = vector(6, _t)  # Warp's spatial types: a 6-vector, a 6x6 matrix
    _named[f"spatial_matrix{_s}"] = matrix((6, 6), _t)
_named["quat"] = quaternion(float32)
_named["transform"] = transformation(float32)
_named["spatial_vector"] = vector(6, float32)
_named["spatial_matrix"] = matrix((6, 6), float32)
globals().update(_named)
NAMED_COMPOSITES = dict(_named)


def resolve(annotation):
    """Map what a user may write as a type (`float`, `wp.vec3`, ...) to a weft type, or None."""
    if isinstance(annotation, Type):
        return annotation
    return PYTHON_TYPES.get(annotation)


__all__ = [
    "MAX_DIMS", "ArrayType", "IndexedArrayType", "Composite", "CompositeValue", "Matrix", "TupleType", "Vector",
    "matrix", "quaternion", "transformation", "vector", "PYTHON_TYPES", "SCALARS", "Scalar",
    "Type", "bool_", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "scalar_from_numpy", "uint8", "uint16", "uint32", "uint64", "StructType", "StructValue",
    "half", "float_", "double", "NAMED_COMPOSITES", "resolve", "GenericComposite", "GenericScalar",
    "Int", "Float", "AnyScalar", "dtype_from_numpy", "dtype_to_numpy", *_named,
]
