"""NaN, infinities and signed zeros: constant folding, fp-class tests of composites, min/max
reductions, and the adjoints of min/max/clamp/copysign where an operand is special."""

import numpy as np
import pytest

import weft as wp

NAN = float("nan")


@wp.kernel
def folded_division(out: wp.array(dtype=float)):
    out[0] = 2.0 / 0.0
    out[1] = -2.0 / 0.0
    out[2] = 0.0 / 0.0
    out[3] = 2.0 / -0.0
    out[4] = 2.0 % 0.0
    out[5] = 2.0 // 0.0


def test_float_division_by_zero_folds_to_ieee_values():
    out = wp.zeros(6, dtype=float)
    wp.launch(folded_division, 1, [out])
    r = out.numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = np.float32([2.0, -2.0, 0.0, 2.0]) / np.float32([0.0, 0.0, 0.0, -0.0])
    np.testing.assert_array_equal(r[:4], ref)
    assert np.isnan(r[4]) and r[5] == np.inf


@wp.kernel
def folded_int_division(out: wp.array(dtype=int)):
    out[0] = 2 / 0


def test_integer_division_by_zero_constant_is_a_compile_error():
    with pytest.raises(Exception, match="integer division by zero"):
        wp.launch(folded_int_division, 1, [wp.zeros(1, dtype=int)])


@wp.kernel
def fp_classes(v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22), q: wp.array(dtype=wp.quat),
               out: wp.array(dtype=wp.bool, ndim=2)):
    i = wp.tid()
    out[i, 0] = wp.isfinite(v[i])
    out[i, 1] = wp.isinf(v[i])
    out[i, 2] = wp.isnan(v[i])
    out[i, 3] = wp.isfinite(m[i])
    out[i, 4] = wp.isinf(m[i])
    out[i, 5] = wp.isnan(m[i])
    out[i, 6] = wp.isfinite(q[i])
    out[i, 7] = wp.isinf(q[i])
    out[i, 8] = wp.isnan(q[i])


def test_fp_class_of_composites_reduces_over_components():
    specials = [0.0, NAN, np.inf, -np.inf]
    v = np.zeros((4, 3), np.float32)
    m = np.zeros((4, 2, 2), np.float32)
    q = np.zeros((4, 4), np.float32)
    for i, s in enumerate(specials):
        v[i, 2], m[i, 1, 0], q[i, 3] = s, s, s
    out = wp.zeros((4, 9), dtype=wp.bool)
    wp.launch(fp_classes, 4, [wp.array(v, dtype=wp.vec3), wp.array(m, dtype=wp.mat22),
                              wp.array(q, dtype=wp.quat), out])
    r = out.numpy()
    for arr, col in ((v, 0), (m, 3), (q, 6)):
        flat = arr.reshape(4, -1)
        np.testing.assert_array_equal(r[:, col], np.isfinite(flat).all(axis=1))
        np.testing.assert_array_equal(r[:, col + 1], np.isinf(flat).any(axis=1))
        np.testing.assert_array_equal(r[:, col + 2], np.isnan(flat).any(axis=1))


@wp.kernel
def vec_extrema(v: wp.array(dtype=wp.vec3), lo: wp.array(dtype=float), hi: wp.array(dtype=float)):
    i = wp.tid()
    lo[i] = wp.min(v[i])
    hi[i] = wp.max(v[i])


@wp.kernel
def ivec_extrema(v: wp.array(dtype=wp.vec3i), lo: wp.array(dtype=int), hi: wp.array(dtype=int)):
    i = wp.tid()
    lo[i] = wp.min(v[i])
    hi[i] = wp.max(v[i])


def test_min_max_of_a_vector_skip_nan_and_route_the_adjoint_to_the_pick():
    rows = np.array([[NAN, 2.0, -1.0], [-1.0, NAN, 2.0], [3.0, 0.5, NAN], [1.0, 4.0, -2.0]], np.float32)
    v = wp.array(rows, dtype=wp.vec3, requires_grad=True)
    lo = wp.zeros(4, dtype=float, requires_grad=True)
    hi = wp.zeros(4, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(vec_extrema, 4, [v, lo, hi])
    np.testing.assert_array_equal(lo.numpy(), np.fmin.reduce(rows, axis=1))
    np.testing.assert_array_equal(hi.numpy(), np.fmax.reduce(rows, axis=1))
    lo.grad.fill_(1.0)
    hi.grad.fill_(10.0)
    tape.backward()
    expect = np.zeros_like(rows)
    for i, r in enumerate(rows):
        expect[i, np.nanargmin(r)] += 1.0
        expect[i, np.nanargmax(r)] += 10.0
    np.testing.assert_array_equal(v.grad.numpy(), expect)

    iv = np.array([[3, -7, 5], [0, 0, 1]], np.int32)
    ilo, ihi = wp.zeros(2, dtype=int), wp.zeros(2, dtype=int)
    wp.launch(ivec_extrema, 2, [wp.array(iv, dtype=wp.vec3i), ilo, ihi])
    np.testing.assert_array_equal(ilo.numpy(), iv.min(axis=1))
    np.testing.assert_array_equal(ihi.numpy(), iv.max(axis=1))


@wp.kernel
def clamp_k(x: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64),
            out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = wp.clamp(x[i], a[i], b[i])


def _fd(f, args, k, h=1e-6):
    up, dn = list(args), list(args)
    up[k] += h
    dn[k] -= h
    return (f(*up) - f(*dn)) / (2 * h)


def test_clamp_adjoint_with_nan_operands_matches_finite_differences():
    rows = [(NAN, -1.0, 1.0), (NAN, 1.0, -1.0), (0.5, NAN, 1.0), (2.0, NAN, 1.0),
            (-2.0, -1.0, NAN), (0.5, -1.0, 1.0), (0.5, -1.0, NAN)]

    def ref(x, a, b):
        return np.fmin(np.fmax(x, a), b)

    cols = [wp.array([r[k] for r in rows], dtype=wp.float64, requires_grad=True) for k in range(3)]
    out = wp.zeros(len(rows), dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(clamp_k, len(rows), cols + [out])
    out.grad.fill_(1.0)
    tape.backward()
    for k in range(3):
        fd = [0.0 if np.isnan(r[k]) else _fd(ref, r, k) for r in rows]  # no gradient into a NaN
        np.testing.assert_allclose(cols[k].grad.numpy(), fd, atol=1e-9, err_msg=f"operand {k}")


@wp.kernel
def copysign_k(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = wp.copysign(x[i], y[i])


def test_copysign_value_and_one_sided_derivative_at_signed_zeros():
    xs = np.array([3.0, 3.0, -3.0, -3.0, -0.0, -0.0, 0.0, 0.0, 2.0])
    ys = np.array([1.0, -1.0, 1.0, -1.0, -1.0, 1.0, -1.0, 1.0, -0.0])
    x = wp.array(xs, dtype=wp.float64, requires_grad=True)
    y = wp.array(ys, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(len(xs), dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(copysign_k, len(xs), [x, y, out])
    r = out.numpy()
    np.testing.assert_array_equal(r, np.copysign(xs, ys))
    np.testing.assert_array_equal(np.signbit(r), np.signbit(np.copysign(xs, ys)))
    out.grad.fill_(1.0)
    tape.backward()
    # the derivative on the side of zero that x's sign bit names (a one-sided difference there)
    h = 1e-6
    side = np.where(np.signbit(xs), -1.0, 1.0)
    fd = (np.copysign(xs + side * h, ys) - np.copysign(xs, ys)) / (side * h)
    np.testing.assert_allclose(x.grad.numpy(), fd, atol=1e-9)
    np.testing.assert_array_equal(y.grad.numpy(), np.zeros_like(ys))


@wp.kernel
def bool_logic(a: wp.array(dtype=wp.bool), b: wp.array(dtype=wp.bool), out: wp.array(dtype=wp.bool, ndim=2)):
    i = wp.tid()
    out[i, 0] = a[i] & b[i]
    out[i, 1] = a[i] | b[i]
    out[i, 2] = a[i] ^ b[i]


def test_bitwise_operators_on_bools():
    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    out = wp.zeros((4, 3), dtype=wp.bool)
    wp.launch(bool_logic, 4, [wp.array(a, dtype=wp.bool), wp.array(b, dtype=wp.bool), out])
    np.testing.assert_array_equal(out.numpy(), np.stack([a & b, a | b, a ^ b], axis=1))


@wp.kernel
def _constant_powers(x: wp.array(dtype=float), y: wp.array(dtype=wp.float64), out: wp.array2d(dtype=float),
                     out64: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    a = x[i]
    out[i, 0] = a ** 2.0
    out[i, 1] = wp.pow(a, 0.5)
    out[i, 2] = a ** -1.0
    out[i, 3] = a ** 1.0
    out[i, 4] = a ** 0.0
    out[i, 5] = a ** 3.0  # (the general pow)
    b = y[i]
    out64[i, 0] = b ** wp.float64(2.0)
    out64[i, 1] = wp.pow(b, wp.float64(0.5))


def test_constant_exponents_take_exact_shortcuts_with_pows_special_values():
    # (x*x, sqrt, 1/x, ...: a C compiler's shortcuts for pow, with C99 pow's values at -0, -inf, NaN)
    values = np.array([2.5, -3.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 7.0], np.float32)
    out, out64 = wp.zeros((len(values), 6), dtype=float), wp.zeros((len(values), 2), dtype=wp.float64)
    wp.launch(_constant_powers, len(values), inputs=[wp.array(values), wp.array(values.astype(np.float64)), out, out64])
    def c_pow(x, e):  # (an array of exponents: numpy's scalar-exponent fast path makes ** 0.5 a sqrt)
        return np.power(x, np.full_like(x, e))
    with np.errstate(all="ignore"):
        # (float64 rounded once to float32: the correctly rounded value, which numpy's float32 pow
        # is not always)
        expected = np.stack([c_pow(values.astype(np.float64), e) for e in (2.0, 0.5, -1.0, 1.0, 0.0, 3.0)],
                            axis=1).astype(np.float32)
        expected64 = np.stack([c_pow(values.astype(np.float64), e) for e in (2.0, 0.5)], axis=1)
    np.testing.assert_array_equal(out.numpy()[:, :5], expected[:, :5])  # bit for bit, signs of zeros too
    numbers = ~np.isnan(expected[:, :5])
    assert np.array_equal(np.signbit(out.numpy()[:, :5])[numbers], np.signbit(expected[:, :5])[numbers])
    np.testing.assert_allclose(out.numpy()[:, 5], expected[:, 5], rtol=1e-6)
    np.testing.assert_allclose(out64.numpy(), expected64, rtol=3e-16, atol=0)  # (numpy's own pow: within 1 ulp)


@wp.kernel
def unit_clamped(x: wp.array(dtype=float), x64: wp.array(dtype=wp.float64), out: wp.array(dtype=float),
                 out64: wp.array(dtype=wp.float64), half: wp.array(dtype=wp.float16)):
    i = wp.tid()
    out[2 * i] = wp.acos(x[i])
    out[2 * i + 1] = wp.asin(x[i])
    out64[2 * i] = wp.acos(x64[i])
    out64[2 * i + 1] = wp.asin(x64[i])
    half[0] = wp.float16(65520.0)  # (rounds past float16's largest value: inf)
    half[1] = wp.float16(-1.0e5)


def test_asin_acos_clamp_nan_as_warp_does_and_float16_constants_overflow_to_inf():
    """Warp's asin/acos take min(max(x, -1), 1), whose min and max return the number of a
    NaN and a number: acos(nan) = pi, asin(nan) = -pi/2 (Warp 1.19's values)."""
    xs = np.array([NAN, 1.5, -2.0, 0.5])
    out, out64, half = wp.zeros(8), wp.zeros(8, dtype=wp.float64), wp.zeros(2, dtype=wp.float16)
    wp.launch(unit_clamped, 4, [wp.array(xs, dtype=float), wp.array(xs, dtype=wp.float64), out, out64, half])
    clamped = np.clip(np.nan_to_num(xs, nan=-1.0), -1.0, 1.0)
    expected = np.stack([np.arccos(clamped), np.arcsin(clamped)], axis=1).ravel()
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(out64.numpy(), expected, rtol=1e-15)
    assert half.numpy().tolist() == [np.inf, -np.inf]


@wp.kernel
def float_to_ints(f: wp.array(dtype=float), o8: wp.array(dtype=wp.int8), ou8: wp.array(dtype=wp.uint8),
                  o16: wp.array(dtype=wp.int16), o32: wp.array(dtype=int), ou32: wp.array(dtype=wp.uint32),
                  o64: wp.array(dtype=wp.int64), ou64: wp.array(dtype=wp.uint64)):
    i = wp.tid()
    x = f[i]
    o8[i] = wp.int8(x)
    ou8[i] = wp.uint8(x)
    o16[i] = wp.int16(x)
    o32[i] = int(x)
    ou32[i] = wp.uint32(x)
    o64[i] = wp.int64(wp.float64(x) * wp.float64(1.0e10))
    ou64[i] = wp.uint64(x)


def test_float_to_integer_conversions_out_of_range_give_warps_x86_values():
    """C leaves them undefined; Warp's x86-64 code gives these (recorded with Warp 1.19 on an
    AVX-512 CPU): the signed types and uint8/uint16 through a signed 32-bit (int64: 64-bit)
    conversion whose NaN and out-of-range result is the lowest integer, then the low bits;
    uint32/uint64 through the unsigned conversion, all ones out of range."""
    f = np.array([-1.0, -200.0, 300.0, 1e5, 3e9, -3e9, NAN, 2.7, -2.7], dtype=np.float32)
    outs = [wp.zeros(len(f), dtype=t) for t in (wp.int8, wp.uint8, wp.int16, int, wp.uint32, wp.int64, wp.uint64)]
    wp.launch(float_to_ints, len(f), [wp.array(f, dtype=float), *outs])
    i8, u8, i16, i32, u32, i64, u64 = (o.numpy().tolist() for o in outs)
    low32, low64 = -2**31, -2**63
    assert i8 == [-1, 56, 44, -96, 0, 0, 0, 2, -2]
    assert u8 == [255, 56, 44, 160, 0, 0, 0, 2, 254]
    assert i16 == [-1, -200, 300, -31072, 0, 0, 0, 2, -2]
    assert i32 == [-1, -200, 300, 100000, low32, low32, low32, 2, -2]
    assert u32 == [2**32 - 1, 2**32 - 1, 300, 100000, 3000000000, 2**32 - 1, 2**32 - 1, 2, 2**32 - 1]
    scaled = [int(np.float64(np.float32(x)) * 1e10) for x in (2.7, -2.7)]
    assert i64 == [-10**10, -2 * 10**12, 3 * 10**12, 10**15, low64, low64, low64, *scaled]
    assert u64 == [2**64 - 1, 2**64 - 1, 300, 100000, 3000000000, 2**64 - 1, 2**64 - 1, 2, 2**64 - 1]
