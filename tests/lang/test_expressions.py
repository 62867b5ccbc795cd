"""Expressions: Warp's arithmetic typing, comparisons, boolean logic, composites, structs,
constructors and casts."""

from typing import Any

import numpy as np
import pytest

import weft as wp

# Integer and float arithmetic ----------------------------------------------------------------


@wp.kernel
def int_arith(a: wp.array(dtype=int), b: wp.array(dtype=int), out: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[i, 0] = x + y
    out[i, 1] = x - y
    out[i, 2] = x * y
    out[i, 3] = x / y   # truncates toward zero, as C (and Warp)
    out[i, 4] = x % y   # C remainder: the sign of x
    out[i, 5] = x // y  # floors, as Python
    out[i, 6] = -x


def test_integer_division_and_remainder(run):
    a = np.array([7, -7, 7, -7, 0, 3, 100, -1], np.int32)
    b = np.array([2, 2, -2, -2, 3, 5, 7, 3], np.int32)
    *_, out = run(int_arith, len(a), a, b, np.zeros((len(a), 7), np.int32))
    trunc = np.trunc(a / b).astype(np.int32)
    np.testing.assert_array_equal(out[:, 0], a + b)
    np.testing.assert_array_equal(out[:, 1], a - b)
    np.testing.assert_array_equal(out[:, 2], a * b)
    np.testing.assert_array_equal(out[:, 3], trunc)
    np.testing.assert_array_equal(out[:, 4], np.fmod(a, b))
    np.testing.assert_array_equal(out[:, 5], a // b)
    np.testing.assert_array_equal(out[:, 6], -a)


@wp.kernel
def int_division_by_zero(a: wp.array(dtype=int), b: wp.array(dtype=int)):
    i = wp.tid()
    a[i] = a[i] / b[i]


def test_integer_division_by_zero_raises(run):
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        run(int_division_by_zero, 2, np.array([1, 2], np.int32), np.array([1, 0], np.int32))


@wp.kernel
def int_overflow_wraps(out: wp.array(dtype=int), big: int):
    out[0] = big + 1
    out[1] = big * 2


def test_int32_overflow_wraps(run):
    (out,) = run(int_overflow_wraps, 1, np.zeros(2, np.int32), 2**31 - 1)
    assert out.tolist() == [-(2**31), -2]


@wp.kernel
def float_arith(a: wp.array(dtype=float), b: wp.array(dtype=float),
                out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[i, 0] = x + y
    out[i, 1] = x - y
    out[i, 2] = x * y
    out[i, 3] = x / y
    out[i, 4] = x % y   # fmod
    out[i, 5] = x // y  # floor(x / y)
    out[i, 6] = x ** y
    out[i, 7] = -x


def test_float_arithmetic(run):
    a = np.array([7.5, -7.5, 7.5, -2.5, 0.0, 1.25, 2.0, 9.0], np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 0.5, 10.0, 0.5], np.float32)
    *_, out = run(float_arith, len(a), a, b, np.zeros((len(a), 8), np.float32))
    np.testing.assert_array_equal(out[:, 0], a + b)
    np.testing.assert_array_equal(out[:, 1], a - b)
    np.testing.assert_array_equal(out[:, 2], a * b)
    np.testing.assert_array_equal(out[:, 3], a / b)
    np.testing.assert_array_equal(out[:, 4], np.fmod(a, b))
    np.testing.assert_array_equal(out[:, 5], np.floor(a / b))
    np.testing.assert_allclose(out[:, 6], np.power(a.astype(np.float64), b), rtol=2e-6)
    np.testing.assert_array_equal(out[:, 7], -a)


@wp.kernel
def weak_literals(x: wp.array(dtype=wp.float64), k: wp.array(dtype=wp.int64),
                  out: wp.array(dtype=wp.float64), kout: wp.array(dtype=wp.int64),
                  f16: wp.array(dtype=wp.float16)):
    out[0] = x[0] + 0.1        # 0.1 becomes a float64, not a rounded float32
    out[1] = 0.1 * x[1]
    out[2] = x[0] * 2          # an int literal adopts the float type
    kout[0] = k[0] * 3000000000  # fits int64
    kout[1] = k[0] + 1
    f16[0] = wp.float16(1.5) * 2.0


def test_weak_literals_adopt_the_other_operand_type(run):
    *_, out, kout, f16 = run(weak_literals, 1, np.array([0.0, 1.0], np.float64),
                             np.array([5], np.int64), np.zeros(3, np.float64),
                             np.zeros(2, np.int64), np.zeros(1, np.float16))
    assert out[0] == 0.1 and out[1] == 0.1  # exactly the double 0.1
    assert out[2] == 0.0
    assert kout.tolist() == [15_000_000_000, 6]
    assert f16[0] == 3.0


@wp.kernel
def folded_literals(out: wp.array(dtype=float), out64: wp.array(dtype=wp.float64), flags: wp.array(dtype=int)):
    out[0] = (1.0 + 1.0e-8) - 1.0
    out[1] = 1.0e-30 * 1.0e-30 * 1.0e30
    out[2] = 1.0 / 3.0
    out64[0] = wp.float64(0.1 + 0.2)
    out64[1] = wp.float64(0.1)
    flags[0] = int(0.1 + 0.2 == 0.3)
    flags[1] = -7 // 2
    flags[2] = -7 % 3


def test_arithmetic_on_float_literals_is_float32_arithmetic(run):
    """Warp's float literals are float32, so arithmetic between them rounds to float32 at
    each step (a folded `0.1 + 0.2` equals the float32 0.3; `1e-30 * 1e-30` underflows); a
    literal alone converts exactly (`wp.float64(0.1)`). Values recorded with Warp 1.19."""
    out, out64, flags = run(folded_literals, 1, np.zeros(3, np.float32), np.zeros(2, np.float64),
                            np.zeros(3, np.int32))
    assert out.tolist() == [0.0, 0.0, float(np.float32(1.0) / np.float32(3.0))]
    assert out64.tolist() == [float(np.float32(0.1) + np.float32(0.2)), 0.1]
    assert flags.tolist() == [1, -4, -1]


@wp.kernel
def literal_alone(out: wp.array(dtype=float), kout: wp.array(dtype=int)):
    a = 1.5  # a lone float literal is a float32, a lone int literal an int32
    k = 7
    out[0] = a
    kout[0] = k / 2


def test_lone_literals_default_types(run):
    out, kout = run(literal_alone, 1, np.zeros(1, np.float32), np.zeros(1, np.int32))
    assert out[0] == 1.5 and kout[0] == 3


@wp.kernel
def unsigned_and_small_ints(u: wp.array(dtype=wp.uint32), b8: wp.array(dtype=wp.int8),
                            out_u: wp.array(dtype=wp.uint32), out8: wp.array(dtype=wp.int8)):
    out_u[0] = u[0] - wp.uint32(1)  # wraps around
    out_u[1] = u[1] / wp.uint32(2)
    out_u[2] = u[1] >> wp.uint32(1)  # logical shift
    out8[0] = b8[0] + wp.int8(1)     # wraps around


def test_unsigned_and_small_integer_types(run):
    *_, out_u, out8 = run(unsigned_and_small_ints, 1, np.array([0, 2**32 - 2], np.uint32),
                          np.array([127], np.int8), np.zeros(3, np.uint32), np.zeros(1, np.int8))
    assert out_u.tolist() == [2**32 - 1, 2**31 - 1, 2**31 - 1]
    assert out8[0] == -128


@wp.kernel
def bitwise(a: wp.array(dtype=int), b: wp.array(dtype=int), out: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[i, 0] = x & y
    out[i, 1] = x | y
    out[i, 2] = x ^ y
    out[i, 3] = ~x
    out[i, 4] = x << 3
    out[i, 5] = x >> 2  # arithmetic shift for signed ints
    out[i, 6] = (x & 0xFF) | (y << 8)


def test_bitwise_operators(run):
    a = np.array([0b1100, -17, 0x7FFF, 0], np.int32)
    b = np.array([0b1010, 5, -1, 3], np.int32)
    *_, out = run(bitwise, 4, a, b, np.zeros((4, 7), np.int32))
    np.testing.assert_array_equal(out[:, 0], a & b)
    np.testing.assert_array_equal(out[:, 1], a | b)
    np.testing.assert_array_equal(out[:, 2], a ^ b)
    np.testing.assert_array_equal(out[:, 3], ~a)
    np.testing.assert_array_equal(out[:, 4], a << 3)
    np.testing.assert_array_equal(out[:, 5], a >> 2)
    np.testing.assert_array_equal(out[:, 6], (a & 0xFF) | (b << 8))


@wp.kernel
def bitwise64(a: wp.array(dtype=wp.int64), out: wp.array(dtype=wp.int64)):
    out[0] = a[0] << wp.int64(40)
    out[1] = (a[0] << wp.int64(40)) >> wp.int64(38)
    out[2] = a[0] ^ wp.int64(-1)


def test_bitwise_int64(run):
    _, out = run(bitwise64, 1, np.array([3], np.int64), np.zeros(3, np.int64))
    assert out.tolist() == [3 << 40, 3 << 2, ~3]


# Comparisons and boolean logic -----------------------------------------------------------------


@wp.kernel
def comparisons(x: wp.array(dtype=float), out: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    v = x[i]
    out[i, 0] = int(v < 1.0)
    out[i, 1] = int(v <= 1.0)
    out[i, 2] = int(v > 1.0)
    out[i, 3] = int(v >= 1.0)
    out[i, 4] = int(v == 1.0)
    out[i, 5] = int(v != 1.0)
    out[i, 6] = int(0.0 < v < 2.0)  # chained
    out[i, 7] = int(0.0 <= v <= 1.0 < 5.0)


def test_comparisons_and_chains(run):
    x = np.array([0.0, 1.0, 1.5, 2.0, -1.0, np.nan], np.float32)
    _, out = run(comparisons, len(x), x, np.zeros((len(x), 8), np.int32))
    with np.errstate(invalid="ignore"):
        expect = np.stack([x < 1, x <= 1, x > 1, x >= 1, x == 1, x != 1, (0 < x) & (x < 2),
                           (0 <= x) & (x <= 1)], axis=1).astype(np.int32)
    np.testing.assert_array_equal(out, expect)


@wp.kernel
def short_circuit(a: wp.array(dtype=float), out: wp.array(dtype=int)):
    i = wp.tid()
    n = a.shape[0]
    r = 0
    if i < n and a[i] > 0.0:  # a[i] is not read when i >= n
        r = 1
    if i >= n or a[i] < 0.0:
        r += 10
    if not (i < n and a[i] == 0.0):
        r += 100
    out[i] = r


def test_and_or_short_circuit(run):
    a = np.array([1.0, -1.0, 0.0], np.float32)
    _, out = run(short_circuit, 5, a, np.zeros(5, np.int32))
    assert out.tolist() == [101, 110, 0, 110, 110]


@wp.kernel
def short_circuit_side_effects(c: int, counter: wp.array(dtype=int)):
    if c > 0 or wp.atomic_add(counter, 0, 1) > 100:  # the atomic runs only when c <= 0
        counter[1] += 1
    if c > 0 and wp.atomic_add(counter, 2, 1) >= 0:
        counter[3] += 1


def test_short_circuit_skips_side_effects(run):
    (counter,) = run(short_circuit_side_effects, 1, 1, np.zeros(4, np.int32))
    assert counter.tolist() == [0, 1, 1, 1]
    (counter,) = run(short_circuit_side_effects, 1, 0, np.zeros(4, np.int32))
    assert counter.tolist() == [1, 0, 0, 0]


@wp.kernel
def conditional_expression_literals(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64),
                                    fout: wp.array(dtype=float), bout: wp.array(dtype=wp.bool)):
    i = wp.tid()
    v = x[i]
    out[i] = v if v > 0.0 else 0.1  # the literal takes the other side's type: float64
    fout[i] = 1 if v > 0.0 else 2.5  # two literals: as Python's arithmetic would type them
    bout[i] = True if v > 0.0 else False


def test_conditional_expression_with_literals(run):
    _, out, fout, bout = run(conditional_expression_literals, 2, np.array([2.0, -1.0]),
                             np.zeros(2), np.zeros(2, np.float32), np.zeros(2, np.bool_))
    assert out.tolist() == [2.0, 0.1]
    assert fout.tolist() == [1.0, 2.5]
    assert bout.tolist() == [True, False]


@wp.kernel
def conditional_expression_guards(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] if i < a.shape[0] else -1.0  # a[i] is not read when i is out of range


def test_conditional_expression_evaluates_one_side(run):
    _, out = run(conditional_expression_guards, 4, np.array([5.0, 6.0], np.float32),
                 np.zeros(4, np.float32))
    assert out.tolist() == [5.0, 6.0, -1.0, -1.0]


@wp.kernel
def bool_values(a: wp.array(dtype=int), out: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    p = a[i] > 0
    q = a[i] % 2 == 0
    out[i, 0] = int(p and q)
    out[i, 1] = int(p or q)
    out[i, 2] = int(not p)
    out[i, 3] = int(p and not q or a[i] == -3)
    out[i, 4] = int(p != q)


def test_boolean_operators_on_values(run):
    a = np.array([-3, -2, 0, 1, 2], np.int32)
    _, out = run(bool_values, 5, a, np.zeros((5, 5), np.int32))
    p, q = a > 0, a % 2 == 0
    expect = np.stack([p & q, p | q, ~p, (p & ~q) | (a == -3), p != q], axis=1)
    np.testing.assert_array_equal(out, expect.astype(np.int32))


@wp.kernel
def conditional_expression(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    out[i] = x * 2.0 if x > 0.0 else (0.0 if x == 0.0 else -x)


def test_conditional_expression(run):
    a = np.array([1.5, 0.0, -2.0], np.float32)
    _, out = run(conditional_expression, 3, a, np.zeros(3, np.float32))
    assert out.tolist() == [3.0, 0.0, 2.0]


# Arrays ---------------------------------------------------------------------------------------


@wp.kernel
def array_indexing(a: wp.array(dtype=float, ndim=2), out: wp.array(dtype=float)):
    out[0] = a[1][2]   # a[1] is a row view
    row = a[0]
    out[1] = row[1] + float(row.shape[0])
    out[2] = a[1, 0]


def test_array_rows_and_chained_indexing(run):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    _, out = run(array_indexing, 1, a, np.zeros(3, np.float32))
    assert out.tolist() == [5.0, 4.0, 3.0]


@wp.kernel
def negative_index(a: wp.array(dtype=float), k: int):
    a[k] = 1.0


def test_negative_array_index_is_out_of_bounds(run):
    """As in Warp (and C), -1 is not the last element: it is out of bounds."""
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        run(negative_index, 1, np.zeros(3, np.float32), -1)


@wp.kernel
def bool_arrays(x: wp.array(dtype=float), flags: wp.array(dtype=wp.bool), out: wp.array(dtype=int)):
    i = wp.tid()
    flags[i] = x[i] > 0.0
    f = flags[i]
    out[i] = int(not f)


def test_bool_arrays(run):
    _, flags, out = run(bool_arrays, 3, np.array([1.0, -1.0, 0.0], np.float32),
                        np.zeros(3, np.bool_), np.zeros(3, np.int32))
    assert flags.tolist() == [True, False, False]
    assert out.tolist() == [0, 1, 1]


# Vectors and matrices --------------------------------------------------------------------------


@wp.kernel
def vector_access(vs: wp.array(dtype=wp.vec3), js: wp.array(dtype=int),
                  out: wp.array(dtype=wp.vec3), picked: wp.array(dtype=float)):
    i = wp.tid()
    v = vs[i]
    w = wp.vec3(v.z, v.y, v.x)
    w[0] = w[0] + 100.0
    w.y = -w.y
    j = js[i]
    w[j] = w[j] * 10.0  # a dynamic component index
    out[i] = w
    picked[i] = v[j] + v[-1]


def test_vector_component_access_and_assignment(run):
    vs = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], np.float32)
    js = np.array([0, 1, 2], np.int32)
    *_, out, picked = run(vector_access, 3, (vs, wp.vec3), js, (np.zeros((3, 3), np.float32), wp.vec3),
                          np.zeros(3, np.float32))
    w = vs[:, ::-1].copy()
    w[:, 0] += 100
    w[:, 1] *= -1
    w[np.arange(3), js] *= 10
    np.testing.assert_array_equal(out, w)
    np.testing.assert_array_equal(picked, vs[np.arange(3), js] + vs[:, 2])


@wp.kernel
def vector_dynamic_index_out_of_range(j: int, out: wp.array(dtype=float)):
    v = wp.vec3(1.0, 2.0, 3.0)
    out[0] = v[j]


def test_vector_dynamic_index_out_of_range_raises(run):
    (out,) = run(vector_dynamic_index_out_of_range, 1, 2, np.zeros(1, np.float32))
    assert out[0] == 3.0
    with pytest.raises(IndexError, match="out of bounds"):
        run(vector_dynamic_index_out_of_range, 1, 3, np.zeros(1, np.float32))


@wp.kernel
def vector_arith(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3),
                 out: wp.array(dtype=wp.vec3, ndim=2), eq: wp.array(dtype=int)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[i, 0] = x + y
    out[i, 1] = x - y
    out[i, 2] = x * 2.0
    out[i, 3] = 3.0 * x
    out[i, 4] = x / 4.0
    out[i, 5] = -x
    out[i, 6] = wp.vec3(1.0) + x  # a vector of equal components
    eq[i] = int(x == y) + 2 * int(x != y)


def test_vector_arithmetic(run):
    a = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    b = np.array([[1, 2, 3], [0, -1, 2]], np.float32)
    *_, out, eq = run(vector_arith, 2, (a, wp.vec3), (b, wp.vec3),
                      (np.zeros((2, 7, 3), np.float32), wp.vec3), np.zeros(2, np.int32))
    expect = np.stack([a + b, a - b, a * 2, 3 * a, a / 4, -a, 1 + a], axis=1)
    np.testing.assert_allclose(out, expect, rtol=1e-7)
    assert eq.tolist() == [1, 2]


@wp.kernel
def vector_value_semantics(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    v = a[0]
    w = v
    w[0] = 100.0  # w is a copy: neither v nor the array change
    v[1] = -1.0
    out[0] = a[0][0]
    out[1] = a[0][1]
    out[2] = v[0]
    out[3] = w[0]
    out[4] = w[1]


def test_vectors_are_values(run):
    a, out = run(vector_value_semantics, 1, (np.ones((1, 3), np.float32), wp.vec3),
                 np.zeros(5, np.float32))
    np.testing.assert_array_equal(a, [[1.0, 1.0, 1.0]])
    assert out.tolist() == [1.0, 1.0, 1.0, 100.0, 1.0]


vec5 = wp.vec(5, float)
mat23 = wp.mat((2, 3), float)
vec3h = wp.types.vector(length=3, dtype=wp.float16)


@wp.kernel
def other_shapes(a: wp.array(dtype=vec5), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float),
                 m_out: wp.array(dtype=mat23), vout: wp.array(dtype=wp.vec3, ndim=2),
                 h: wp.array(dtype=vec3h)):
    out[0] = wp.dot(a[0], a[0]) + a[0][4]
    m = mat23(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    m_out[0] = m
    m_out[1] = wp.matrix_from_rows(wp.vec3(1.0, 1.0, 1.0), wp.vec3(2.0, 2.0, 2.0))
    mv = m * wp.vec3(1.0, 1.0, 1.0)
    out[1] = mv[0] * 10.0 + mv[1]
    vout[0, 0] = 2.0 / v[0]
    vout[0, 1] = v[0] // 2.0
    vout[0, 2] = v[0] % 2.0
    h[0] = h[0] * wp.float16(2.0) + vec3h(wp.float16(1.0), wp.float16(0.5), wp.float16(0.25))


def test_other_vector_and_matrix_shapes(run):
    *_, out, m_out, vout, h = run(
        other_shapes, 1, (np.arange(5, dtype=np.float32)[None], vec5),
        (np.array([[1.0, 3.0, -5.0]], np.float32), wp.vec3), np.zeros(2, np.float32),
        (np.zeros((2, 2, 3), np.float32), mat23), (np.zeros((1, 3, 3), np.float32), wp.vec3),
        (np.array([[1, 2, 3]], np.float16), vec3h))
    assert out.tolist() == [34.0, 75.0]
    np.testing.assert_array_equal(m_out, [[[1, 2, 3], [4, 5, 6]], [[1, 1, 1], [2, 2, 2]]])
    v = np.array([1.0, 3.0, -5.0], np.float32)
    np.testing.assert_allclose(vout[0], [2.0 / v, np.floor(v / 2), np.fmod(v, 2)], rtol=1e-7)
    np.testing.assert_array_equal(h, [[3.0, 4.5, 6.25]])


@wp.kernel
def matrix_ops(ms: wp.array(dtype=wp.mat33), ns: wp.array(dtype=wp.mat33),
               vs: wp.array(dtype=wp.vec3), mv: wp.array(dtype=wp.vec3),
               mm: wp.array(dtype=wp.mat33), mm2: wp.array(dtype=wp.mat33),
               rows: wp.array(dtype=wp.vec3), entries: wp.array(dtype=float, ndim=2),
               vm: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    m = ms[i]
    n = ns[i]
    mv[i] = m * vs[i]
    mm[i] = m @ n
    mm2[i] = m * n + n - m * 2.0
    rows[i] = m[1]
    entries[i, 0] = m[0, 2]
    entries[i, 1] = m[2][1]
    j = i % 3
    entries[i, 2] = m[j, 2 - j]
    vm[i] = vs[i] * m


def test_matrix_operations(run):
    rng = np.random.default_rng(1)
    ms = rng.standard_normal((3, 3, 3)).astype(np.float32)
    ns = rng.standard_normal((3, 3, 3)).astype(np.float32)
    vs = rng.standard_normal((3, 3)).astype(np.float32)
    z3, z33 = np.zeros((3, 3), np.float32), np.zeros((3, 3, 3), np.float32)
    *_, mv, mm, mm2, rows, entries, vm = run(
        matrix_ops, 3, (ms, wp.mat33), (ns, wp.mat33), (vs, wp.vec3), (z3, wp.vec3),
        (z33, wp.mat33), (z33, wp.mat33), (z3, wp.vec3), np.zeros((3, 3), np.float32),
        (z3, wp.vec3))
    np.testing.assert_allclose(mv, np.einsum("kij,kj->ki", ms, vs), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mm, ms @ ns, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mm2, ms @ ns + ns - 2 * ms, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(rows, ms[:, 1])
    k = np.arange(3)
    np.testing.assert_array_equal(entries, np.stack([ms[:, 0, 2], ms[:, 2, 1], ms[k, k, 2 - k]], 1))
    np.testing.assert_allclose(vm, np.einsum("ki,kij->kj", vs, ms), rtol=1e-5, atol=1e-6)


@wp.kernel
def matrix_assignment(out: wp.array(dtype=wp.mat22), j: int):
    m = wp.mat22()
    m[0, 0] = 1.0
    m[1] = wp.vec2(5.0, 6.0)
    m[j, 1 - j] = 9.0
    out[0] = m


def test_matrix_element_and_row_assignment(run):
    (out,) = run(matrix_assignment, 1, (np.zeros((1, 2, 2), np.float32), wp.mat22), 0)
    np.testing.assert_array_equal(out[0], [[1.0, 9.0], [5.0, 6.0]])


VEC5 = wp.vec(length=5, dtype=float)  # (inside a kernel, vector(length=5, dtype=float) is a zero value)


@wp.kernel
def constructors(x: float, out3: wp.array(dtype=wp.vec3), out4: wp.array(dtype=wp.vec4),
                 m_out: wp.array(dtype=wp.mat33), m2_out: wp.array(dtype=wp.mat22),
                 vi: wp.array(dtype=wp.vec3i), vd: wp.array(dtype=wp.vec3d)):
    out3[0] = wp.vec3(x, 2.0, 3.0)
    out3[1] = wp.vec3(x)
    out3[2] = wp.vec3()
    out4[0] = wp.vec4(wp.vec3(1.0, 2.0, 3.0), x)
    m_out[0] = wp.mat33(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, x)
    m_out[1] = wp.matrix_from_rows(wp.vec3(1.0, 2.0, 3.0), wp.vec3(4.0, 5.0, 6.0), wp.vec3(7.0, 8.0, x))
    m2_out[0] = wp.mat22(x)
    vi[0] = wp.vec3i(1, -2, 3)
    vd[0] = wp.vec3d(wp.vec3(x, 0.5, 0.25))  # a conversion between component types
    v5 = VEC5(1.0, 2.0, 3.0, 4.0, x)
    out3[3] = wp.vec3(v5[0], v5[4], float(len(v5)))


def test_constructors(run):
    outs = run(constructors, 1, 9.0, (np.zeros((4, 3), np.float32), wp.vec3),
               (np.zeros((1, 4), np.float32), wp.vec4), (np.zeros((2, 3, 3), np.float32), wp.mat33),
               (np.zeros((1, 2, 2), np.float32), wp.mat22), (np.zeros((1, 3), np.int32), wp.vec3i),
               (np.zeros((1, 3), np.float64), wp.vec3d))
    out3, out4, m_out, m2_out, vi, vd = outs
    np.testing.assert_array_equal(out3, [[9, 2, 3], [9, 9, 9], [0, 0, 0], [1, 9, 5]])
    np.testing.assert_array_equal(out4, [[1, 2, 3, 9]])
    np.testing.assert_array_equal(m_out[0], np.arange(1, 10).reshape(3, 3))
    np.testing.assert_array_equal(m_out[1], np.arange(1, 10).reshape(3, 3))
    np.testing.assert_array_equal(m2_out[0], [[9, 9], [9, 9]])
    np.testing.assert_array_equal(vi, [[1, -2, 3]])
    np.testing.assert_array_equal(vd, [[9.0, 0.5, 0.25]])


@wp.kernel
def casts(x: wp.array(dtype=float), k: wp.array(dtype=int), out: wp.array(dtype=float, ndim=2),
          kout: wp.array(dtype=int, ndim=2), dout: wp.array(dtype=wp.float64, ndim=2)):
    i = wp.tid()
    out[i, 0] = float(k[i])
    out[i, 1] = wp.float32(k[i]) / 2.0
    kout[i, 0] = int(x[i])  # truncates toward zero
    kout[i, 1] = wp.int32(x[i] * 2.0)
    kout[i, 2] = int(wp.uint8(k[i]))  # wraps to 0..255
    kout[i, 3] = int(x[i] > 0.0)
    dout[i, 0] = wp.float64(x[i])
    dout[i, 1] = wp.float64(k[i]) / wp.float64(3.0)


def test_casts(run):
    x = np.array([1.75, -1.75, 0.5], np.float32)
    k = np.array([3, -7, 300], np.int32)
    *_, out, kout, dout = run(casts, 3, x, k, np.zeros((3, 2), np.float32),
                              np.zeros((3, 4), np.int32), np.zeros((3, 2), np.float64))
    np.testing.assert_array_equal(out, np.stack([k, k / 2], 1).astype(np.float32))
    np.testing.assert_array_equal(kout, np.stack([np.trunc(x), np.trunc(x * 2), k % 256, x > 0], 1))
    np.testing.assert_array_equal(dout, np.stack([x.astype(np.float64), k / 3.0], 1))


# Structs -----------------------------------------------------------------------------------


@wp.struct
class Particle:
    pos: wp.vec3
    mass: float
    kind: int


@wp.struct
class Scene:
    particle: Particle
    weights: wp.array(dtype=float)
    scale: float


@wp.kernel
def struct_fields(p: Particle, scene: Scene, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = p.pos[i] * p.mass + float(p.kind) + scene.weights[i] * scene.scale \
        + scene.particle.pos.y


def test_struct_arguments(run):
    p = Particle()
    p.pos = wp.vec3(1.0, 2.0, 3.0)
    p.mass = 2.0
    p.kind = 7
    scene = Scene()
    scene.particle = Particle(pos=wp.vec3(0.0, 100.0, 0.0), mass=1.0, kind=0)
    scene.weights = wp.array(np.array([1.0, 2.0, 3.0], np.float32))
    scene.scale = 0.5
    (out,) = run(struct_fields, 3, p, scene, np.zeros(3, np.float32))
    np.testing.assert_array_equal(out, [1 * 2 + 7 + 0.5 + 100, 2 * 2 + 7 + 1 + 100,
                                        3 * 2 + 7 + 1.5 + 100])


@wp.struct
class Body:
    particle: Particle
    scale: float


@wp.func
def heavier(p: Particle, extra: float) -> Particle:
    p.mass = p.mass + extra  # a local copy: the caller's value does not change
    return p


@wp.kernel
def struct_locals(masses: wp.array(dtype=float), out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    p = Particle(pos=wp.vec3(1.0, 2.0, 3.0), mass=masses[i])
    q = heavier(p, 10.0)
    p.pos.z = -1.0  # assignment to a field of a field
    p.kind = i
    s = Body()
    s.particle = p
    s.particle.mass = 5.0
    out[i, 0] = p.mass
    out[i, 1] = q.mass
    out[i, 2] = p.pos.z
    out[i, 3] = float(p.kind + q.kind)
    out[i, 4] = s.particle.mass + s.particle.pos.z + s.scale


def test_struct_locals(run):
    _, out = run(struct_locals, 2, np.array([1.0, 2.0], np.float32), np.zeros((2, 5), np.float32))
    np.testing.assert_array_equal(out, [[1.0, 11.0, -1.0, 0.0, 4.0], [2.0, 12.0, -1.0, 1.0, 4.0]])


@wp.kernel
def struct_array_elements(ps: wp.array(dtype=Particle), out: wp.array(dtype=float)):
    i = wp.tid()
    p = ps[i]
    out[i] = p.mass + p.pos[1] + float(ps[i].kind)
    ps[i].mass = 10.0 * float(i)
    ps[i].pos.z = -1.0


def test_arrays_of_structs(run):
    ps = wp.zeros(2, dtype=Particle)
    data = ps.numpy()
    data["mass"] = [1.0, 2.0]
    data["kind"] = [3, 4]
    data["pos"][:, 1] = [0.5, 0.25]
    out = wp.zeros(2, dtype=float)
    wp.launch(struct_array_elements, 2, inputs=[ps, out])
    assert out.numpy().tolist() == [4.5, 6.25]
    assert ps.numpy()["mass"].tolist() == [0.0, 10.0]
    assert ps.numpy()["pos"][:, 2].tolist() == [-1.0, -1.0]


@wp.kernel
def struct_with_array_given(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    s = Scene(weights=a, scale=2.0)
    out[0] = s.weights[1] * s.scale


def test_struct_with_array_field_constructed_in_kernel(run):
    _, out = run(struct_with_array_given, 1, np.array([1.0, 3.0], np.float32), np.zeros(1, np.float32))
    assert out[0] == 6.0


def test_struct_with_array_field_default_constructed(run):
    @wp.kernel
    def assign_later(a: wp.array(dtype=float), out: wp.array(dtype=float)):
        s = Scene()  # Warp allows this; the array field starts null
        s.scale = 2.0
        s.weights = a
        out[0] = s.weights[1] * s.scale

    _, out = run(assign_later, 1, np.array([1.0, 3.0], np.float32), np.zeros(1, np.float32))
    assert out[0] == 6.0


@wp.kernel
def folded_constants(out: wp.array(dtype=float), iout: wp.array(dtype=int)):
    iout[0] = -7 % 3
    iout[1] = -7 / 2
    iout[2] = -7 // 2
    out[0] = float(7 / 2)
    out[1] = -7.0 % 3.0


def test_constant_folding_uses_run_time_semantics():
    """Folding two literals must agree with the same expression evaluated at run time (C/Warp)."""
    out, iout = wp.zeros(2), wp.zeros(3, dtype=int)
    wp.launch(folded_constants, 1, inputs=[out, iout])
    assert iout.numpy().tolist() == [-1, -3, -4]
    assert out.numpy().tolist() == [3.0, -1.0]


def test_literal_index_too_large_for_int32_is_kept_as_int64():
    @wp.kernel
    def far(a: wp.array(dtype=float), out: wp.array(dtype=float)):
        out[0] = a[4294967297]

    with pytest.raises(IndexError, match="index 4294967297"):
        wp.launch(far, 1, inputs=[wp.zeros(10), wp.zeros(1)])


def test_explicit_integer_cast_of_a_constant_wraps_as_in_c():
    @wp.kernel
    def wraps(out: wp.array(dtype=wp.int64)):
        out[0] = wp.int64(wp.int32(4294967297))
        out[1] = wp.int64(wp.uint32(-1))  # as Warp (C) converts
        out[2] = wp.int64(wp.int8(200))
        out[3] = wp.int64(wp.uint8(-1.0))  # a float truncates first, then wraps

    out = wp.zeros(4, dtype=wp.int64)
    wp.launch(wraps, 1, inputs=[out])
    assert out.numpy().tolist() == [1, 4294967295, -56, 255]


# Type attributes of values ---------------------------------------------------------------------


@wp.kernel
def scalar_dtype_and_length(x: wp.array(dtype=Any), out: wp.array(dtype=Any)):
    i = wp.tid()
    v = x[i]
    out[i] = v * v.dtype(0.5) + v.dtype(v.length)  # (a scalar is its own dtype, of length 1)


@pytest.mark.parametrize("dtype", [wp.float16, wp.float64, wp.int32])
def test_a_scalar_value_has_dtype_and_length(dtype):
    x = wp.array(np.array([2, 4, 6]), dtype=dtype)
    out = wp.zeros(3, dtype=dtype)
    wp.launch(scalar_dtype_and_length, dim=3, inputs=[x, out])
    expected = [1, 1, 1] if dtype is wp.int32 else [2.0, 3.0, 4.0]  # (int32(0.5) is 0)
    np.testing.assert_array_equal(out.numpy(), expected)


# Integer literals are int32 ----------------------------------------------------------------------


@wp.kernel
def literal_int_arithmetic(out: wp.array(dtype=int)):
    out[0] = 100000 * 100000 // 100000
    out[1] = (2147483647 + 1) // 2
    out[2] = -2147483647 - 2
    out[3] = 65536 * 65536 + 5
    out[4] = (1 << 40) >> 38
    out[5] = (65536 * 65536) // 65536 + 7


@wp.kernel
def runtime_int_arithmetic(k: wp.array(dtype=int), out: wp.array(dtype=int)):
    out[0] = k[0] * k[0] // k[0]
    out[1] = (k[1] + 1) // 2
    out[2] = -k[1] - 2
    out[3] = k[2] * k[2] + 5
    out[4] = (k[3] << 40) >> 38
    out[5] = (k[2] * k[2]) // k[2] + 7


def test_literal_int_arithmetic_wraps_as_at_run_time():
    # Warp's integer literals are int32, so their arithmetic wraps: folding it at compile
    # time gives what the same expression on int32 values gives at run time
    folded, computed = wp.zeros(6, dtype=int), wp.zeros(6, dtype=int)
    wp.launch(literal_int_arithmetic, dim=1, inputs=[folded])
    wp.launch(runtime_int_arithmetic, dim=1, inputs=[wp.array([100000, 2147483647, 65536, 1], dtype=int), computed])
    np.testing.assert_array_equal(folded.numpy(), [14100, -1073741824, 2147483647, 5, 0, 7])
    np.testing.assert_array_equal(folded.numpy(), computed.numpy())
