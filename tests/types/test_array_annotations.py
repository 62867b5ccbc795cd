"""Array annotations in every spelling users write, and the ctypes layout of each type."""

import ctypes
from typing import Any

import numpy as np
import pytest

import weft as wp
from weft.types import ArrayType
from weft.types.layout import array_descriptor, ctype_of


def test_one_dimensional_spellings_are_one_type():
    t = ArrayType(wp.float32, 1)
    assert wp.array(dtype=float) is t
    assert wp.array[float] is t
    assert wp.array(dtype=wp.float32) is t
    assert wp.array(dtype=wp.float) is t
    assert wp.array1d(dtype=float) is t
    assert wp.array() is wp.array(dtype=Any)  # an annotation without dtype: any dtype (Warp's default)
    assert wp.array().dtype is Any and wp.array(ndim=3).ndim == 3
    assert t.dtype is wp.float32 and t.ndim == 1 and t.is_array


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_ndim_spellings(ndim):
    named = getattr(wp, f"array{ndim}d")
    for dtype in (float, wp.int64, wp.vec3, wp.mat33d):
        t = wp.array(dtype=dtype, ndim=ndim)
        assert t is named(dtype=dtype) is ArrayType(dtype, ndim)
        assert t.ndim == ndim and t.dtype is wp.types.resolve(dtype)


def test_array_subscript_with_composites():
    assert wp.array[wp.vec3] is wp.array(dtype=wp.vec3)
    assert wp.array[int].dtype is wp.int32


def test_nd_subscript_spellings():
    assert wp.array2d[float] is wp.array(dtype=float, ndim=2)
    assert wp.array3d[wp.vec3] is wp.array(dtype=wp.vec3, ndim=3)


def test_shape_without_data_is_an_array_not_an_annotation():
    a = wp.array(shape=(2, 3), dtype=wp.vec3)
    assert isinstance(a, wp.array) and a.shape == (2, 3) and not a.numpy().any()
    assert isinstance(wp.array(dtype=float, shape=4), wp.array)


def test_invalid_annotations():
    with pytest.raises(ValueError, match="1 to 4 dimensions"):
        wp.array(dtype=float, ndim=5)
    with pytest.raises(ValueError, match="1 to 4 dimensions"):
        ArrayType(wp.float32, 0)
    with pytest.raises(TypeError, match="array dtype"):
        wp.array(dtype=wp.array(dtype=float))
    with pytest.raises(TypeError, match="array dtype"):
        wp.array(dtype="float32")
    with pytest.raises(ValueError, match="needs data or a shape"):
        wp.array(dtype=float, requires_grad=True)


# Kernels annotated each way run the same --------------------------------------------------------
@wp.kernel
def call_spelling(a: wp.array(dtype=float), b: wp.array[float], c: wp.array(dtype=wp.float32, ndim=1),
                  out: wp.array1d(dtype=wp.float)):
    i = wp.tid()
    out[i] = a[i] + b[i] * 10.0 + c[i] * 100.0


@wp.kernel
def nd_spellings(a2: wp.array(dtype=float, ndim=2), b2: wp.array2d(dtype=float),
                 a3: wp.array3d(dtype=float), a4: wp.array4d(dtype=wp.vec2), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    out[i, j] = a2[i, j] + b2[i, j] * 10.0 + a3[i, j, 1] * 100.0 + a4[i, j, 0, 1][1] * 1000.0


def test_all_one_dimensional_spellings_launch():
    ones = wp.ones(5)
    out = wp.zeros(5)
    wp.launch(call_spelling, 5, inputs=[ones, ones, ones, out])
    np.testing.assert_array_equal(out.numpy(), [111] * 5)
    assert list(call_spelling.params.values()) == [wp.array(dtype=float)] * 4


def test_multi_dimensional_spellings_launch():
    rng = np.random.default_rng(0)
    a2, b2 = rng.random((3, 4), np.float32), rng.random((3, 4), np.float32)
    a3 = rng.random((3, 4, 2), np.float32)
    a4 = rng.random((3, 4, 1, 2, 2), np.float32)
    out = wp.zeros((3, 4))
    wp.launch(nd_spellings, (3, 4), inputs=[wp.array(a2), wp.array(b2), wp.array(a3),
                                            wp.array(a4, dtype=wp.vec2), out])
    expected = a2 + b2 * 10 + a3[:, :, 1] * 100 + a4[:, :, 0, 1, 1] * 1000
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


# ctypes layout ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("t, size", [(wp.bool, 1), (wp.int8, 1), (wp.uint16, 2), (wp.int32, 4),
                                     (wp.uint64, 8), (wp.float16, 2), (wp.float32, 4), (wp.float64, 8),
                                     (wp.vec3, 12), (wp.vec4h, 8), (wp.mat33d, 72), (wp.quat, 16),
                                     (wp.transformd, 56), (wp.vec3i, 12)])
def test_ctype_sizes(t, size):
    assert ctypes.sizeof(ctype_of(t)) == size == t.size


def test_array_descriptor_layout():
    for ndim in (1, 2, 3, 4):
        desc = array_descriptor(ndim)
        assert ctypes.sizeof(desc) == 24 + 16 * ndim  # (ndim: 4 bytes, padded to 8)
        assert [name for name, _ in desc._fields_] == ["data", "shape", "strides", "grad", "ndim"]
        assert ctype_of(ArrayType(wp.float32, ndim)) is desc
    a = wp.array(np.zeros((3, 4), np.float64))[:, ::2]
    d = a.descriptor()
    assert d.data == a.ptr and list(d.shape) == [3, 2] and list(d.strides) == [32, 16] and d.ndim == 2
    assert not d.grad  # no gradient: a null address
    g = wp.zeros(4, dtype=float, requires_grad=True)
    assert g.descriptor().grad == g.grad.ptr


def test_annotation_repr_is_the_subscript_form_and_round_trips():
    from typing import Literal  # noqa: F401 - (for eval)
    cases = {
        wp.array[wp.float32]: "wp.array[wp.float32]",
        wp.array[bool]: "wp.array[wp.bool]",
        wp.array4d[wp.uint32]: "wp.array4d[wp.uint32]",
        wp.array3d[wp.vec3f]: "wp.array3d[wp.vec3f]",
        wp.array[wp.types.vector(3, wp.float64)]: "wp.array[wp.vec3d]",
        wp.array[wp.types.matrix((4, 4), wp.float32)]: "wp.array[wp.mat44f]",
        wp.array[wp.quatf]: "wp.array[wp.quatf]",
        wp.array[wp.transformf]: "wp.array[wp.transformf]",
        wp.array[wp.float32, Any]: "wp.array[wp.float32, Any]",
        wp.array[Any, Any]: "wp.array[Any, Any]",
        wp.array4d[Any]: "wp.array4d[Any]",
        wp.indexedarray[wp.float32]: "wp.indexedarray[wp.float32]",
        wp.indexedarray[wp.float32, 3]: "wp.indexedarray[wp.float32, Literal[3]]",
        wp.indexedarray[Any]: "wp.indexedarray[Any]",
    }
    for annotation, text in cases.items():
        assert repr(annotation) == text
        assert eval(text) is annotation  # noqa: S307
    # no public name: the type in words
    assert repr(wp.array[wp.types.vector(5, wp.float32)]) == "wp.array[vector(length=5, dtype=float32)]"
    assert repr(wp.array[wp.types.matrix((7, 7), wp.float32)]) == "wp.array[matrix(shape=(7, 7), dtype=float32)]"

    @wp.struct
    class Particle:
        x: float

    assert "Particle]" in repr(wp.array[Particle]) and "wp.Particle" not in repr(wp.array[Particle])
    # the IR text keeps the descriptive form
    assert wp.array[float].name == "array(dtype=float32, ndim=1)"


def test_unknown_dtype_is_kept_until_a_kernel_uses_it():
    class Custom:
        pass

    annotation = wp.array[Custom]  # a plain type hint is fine (Warp checks it when it is used)
    assert annotation.dtype is Custom and annotation.ndim == 1
    assert repr(annotation).endswith("Custom]")

    @wp.kernel
    def uses_custom(a: wp.array[Custom]):
        pass

    with pytest.raises(TypeError, match=r"parameter 'a': wp.array\[.*Custom\]: array dtype must be a weft"):
        wp.launch(uses_custom, 1, inputs=[wp.zeros(1)])
    with pytest.raises(ValueError, match="ndim must be between 1 and 4"):
        wp.array[Custom, 5]
    with pytest.raises(TypeError, match="array dtype must be"):
        wp.array(dtype=Custom)  # (the constructor form checks at once)


def test_annotation_families_and_isinstance():
    from typing import Literal

    from weft._src.types import (
        _ArrayAnnotation,
        _ArrayAnnotationBase,
        _FabricArrayAnnotation,
        _IndexedArrayAnnotation,
    )
    assert isinstance(wp.array[float], _ArrayAnnotation) and isinstance(wp.array3d[float], _ArrayAnnotation)
    assert isinstance(wp.array[Any, Any], _ArrayAnnotation)
    assert not isinstance(wp.indexedarray[float], _ArrayAnnotation)
    assert isinstance(wp.indexedarray[float], _IndexedArrayAnnotation)
    assert isinstance(wp.fabricarray[float], _FabricArrayAnnotation)
    assert all(isinstance(a, _ArrayAnnotationBase) for a in
               (wp.array[float], wp.indexedarray[float], wp.fabricarray[float], wp.indexedfabricarray[float]))
    assert not isinstance(wp.vec3, _ArrayAnnotationBase) and not isinstance(wp.array[float], wp.array)
    assert _ArrayAnnotation(dtype=wp.float32, ndim=2) is wp.array2d[float]
    assert _IndexedArrayAnnotation(dtype=float, ndim=Literal[3]) is wp.indexedarray[float, Literal[3]]
    assert repr(_ArrayAnnotation(dtype=Any, ndim=4)) == "wp.array4d[Any]"
    with pytest.raises(TypeError, match="every array family"):
        _ArrayAnnotationBase(dtype=float)


def test_annotation_members_and_ctype():
    t = wp.array2d[float]
    assert t.vars is t.vars
    assert set(t.vars) == {"shape", "ptr"} and t.vars["ptr"] is wp.uint64
    assert set(wp.fabricarray[float].vars) == {"shape", "size"}
    assert set(wp.fabricarray[float, 2].vars) == {"size"}
    desc = t.__ctype__()
    assert isinstance(desc, array_descriptor(2)) and desc.data is None and list(desc.shape) == [0, 0]


def test_annotations_are_light_objects_not_arrays():
    """`array[float]` and its kin are slotted annotation objects (no instance __dict__), as
    Warp's are, and never arrays."""
    from weft._src.types import _ArrayAnnotation, _ArrayAnnotationBase, _IndexedArrayAnnotation
    for ann in (wp.array[float], wp.array2d[float], wp.array[float, Any], wp.array[Any],
                wp.fixedarray(dtype=float, shape=(2, 3))):
        assert isinstance(ann, _ArrayAnnotation) and isinstance(ann, _ArrayAnnotationBase)
        assert not isinstance(ann, wp.array) and not hasattr(ann, "__dict__")
    for ann in (wp.indexedarray[float], wp.fabricarray[float], wp.indexedfabricarray[float]):
        assert not hasattr(ann, "__dict__")
    assert isinstance(wp.indexedarray[float], _IndexedArrayAnnotation)
    assert not isinstance(wp.indexedarray[float], wp.indexedarray)
    with pytest.raises(AttributeError):
        wp.array[float].extra = 1
    # (scalar, vector and struct types keep their attributes)
    assert hasattr(wp.float32, "__dict__") and hasattr(wp.vec3, "__dict__")
