"""The operator builtins (`wp.add`, `wp.mul`, ...) compute what their operators compute."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def float_ops(m: wp.array(dtype=wp.mat33), v: wp.array(dtype=wp.vec3), s: wp.array(dtype=float),
              named: wp.array(dtype=wp.vec3), spelled: wp.array(dtype=wp.vec3)):
    a, x, k = m[0], v[0], s[0]
    named[0] = wp.mul(a, x)
    spelled[0] = a @ x
    named[1] = wp.add(x, wp.neg(x * k))
    spelled[1] = x + -(x * k)
    named[2] = wp.div(wp.sub(x, v[1]), k)
    spelled[2] = (x - v[1]) / k
    named[3] = wp.mod(x, v[1])
    spelled[3] = x % v[1]
    named[4] = wp.pos(wp.mul(k, x))
    spelled[4] = +(k * x)
    named[5] = wp.mul(x, a)
    spelled[5] = x * a


def test_float_operators_match():
    rng = np.random.default_rng(3)
    m = wp.array(rng.uniform(-2, 2, (1, 3, 3)), dtype=wp.mat33)
    v = wp.array(rng.uniform(0.5, 2, (2, 3)), dtype=wp.vec3)
    s = wp.array([1.7], dtype=float)
    named, spelled = wp.zeros(6, dtype=wp.vec3), wp.zeros(6, dtype=wp.vec3)
    wp.launch(float_ops, 1, inputs=[m, v, s, named, spelled])
    assert named.numpy().tobytes() == spelled.numpy().tobytes()


@wp.kernel
def int_ops(a: wp.array(dtype=int), b: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    x, y = a[i], b[i]
    out[i * 8 + 0] = wp.div(x, y) - x / y
    out[i * 8 + 1] = wp.floordiv(x, y) - x // y
    out[i * 8 + 2] = wp.mod(x, y) - x % y
    out[i * 8 + 3] = wp.bit_and(x, y) - (x & y)
    out[i * 8 + 4] = wp.bit_or(x, y) - (x | y) + wp.bit_xor(x, y) - (x ^ y)
    out[i * 8 + 5] = wp.lshift(x, 2) - (x << 2) + wp.rshift(x, 1) - (x >> 1)
    out[i * 8 + 6] = wp.invert(x) - ~x
    out[i * 8 + 7] = int(wp.unot(x)) - int(not x)


def test_integer_operators_match():
    a = wp.array([7, -7, 0, 12], dtype=int)
    b = wp.array([2, 2, 3, -5], dtype=int)
    out = wp.zeros(32, dtype=int)
    wp.launch(int_ops, 4, inputs=[a, b, out])
    assert not out.numpy().any()


@wp.kernel
def int_vector_ops(a: wp.array(dtype=wp.vec3i), out: wp.array(dtype=wp.vec3i)):
    out[0] = wp.bit_and(a[0], a[1])
    out[1] = wp.invert(a[0])
    out[2] = wp.lshift(a[0], a[1])


def test_integer_vectors_componentwise():
    a = wp.array([[1, 6, 12], [3, 2, 1]], dtype=wp.vec3i)
    out = wp.zeros(3, dtype=wp.vec3i)
    wp.launch(int_vector_ops, 1, inputs=[a, out])
    assert out.numpy().tolist() == [[1, 2, 0], [-2, -7, -13], [8, 24, 24]]


@wp.kernel
def bit_pattern_literals(x: wp.array(dtype=int), b: wp.array(dtype=wp.uint8), out: wp.array(dtype=wp.uint32),
                         small: wp.array(dtype=wp.uint8)):
    i = wp.tid()
    out[i * 3 + 0] = wp.uint32(x[i] * 2654435761)  # Knuth's multiplicative hash
    out[i * 3 + 1] = wp.uint32(x[i] & 0xFFFFFFFF)
    out[i * 3 + 2] = wp.uint32(x[i] ^ 0x80000000)
    small[i] = b[i] & -1  # (-1: the pattern 0xFF of a uint8)


def test_integer_literals_of_the_operands_width_wrap_as_bit_patterns():
    """A literal that is a bit pattern of the other operand's width wraps to its type, as in
    C and Warp (hash constants, masks); a literal wider than that is still an error, while
    literal arithmetic is int32 arithmetic (`1 << 40` is 0, as in Warp and at run time)."""
    xs = np.array([1, 2, 3, -7], dtype=np.int32)
    out, small = wp.zeros(12, dtype=wp.uint32), wp.zeros(4, dtype=wp.uint8)
    wp.launch(bit_pattern_literals, 4, inputs=[wp.array(xs, dtype=int), wp.array([1, 2, 200, 255], dtype=wp.uint8),
                                               out, small])
    u = xs.astype(np.int64) & 0xFFFFFFFF
    expected = np.stack([(u * 2654435761) & 0xFFFFFFFF, u, u ^ 0x80000000], axis=1).ravel()
    assert out.numpy().tolist() == expected.tolist()
    assert small.numpy().tolist() == [1, 2, 200, 255]

    @wp.kernel
    def shifted_out(x: wp.array(dtype=int)):
        x[0] = x[0] * (1 << 40) + (1 << 33) + 7

    x = wp.full(1, 5, dtype=int)
    wp.launch(shifted_out, 1, inputs=[x])
    assert x.numpy().tolist() == [7]

    @wp.kernel
    def compares(x: wp.array(dtype=int)):  # (a wrapped 3000000000 would silently be negative)
        x[0] = wp.where(x[0] < 3000000000, 1, 0)

    with pytest.raises(wp.CompileError, match="does not fit int32"):
        wp.launch(compares, 1, inputs=[wp.zeros(1, dtype=int)])


def test_stored_integer_literals_that_are_bit_patterns_wrap():
    """`out[0] = 1 << 31` into an int32 array stores the sign bit, as Warp's int32 literal
    arithmetic wraps (`65536 * 65536` is 0); a literal no 32-bit pattern can hold stays an
    error."""
    @wp.kernel
    def masks(out: wp.array(dtype=int), small: wp.array(dtype=wp.uint8)):
        out[0] = 1 << 31
        out[1] = 0xFFFFFFFF
        v = int(0)  # noqa: UP018 - a variable, as Warp requires
        v = 2147483647 + 1
        out[2] = v
        out[3] += 0xFFFFFFFF
        w = wp.vec2i(0, 0)
        w[1] = 0xFFFFFFFF
        out[4] = w[1]
        small[0] = -1

    out, small = wp.zeros(5, dtype=int), wp.zeros(1, dtype=wp.uint8)
    wp.launch(masks, 1, inputs=[out, small])
    assert out.numpy().tolist() == [-2**31, -1, -2**31, -1, -1] and small.numpy().tolist() == [255]

    @wp.kernel
    def wrapped(out: wp.array(dtype=int)):
        out[0] = 65536 * 65536 + 5

    @wp.kernel
    def too_wide(out: wp.array(dtype=int)):
        out[0] = 4294967296

    wp.launch(wrapped, 1, inputs=[out])
    assert out.numpy()[0] == 5
    with pytest.raises(wp.CompileError, match="does not fit int32"):
        wp.launch(too_wide, 1, inputs=[out])


def test_operand_errors_are_compile_errors():
    @wp.kernel
    def bad(out: wp.array(dtype=wp.vec3)):
        out[0] = wp.bit_and(out[0], out[0])

    with pytest.raises(wp.CompileError, match="integer operands"):
        wp.launch(bad, 1, inputs=[wp.zeros(1, dtype=wp.vec3)])

    @wp.kernel
    def bad_unot(out: wp.array(dtype=float)):
        out[0] = float(wp.unot(out[0]))

    with pytest.raises(wp.CompileError, match="unot"):
        wp.launch(bad_unot, 1, inputs=[wp.zeros(1)])


@wp.kernel
def matmul_with_scalars(x: wp.array(dtype=float), out: wp.array(dtype=float), v: wp.array(dtype=wp.vec3)):
    a = x[0]
    out[0] = a @ x[1]
    out[1] = 2.0 @ 3.0
    v[0] = a @ wp.vec3(1.0, 2.0, 3.0)
    v[1] = wp.vec3(1.0, 2.0, 3.0) @ a


def test_matmul_of_scalars_is_their_product():
    """Warp's `@` is its `mul`, which takes scalars (`a @ b` with floats compiles to a * b)."""
    x = wp.array([2.0, 3.0], dtype=float, requires_grad=True)
    out, v = wp.zeros(2, requires_grad=True), wp.zeros(2, dtype=wp.vec3)
    tape = wp.Tape()
    with tape:
        wp.launch(matmul_with_scalars, 1, inputs=[x, out, v])
    assert out.numpy().tolist() == [6.0, 6.0] and v.numpy().tolist() == [[2.0, 4.0, 6.0]] * 2
    tape.backward(grads={out: wp.array([1.0, 0.0], dtype=float)})
    assert x.grad.numpy().tolist() == [3.0, 2.0]


@wp.kernel
def negations(x: wp.array(dtype=float), out: wp.array(dtype=float), v: wp.array(dtype=wp.vec2)):
    out[0] = -0.0  # a literal
    out[1] = -x[0]
    out[2] = wp.neg(x[0])
    a = 0.0
    out[3] = -a  # a constant: folded
    out[4] = -(0.0 * 1.0)  # computed: 0 - x
    v[0] = -wp.vec2(x[0], 0.0)


def test_scalar_negation_is_zero_minus_x_as_warps():
    """Warp's scalar neg is `T(0) - x` (so -(+0.0) is +0.0, printed "0"); vectors negate
    each component (-0.0); literals and constants fold as C++ negates them (-0.0)."""
    out, v = wp.zeros(5), wp.zeros(1, dtype=wp.vec2)
    wp.launch(negations, 1, inputs=[wp.zeros(1), out, v])
    assert np.signbit(out.numpy()).tolist() == [True, False, False, True, False]
    assert np.signbit(v.numpy()).tolist() == [[True, True]]


@wp.kernel
def transform_parts(out: wp.array(dtype=wp.transform)):
    a = wp.transform_identity()
    wp.transform_set_translation(a, wp.vec3(4.0, 5.0, 6.0))
    wp.transform_set_rotation(a, wp.quat(0.0, 1.0, 0.0, 0.0))
    b = wp.transform_identity()
    b.p = wp.vec3(4.0, 5.0, 6.0)
    b.q = wp.quat(0.0, 1.0, 0.0, 0.0)
    out[0] = a
    out[1] = b


def test_transform_setters_and_attribute_assignment():
    out = wp.zeros(2, dtype=wp.transform)
    wp.launch(transform_parts, 1, inputs=[out])
    assert out.numpy().tolist() == [[4.0, 5.0, 6.0, 0.0, 1.0, 0.0, 0.0]] * 2


@wp.kernel
def mixed_comparisons(f32: float, f64: wp.float64, i32: int, i64: wp.int64, u32: wp.uint32, i8: wp.int8,
                      out: wp.array(dtype=int)):
    out[0] = int(f32 < i32)  # Warp's example_fluid compares a float distance with an int radius
    out[1] = int(i32 <= f32)
    out[2] = int(f32 == f64)
    out[3] = int(i32 < i64)
    out[4] = int(i32 < u32)  # (C++: the int32 becomes a uint32)
    out[5] = int(i8 == i32)
    out[6] = int(f64 > i64)


def test_scalars_of_different_types_compare_as_cpp_converts_them():
    """Warp's comparisons are C++'s, so mixed scalar types convert (C++'s usual arithmetic
    conversions) instead of being refused as in arithmetic (test_operand_errors_...)."""
    out = wp.zeros(7, dtype=int)
    args = [2.5, wp.float64(2.5), 3, wp.int64(1 << 40), wp.uint32(5), wp.int8(-7)]
    wp.launch(mixed_comparisons, 1, inputs=[*args, out])
    f32, f64, i32, i64, u32, i8 = 2.5, 2.5, 3, 1 << 40, 5, -7
    expected = [f32 < i32, i32 <= f32, f32 == f64, i32 < i64, i32 < u32, i8 == i32, f64 > i64]
    np.testing.assert_array_equal(out.numpy(), np.array(expected, int))
    wp.launch(mixed_comparisons, 1, inputs=[2.5, wp.float64(2.5), -1, wp.int64(-2), wp.uint32(5), wp.int8(-1), out])
    assert out.numpy()[4] == 0  # -1 as a uint32 is 4294967295, not less than 5 (C++'s answer)
    assert out.numpy()[5] == 1 and out.numpy()[3] == 0


@wp.kernel
def _null_tests(arr: wp.array(dtype=float), out: wp.array(dtype=int)):
    out[0] = wp.where(wp.unot(arr), 1, 0)
    out[1] = wp.where(not arr, 1, 0)


def test_unot_of_an_array_is_true_for_a_null_array():
    out = wp.zeros(2, dtype=int)
    wp.launch(_null_tests, 1, [None, out])
    np.testing.assert_array_equal(out.numpy(), [1, 1])
    wp.launch(_null_tests, 1, [wp.zeros(3, dtype=float), out])
    np.testing.assert_array_equal(out.numpy(), [0, 0])
