"""Generic array annotations (any ndim, dtype patterns), annotation errors, unions of weft
types for Python-scope annotations, and generic vector/matrix annotations with `float`."""

import typing
from typing import Any, Literal

import pytest

import weft as wp


@wp.kernel
def count_dims(a: wp.array[wp.float32, Any], out: wp.array[int]):
    out[0] = a.ndim


@wp.kernel
def sum_vec3(a: wp.array(dtype=wp.types.vector(3, Any)), out: wp.array(dtype=Any)):
    i = wp.tid()
    out[i] = a[i][0] + a[i][1] + a[i][2]


def test_generic_ndim_and_dtype_patterns():
    assert wp.array[float, Any].ndim is Any and wp.array[float, Any].dtype is wp.float32
    out = wp.zeros(1, dtype=int)
    for shape, ndim in ((3,), 1), ((2, 2), 2), ((1, 2, 3), 3):
        wp.launch(count_dims, 1, inputs=[wp.zeros(shape), out])
        assert out.numpy()[0] == ndim
    with pytest.raises(TypeError, match=r"any number of dimensions with dtype float32, got wp.array\[wp.int32\]"):
        wp.launch(count_dims, 1, inputs=[wp.zeros(3, dtype=int), out])
    sums = wp.zeros(2, dtype=wp.float64)
    wp.launch(sum_vec3, 2, inputs=[wp.array([[1, 2, 3], [4, 5, 6]], dtype=wp.vec3d), sums])
    assert sums.numpy().tolist() == [6.0, 15.0]
    with pytest.raises(TypeError, match=r"dtype vector\(length=3, dtype=Any\), got wp.array\[wp.vec4f\]"):
        wp.launch(sum_vec3, 2, inputs=[wp.zeros(2, dtype=wp.vec4), sums])


def test_annotation_errors_and_unions():
    with pytest.raises(TypeError, match="Expected a single Literal value"):
        wp.array[float, Literal[1, 2]]
    with pytest.raises(ValueError, match="ndim must be between 1 and 4"):
        wp.array[float, 5]
    with pytest.raises(TypeError, match="single type parameter"):
        wp.array2d[float, Literal[2]]
    with pytest.raises(ValueError, match=r"exactly two dimensions, got 1 dimension in shape \(2,\)"):
        wp.types.matrix((2,), wp.float32)
    assert typing.get_args(wp.array[float] | None) == (wp.array[float], type(None))
    assert typing.get_args(int | wp.vec3) == (int, wp.vec3)
    assert typing.get_args(wp.array[Any] | float) == (wp.array[Any], float)
    with pytest.raises(TypeError, match="Union type annotations are only supported at Python scope"):
        @wp.func
        def f(a: wp.array[float] | float) -> float:
            return 0.0
    with pytest.raises(RuntimeError, match="Union type annotations are only supported at Python scope"):
        @wp.func
        def g(a: int | float) -> float:  # (a compile error: also Warp's RuntimeError)
            return 0.0


@wp.kernel
def generic_lengths(v: wp.types.vector(Any, float), m: wp.types.matrix((Any, Any), float), out: wp.array[int]):
    out[0] = len(v)
    out[1] = len(m)


def test_generic_vector_matrix_with_python_float_dtype():
    # `float` in a generic annotation means float32, as for concrete types
    out = wp.zeros(2, dtype=int)
    wp.launch(generic_lengths, 1, inputs=[wp.vec4(), wp.mat33(), out])
    assert out.numpy().tolist() == [4, 3]
    with pytest.raises(TypeError, match="vec4d"):
        wp.launch(generic_lengths, 1, inputs=[wp.vec4d(), wp.mat33(), out])
