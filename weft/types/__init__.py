"""weft's value types. `weft.types.vector` / `weft.types.matrix` as in Warp."""

from .array_type import MAX_DIMS, ArrayType, IndexedArrayType
from .composite import (
    Composite,
    CompositeValue,
    Matrix,
    TupleType,
    Vector,
    matrix,
    quaternion,
    transformation,
    vector,
)
from .scalars import (
    PYTHON_TYPES,
    SCALARS,
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
    scalar_from_numpy,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .struct import StructType, StructValue

half, float_, double = float16, float32, float64

_SUFFIXES = {"h": float16, "f": float32, "d": float64}
_named = {}
for _n in (2, 3, 4):
    _named[f"vec{_n}"] = vector(_n, float32)
    _named[f"vec{_n}i"] = vector(_n, int32)
    _named[f"mat{_n}{_n}"] = matrix((_n, _n), float32)
    for _s, _t in _SUFFIXES.items():
        _named[f"vec{_n}{_s}"] = vector(_n, _t)
        _named[f"mat{_n}{_n}{_s}"] = matrix((_n, _n), _t)
for _s, _t in _SUFFIXES.items():
    _named[f"quat{_s}"] = quaternion(_t)
    _named[f"transform{_s}"] = transformation(_t)
_named["quat"] = quaternion(float32)
_named["transform"] = transformation(float32)
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
    "half", "float_", "double", "NAMED_COMPOSITES", "resolve", *_named,
]
