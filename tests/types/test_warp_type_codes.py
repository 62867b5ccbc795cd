"""Warp's type helpers in `weft._src.types`: array_type_id, get_type_code; and the
metadata Warp code reads from annotations (`.dtype`, `.ndim`, `StructType.vars`)."""

from typing import Any, Literal

import pytest

import weft as wp
from weft._src.types import ARRAY_TYPE_INDEXED, ARRAY_TYPE_REGULAR, array_type_id, get_type_code


@wp.struct
class _Holder:
    values: wp.indexedarray(dtype=float)
    count: int


def test_array_type_id():
    assert array_type_id(wp.array(dtype=float)) == ARRAY_TYPE_REGULAR
    assert array_type_id(wp.array(dtype=Any, ndim=4)) == ARRAY_TYPE_REGULAR
    assert array_type_id(wp.indexedarray2d(dtype=wp.float64)) == ARRAY_TYPE_INDEXED
    assert array_type_id(wp.zeros(3)) == ARRAY_TYPE_REGULAR
    with pytest.raises(ValueError, match="Invalid array type"):
        array_type_id(wp.float32)


def test_type_codes_agree_across_spellings_and_differ_across_types():
    assert get_type_code(wp.array(dtype=int, ndim=1)) == get_type_code(wp.array[int]) == "a1i4"
    assert get_type_code(wp.array(dtype=wp.mat22, ndim=2)) == get_type_code(wp.array2d[wp.mat22]) == "a2m22f4"
    assert get_type_code(wp.indexedarray(dtype=wp.float64, ndim=3)) == \
        get_type_code(wp.indexedarray[wp.float64, Literal[3]]) == "ia3f8"
    assert get_type_code(wp.array(dtype=Any, ndim=4)) == "a4?"
    codes = {get_type_code(t) for t in (wp.float16, wp.bfloat16, wp.uint16, wp.int16, wp.bool, wp.quatd,
                                        wp.transformd, wp.vec4d, wp.types.vector(length=5, dtype=wp.float64))}
    assert len(codes) == 9
    assert get_type_code(tuple[int, float]) == "tpl2i4f4"
    assert get_type_code(tuple[wp.vec3f, ...]) == "tpl2v3f4?"  # (the ellipsis as Warp codes it)


def test_annotation_metadata():
    assert wp.array(dtype=Any).dtype is Any and wp.array(dtype=Any, ndim=2).ndim == 2
    field = _Holder.vars["values"]
    assert field.label == "values" and field.type is wp.indexedarray(dtype=float)
    assert list(_Holder.vars) == ["values", "count"]


def test_strides_from_shape_and_non_atomic_types():
    from weft._src import types as warp_types
    assert warp_types.strides_from_shape((5, 5), wp.vec3) == (60, 12)
    assert warp_types.strides_from_shape((2, 3, 4), wp.float64) == (96, 32, 8)
    assert set(warp_types.non_atomic_types) == {wp.int8, wp.uint8, wp.int16, wp.uint16}
