"""Scalar types: every one by name and alias, converted in Python scope, passed to kernels
and stored in arrays; integer range checks on launch."""

import numpy as np
import pytest

import weft as wp
from weft.types import PYTHON_TYPES, SCALARS, resolve

# name, numpy dtype, bits, kind
TABLE = [
    ("bool", np.bool_, 8, "b"),
    ("int8", np.int8, 8, "i"), ("int16", np.int16, 16, "i"),
    ("int32", np.int32, 32, "i"), ("int64", np.int64, 64, "i"),
    ("uint8", np.uint8, 8, "u"), ("uint16", np.uint16, 16, "u"),
    ("uint32", np.uint32, 32, "u"), ("uint64", np.uint64, 64, "u"),
    ("float16", np.float16, 16, "f"), ("float32", np.float32, 32, "f"),
    ("float64", np.float64, 64, "f"),
]
NUMERIC = [row[0] for row in TABLE if row[0] != "bool"]
INTS = [row[0] for row in TABLE if row[3] in "iu"]


@pytest.mark.parametrize("name, np_dtype, bits, kind", TABLE)
def test_scalar_attributes(name, np_dtype, bits, kind):
    t = getattr(wp, name)
    assert t is getattr(wp.types, name if name != "bool" else "bool_")
    assert t.name == name
    assert t.np_dtype == np.dtype(np_dtype)
    assert t.bits == bits and t.kind == kind
    assert t.size == np.dtype(np_dtype).itemsize
    assert t.is_float == (kind == "f") and t.is_int == (kind in "iu") and t.is_bool == (kind == "b")
    assert repr(t) == name
    assert t in SCALARS


def test_warp_aliases():
    assert wp.float is wp.float32
    assert wp.int is wp.int32
    assert wp.bool is wp.types.bool_
    assert wp.types.half is wp.float16 and wp.types.float_ is wp.float32 and wp.types.double is wp.float64
    assert PYTHON_TYPES == {float: wp.float32, int: wp.int32, bool: wp.bool}
    assert resolve(float) is wp.float32 and resolve(int) is wp.int32 and resolve(bool) is wp.bool
    assert resolve(wp.vec3) is wp.vec3
    assert resolve(str) is None


@pytest.mark.parametrize("name", NUMERIC)
def test_python_scope_conversion(name):
    t = getattr(wp, name)
    v = t(3)
    assert isinstance(v, t.np_dtype.type) and v == 3
    assert t() == 0


@pytest.mark.parametrize("name", NUMERIC)
def test_python_scope_values_carry_warp_value(name):
    # Warp's scalar objects have `.value`, the Python number; weft's are numpy scalars of
    # the type's dtype that carry it too, and numpy arithmetic gives plain numpy scalars
    t = getattr(wp, name)
    v = t(7)
    assert v.value == 7 and type(v.value) is (float if t.is_float else int)
    assert repr(v) == repr(t.np_dtype.type(7))
    assert type(v + v) is t.np_dtype.type
    assert wp.constant(t(5)).value == 5
    assert wp.float16(1.1).value == float(np.float16(1.1))  # rounded to the type first


def test_python_scope_float_conversion_rounds():
    assert wp.float16(0.1) == np.float16(0.1)
    assert wp.float32(0.1) == np.float32(0.1) and float(wp.float32(0.1)) != 0.1
    assert wp.float64(0.1) == 0.1


def test_python_annotations_give_warp_types():
    @wp.kernel
    def annotated(a: float, b: int, c: bool, d: wp.float, e: wp.int, f: wp.float64):
        pass

    assert list(annotated.params.values()) == [wp.float32, wp.int32, wp.bool, wp.float32, wp.int32, wp.float64]


# Every scalar through a kernel ----------------------------------------------------------------
def _add_kernel(t):
    @wp.kernel
    def add(a: wp.array(dtype=t), s: t, out: wp.array(dtype=t)):
        i = wp.tid()
        out[i] = a[i] + s

    return add


ADD = {name: _add_kernel(getattr(wp, name)) for name in NUMERIC}


@pytest.mark.parametrize("name", NUMERIC)
def test_scalar_kernel_roundtrip(name):
    t = getattr(wp, name)
    src = np.arange(6).astype(t.np_dtype)
    a = wp.array(src, dtype=t)
    out = wp.zeros(6, dtype=t)
    assert a.dtype is t and out.dtype is t and out.numpy().dtype == t.np_dtype
    wp.launch(ADD[name], 6, inputs=[a, 3, out])
    np.testing.assert_array_equal(out.numpy(), src + t.np_dtype.type(3))


@pytest.mark.parametrize("name", INTS)
def test_integer_extremes_pass_intact(name):
    t = getattr(wp, name)
    info = np.iinfo(t.np_dtype)
    a = wp.zeros(2, dtype=t)
    out = wp.zeros(2, dtype=t)
    for value in (int(info.max), int(info.min)):
        wp.launch(ADD[name], 2, inputs=[a, value, out])
        assert out.numpy().tolist() == [value, value]


@pytest.mark.parametrize("name", INTS)
def test_integer_out_of_range_is_value_error(name):
    t = getattr(wp, name)
    info = np.iinfo(t.np_dtype)
    a, out = wp.zeros(2, dtype=t), wp.full(2, 7, dtype=t)
    # (an unsigned type also takes the negative values of its width, as C converts them)
    lowest = -(int(info.max) + 1) // 2 if info.min == 0 else int(info.min)
    for bad in (int(info.max) + 1, lowest - 1):
        with pytest.raises(ValueError) as e:
            wp.launch(ADD[name], 2, inputs=[a, bad, out])
        msg = str(e.value)
        assert "kernel 'add'" in msg and "'s'" in msg and name in msg and str(bad) in msg
    assert out.numpy().tolist() == [7, 7]  # nothing ran
    if info.min == 0:
        wp.launch(ADD[name], 2, inputs=[a, -1, out])
        assert out.numpy().tolist() == [int(info.max)] * 2  # (-1: all ones)


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_float_parameter_rounds_to_its_type(name):
    t = getattr(wp, name)
    a, out = wp.zeros(1, dtype=t), wp.zeros(1, dtype=t)
    wp.launch(ADD[name], 1, inputs=[a, 0.1, out])
    assert out.numpy()[0] == t.np_dtype.type(0.1)
    wp.launch(ADD[name], 1, inputs=[a, np.float64(1e-5), out])  # numpy scalars too
    assert out.numpy()[0] == t.np_dtype.type(1e-5)


@pytest.mark.parametrize("name", INTS)
def test_numpy_integer_arguments(name):
    t = getattr(wp, name)
    a, out = wp.zeros(1, dtype=t), wp.zeros(1, dtype=t)
    wp.launch(ADD[name], 1, inputs=[a, np.int64(5), out])
    assert out.numpy()[0] == 5
    wp.launch(ADD[name], 1, inputs=[a, np.uint8(6), out])
    assert out.numpy()[0] == 6


@wp.kernel
def bool_kernel(a: wp.array(dtype=wp.bool), s: bool, out: wp.array(dtype=bool), n: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = a[i] != s
    if a[i]:
        wp.atomic_add(n, 0, 1)


def test_bool_arrays_and_parameters():
    src = np.array([True, False, True, True])
    a = wp.array(src)
    assert a.dtype is wp.bool
    out, n = wp.zeros(4, dtype=bool), wp.zeros(1, dtype=int)
    wp.launch(bool_kernel, 4, inputs=[a, True, out, n])
    np.testing.assert_array_equal(out.numpy(), src != True)  # noqa: E712
    assert n.numpy()[0] == 3
    wp.launch(bool_kernel, 4, inputs=[a, np.bool_(False), out, n])
    np.testing.assert_array_equal(out.numpy(), src)


@wp.kernel
def mixed_params(i8: wp.int8, u16: wp.uint16, i64: wp.int64, u64: wp.uint64, h: wp.float16,
                 d: wp.float64, out: wp.array(dtype=wp.float64)):
    out[0] = wp.float64(i8)
    out[1] = wp.float64(u16)
    out[2] = wp.float64(i64)
    out[3] = wp.float64(u64)
    out[4] = wp.float64(h)
    out[5] = d


def test_parameters_of_mixed_widths_are_packed_in_place():
    out = wp.zeros(6, dtype=wp.float64)
    wp.launch(mixed_params, 1, inputs=[-5, 60000, -(2**40), 2**50, 1.5, 0.25, out])
    assert out.numpy().tolist() == [-5, 60000, -(2**40), 2**50, 1.5, 0.25]


def test_division_and_remainder_of_scalar_values_are_the_kernels():
    # Warp's scalar objects divide and take remainders with its builtins, so Python scope agrees
    # with kernels: integer division truncates toward zero, % has the sign of the dividend.
    assert wp.int32(-7) / wp.int32(2) == -3 and type(wp.int32(-7) / 2) is np.int32
    assert 7 / wp.int32(2) == 3 and wp.int8(-7) / wp.int8(2) == -3 and wp.int64(-9) / wp.int64(4) == -2
    assert wp.uint8(7) / wp.uint8(2) == 3
    assert wp.int32(-7) % wp.int32(3) == -1 and wp.int32(7) % -3 == 1 and -7 % wp.int32(3) == -1
    assert wp.float32(-7.5) % wp.float32(2.0) == -1.5 and type(wp.float32(-7.5) % 2.0) is np.float32
    assert wp.int32(7) / 2.0 == 3.5  # (a float operand: true division; Warp has no such overload)
    with pytest.raises(ZeroDivisionError):
        wp.int32(1) / wp.int32(0)
    with pytest.raises(ZeroDivisionError):
        wp.int32(1) % 0
    assert list(wp.int32(24) / wp.vec3i(2, 4, 6)) == [12, 6, 4]  # (the vector's operator)


def test_scalar_sums_and_products_wrap_without_warnings():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (numpy warns about scalar overflow; Warp does not)
        assert wp.int8(100) + wp.int8(100) == -56 and wp.uint8(3) - wp.uint8(5) == 254
        assert wp.int32(2**31 - 1) + wp.int32(1) == -2**31 and wp.int8(100) * wp.int8(3) == 44
        assert -wp.int8(-128) == -128 and 1 - wp.uint8(5) == 252
        assert np.isinf(wp.float16(60000.0) * wp.float16(2.0))
