"""`warp._src.types`: re-exports of weft's types and type helpers (no logic here)."""

from ..runtime.array_memory import check_array_shape  # noqa: F401
from ..types import *  # noqa: F403
from ..types import AnyScalar as Scalar  # noqa: F401 - Warp's generic annotation
from ..types import Float, Int, vector_types  # noqa: F401
from ..types.array_type import ArrayAnnotation as _ArrayAnnotation  # noqa: F401 - annotation classes
from ..types.array_type import ArrayAnnotationBase as _ArrayAnnotationBase  # noqa: F401
from ..types.array_type import FabricArrayAnnotation as _FabricArrayAnnotation  # noqa: F401
from ..types.array_type import IndexedArrayAnnotation as _IndexedArrayAnnotation  # noqa: F401
from ..types.array_type import IndexedFabricArrayAnnotation as _IndexedFabricArrayAnnotation  # noqa: F401
from ..types.composite import Matrix, Quaternion, Transformation, Vector  # noqa: F401 - subscript forms
from ..types.introspect import *  # noqa: F403
from ..types.introspect import (  # noqa: F401
    concrete_array_type,
    float_types,
    int_types,
    matches_array_class,
    np_dtype_to_warp_type,
    scalar_and_bool_types,
    scalar_types,
    warp_type_to_np_dtype,
)
from ..types.scalars import np_bfloat16_bits_to_float32 as _np_bfloat16_bits_to_float32  # noqa: F401
from ..types.scalars import np_float32_to_bfloat16_bits as _np_float32_to_bfloat16_bits  # noqa: F401

# Warp's array families, by number (`array_type_id`)
ARRAY_TYPE_REGULAR = 0
ARRAY_TYPE_INDEXED = 1
ARRAY_TYPE_FABRIC = 2
ARRAY_TYPE_FABRIC_INDEXED = 3


def array_type_id(a) -> int:
    """The family of an array or array annotation: ARRAY_TYPE_REGULAR, _INDEXED, _FABRIC or
    _FABRIC_INDEXED. ValueError for anything else."""
    from ..types import ArrayType
    from ..types.array_type import AnyArray
    t = getattr(a, "_type", a)  # an array value: its type
    if isinstance(t, (ArrayType, AnyArray)):
        return (ARRAY_TYPE_FABRIC if t.fabric else ARRAY_TYPE_REGULAR) + (1 if t.indexed else 0)
    raise ValueError(f"Invalid array type: {a!r}")


def get_type_code(t) -> str:
    """A short code naming a type, equal for equal types however they are written
    (`array(dtype=float)` and `array[float]` alike): scalars by kind and bytes ("f4", "i8",
    "b", "bf2"), "v3f4", "m22f8", "q" and "t" for quaternions and transforms, "a1f4" and
    "ia2f8" for arrays, "?" for Any and for the `...` of `tuple[vec3, ...]`, a struct by
    its name."""
    import typing

    from ..types import ArrayType, StructType, TileType
    from ..types.array_type import AnyArray
    from ..types.introspect import _weft
    from ..types.scalars import Scalar as _Scalar
    if t is typing.Any or t is Ellipsis:
        return "?"
    if typing.get_origin(t) is tuple:
        args = typing.get_args(t)
        return f"tpl{len(args)}{''.join(get_type_code(x) for x in args)}"
    t = _weft(t)
    if isinstance(t, _Scalar):
        if t.kind == "b":
            return "b"
        return "bf2" if t.name == "bfloat16" else f"{t.kind}{t.size}"
    if isinstance(t, Vector):
        code = get_type_code(t.dtype)
        return {"quat": f"q{code}", "transform": f"t{code}"}.get(t.flavor, f"v{t.length}{code}")
    if isinstance(t, Matrix):
        return f"m{t.shape[0]}{t.shape[1]}{get_type_code(t.dtype)}"
    if isinstance(t, (ArrayType, AnyArray)):
        prefix = ("i" if t.indexed else "") + ("fa" if t.fabric else "a")
        dtype = getattr(t, "dtype", typing.Any)
        return f"{prefix}{'?' if t.ndim is typing.Any else t.ndim}{get_type_code(dtype)}"
    if isinstance(t, TileType):
        shape = "?" if t.shape is typing.Any else "".join(map(str, t.shape))
        dtype = "?" if t.dtype is typing.Any else get_type_code(t.dtype)
        return f"t{'s' if t.storage == 'shared' else 'r'}{shape}{dtype}"
    if isinstance(t, StructType):
        return t.name
    raise TypeError(f"Unrecognized type '{t}'")


def _get_ml_dtypes_bfloat16():
    """ml_dtypes' bfloat16 numpy scalar type where ml_dtypes is installed, else None."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return ml_dtypes.bfloat16
