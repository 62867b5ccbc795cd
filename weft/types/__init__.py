"""weft's value types. `weft.types.vector` / `weft.types.matrix` as in Warp."""

from .array_type import (
    MAX_DIMS,
    ArrayType,
    FabricArrayType,
    FixedArrayType,
    IndexedArrayType,
    IndexedFabricArrayType,
)
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
from .generic import MatrixPattern, ScalarPattern, TypePattern, VectorPattern  # noqa: F401
from .introspect import *  # noqa: F403
from .introspect import dtype_from_numpy, dtype_to_numpy
from .reference import Reference, ref
from .scalars import (
    PYTHON_TYPES,
    SCALARS,
    Scalar,
    Type,
    bfloat16,
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
from .tile import TileType, tile
from .tile_stack import TileStackType

half, float_, double = float16, float32, float64
handle = uint64  # Warp's type of object ids (a mesh's, a volume's): a uint64 in kernels

# Warp's generic scalar annotations
Int = ScalarPattern("Int", (int8, uint8, int16, uint16, int32, uint32, int64, uint64))
Float = ScalarPattern("Float", (float16, bfloat16, float32, float64))
AnyScalar = ScalarPattern("Scalar", (*Int.members, *Float.members))

_FLOAT_SUFFIXES = {"h": float16, "f": float32, "d": float64}
_INT_SUFFIXES = {"b": int8, "ub": uint8, "s": int16, "us": uint16, "i": int32, "ui": uint32,
                 "l": int64, "ul": uint64}
_named = {}
for _n in (2, 3, 4):
    _named[f"vec{_n}"] = vector(_n, float32)
    _named[f"mat{_n}{_n}"] = matrix((_n, _n), float32)
    for _s, _t in {**_INT_SUFFIXES, **_FLOAT_SUFFIXES}.items():
        _named[f"vec{_n}{_s}"] = vector(_n, _t)
    for _s, _t in _FLOAT_SUFFIXES.items():
        _named[f"mat{_n}{_n}{_s}"] = matrix((_n, _n), _t)
for _s, _t in _FLOAT_SUFFIXES.items():
    _named[f"quat{_s}"] = quaternion(_t)
    _named[f"transform{_s}"] = transformation(_t)
    _named[f"spatial_vector{_s}"] = vector(6, _t)
    _named[f"spatial_matrix{_s}"] = matrix((6, 6), _t)
for _base in ("quat", "transform", "spatial_vector", "spatial_matrix"):
    _named[_base] = _named[_base + "f"]
globals().update(_named)
NAMED_COMPOSITES = dict(_named)
vector_types = tuple(dict.fromkeys(
    _named[f"{base}{s}"] for base in ("vec2", "vec3", "vec4") for s in (*_INT_SUFFIXES, *_FLOAT_SUFFIXES)
)) + tuple(_named[f"{base}{s}"] for base in ("mat22", "mat33", "mat44", "quat", "transform",
                                             "spatial_vector", "spatial_matrix") for s in _FLOAT_SUFFIXES)


def resolve(annotation):
    """Map what a user may write as a type (`float`, `wp.vec3`, ...) to a weft type, or None."""
    if isinstance(annotation, Type):
        return annotation
    composite = getattr(annotation, "_weft_type", None) if isinstance(annotation, type) else None
    return composite or PYTHON_TYPES.get(annotation)


__all__ = [
    "MAX_DIMS", "ArrayType", "IndexedArrayType", "FabricArrayType", "IndexedFabricArrayType", "FixedArrayType",
    "Composite", "CompositeValue", "Matrix", "TupleType", "Vector",
    "matrix", "quaternion", "transformation", "vector", "PYTHON_TYPES", "SCALARS", "Scalar",
    "Type", "bool_", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "scalar_from_numpy", "uint8", "uint16", "uint32", "uint64", "StructType", "StructValue",
    "half", "float_", "double", "handle", "NAMED_COMPOSITES", "resolve", *_named, "bfloat16", "Int", "Float",
    "TypePattern", "dtype_from_numpy", "dtype_to_numpy", "TileType", "tile", "TileStackType",
    "Reference", "ref",
]
