"""Control flow, checked against Python itself: each @func below is also plain Python
(integer code, non-negative operands, so `//` and `%` mean the same in both), and its
results in a kernel must equal what Python computes for the same inputs."""

import numpy as np
import pytest

import weft as wp


@wp.func
def branch_then_break(n: int) -> int:
    s = 0
    for i in range(n):
        if i % 2 == 0:
            t = i * 2
        else:
            t = i * 3
        s += t
        if s > 40:
            break
    return s


@wp.func
def while_with_continues(n: int) -> int:
    k = 0
    i = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if i % 5 == 0:
            k -= 1
            continue
        k += i
    return k * 100 + i


@wp.func
def break_both_loops(n: int) -> int:
    best = -1
    for i in range(n):
        for j in range(i):
            if (i * j) % 7 == 3:
                best = i * 10 + j
                break
        if best > 50:
            break
    return best


@wp.func
def fibonacci_with_exit(n: int) -> int:
    if n < 3:
        return n
    a = 0
    b = 1
    for _ in range(n):
        a, b = b, a + b
        if b > 1000:
            return -b
    return a


@wp.func
def while_and_condition(n: int) -> int:
    x = n
    steps = 0
    while x != 1 and steps < 200:
        if x % 2 == 0:
            x = x // 2
        elif x % 3 == 0:
            x = x // 3
        else:
            x = 3 * x + 1
        steps += 1
        if steps == 50:
            return -steps
    return steps


@wp.func
def while_or_condition(n: int) -> int:
    i = 0
    s = 0
    while i < 3 or (s < n and i < 100):
        s += i
        i += 1
    return s * 1000 + i


@wp.func
def countdown_with_inner_while(n: int) -> int:
    total = 0
    for i in range(n, 0, -1):
        j = i
        while j > 0:
            if j % 4 == 0:
                break
            total += j
            j -= 3
        if total > 100:
            continue
        total += 1
    return total


@wp.func
def return_from_nested_loop(n: int) -> int:
    r = 0
    for i in range(3):
        for j in range(3):
            if j == i:
                continue
            if i + j == n:
                return i * 3 + j
            r += 1
    return r


@wp.func
def while_true_break(n: int) -> int:
    s = 0
    i = 0
    while True:
        i += 1
        if i > n:
            break
        if i % 2:
            continue
        s += i
    return s


@wp.func
def nested_conditionals(n: int) -> int:
    r = n
    if n > 10:
        if n % 2 == 0:
            r = n // 2
        elif n % 3 == 0:
            r = n // 3
        else:
            r = -1 if n > 30 else -2
    elif n > 5 and not n == 7:
        r = 100 + n
    return r


@wp.func
def loop_variable_shadowing(n: int) -> int:
    s = 0
    for i in range(n):
        x = i
        for j in range(x, n):
            x = x + j
        s += x
    return s


FUNCS = [branch_then_break, while_with_continues, break_both_loops, fibonacci_with_exit,
         while_and_condition, while_or_condition, countdown_with_inner_while,
         return_from_nested_loop, while_true_break, nested_conditionals, loop_variable_shadowing]


def make_kernel(f):
    @wp.kernel
    def apply(xs: wp.array(dtype=int), out: wp.array(dtype=int)):
        i = wp.tid()
        out[i] = f(xs[i])
    return apply


@pytest.mark.parametrize("f", FUNCS, ids=lambda f: f.name)
def test_same_results_as_python(run, f):
    xs = np.arange(0, 40, dtype=np.int32)
    _, out = run(make_kernel(f), len(xs), xs, np.zeros(len(xs), np.int32))
    assert out.tolist() == [f.__wrapped__(int(x)) for x in xs]


@wp.kernel
def sum_first_n(n: int, xs: wp.array(dtype=float), out: wp.array(dtype=float)):
    total = 0.0  # a literal, then updated in a loop whose trip count is a launch argument
    for i in range(n):
        total += xs[i] * xs[i]
    out[0] = total


def test_literal_updated_in_dynamic_loop_is_a_loop_carried_value():
    """Warp refuses this kernel ("Error mutating a constant total inside a dynamic loop");
    weft accepts it deliberately: `total` is a loop-carried value, so the kernel computes
    what Python computes, and its gradient is the analytic one."""
    xs = wp.array([1.0, 2.0, 3.0, 4.0], dtype=float, requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(sum_first_n, dim=1, inputs=[3, xs], outputs=[out])
    assert out.numpy()[0] == 1.0 + 4.0 + 9.0
    tape.backward(loss=out)
    np.testing.assert_array_equal(xs.grad.numpy(), [2.0, 4.0, 6.0, 0.0])
