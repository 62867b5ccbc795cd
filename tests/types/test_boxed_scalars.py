"""Values of bool and bfloat16 (numpy's bool_ and ml_dtypes' bfloat16 make no instances of
subclasses, so weft boxes them): Warp's `.value`, numpy interop, comparisons, and their use
as kernel arguments, closure constants, struct fields and fill values."""

import pickle

import ml_dtypes
import numpy as np
import pytest

import weft as wp
from weft.types.scalars import SCALARS


@pytest.mark.parametrize("t", SCALARS, ids=lambda t: t.name)
def test_every_scalar_value_has_value_as_a_python_number(t):
    v = t(1)
    expected = True if t is wp.bool else 1
    assert v.value == expected and type(v.value) is type(expected if t.is_bool or t.is_int else 1.0)
    assert isinstance(v, t) and not isinstance(v, wp.int16 if t is wp.float16 else wp.float16)
    assert np.asarray(v).dtype == t.np_dtype and wp.array([v, v]).dtype is t
    if t is wp.bfloat16:  # ml_dtypes takes no value but its own (or a number) into its arrays
        with pytest.raises(TypeError):
            np.array([v, v])
    else:
        assert np.array([v, v]).dtype == t.np_dtype and isinstance(v, np.generic)


def test_bool_values():
    b = wp.bool(17)
    assert b.value is True and wp.bool(0).value is False
    assert isinstance(b, np.bool_) and not isinstance(b, wp.int8)
    assert bool(b) and b == True and b == np.True_  # noqa: E712
    assert hash(b) == hash(True) and len({b, True}) == 1
    assert (b & wp.bool(0)) == False and ~b == False  # noqa: E712
    np.testing.assert_array_equal(np.full(3, b.value, dtype=bool), [True] * 3)
    assert pickle.loads(pickle.dumps(b)).value is True
    with pytest.raises(AttributeError, match="immutable"):
        b.value = False


def test_bfloat16_values_round_and_compare_as_floats():
    x = wp.bfloat16(1.0 + 2.0**-9)  # rounds to 1.0 (7 mantissa bits)
    assert x.value == 1.0 and float(x) == 1.0 and x.dtype == np.dtype(ml_dtypes.bfloat16)
    assert np.asarray(x + 1).dtype == np.dtype(ml_dtypes.bfloat16) and (x + 1).item() == 2.0
    assert x == 1 and x < 3 and x != 2**70 and x < 2**100  # (ml_dtypes alone: TypeError for the last two)
    assert (x + 2**70).item() == pytest.approx(2.0**70)
    assert repr(wp.bfloat16(0.5)) == repr(ml_dtypes.bfloat16(0.5)) and f"{x:.2f}" == "1.00"
    assert pickle.loads(pickle.dumps(wp.bfloat16(-2.5))).value == -2.5


@pytest.mark.parametrize("t", [wp.float16, wp.bfloat16, wp.float32, wp.float64], ids=lambda t: t.name)
@pytest.mark.parametrize("op", ["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"])
def test_comparing_floats_with_an_int_beyond_the_float_range_overflows(t, op):
    with pytest.raises(OverflowError):
        getattr(t(1.0), op)(2**1024)


def test_numpy_scalars_keep_their_dtype_in_numpy():
    # A deliberate difference from Warp, whose scalars are not numpy values (np.asarray of
    # one gives dtype object): weft's are, so numpy keeps their type.
    assert np.asarray(wp.float32(1.25)).dtype == np.float32
    assert np.array([wp.float32(1.25)]).dtype == np.float32
    assert np.array([wp.float32(1.25)], dtype=wp.float32).tolist() == [1.25]


FLAG = wp.bool(True)
HALF = wp.bfloat16(1.5)


@wp.kernel
def flagged_sum(flag: wp.bool, h: wp.bfloat16, out: wp.array(dtype=float)):
    i = wp.tid()
    v = float(h) + float(HALF)
    if flag and FLAG:
        out[i] = v
    else:
        out[i] = -v


@wp.struct
class Flags:
    on: wp.bool
    h: wp.bfloat16


def test_boxed_values_as_kernel_arguments_constants_fields_and_fills():
    out = wp.zeros(2)
    wp.launch(flagged_sum, 2, inputs=[wp.bool(1), wp.bfloat16(2.0), out])
    assert out.numpy().tolist() == [3.5, 3.5]
    wp.launch(flagged_sum, 2, inputs=[wp.bool(0), wp.bfloat16(2.0), out])
    assert out.numpy().tolist() == [-3.5, -3.5]
    s = Flags()
    s.on, s.h = wp.bool(True), wp.bfloat16(0.5)
    assert s.on.value is True and s.h.value == 0.5
    a = wp.zeros(3, dtype=wp.bool)
    a.fill_(wp.bool(17))
    assert a.list() == [True] * 3
    h = wp.full(3, wp.bfloat16(2.0))
    assert h.dtype is wp.bfloat16 and h.list() == [2.0] * 3
    assert wp.array([wp.bool(1), wp.bool(0)]).dtype is wp.bool
