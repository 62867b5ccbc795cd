"""Scalar math builtins against numpy, in float32 and float64, including special values.

float32 results are compared with numpy's float64 result on the same (float32) inputs, to
rtol 1e-6 (a few ulp); float64 results with numpy's float64, to rtol 1e-14. NaN must be NaN
and infinities must match exactly.
"""

import functools
import math

import numpy as np
import pytest

import weft as wp

DTYPES = {np.float32: wp.float32, np.float64: wp.float64}
RTOL = {np.float32: 1e-6, np.float64: 1e-14}
INF, NAN = np.inf, np.nan


# Kernels, one per builtin and type (built on first use) --------------------------------------


@functools.cache
def unary_kernel(name, dtype, out_dtype=None):
    fn = getattr(wp, name)

    @wp.kernel
    def apply(x: wp.array(dtype=dtype), out: wp.array(dtype=out_dtype or dtype)):
        i = wp.tid()
        out[i] = fn(x[i])
    return apply


@functools.cache
def binary_kernel(name, dtype):
    fn = getattr(wp, name)

    @wp.kernel
    def apply(x: wp.array(dtype=dtype), y: wp.array(dtype=dtype), out: wp.array(dtype=dtype)):
        i = wp.tid()
        out[i] = fn(x[i], y[i])
    return apply


@functools.cache
def ternary_kernel(name, dtype):
    fn = getattr(wp, name)

    @wp.kernel
    def apply(x: wp.array(dtype=dtype), y: wp.array(dtype=dtype), z: wp.array(dtype=dtype),
              out: wp.array(dtype=dtype)):
        i = wp.tid()
        out[i] = fn(x[i], y[i], z[i])
    return apply


def call(kernel, *inputs, out_dtype=None):
    arrays = [wp.array(np.ascontiguousarray(x)) for x in inputs]
    out = wp.zeros(len(inputs[0]), dtype=out_dtype or arrays[0].dtype)
    wp.launch(kernel, len(inputs[0]), inputs=[*arrays, out])
    return out.numpy()


def assert_matches(got, expect, np_dtype, rtol=None, atol=0.0):
    with np.errstate(over="ignore"):  # overflow and underflow as the result type does
        expect = np.asarray(expect, np.float64).astype(np_dtype).astype(np.float64)
    got = got.astype(np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(expect)), (got, expect)
    finite = np.isfinite(expect)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(expect)], expect[~finite & ~np.isnan(expect)])
    np.testing.assert_allclose(got[finite], expect[finite], rtol=rtol or RTOL[np_dtype], atol=atol)


# Inputs ------------------------------------------------------------------------------------

SPECIAL = [INF, -INF, NAN]
TRIG = [*np.linspace(-10, 10, 41), 0.0, -0.0, 1e-30, 0.5, np.pi / 2, np.pi, 100.5, 1000.25]
ROUNDING = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -2.7, 2.7, 0.0, -0.0, 1e10, -1e10, 0.49999997,
            -0.49999997, 123.456, 8388609.0, *SPECIAL]


def _float32_exp_range():
    return [*np.linspace(-87, 88, 51), 0.0, 1e-20, 100.0, -200.0]


def _float64_exp_range():
    return [*np.linspace(-700, 700, 51), 0.0, 1e-300, 800.0, -1000.0]


def _round_half_away(x):
    t = np.trunc(x)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


# name: (numpy reference, inputs for float32, inputs for float64 (None: the same), atol)
UNARY = {
    "sin": (np.sin, TRIG + SPECIAL, None, 0.0),
    "cos": (np.cos, TRIG + SPECIAL, None, 0.0),
    "tan": (np.tan, TRIG + SPECIAL, None, 0.0),
    # The argument is clamped to [-1, 1] (as Warp): acos(1.0000001) is 0, not NaN, and NaN
    # clamps to -1 (Warp's min and max return the number of a NaN and a number).
    "asin": (lambda x: np.arcsin(np.clip(np.nan_to_num(x, nan=-1.0), -1, 1)),
             [*np.linspace(-1, 1, 41), 1e-20, 1.0000001, 1.5, -1.5, *SPECIAL], None, 0.0),
    "acos": (lambda x: np.arccos(np.clip(np.nan_to_num(x, nan=-1.0), -1, 1)),
             [*np.linspace(-1, 1, 41), 1e-20, 1.0000001, 1.5, -1.5, *SPECIAL], None, 0.0),
    "atan": (np.arctan, [*np.linspace(-50, 50, 41), 1e-20, 1e30, -1e30, *SPECIAL], None, 0.0),
    "sinh": (np.sinh, [*np.linspace(-20, 20, 41), 1e-10, 100.0, -100.0, *SPECIAL],
             [*np.linspace(-20, 20, 41), 1e-10, 700.0, -800.0, *SPECIAL], 0.0),
    "cosh": (np.cosh, [*np.linspace(-20, 20, 41), 1e-10, 100.0, -100.0, *SPECIAL],
             [*np.linspace(-20, 20, 41), 1e-10, 700.0, -800.0, *SPECIAL], 0.0),
    "tanh": (np.tanh, [*np.linspace(-20, 20, 41), 1e-10, -1e-20, 0.3, *SPECIAL], None, 0.0),
    "exp": (np.exp, _float32_exp_range() + SPECIAL, _float64_exp_range() + SPECIAL, 0.0),
    "exp2": (np.exp2, [*np.linspace(-120, 120, 41), 0.5, 200.0, -200.0, *SPECIAL],
             [*np.linspace(-1000, 1000, 41), 0.5, 1100.0, -1100.0, *SPECIAL], 0.0),
    "erf": (np.vectorize(math.erf), [*np.linspace(-5, 5, 41), 1e-20, 10.0, -10.0, INF, -INF, NAN],
            None, 0.0),
    "log": (np.log, [*np.logspace(-30, 30, 41), 1.0, 0.0, -1.0, 1.5, 2.0, *SPECIAL], None, 0.0),
    "log2": (np.log2, [*np.logspace(-30, 30, 41), 1.0, 0.0, -1.0, 8.0, 0.75, *SPECIAL], None, 0.0),
    "log10": (np.log10, [*np.logspace(-30, 30, 41), 1.0, 0.0, -1.0, 1000.0, *SPECIAL], None, 0.0),
    "sqrt": (np.sqrt, [*np.logspace(-30, 30, 41), 0.0, 4.0, 2.0, -1.0, *SPECIAL], None, 0.0),
    "cbrt": (np.cbrt, [*np.logspace(-30, 30, 21), *-np.logspace(-30, 30, 21), 0.0, 27.0, -8.0,
                       *SPECIAL], None, 0.0),
    "abs": (np.abs, ROUNDING, None, 0.0),
    "sign": (lambda x: np.where(x < 0, -1.0, 1.0), [v for v in ROUNDING if v == v], None, 0.0),
    "floor": (np.floor, ROUNDING, None, 0.0),
    "ceil": (np.ceil, ROUNDING, None, 0.0),
    "round": (_round_half_away, ROUNDING, None, 0.0),
    "rint": (np.rint, ROUNDING, None, 0.0),
    "trunc": (np.trunc, ROUNDING, None, 0.0),
    "frac": (lambda x: x - np.trunc(x), ROUNDING, None, 0.0),
    "step": (lambda x: np.where(x < 0, 1.0, 0.0), ROUNDING, None, 0.0),
}


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_math(name, np_dtype):
    ref, xs32, xs64, atol = UNARY[name]
    xs = np.array(xs64 if (np_dtype is np.float64 and xs64 is not None) else xs32, np_dtype)
    got = call(unary_kernel(name, DTYPES[np_dtype]), xs)
    assert got.dtype == np_dtype
    with np.errstate(all="ignore"):
        expect = ref(xs.astype(np.float64))
    assert_matches(got, expect, np_dtype, atol=atol)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name,ref", [("isnan", np.isnan), ("isinf", np.isinf),
                                      ("isfinite", np.isfinite)])
def test_float_classification(name, ref, np_dtype):
    tiny = np.finfo(np_dtype).tiny / 4  # a subnormal
    xs = np.array([0.0, -0.0, 1.0, -1.0, INF, -INF, NAN, np.finfo(np_dtype).max, tiny], np_dtype)
    got = call(unary_kernel(name, DTYPES[np_dtype], wp.bool), xs, out_dtype=wp.bool)
    np.testing.assert_array_equal(got, ref(xs))


POW_GRID = np.array([(x, y) for x in (0.0, -0.0, 0.5, 1.0, 2.0, 10.0, -2.0, -0.5, INF, -INF, NAN)
                     for y in (0.0, 1.0, 2.0, 3.0, -1.0, -2.0, 0.5, 2.5, -0.5, INF, -INF, NAN)])
ATAN2_GRID = np.array([(y, x) for y in (-2.0, -1.0, -0.0, 0.0, 1.0, 2.0, 1e-30, INF, -INF)
                       for x in (-2.0, -1.0, -0.0, 0.0, 1.0, 3.0, 1e30, INF, -INF)])
MINMAX_GRID = np.array([(x, y) for x in (-2.0, -0.5, 0.0, 1.0, 3.5, INF, -INF, NAN)
                        for y in (-1.0, 0.0, 1.0, 3.5, INF, NAN)])


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name,ref,grid", [
    ("pow", np.power, POW_GRID),
    ("atan2", np.arctan2, ATAN2_GRID),
    ("min", np.fmin, MINMAX_GRID),  # a NaN operand gives the other one, as in Warp
    ("max", np.fmax, MINMAX_GRID),
])
def test_binary_math(name, ref, grid, np_dtype):
    x, y = grid.T.astype(np_dtype)
    got = call(binary_kernel(name, DTYPES[np_dtype]), x, y)
    with np.errstate(all="ignore"):
        expect = ref(x.astype(np.float64), y.astype(np.float64))
    assert_matches(got, expect, np_dtype)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_pow_on_random_inputs(np_dtype):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.01, 20.0, 200).astype(np_dtype)
    y = rng.uniform(-8.0, 8.0, 200).astype(np_dtype)
    got = call(binary_kernel("pow", DTYPES[np_dtype]), x, y)
    assert_matches(got, np.power(x.astype(np.float64), y.astype(np.float64)), np_dtype)


def test_float32_pow_is_correctly_rounded_across_the_underflow_and_overflow_edges():
    # (float32 pow runs in double and rounds once; its exp clamps where float32, not double,
    # underflows: the same results, without subnormal doubles)
    rng = np.random.default_rng(5)
    x = np.exp(rng.uniform(-60.0, 60.0, 4000)).astype(np.float32)
    y = rng.uniform(-6.0, 6.0, 4000).astype(np.float32)
    x[:4], y[:4] = [0.0, 1e-9, 2.0**-10, 3.0], [2.5, 5.0, 14.9, 80.7]  # 0, near 2^-149, 2^-149, inf
    got = call(binary_kernel("pow", wp.float32), x, y)
    with np.errstate(all="ignore"):
        expect = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(got, expect)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_atan2_on_random_inputs(np_dtype):
    rng = np.random.default_rng(1)
    y, x = rng.standard_normal((2, 200)).astype(np_dtype) * 10
    got = call(binary_kernel("atan2", DTYPES[np_dtype]), y, x)
    assert_matches(got, np.arctan2(y.astype(np.float64), x.astype(np.float64)), np_dtype)


TERNARY_X = np.array([-2.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 3.0])


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name,a,b,ref", [
    ("clamp", 0.0, 1.0, lambda x, a, b: np.minimum(np.maximum(x, a), b)),
    ("clamp", 1.0, 0.0, lambda x, a, b: np.minimum(np.maximum(x, a), b)),  # hi wins, as Warp
    ("lerp", 2.0, -3.0, lambda t, a, b: a * (1 - t) + b * t),
    ("smoothstep", 0.0, 1.0, None),
    ("smoothstep", -1.0, 2.0, None),
    ("smoothstep", 1.0, 0.0, None),  # reversed edges
])
def test_ternary_math(name, a, b, ref, np_dtype):
    x = TERNARY_X.astype(np_dtype)
    lo, hi = np.full_like(x, a), np.full_like(x, b)
    if name == "clamp":
        got = call(ternary_kernel(name, DTYPES[np_dtype]), x, lo, hi)
        expect = ref(x, a, b)
    elif name == "lerp":
        got = call(ternary_kernel(name, DTYPES[np_dtype]), lo, hi, x)
        expect = ref(x.astype(np.float64), a, b)
    else:
        got = call(ternary_kernel(name, DTYPES[np_dtype]), lo, hi, x)
        t = np.clip((x.astype(np.float64) - a) / (b - a), 0.0, 1.0)
        expect = t * t * (3 - 2 * t)
    assert_matches(got, expect, np_dtype, atol=1e-7 if np_dtype is np.float32 else 1e-15)


def test_lerp_is_exact_at_the_ends():
    a = np.array([0.1, -3.3, 1e-3], np.float32)
    b = np.array([0.7, 2.9, 5.0], np.float32)
    k = ternary_kernel("lerp", wp.float32)
    np.testing.assert_array_equal(call(k, a, b, np.zeros(3, np.float32)), a)
    np.testing.assert_array_equal(call(k, a, b, np.ones(3, np.float32)), b)


# Integer versions --------------------------------------------------------------------------


@pytest.mark.parametrize("np_dtype,wp_dtype", [(np.int32, wp.int32), (np.int64, wp.int64)])
def test_integer_abs_sign_min_max_clamp(np_dtype, wp_dtype):
    x = np.array([-7, -1, 0, 1, 5, 100], np_dtype)
    y = np.array([3, -2, 0, 4, 5, -100], np_dtype)
    np.testing.assert_array_equal(call(unary_kernel("abs", wp_dtype), x), np.abs(x))
    np.testing.assert_array_equal(call(unary_kernel("sign", wp_dtype), x), np.where(x < 0, -1, 1))
    np.testing.assert_array_equal(call(binary_kernel("min", wp_dtype), x, y), np.minimum(x, y))
    np.testing.assert_array_equal(call(binary_kernel("max", wp_dtype), x, y), np.maximum(x, y))
    lo, hi = np.full_like(x, -2), np.full_like(x, 4)
    np.testing.assert_array_equal(call(ternary_kernel("clamp", wp_dtype), x, lo, hi),
                                  np.clip(x, -2, 4))


def test_unsigned_min_max():
    x = np.array([0, 1, 2**32 - 1, 2**31], np.uint32)
    y = np.array([1, 0, 5, 2**31 - 1], np.uint32)
    np.testing.assert_array_equal(call(binary_kernel("min", wp.uint32), x, y), np.minimum(x, y))
    np.testing.assert_array_equal(call(binary_kernel("max", wp.uint32), x, y), np.maximum(x, y))


# Vectors, literals, half precision, Python scope --------------------------------------------


@wp.kernel
def vector_math(v: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec3),
                out: wp.array(dtype=wp.vec3, ndim=2)):
    i = wp.tid()
    out[i, 0] = wp.sin(v[i])
    out[i, 1] = wp.abs(v[i])
    out[i, 2] = wp.min(v[i], w[i])
    out[i, 3] = wp.max(v[i], 0.5)
    out[i, 4] = wp.clamp(v[i], -1.0, 1.0)
    out[i, 5] = wp.lerp(v[i], w[i], 0.25)
    out[i, 6] = wp.floor(v[i])


def test_math_builtins_apply_componentwise_to_vectors(run):
    v = np.array([[0.5, -2.0, 3.0], [-0.25, 1.5, -7.0]], np.float32)
    w = np.array([[1.0, -3.0, 0.0], [2.0, 2.0, 2.0]], np.float32)
    *_, out = run(vector_math, 2, (v, wp.vec3), (w, wp.vec3),
                  (np.zeros((2, 7, 3), np.float32), wp.vec3))
    expect = np.stack([np.sin(v), np.abs(v), np.minimum(v, w), np.maximum(v, 0.5),
                       np.clip(v, -1, 1), v * 0.75 + w * 0.25, np.floor(v)], axis=1)
    np.testing.assert_allclose(out, expect, rtol=1e-6)


@wp.kernel
def literal_arguments(out: wp.array(dtype=float), dout: wp.array(dtype=wp.float64)):
    out[0] = wp.sqrt(2.0)
    out[1] = wp.exp(1)         # an int literal is read as a float
    out[2] = wp.pow(2.0, 10.0)
    out[3] = wp.min(3.0, 1.5)
    out[4] = abs(-2.5)          # Python's abs/min/max/round mean the weft builtins
    out[5] = max(1.0, 4.0)
    out[6] = round(2.5)
    dout[0] = wp.sqrt(wp.float64(2.0))
    dout[1] = wp.atan2(wp.float64(1.0), 1.0)  # the literal adopts float64


def test_literal_arguments_and_python_builtins(run):
    out, dout = run(literal_arguments, 1, np.zeros(7, np.float32), np.zeros(2, np.float64))
    np.testing.assert_allclose(out, [np.sqrt(2), np.e, 1024, 1.5, 2.5, 4.0, 3.0], rtol=1e-6)
    np.testing.assert_allclose(dout, [np.sqrt(2), np.pi / 4], rtol=1e-15)


@wp.kernel
def half_math(x: wp.array(dtype=wp.float16), out: wp.array(dtype=wp.float16, ndim=2)):
    i = wp.tid()
    out[i, 0] = wp.sin(x[i])
    out[i, 1] = wp.sqrt(x[i])
    out[i, 2] = wp.exp(x[i])
    out[i, 3] = wp.floor(x[i])
    out[i, 4] = wp.max(x[i], wp.float16(1.0))


def test_float16_math(run):
    x = np.array([0.5, 1.25, 2.0, 3.75], np.float16)
    _, out = run(half_math, 4, x, np.zeros((4, 5), np.float16))
    xd = x.astype(np.float64)
    expect = np.stack([np.sin(xd), np.sqrt(xd), np.exp(xd), np.floor(xd), np.maximum(xd, 1)], 1)
    np.testing.assert_allclose(out.astype(np.float64), expect, rtol=1e-3)


def test_python_scope_calls():
    assert wp.sin(0.5) == pytest.approx(np.sin(0.5))
    assert wp.clamp(5, 0, 3) == 3
    assert wp.min(2, 7) == 2
    assert wp.lerp(1.0, 3.0, 0.5) == 2.0
    assert wp.acos(1.0000001) == 0.0
    # Python floats are float32 in Python scope, as in a kernel: 0.49999999999999994 is 0.5
    assert wp.round(-2.5) == -3.0 and wp.round(wp.float64(0.49999999999999994)) == 0.0
    assert wp.erf(0.5) == pytest.approx(math.erf(0.5))
