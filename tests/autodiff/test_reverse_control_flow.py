"""Reverse mode through control flow: straight-line code, branches, selects, static and
dynamic loops (runtime bounds, nesting, while, break, continue, steps, zero trips), early
returns and @wp.func calls. Every gradient is checked in float64 against central finite
differences of the forward kernel (tests/autodiff/helpers.py), and against analytic values
where they are easy to write down."""

import io
import typing

import numpy as np
import pytest

import weft as wp

from .helpers import F64, check_adjoint, ones_seed, run_adjoint

X = np.array([-1.7, -0.4, 0.3, 0.9, 1.6])


# Straight-line code -------------------------------------------------------------------------
@wp.kernel
def straight_line(x: wp.array(dtype=F64), w: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    v = x[i]
    u = w[i]
    t = wp.sin(v) * u + wp.exp(0.5 * v) / (1.0 + u * u) - wp.sqrt(v * v + 1.0)
    t = t + wp.tanh(u * v) + wp.atan2(v, 2.0 + u) + wp.pow(u * u + 1.0, 0.7) - wp.log(v * v + 2.0)
    t = t + wp.max(v, u) + wp.abs(v - 0.05) + wp.clamp(v, -1.0, 1.0) * u - v
    y[i] = t


def test_straight_line():
    w = np.array([0.5, -1.2, 0.8, 2.0, -0.3])
    check_adjoint(straight_line, 5, [X, w, np.zeros(5)])


@wp.kernel
def polynomial(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    v = x[i]
    y[i] = 3.0 * v * v * v - 2.0 * v + 1.0


@wp.kernel
def int_arithmetic(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    j = i + 1
    k = (j * 3) % 4 - i // 2
    y[i] = x[i] * F64(j) + x[i] * x[i] * F64(k)


def test_integer_arithmetic_beside_float_code():
    args = [X, np.zeros(5)]
    g = check_adjoint(int_arithmetic, 5, args, ones_seed(args, 1))
    i = np.arange(5)
    np.testing.assert_allclose(g[0], (i + 1) + 2 * X * (((i + 1) * 3) % 4 - i // 2), rtol=1e-12)


def test_straight_line_analytic():
    args = [X, np.zeros(5)]
    g = check_adjoint(polynomial, 5, args, ones_seed(args, 1))
    np.testing.assert_allclose(g[0], 9 * X**2 - 2, rtol=1e-12)


# Branches and selects -----------------------------------------------------------------------
@wp.kernel
def if_elif_else(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    v = x[i]
    r = v
    if v < -1.0:
        r = v * v
    elif v < 0.5:
        r = wp.sin(v) * 3.0
    else:
        r = wp.exp(v)
        if v > 1.0:  # nested branch that updates r again
            r = r * v
    y[i] = r


def test_if_elif_else():
    args = [X, np.zeros(5)]
    g = check_adjoint(if_elif_else, 5, args, ones_seed(args, 1))
    expected = np.where(X < -1, 2 * X, np.where(X < 0.5, 3 * np.cos(X),
                                                np.where(X > 1, np.exp(X) * (1 + X), np.exp(X))))
    np.testing.assert_allclose(g[0], expected, rtol=1e-12)


@wp.kernel
def if_without_else(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    v = x[i]
    r = v * 2.0
    if v > 0.0:
        r = r * v  # only one branch redefines r
    y[i] = r


def test_if_without_else():
    check_adjoint(if_without_else, 5, [X, np.zeros(5)])


@wp.kernel
def conditional_expressions(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    v = x[i]
    a = v * v if v > 0.0 else -3.0 * v
    b = wp.select(v > 0.5, wp.sin(v), v * 5.0)  # Warp's order: (cond, if_false, if_true)
    c = wp.where(v < -1.0, wp.cos(v), v * v * v)
    y[i] = a + 10.0 * b + 100.0 * c


def test_conditional_expression_select_where():
    args = [X, np.zeros(5)]
    g = check_adjoint(conditional_expressions, 5, args, ones_seed(args, 1))
    da = np.where(X > 0, 2 * X, -3.0)
    db = np.where(X > 0.5, 5.0, np.cos(X))
    dc = np.where(X < -1, -np.sin(X), 3 * X**2)
    np.testing.assert_allclose(g[0], da + 10 * db + 100 * dc, rtol=1e-12)


# Static loops -------------------------------------------------------------------------------
@wp.kernel
def static_loop(x: wp.array(dtype=F64), c: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    v = x[i]
    for k in range(3):
        v = v * c[k] + wp.sin(v) * F64(k)
    y[i] = v


def test_static_loop():
    check_adjoint(static_loop, 5, [X, np.array([0.9, -0.7, 1.3]), np.zeros(5)])


@wp.kernel
def long_constant_loop(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    v = x[i]
    for _k in range(40):
        v = 0.9 * v + 0.1 * wp.sin(v)
    y[i] = v


def test_constant_bound_above_unroll_limit():
    # Warp unrolls constant loops only up to 16 iterations; a longer one stays a dynamic loop
    # whose carried value `v` is not replayed in backward, so Warp's gradient is wrong.
    args = [X, np.zeros(5)]
    g = check_adjoint(long_constant_loop, 5, args, ones_seed(args, 1))
    v, d = X.copy(), np.ones(5)
    for _ in range(40):
        d = d * (0.9 + 0.1 * np.cos(v))
        v = 0.9 * v + 0.1 * np.sin(v)
    np.testing.assert_allclose(g[0], d, rtol=1e-12)


# Dynamic loops ------------------------------------------------------------------------------
@wp.kernel
def dynamic_loop(x: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int, a: F64):
    i = wp.tid()
    v = x[i]
    for _j in range(n):
        v = v * a + wp.sin(v)
    y[i] = v


def test_dynamic_loop_runtime_bound():
    # Warp does not replay a dynamic loop in backward: every iteration's adjoint uses the
    # final `v`, so d y / d x comes out wrong for any n > 1.
    a, n = 0.7, 5
    args = [X, np.zeros(5), n, a]
    g = check_adjoint(dynamic_loop, 5, args, ones_seed(args, 1))
    v, d = X.copy(), np.ones(5)
    for _ in range(n):
        d = d * (a + np.cos(v))
        v = v * a + np.sin(v)
    np.testing.assert_allclose(g[0], d, rtol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_dynamic_loop_short_and_zero_trip(n):
    args = [X, np.zeros(5), n, 0.5]
    g = check_adjoint(dynamic_loop, 5, args, ones_seed(args, 1))
    if n == 0:
        np.testing.assert_array_equal(g[0], np.ones(5))  # y = x


@wp.kernel
def loop_reads_arrays(x: wp.array(dtype=F64), c: wp.array(dtype=F64), w: wp.array(dtype=F64),
                      y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    s = x[i]
    for j in range(n):
        s = s * c[j] + wp.sin(w[j] * s)
    y[i] = s


def test_gradient_of_arrays_read_inside_dynamic_loop():
    # every thread reads all of c and w: their adjoints are sums over threads and iterations
    c = np.array([0.8, -0.6, 1.1, 0.5])
    w = np.array([0.3, 1.2, -0.7, 0.9])
    check_adjoint(loop_reads_arrays, 5, [X, c, w, np.zeros(5), 4])


@wp.kernel
def nested_dynamic(x: wp.array(dtype=F64), w: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int, m: int):
    i = wp.tid()
    v = x[i]
    acc = v * 0.0
    for j in range(n):
        u = v
        for k in range(m):
            u = u * 0.8 + wp.sin(u + w[k]) * 0.3
        v = v * 0.5 + u
        acc = acc + v * w[j]
    y[i] = acc + v


@pytest.mark.parametrize("n,m", [(3, 4), (2, 0), (0, 3)])
def test_nested_dynamic_loops(n, m):
    w = np.array([0.4, -0.9, 0.7, 1.3])
    check_adjoint(nested_dynamic, 5, [X, w, np.zeros(5), n, m])


@wp.kernel
def stepped_loops(x: wp.array(dtype=F64), w: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    v = x[i]
    for j in range(1, n, 3):  # non-unit step
        v = v * w[j] + wp.sin(v) * F64(j) * 0.1
    for j in range(n - 1, -1, -2):  # negative step, index used in the body
        v = wp.cos(v) * w[j] + v * 0.5
    for _j in range(n, 0, 1):  # zero trips
        v = v * 100.0
    y[i] = v


def test_non_unit_and_negative_steps():
    w = np.array([0.9, -0.5, 1.2, 0.7, -1.1, 0.6, 0.8])
    check_adjoint(stepped_loops, 5, [X, w, np.zeros(5), 7])


@wp.kernel
def while_data_exit(x: wp.array(dtype=F64), y: wp.array(dtype=F64), trips: wp.array(dtype=int)):
    i = wp.tid()
    v = x[i]
    k = 0
    while v < 10.0 and k < 100:
        v = v * 1.5 + wp.sin(v) * 0.25 + 0.5
        k += 1
    y[i] = v * v
    trips[i] = k


def test_while_with_data_dependent_exit():
    # Warp's backward runs the while body once with the final values instead of replaying
    # the iterations, so d y / d x is wrong whenever the loop ran more than once.
    x = np.array([0.1, 1.3, 2.2, 4.0, 5.5])
    args = [x, np.zeros(5), np.zeros(5, np.int32)]
    g = check_adjoint(while_data_exit, 5, args, ones_seed(args, 1))
    v, d, k = x.copy(), np.ones(5), np.zeros(5, int)
    for _ in range(100):
        live = v < 10.0
        d = np.where(live, d * (1.5 + 0.25 * np.cos(v)), d)
        v = np.where(live, v * 1.5 + np.sin(v) * 0.25 + 0.5, v)
        k += live
    assert (k > 1).all()  # several trips, all different from 10.0 by more than eps
    np.testing.assert_allclose(g[0], 2 * v * d, rtol=1e-12)


@wp.kernel
def while_condition_reads(x: wp.array(dtype=F64), w: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    v = x[i]
    k = 0
    while k < 4 and v * w[k] < 5.0:  # the condition reads an array and the carried value
        v = v + wp.exp(v * 0.3) * w[k]
        k += 1
    y[i] = v


def test_while_condition_reading_arrays():
    check_adjoint(while_condition_reads, 5, [X, np.array([0.5, 1.2, 0.8, 1.1]), np.zeros(5)])


def test_data_dependent_trips_on_many_threads():
    # each CPU thread keeps its own AD stack; trip counts differ from one GPU-style thread to the next
    n = 6000
    x = np.linspace(0.05, 9.0, n)
    saved = wp.config.parallel_threshold
    wp.config.parallel_threshold = 0
    try:
        g = run_adjoint(while_data_exit, n, [x, np.zeros(n), np.zeros(n, np.int32)],
                        [np.zeros(n), np.ones(n), None])
    finally:
        wp.config.parallel_threshold = saved
    v, d = x.copy(), np.ones(n)
    for _ in range(100):
        live = v < 10.0
        d = np.where(live, d * (1.5 + 0.25 * np.cos(v)), d)
        v = np.where(live, v * 1.5 + np.sin(v) * 0.25 + 0.5, v)
    np.testing.assert_allclose(g[0], 2 * v * d, rtol=1e-10)


def test_adjoint_ir_of_a_dynamic_loop_pushes_and_pops():
    out = io.StringIO()
    wp.print_ir(dynamic_loop, file=out, adjoint=True)
    text = out.getvalue()
    assert "kernel dynamic_loop_adjoint(" in text and "adj_x" in text and "adj_y" in text
    assert text.count("push ") == 1 and text.count("= pop") == 1


@wp.kernel
def loop_with_break(x: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    v = x[i]
    for _j in range(n):
        v = v * 1.2 + wp.sin(v)
        if v > 3.0:
            v = v * 0.5
            break
        v = v + 0.1
    y[i] = v


def test_break():
    # Warp: the iterations before the break are not replayed in backward (wrong gradient)
    check_adjoint(loop_with_break, 5, [np.array([-1.3, 0.1, 0.6, 1.4, 2.9]), np.zeros(5), 6])


@wp.kernel
def loop_with_continue(x: wp.array(dtype=F64), w: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    v = x[i]
    for j in range(n):
        if j % 3 == 1:
            continue
        if v > 1.5:  # data-dependent continue
            v = v * 0.5
            continue
        v = v * w[j] + wp.sin(v)
    y[i] = v


def test_continue():
    # Warp: the carried v is not replayed across the continue'd iterations (wrong gradient)
    w = np.array([1.1, 0.9, 1.3, -0.8, 1.2, 0.7])
    check_adjoint(loop_with_continue, 5, [X, w, np.zeros(5), 6])


@wp.kernel
def break_out_of_while_true(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    v = x[i]
    while True:
        v = v * v * 0.5 + 1.0
        if v > 5.0:
            break
    y[i] = v


def test_while_true_with_break():
    check_adjoint(break_out_of_while_true, 3, [np.array([0.2, 1.1, 2.3]), np.zeros(3)])


# Early returns ------------------------------------------------------------------------------
@wp.kernel
def early_return(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    if i == 1:
        return  # y[1] keeps its initial value: its gradient is the seed
    v = x[i]
    if v < 0.0:
        y[i] = v * v
        return
    y[i] = wp.sin(v) * 2.0


def test_early_return_in_kernel():
    g = check_adjoint(early_return, 5, [X, np.zeros(5)], {1: np.arange(1.0, 6.0)})
    expected = np.where(X < 0, 2 * X, 2 * np.cos(X)) * np.arange(1.0, 6.0)
    expected[1] = 0.0
    np.testing.assert_allclose(g[0], expected, rtol=1e-12)
    np.testing.assert_array_equal(g[1], [0, 2, 0, 0, 0])


@wp.func
def iterate_until(v: F64, a: F64, n: int) -> F64:
    for _j in range(n):
        v = v * a + wp.sin(v)
        if v > 3.0:
            return v * 2.0
    return v


@wp.kernel
def return_inside_loop_in_func(x: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    y[i] = iterate_until(x[i], 1.1, n)


def test_return_inside_loop_in_func():
    # Warp: a `return` inside a loop of a @func leaves the carried value un-replayed in
    # backward (wrong gradient)
    check_adjoint(return_inside_loop_in_func, 5, [np.array([-1.0, 0.2, 0.7, 1.5, 2.8]), np.zeros(5), 6])


@wp.func
def nested_loop_returns(v: F64, n: int) -> wp.vec2d:
    for a in range(n):
        for b in range(n):
            v = v * 1.1 + wp.sin(v) * 0.2
            if v > 2.5:
                return wp.vec2d(v, F64(a + b))  # from the inner loop
        if v < -1.0:
            return wp.vec2d(-v, 0.0)  # from the outer loop
    return wp.vec2d(v * v, 1.0)


@wp.kernel
def nested_loop_returns_kernel(x: wp.array(dtype=F64), y: wp.array(dtype=wp.vec2d), n: int):
    i = wp.tid()
    y[i] = nested_loop_returns(x[i], n)


def test_returns_from_nested_loops_in_func():
    check_adjoint(nested_loop_returns_kernel, 5, [X, (np.zeros((5, 2)), wp.vec2d), 3])


@wp.kernel
def swap_carried(x: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    a = x[i]
    b = a * 2.0
    for _j in range(n):
        a, b = b * 0.5 + wp.sin(a), a * 0.7  # tuple assignment of two carried values
    y[i] = a * b


def test_tuple_assignment_of_carried_values():
    check_adjoint(swap_carried, 5, [X, np.zeros(5), 3])


# Functions ----------------------------------------------------------------------------------
@wp.func
def inner_f(v: F64, w: F64) -> F64:
    return wp.sin(v) * w + v * v


@wp.func
def middle_f(v: F64, w: F64) -> F64:
    t = inner_f(v, w)
    if t > 0.0:
        t = inner_f(t, v)
    return t * w


@wp.func
def scale_any(v: typing.Any, s: typing.Any):
    return v * s + v


@wp.func
def pair(v: F64):
    return v * v, wp.cos(v)


@wp.kernel
def nested_funcs(x: wp.array(dtype=F64), w: wp.array(dtype=F64), y: wp.array(dtype=F64),
                 z: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    t = middle_f(x[i], w[i])
    p, q = pair(t)
    y[i] = scale_any(p + q, w[i])
    z[i] = scale_any(wp.vec3d(x[i], t, w[i]), w[i])


def test_nested_and_generic_funcs():
    w = np.array([0.5, -1.2, 0.8, 2.0, -0.3])
    check_adjoint(nested_funcs, 5, [X, w, np.zeros(5), (np.zeros((5, 3)), wp.vec3d)])


@wp.func
def looped_f(v: F64, w: wp.array(dtype=F64), n: int) -> F64:
    for j in range(n):
        v = v * w[j] + 0.1 * wp.sin(v)
    return v


@wp.kernel
def func_in_loop(x: wp.array(dtype=F64), w: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    v = x[i]
    for _k in range(n):
        v = looped_f(v, w, n)
    y[i] = v


def test_func_with_loop_called_in_loop():
    check_adjoint(func_in_loop, 5, [X, np.array([0.9, -0.8, 1.1]), np.zeros(5), 3])


# More loop shapes -----------------------------------------------------------------------------
@wp.kernel
def loop_stores_and_scatters(x: wp.array(dtype=F64), y: wp.array(dtype=F64), acc: wp.array(dtype=F64), n: int):
    i = wp.tid()
    v = x[i]
    for j in range(n):
        v = wp.sin(v) + v * 0.5
        y[i * n + j] = v * F64(j + 1)  # a store per iteration, at an index that depends on j
        wp.atomic_add(acc, j, v * v)  # and a scatter shared between threads


def test_stores_and_atomics_inside_dynamic_loop():
    check_adjoint(loop_stores_and_scatters, 5, [X, np.zeros(15), np.zeros(3), 3])


@wp.kernel
def triangular_loops(x: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    v = x[i]
    for j in range(n):
        for _k in range(j):  # the inner bound depends on the outer index
            v = v * 0.9 + wp.cos(v) * 0.2
            if v > 1.2:
                break  # leaves the inner loop only
        v = v + F64(j) * 0.1
    y[i] = v


def test_triangular_nested_loops_with_inner_break():
    check_adjoint(triangular_loops, 5, [X, np.zeros(5), 5])


@wp.kernel
def return_from_kernel_loop(x: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    v = x[i]
    for _j in range(n):
        v = v * 1.3 + wp.sin(v)
        if v > 2.0:
            y[i] = v * v
            return
    y[i] = -v


def test_return_inside_a_kernel_loop():
    check_adjoint(return_from_kernel_loop, 5, [X, np.zeros(5), 4])


@wp.func
def store_scaled(a: wp.array(dtype=F64), i: int, v: F64):
    a[i] = v * 3.0


@wp.kernel
def loops_in_branches(x: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    v = x[i]
    if v > 0.0:
        for _j in range(n):
            v = v * v * 0.5 + 0.3
    else:
        k = 0
        while k < n:
            v = wp.sin(v) * 2.0
            k += 2
    store_scaled(y, i, v)


def test_loops_inside_branches_and_a_func_that_stores():
    check_adjoint(loops_in_branches, 5, [X, np.zeros(5), 3])


@wp.kernel
def damped_loop(x: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    v = x[i]
    for _j in range(n):
        v = v * 0.9999 + wp.sin(v) * 0.0001
    y[i] = v


def test_very_long_dynamic_loop():
    # 20000 trips: the AD stack grows well past its first allocation
    n = 20000
    x = np.array([0.3, -1.1, 2.0])
    g = run_adjoint(damped_loop, 3, [x, np.zeros(3), n], [np.zeros(3), np.ones(3), None])
    v, d = x.copy(), np.ones(3)
    for _ in range(n):
        d = d * (0.9999 + 0.0001 * np.cos(v))
        v = v * 0.9999 + np.sin(v) * 0.0001
    np.testing.assert_allclose(g[0], d, rtol=1e-9)


# A loop whose initial value is also read inside it -------------------------------------------
@wp.func
def start_from_and_add(v: F64, n: int) -> F64:
    acc = v  # the loop's initial value ...
    for _ in range(n):
        acc += v * v  # ... is also a free value of its body
    return acc


@wp.kernel
def init_is_free(x: wp.array(dtype=F64), n: int, y: wp.array(dtype=F64)):
    i = wp.tid()
    y[i] = start_from_and_add(x[i], n) + start_from_and_add(x[i], 3)


def test_a_loop_initial_value_read_in_its_body_gets_both_adjoints():
    (gx, _, _) = check_adjoint(init_is_free, 5, [X, 2, np.zeros(5)], ones_seed([X, 2, np.zeros(5)], 2))
    np.testing.assert_allclose(gx, (1 + 2 * 2 * X) + (1 + 3 * 2 * X), rtol=1e-12)
