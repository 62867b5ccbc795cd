"""Arithmetic operators of weft.array: elementwise, with the kernel meaning of each operator."""

import numpy as np
import pytest

import weft as wp


@pytest.mark.parametrize("dtype", [wp.int8, wp.uint8, wp.int32, wp.float16, wp.float32, wp.float64])
def test_array_scalar_operators_match_kernel_semantics(dtype):
    arr = wp.array((1, 2, 3), dtype=dtype)
    s = dtype(5)
    npt = dtype.np_dtype if hasattr(dtype, "np_dtype") else np.dtype(dtype)
    x = np.array([1, 2, 3], npt)
    five = npt.type(5)
    cases = {"a+s": (arr + s, x + five), "s+a": (s + arr, five + x), "a-s": (arr - s, x - five),
             "s-a": (s - arr, five - x), "a*s": (arr * s, x * five), "s*a": (s * arr, five * x),
             "a%s": (arr % s, np.fmod(x, five)), "s%a": (s % arr, np.fmod(five, x)), "-a": (-arr, -x)}
    for name, (got, want) in cases.items():
        assert isinstance(got, wp.array) and got.dtype is dtype, name
        np.testing.assert_array_equal(got.numpy(), want, err_msg=name)


def test_integer_division_truncates_and_float_division_is_true_division():
    ai = wp.array([7, -7, 9], dtype=wp.int32)
    np.testing.assert_array_equal((ai / wp.int32(2)).numpy(), [3, -3, 4])
    np.testing.assert_array_equal((ai % wp.int32(2)).numpy(), [1, -1, 1])
    af = wp.array([1.0, 2.0, 4.0], dtype=wp.float64)
    np.testing.assert_allclose((wp.float64(1.0) / af).numpy(), [1.0, 0.5, 0.25])
    np.testing.assert_allclose((af ** 2.0).numpy(), [1.0, 4.0, 16.0])


def test_array_array_and_composite_operands():
    a = wp.array(np.arange(6, dtype=np.float32).reshape(3, 2), dtype=wp.vec2)
    np.testing.assert_array_equal((a + a).numpy(), 2 * a.numpy())
    np.testing.assert_array_equal((a * 3.0).numpy(), 3 * a.numpy())
    m = wp.array(np.tile(np.float32([[0, 1], [1, 0]]), (3, 1, 1)), dtype=wp.mat22)
    np.testing.assert_array_equal((m * a).numpy(), a.numpy()[:, ::-1])  # mat * vec is a product
    g = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4), dtype=float)
    np.testing.assert_array_equal((g - g * 2.0).numpy(), -g.numpy())


def test_mismatched_operands_are_refused():
    with pytest.raises(ValueError, match="not broadcastable"):
        wp.zeros(3, dtype=float) + wp.zeros(4, dtype=float)
    with pytest.raises(TypeError, match="does not support the provided argument types float32, float64"):
        wp.zeros(3, dtype=float) + wp.zeros(3, dtype=wp.float64)


def test_numpy_operands_keep_numpy_semantics():
    a = wp.array([1.0, 2.0, 3.0], dtype=float)
    r = np.ones(3) + a
    assert isinstance(r, np.ndarray)
    np.testing.assert_array_equal(r, [2.0, 3.0, 4.0])
    np.testing.assert_allclose(np.sin(a), np.sin([1.0, 2.0, 3.0]), rtol=1e-6)


def test_integer_scalar_pow_is_refused_float_pow_works():
    with pytest.raises(TypeError, match="pow"):
        wp.int32(2) ** wp.int32(3)
    with pytest.raises(TypeError, match="pow"):
        wp.uint8(3) ** wp.uint8(2)
    assert float(wp.float16(3) ** wp.float16(2)) == 9.0


def test_vector_value_modulo_and_division():
    v = wp.vec3i(1, -2, 3)
    assert list(v % wp.vec3i(2, 2, 2)) == [1, 0, 1]
    assert list(wp.int32(24) / wp.vec3i(2, 4, 6)) == [12, 6, 4]
    assert list(wp.vec3(2.0, 4.0, 6.0) % wp.vec3(4.0, 4.0, 4.0)) == [2.0, 0.0, 2.0]


def test_in_place_operators_write_into_the_array():
    a = wp.array([1.0, 2.0, 3.0], dtype=float)
    same = a
    a += wp.array([1.0, 1.0, 1.0], dtype=float)
    a *= 2.0
    a -= 1.0
    assert a is same
    np.testing.assert_array_equal(a.numpy(), [3.0, 5.0, 7.0])
    v = wp.array([[1.0, 2.0]], dtype=wp.vec2)
    v /= 2.0
    np.testing.assert_array_equal(v.numpy(), [[0.5, 1.0]])
    with pytest.raises(TypeError, match="does not match expected dtype"):
        m = wp.array(np.ones((1, 2, 2), np.float32), dtype=wp.mat22)
        m *= wp.vec2(1.0, 1.0)  # mat * vec is a vector: not an in-place result
