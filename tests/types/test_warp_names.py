"""Warp 1.19's type names, generic annotations and `wp.types` helpers."""

from typing import Any

import numpy as np
import pytest

import weft as wp


def test_every_warp_vector_suffix_exists():
    for n in (2, 3, 4):
        for suffix, dtype in (("b", wp.int8), ("ub", wp.uint8), ("s", wp.int16), ("us", wp.uint16),
                              ("i", wp.int32), ("ui", wp.uint32), ("l", wp.int64), ("ul", wp.uint64),
                              ("h", wp.float16), ("f", wp.float32), ("d", wp.float64)):
            t = getattr(wp, f"vec{n}{suffix}")
            assert t is wp.types.vector(n, dtype)
            assert t.__name__ == f"vec{n}{suffix}"


def test_spatial_types_are_6_vectors_and_6x6_matrices():
    assert wp.spatial_vector is wp.types.vector(6, wp.float32)
    assert wp.spatial_matrixd is wp.types.matrix((6, 6), wp.float64)
    assert wp.types.type_size(wp.spatial_matrix) == 36


def test_numpy_dtype_mapping_round_trips():
    for t in (wp.int8, wp.uint64, wp.float16, wp.float32, wp.bool):
        assert wp.dtype_from_numpy(wp.dtype_to_numpy(t)) is t
    assert wp.dtype_from_numpy(np.dtype(np.float64)) is wp.float64
    with pytest.raises(TypeError):
        wp.dtype_from_numpy(np.complex64)


def test_type_helpers():
    assert wp.types.type_size_in_bytes(wp.mat33d) == 72
    assert wp.types.type_is_vector(wp.vec3) and not wp.types.type_is_vector(wp.quat)
    assert wp.types.type_is_quaternion(wp.quat) and wp.types.type_is_matrix(wp.mat22)
    assert wp.types.types_equal(float, wp.float32)
    assert wp.types.type_repr(wp.vec3d) == "vec3d"
    assert wp._src.types.int_types == (wp.int8, wp.int16, wp.int32, wp.int64,
                                       wp.uint8, wp.uint16, wp.uint32, wp.uint64)


@wp.func
def first_component(v: wp.types.vector(length=Any, dtype=wp.Float)):
    return v[0]


@wp.func
def twice(x: wp.Int):
    return x + x


@wp.kernel
def use_generic(out: wp.array(dtype=float), outi: wp.array(dtype=wp.int64)):
    out[0] = first_component(wp.vec3(1.5, 2.0, 3.0))
    out[1] = float(first_component(wp.vec2d(2.5, 1.0)))
    outi[0] = twice(wp.int64(21))


def test_generic_annotations_specialise_per_call():
    out, outi = wp.zeros(2, dtype=float), wp.zeros(1, dtype=wp.int64)
    wp.launch(use_generic, dim=1, inputs=[out, outi])
    assert out.numpy().tolist() == [1.5, 2.5] and outi.numpy()[0] == 42


def test_generic_annotation_constraint_is_checked():
    @wp.kernel
    def bad(out: wp.array(dtype=float)):
        out[0] = first_component(wp.vec3i(1, 2, 3))

    with pytest.raises(Exception, match="Float"):
        wp.launch(bad, dim=1, inputs=[wp.zeros(1, dtype=float)])


def test_warp_class_attributes_of_vector_and_matrix_types():
    """Warp's vector and matrix types are ctypes-array classes; programs read these."""
    import ctypes

    assert (wp.vec3._length_, wp.vec3._shape_, wp.vec3._wp_scalar_type_) == (3, (3,), wp.float32)
    assert wp.mat((2, 3), wp.float64)._length_ == 6
    assert wp.mat((2, 3), wp.float64)._shape_ == (2, 3)
    assert wp.vec4ub._type_ is ctypes.c_uint8
    assert wp.quatd._wp_generic_type_str_ == "quat_t" and wp.mat22._wp_generic_type_str_ == "mat_t"
    assert wp.vec2i._wp_type_params_ == [2, wp.int32]


def test_subscript_forms_of_composite_types():
    """Warp's `Vector[dtype, n]`, `Matrix[dtype, rows, cols]`, `Quaternion[dtype]`,
    `Transformation[dtype]` (from warp._src.types) give the cached concrete types."""
    import typing
    from typing import Literal

    from weft._src.types import Matrix, Quaternion, Transformation, Vector

    assert Vector[wp.float32, Literal[3]] is wp.vec3 and Vector[float, 4] is wp.vec4
    assert Matrix[wp.float64, Literal[2], Literal[4]] is wp.mat((2, 4), wp.float64)
    assert Quaternion[wp.float64] is wp.quatd and Transformation[wp.float32] is wp.transform
    t = typing.TypeVar("T")
    assert typing.get_origin(Vector[t, 3]) is Vector  # a generic alias, for static typing
    for bad, message in (("Vector[float]", "requires 2 parameters"), ("Vector[float, 0]", "positive integer"),
                         ("Vector[float, Literal[2, 3]]", "single Literal value"),
                         ("Matrix[float, 3]", "requires 3 parameters")):
        with pytest.raises(TypeError, match=message):
            eval(bad, {"Vector": Vector, "Matrix": Matrix, "Literal": Literal})


def test_warp_keyword_forms_of_struct_and_devices():
    @wp.struct(module="unique")  # Warp's keyword form
    class Particle:
        x: wp.vec3
        m: float

    p = Particle()
    p.m = 2.0
    assert p.m == 2.0
    assert wp.get_device(ident="cpu") is wp.get_device("cpu")
    wp.set_device(ident="cpu")
    assert wp.clear_lto_cache() is None  # weft links no LTO libraries: nothing to clear
