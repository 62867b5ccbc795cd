"""Exact properties of derivative rules that finite differences cannot pin down.

Piecewise-constant builtins give exactly zero, even on their jumps; min/max route the
whole adjoint to the selected argument (the second on a tie, as Warp does, so clamp's
bound takes it at the upper bound and x at the lower); abs gives exactly +-adjoint (+ at 0);
acos/asin/atan2 give none where their derivative is infinite or undefined;
integer arguments get no gradient; a primitive without a rule, and atomic_exch on
floats, make the adjoint compile raise NotDifferentiableError at the user's line.
"""

import inspect

import numpy as np
import pytest

import weft as wp
from weft.builtins.registry import BUILTINS, PRIMITIVES, builtin, primitive
from weft.lang.errors import NotDifferentiableError
from weft.types import Scalar


def gradients(kernel, inputs, out_dtype, cot):
    """Adjoints of `inputs` (numpy arrays) for output cotangent `cot`, by an adjoint launch."""
    ins = [wp.array(x) for x in inputs]
    adj_ins = [wp.zeros_like(a) for a in ins]
    out = wp.zeros(len(cot), dtype=out_dtype)
    wp.launch(kernel, len(cot), inputs=[*ins, out], adj_inputs=[*adj_ins, wp.array(cot, dtype=out_dtype)],
              adjoint=True)
    return [a.numpy() for a in adj_ins]


@wp.kernel
def rounding(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    v = x[i]
    out[i] = wp.floor(v) + wp.ceil(v) + wp.round(v) + wp.rint(v) + wp.trunc(v) + wp.sign(v) + wp.step(v)


def test_piecewise_constant_gradient_is_exactly_zero_even_on_jumps():
    x = np.array([-2.5, -2.0, -1.5, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 2.5, 3.7, -3.7])
    (g,) = gradients(rounding, [x], wp.float64, np.full(len(x), 3.0))
    np.testing.assert_array_equal(g, 0.0)


@wp.kernel
def min_max(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    out[i] = wp.vec2d(wp.min(a[i], b[i]), wp.max(a[i], b[i]))


def test_min_max_route_the_adjoint_to_the_selected_argument():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(64), rng.standard_normal(64)
    b[:8] = a[:8]  # ties
    cot = rng.standard_normal((64, 2))
    ga, gb = gradients(min_max, [a, b], wp.vec2d, cot)
    a_is_min = a < b  # on a tie both select the second argument (Warp's rule)
    a_is_max = a > b
    np.testing.assert_array_equal(ga, np.where(a_is_min, cot[:, 0], 0.0) + np.where(a_is_max, cot[:, 1], 0.0))
    np.testing.assert_array_equal(gb, np.where(a_is_min, 0.0, cot[:, 0]) + np.where(a_is_max, 0.0, cot[:, 1]))
    np.testing.assert_array_equal(ga[:8], 0.0)


@wp.kernel
def clamped(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = wp.clamp(x[i], wp.float64(-1.0), wp.float64(2.0)) + wp.max(x[i], wp.float64(0.0))


def test_clamp_and_relu_on_their_bounds():
    """x exactly on clamp's lower bound gets the adjoint, on its upper bound none; max(x, 0)
    at x = 0 gives x none (Warp's choices; a value clamped once sits on the bound)."""
    x = np.array([-1.0, 2.0, 0.0, -3.0, 3.0, 0.5])
    (g,) = gradients(clamped, [x], wp.float64, np.full(6, 1.0))
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0, 0.0, 1.0, 2.0])


@wp.kernel
def absolute(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = wp.abs(x[i])


def test_abs_gradient_is_the_sign():
    x = np.array([-3.0, -1e-300, -0.5, 0.25, 1e-300, 7.0, 0.0])
    cot = np.array([1.5, 2.0, -1.0, 3.0, -2.5, 0.5, 4.0])
    (g,) = gradients(absolute, [x], wp.float64, cot)
    np.testing.assert_array_equal(g, np.where(x < 0, -cot, cot))  # +1 at 0, as in Warp


@wp.kernel
def guarded(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    out[i] = wp.vec3d(wp.acos(x[i]), wp.asin(x[i]), wp.atan2(y[i], x[i]))


def test_acos_asin_at_the_ends_and_atan2_at_the_origin_give_no_gradient():
    """Where the derivative is infinite or undefined (acos/asin at +-1 and beyond, atan2 at
    (0, 0)) the adjoint is 0, as Warp's guards make it: not inf, nor NaN when the result's
    own adjoint is 0 (acos(dot(a, b)) of equal unit vectors in an unrelated output)."""
    x = np.array([1.0, -1.0, 1.5, 0.0, 0.5])
    y = np.array([0.0, 0.0, 0.0, 0.0, 0.5])
    for cot in (np.ones((5, 3)), np.zeros((5, 3))):
        gx, gy = gradients(guarded, [x, y], wp.vec3d, cot)
        assert np.all(np.isfinite(gx)) and np.all(np.isfinite(gy))
        np.testing.assert_array_equal(gx[:4], 0.0)  # (atan2's d/dx = -y/r^2 is 0 too: y = 0)
        np.testing.assert_array_equal(gy[:4], cot[:4, 2] * [1.0, -1.0, 1.0 / 1.5, 0.0])  # x/r^2; none at 0
    d = 1.0 / np.sqrt(1.0 - 0.25)  # (elsewhere the ordinary derivatives)
    gx, gy = gradients(guarded, [x, y], wp.vec3d, np.ones((5, 3)))
    np.testing.assert_allclose(gx[4], -d + d - 1.0, rtol=1e-12)
    np.testing.assert_allclose(gy[4], 1.0, rtol=1e-12)


@wp.kernel
def integer_arguments(k: wp.array(dtype=wp.int32), m: wp.array(dtype=wp.int32), x: wp.array(dtype=wp.float64),
                      out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    lo = wp.float64(wp.min(k[i], m[i]))
    hi = wp.float64(wp.max(k[i], m[i]))
    out[i] = lo * x[i] + hi * wp.float64(wp.abs(k[i])) + wp.float64(wp.sign(m[i])) + wp.float64(wp.clamp(k[i], -1, 1))


def test_integer_arguments_get_no_gradient():
    rng = np.random.default_rng(1)
    k, m = (rng.integers(-5, 6, 32).astype(np.int32) for _ in range(2))
    x = rng.standard_normal(32)
    cot = rng.standard_normal(32)
    gk, gm, gx = gradients(integer_arguments, [k, m, x], wp.float64, cot)
    np.testing.assert_array_equal(gk, 0)
    np.testing.assert_array_equal(gm, 0)
    np.testing.assert_array_equal(gx, np.minimum(k, m) * cot)


@wp.kernel
def integer_arithmetic(k: wp.array(dtype=wp.int32), x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    n = k[i] + 1
    out[i] = wp.float64(n) * x[i]


def test_integer_arithmetic_gets_no_gradient():
    """Integer ops in a differentiated kernel carry no adjoint (they once crashed the reverse pass)."""
    k = np.arange(-3, 5, dtype=np.int32)
    x = np.linspace(-1.0, 1.0, 8)
    cot = np.full(8, 2.0)
    gk, gx = gradients(integer_arithmetic, [k, x], wp.float64, cot)
    np.testing.assert_array_equal(gk, 0)
    np.testing.assert_array_equal(gx, (k + 1) * cot)


def _source_line(kernel, text):
    lines, first = inspect.getsourcelines(kernel.func)
    (offset,) = [j for j, line in enumerate(lines) if text in line]
    return first + offset


def test_primitive_without_rule_names_builtin_and_line():
    def square_type(ts):
        if len(ts) != 1 or not (isinstance(ts[0], Scalar) and ts[0].is_float):
            raise TypeError("expects a float")
        return [ts[0]]

    prim = primitive("nodiff_square", square_type, lambda cg, args, op: cg.builder.fmul(args[0], args[0]))
    try:
        nodiff = builtin("nodiff_square")(lambda ctx, args, kwargs: ctx.b.call(prim, list(args)))

        @wp.kernel
        def uses_nodiff(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
            i = wp.tid()
            y = x[i] * 2.0
            out[i] = nodiff(y) + 1.0

        x = wp.array(np.array([1.0, 2.0, 3.0]))
        out = wp.zeros(3, dtype=wp.float64)
        wp.launch(uses_nodiff, 3, inputs=[x, out])  # the primal needs no rule
        np.testing.assert_array_equal(out.numpy(), [5.0, 17.0, 37.0])
        with pytest.raises(NotDifferentiableError) as info:
            wp.launch(uses_nodiff, 3, inputs=[x, out], adj_inputs=[wp.zeros_like(x), wp.ones_like(out)],
                      adjoint=True)
        message = str(info.value)
        assert "'nodiff_square' has no derivative rule" in message
        assert "uses_nodiff" in message
        assert f"{__file__}:{_source_line(uses_nodiff, 'nodiff(y)')}:" in message
        assert "out[i] = nodiff(y) + 1.0" in message
        with pytest.raises(NotDifferentiableError, match="nodiff_square"):
            wp.print_ir(uses_nodiff, adjoint=True)
    finally:
        PRIMITIVES.pop("nodiff_square", None)
        BUILTINS.pop("nodiff_square", None)


@pytest.mark.parametrize("kind", ["exch"])
def test_float_atomic_exchange_is_not_differentiable(kind):
    op = BUILTINS[f"atomic_{kind}"]

    @wp.kernel
    def atomic_extreme(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
        i = wp.tid()
        op(out, 0, x[i])

    x, out = wp.array(np.array([1.0, -2.0])), wp.zeros(1, dtype=wp.float64)
    with pytest.raises(NotDifferentiableError) as info:
        wp.launch(atomic_extreme, 2, inputs=[x, out], adj_inputs=[wp.zeros_like(x), wp.ones_like(out)],
                  adjoint=True)
    assert f"atomic_{kind}() on float values has no derivative rule" in str(info.value)
    assert f"{__file__}:{_source_line(atomic_extreme, 'op(out')}:" in str(info.value)


@wp.kernel
def uniform_between(lo: wp.array(dtype=wp.float32), hi: wp.array(dtype=wp.float32),
                    out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    state = wp.rand_init(1234, i)
    out[i] = wp.randf(state, lo[i], hi[i])


def test_randf_bounds_gradient():
    """randf(state, lo, hi) = lo + (hi - lo) u: d/dlo = 1 - u, d/dhi = u."""
    rng = np.random.default_rng(2)
    lo = rng.uniform(-2, -1, 64).astype(np.float32)
    hi = rng.uniform(1, 2, 64).astype(np.float32)
    out = wp.zeros(64, dtype=wp.float32)
    wp.launch(uniform_between, 64, inputs=[wp.array(lo), wp.array(hi), out])
    u = (out.numpy().astype(np.float64) - lo) / (hi.astype(np.float64) - lo)
    cot = rng.standard_normal(64).astype(np.float32)
    g_lo, g_hi = gradients(uniform_between, [lo, hi], wp.float32, cot)
    np.testing.assert_allclose(g_lo, (1 - u) * cot, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_hi, u * cot, rtol=1e-5, atol=1e-6)
