"""`warp._src.types`: re-exports of weft's types and type helpers (no logic here)."""

from ..types import *  # noqa: F403
from ..types import AnyScalar as Scalar  # noqa: F401 - Warp's generic annotation
from ..types import Float, Int, vector_types  # noqa: F401
from ..types.composite import Matrix, Quaternion, Transformation, Vector  # noqa: F401 - subscript forms
from ..types.introspect import *  # noqa: F403
from ..types.introspect import (  # noqa: F401
    float_types,
    int_types,
    np_dtype_to_warp_type,
    scalar_and_bool_types,
    scalar_types,
    warp_type_to_np_dtype,
)
from ..types.scalars import np_bfloat16_bits_to_float32 as _np_bfloat16_bits_to_float32  # noqa: F401
from ..types.scalars import np_float32_to_bfloat16_bits as _np_float32_to_bfloat16_bits  # noqa: F401
