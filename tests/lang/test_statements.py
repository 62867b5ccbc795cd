"""Statements inside kernels and funcs: assignment, control flow, print, assert, constants.

Each test launches a small kernel and compares what it wrote with values computed in
Python. Kernels are module-level (compiled once) except where a test changes a setting
that is read at compile time.
"""

import math

import numpy as np
import pytest

import weft as wp

# Assignment -------------------------------------------------------------------------------


@wp.kernel
def float_aug_assign(x: wp.array(dtype=float), out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    v = x[i]
    v += 2.0
    out[i, 0] = v
    v -= 0.5
    out[i, 1] = v
    v *= 3.0
    out[i, 2] = v
    v /= 4.0
    out[i, 3] = v
    v **= 2.0
    out[i, 4] = v
    v %= 1.5
    out[i, 5] = v


def test_float_augmented_assignment(run):
    x = np.array([0.0, 1.0, -2.5, 7.25], dtype=np.float32)
    (_, out) = run(float_aug_assign, 4, x, np.zeros((4, 6), np.float32))
    v = x + np.float32(2.0)
    expect = [v]
    v = v - np.float32(0.5)
    expect.append(v)
    v = v * np.float32(3.0)
    expect.append(v)
    v = v / np.float32(4.0)
    expect.append(v)
    v = v * v
    expect.append(v)
    v = np.fmod(v, np.float32(1.5))
    expect.append(v)
    np.testing.assert_allclose(out, np.stack(expect, axis=1), rtol=1e-6)


@wp.kernel
def int_aug_assign(x: wp.array(dtype=int), out: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    k = x[i]
    k += 3
    out[i, 0] = k
    k *= 5
    out[i, 1] = k
    k //= 4
    out[i, 2] = k
    k %= 7
    out[i, 3] = k
    k |= 8
    out[i, 4] = k
    k &= 12
    out[i, 5] = k
    k ^= 5
    out[i, 6] = k
    k <<= 3
    out[i, 7] = k
    k >>= 1
    out[i, 8] = k
    k -= 100
    out[i, 9] = k


def _c_rem(a, b):
    return int(np.fmod(a, b))


def test_int_augmented_assignment(run):
    x = np.array([0, 1, -9, 40], dtype=np.int32)
    (_, out) = run(int_aug_assign, 4, x, np.zeros((4, 10), np.int32))
    for row, k in zip(out, x.tolist()):
        expect = []
        k += 3
        expect.append(k)
        k *= 5
        expect.append(k)
        k //= 4  # floor division, as Python
        expect.append(k)
        k = _c_rem(k, 7)  # C remainder: the sign of the dividend
        expect.append(k)
        k |= 8
        expect.append(k)
        k &= 12
        expect.append(k)
        k ^= 5
        expect.append(k)
        k <<= 3
        expect.append(k)
        k >>= 1
        expect.append(k)
        k -= 100
        expect.append(k)
        assert row.tolist() == expect


@wp.kernel
def count_into_one_slot(total: wp.array(dtype=int), ftotal: wp.array(dtype=float),
                        sub: wp.array(dtype=int)):
    i = wp.tid()
    total[0] += 1
    total[1] += i % 7
    ftotal[0] += 0.5
    sub[0] -= 2


def test_array_element_add_is_atomic(run):
    n = 100_000  # large enough to run on several threads
    total, ftotal, sub = run(count_into_one_slot, n, np.zeros(2, np.int32),
                             np.zeros(1, np.float32), np.zeros(1, np.int32))
    assert total.tolist() == [n, sum(i % 7 for i in range(n))]
    assert ftotal[0] == np.float32(0.5 * n)  # every partial sum is exact in float32
    assert sub[0] == -2 * n


@wp.kernel
def histogram(values: wp.array(dtype=int), bins: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    bins[values[i] % 3, values[i] % 2] += 1


def test_array_element_add_2d(run):
    values = np.arange(1000, dtype=np.int32)
    (_, bins) = run(histogram, 1000, values, np.zeros((3, 2), np.int32))
    expect = np.zeros((3, 2), np.int64)
    np.add.at(expect, (values % 3, values % 2), 1)
    np.testing.assert_array_equal(bins, expect)


@wp.kernel
def vec_slot_add(v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v[0] += wp.vec3(1.0, 2.0, float(i % 2))
    v[1] -= wp.vec3(1.0, 0.0, 0.0)


def test_vec3_array_element_add(run):
    n = 64
    (v,) = run(vec_slot_add, n, (np.zeros((2, 3), np.float32), wp.vec3))
    np.testing.assert_array_equal(v, [[n, 2 * n, n // 2], [-n, 0, 0]])


@wp.kernel
def scale_elements(a: wp.array(dtype=float), b: wp.array(dtype=int)):
    i = wp.tid()
    a[i] *= 3.0
    a[i] /= 2.0
    b[i] *= 4
    b[i] -= 1


def test_mul_div_assign_on_array_elements(run):
    a = np.array([1.0, -2.0, 0.5], np.float32)
    b = np.array([1, -2, 7], np.int32)
    a_out, b_out = run(scale_elements, 3, a, b)
    np.testing.assert_allclose(a_out, a * 3.0 / 2.0, rtol=1e-7)
    np.testing.assert_array_equal(b_out, b * 4 - 1)


@wp.kernel
def component_aug_assign(out: wp.array(dtype=wp.vec3), m_out: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    v = wp.vec3(1.0, 2.0, 3.0)
    v.x += 10.0
    v[1] *= float(i + 2)
    v[2] -= 0.5
    out[i] = v
    m = wp.mat22(1.0, 2.0, 3.0, 4.0)
    m[0, 1] += 5.0
    m[1, 0] = -1.0
    m[1] *= 2.0
    m_out[i] = m


def test_component_augmented_assignment(run):
    out, m_out = run(component_aug_assign, 2, (np.zeros((2, 3), np.float32), wp.vec3),
                     (np.zeros((2, 2, 2), np.float32), wp.mat22))
    np.testing.assert_array_equal(out, [[11.0, 4.0, 2.5], [11.0, 6.0, 2.5]])
    np.testing.assert_array_equal(m_out, [[[1.0, 7.0], [-2.0, 8.0]]] * 2)


@wp.kernel
def array_element_components(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    a[i].x = 5.0
    a[i][1] = float(i)
    a[i].z += 0.5
    m[i][0, 1] = 3.0
    m[i][1] = wp.vec2(7.0, 8.0)


def test_assignment_to_components_of_array_elements(run):
    a, m = run(array_element_components, 2, (np.ones((2, 3), np.float32), wp.vec3),
               (np.zeros((2, 2, 2), np.float32), wp.mat22))
    np.testing.assert_array_equal(a, [[5.0, 0.0, 1.5], [5.0, 1.0, 1.5]])
    np.testing.assert_array_equal(m, [[[0.0, 3.0], [7.0, 8.0]]] * 2)


@wp.kernel
def rebind_scalar_parameter(n: int, out: wp.array(dtype=int)):
    n = n + 1
    n *= 3
    out[0] = n


def test_scalar_parameters_can_be_rebound(run):
    (out,) = run(rebind_scalar_parameter, 1, 4, np.zeros(1, np.int32))
    assert out[0] == 15


@wp.kernel
def tuple_unpacking(out: wp.array(dtype=float)):
    a = 1.0
    b = 2.0
    a, b = b, a  # both sides are evaluated before any store
    v = wp.vec3(4.0, 5.0, 6.0)
    x, y, z = v
    p, q = wp.vec2(7.0, 8.0)
    out[0] = a
    out[1] = b
    out[2] = x
    out[3] = y
    out[4] = z
    out[5] = p * q


def test_tuple_unpacking(run):
    (out,) = run(tuple_unpacking, 1, np.zeros(6, np.float32))
    np.testing.assert_array_equal(out, [2.0, 1.0, 4.0, 5.0, 6.0, 56.0])


@wp.kernel
def annotated_assignment(out: wp.array(dtype=wp.float64)):
    x: wp.float64 = 1.5  # a literal takes the declared type
    y: float = 2.0
    out[0] = x * wp.float64(y)


def test_annotated_assignment(run):
    (out,) = run(annotated_assignment, 1, np.zeros(1, np.float64))
    assert out[0] == 3.0


# If / elif / else ------------------------------------------------------------------------


@wp.kernel
def classify(x: wp.array(dtype=float), out: wp.array(dtype=float), kind: wp.array(dtype=int)):
    i = wp.tid()
    v = x[i]
    if v < -1.0:
        r = -v
        k = 0
    elif v < 0.0:
        r = v * v
        k = 1
    elif v == 0.0:
        r = 100.0
        k = 2
    else:
        r = wp.sqrt(v)
        k = 3
    out[i] = r
    kind[i] = k


def test_if_elif_else_merges_variables(run):
    x = np.array([-3.0, -0.5, 0.0, 4.0], np.float32)
    _, out, kind = run(classify, 4, x, np.zeros(4, np.float32), np.zeros(4, np.int32))
    np.testing.assert_allclose(out, [3.0, 0.25, 100.0, 2.0])
    assert kind.tolist() == [0, 1, 2, 3]


@wp.kernel
def if_without_else(x: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    y = x[i]
    if y % 2 == 0:
        y = y // 2
    if y > 10:
        y = 10
    out[i] = y


def test_if_without_else_keeps_the_old_value(run):
    x = np.array([4, 5, 40, 41], np.int32)
    _, out = run(if_without_else, 4, x, np.zeros(4, np.int32))
    assert out.tolist() == [2, 5, 10, 10]


@wp.kernel
def if_on_int(x: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    r = 0
    if x[i]:  # an int condition is x != 0
        r = 1
    if not x[i]:
        r = r + 10
    out[i] = r


def test_if_on_integer_truth(run):
    _, out = run(if_on_int, 3, np.array([0, 3, -1], np.int32), np.zeros(3, np.int32))
    assert out.tolist() == [10, 1, 1]


# For loops ---------------------------------------------------------------------------------


@wp.kernel
def range_loops(out: wp.array(dtype=int)):
    s = 0
    for i in range(5):
        s += i
    out[0] = s
    s = 0
    for i in range(2, 7):
        s += i * i
    out[1] = s
    s = 0
    for i in range(1, 20, 4):
        s = s * 2 + i
    out[2] = s
    s = 0
    for i in range(10, 0, -3):
        s = s * 3 + i
    out[3] = s
    s = 0
    for _i in range(5, 5):
        s += 1
    out[4] = s
    s = 0
    for i in range(0, -4, -1):
        s = s * 10 + i
    out[5] = s
    s = 7
    for _i in range(3, 1):  # empty
        s = 0
    out[6] = s


def test_range_with_constant_bounds(run):
    (out,) = run(range_loops, 1, np.zeros(7, np.int32))
    expect = [sum(range(5)), sum(i * i for i in range(2, 7))]
    s = 0
    for i in range(1, 20, 4):
        s = s * 2 + i
    expect.append(s)
    s = 0
    for i in range(10, 0, -3):
        s = s * 3 + i
    expect.append(s)
    expect.append(0)
    s = 0
    for i in range(0, -4, -1):
        s = s * 10 + i
    expect += [s, 7]
    assert out.tolist() == expect


@wp.kernel
def dynamic_bounds(start: int, stop: int, out: wp.array(dtype=int, ndim=2)):
    n = 0
    for _i in range(stop):
        n += 1
    out[0, 0] = n
    total = 0
    count = 0
    for i in range(start, stop):
        total += i
        count += 1
    out[1, 0] = total
    out[1, 1] = count
    total = 0
    count = 0
    for i in range(start, stop, 3):
        total += i
        count += 1
    out[2, 0] = total
    out[2, 1] = count
    total = 0
    count = 0
    for i in range(start, stop, -2):
        total += i
        count += 1
    out[3, 0] = total
    out[3, 1] = count


@pytest.mark.parametrize("start,stop", [(0, 10), (3, 4), (5, 5), (7, 2), (10, 0), (-5, 5),
                                        (5, -5), (-3, -8)])
def test_range_with_dynamic_bounds(run, start, stop):
    (out,) = run(dynamic_bounds, 1, start, stop, np.zeros((4, 2), np.int32))
    assert out[0, 0] == len(range(stop))
    for row, r in zip(out[1:], (range(start, stop), range(start, stop, 3),
                                range(start, stop, -2))):
        assert row.tolist() == [sum(r), len(r)]


@wp.kernel
def dynamic_step(start: int, stop: int, step: int, out: wp.array(dtype=int)):
    total = 0
    count = 0
    last = -999
    for i in range(start, stop, step):
        total += i
        count += 1
        last = i
    out[0] = total
    out[1] = count
    out[2] = last


@pytest.mark.parametrize("start,stop,step", [
    (0, 10, 3), (10, 0, -1), (10, 0, -3), (0, 10, -1), (-5, 5, 2), (5, -5, -4), (0, 1, 100)])
def test_range_with_dynamic_step(run, start, stop, step):
    (out,) = run(dynamic_step, 1, start, stop, step, np.zeros(3, np.int32))
    r = range(start, stop, step)
    assert out.tolist() == [sum(r), len(r), r[-1] if len(r) else -999]


@wp.kernel
def int64_loop(n: wp.int64, out: wp.array(dtype=wp.int64)):
    s = wp.int64(0)
    for i in range(n):  # the loop variable takes the bounds' type
        s += i * wp.int64(3000000000)
    out[0] = s


def test_range_over_int64_bounds(run):
    (out,) = run(int64_loop, 1, 4, np.zeros(1, np.int64))
    assert out[0] == 6 * 3_000_000_000


@wp.kernel
def nested_loops(n: int, m: int, out: wp.array(dtype=int, ndim=2), total: wp.array(dtype=int)):
    s = 0
    for i in range(n):
        for j in range(i, m):
            out[i, j] = i * 10 + j
            s += j - i
        for _k in range(3):
            s += 1
    total[0] = s


def test_nested_loops(run):
    n, m = 4, 6
    out, total = run(nested_loops, 1, n, m, np.full((n, m), -1, np.int32), np.zeros(1, np.int32))
    expect = np.full((n, m), -1)
    s = 0
    for i in range(n):
        for j in range(i, m):
            expect[i, j] = i * 10 + j
            s += j - i
        s += 3
    np.testing.assert_array_equal(out, expect)
    assert total[0] == s


@wp.kernel
def loop_carries_vector(n: int, out: wp.array(dtype=wp.vec3)):
    v = wp.vec3(1.0, 0.0, 0.0)
    for _i in range(n):
        v = wp.vec3(v[1], v[2], v[0] + 1.0)
    out[0] = v


def test_loop_carries_a_vector(run):
    (out,) = run(loop_carries_vector, 1, 5, (np.zeros((1, 3), np.float32), wp.vec3))
    v = [1.0, 0.0, 0.0]
    for _ in range(5):
        v = [v[1], v[2], v[0] + 1.0]
    np.testing.assert_array_equal(out[0], v)


# While, break, continue ------------------------------------------------------------------


@wp.kernel
def collatz_steps(x: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    n = x[i]
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    out[i] = steps


def _collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_while_loop(run):
    x = np.array([1, 2, 3, 7, 27, 97], np.int32)
    _, out = run(collatz_steps, len(x), x, np.zeros(len(x), np.int32))
    assert out.tolist() == [_collatz(n) for n in x.tolist()]


@wp.kernel
def break_and_continue(limit: int, out: wp.array(dtype=int)):
    s = 0
    last = -1
    for i in range(100):
        if i % 3 == 0:
            continue
        if i > limit:
            break
        s += i
        last = i
    out[0] = s
    out[1] = last
    j = 0
    t = 0
    while True:
        j += 1
        if j % 2 == 1:
            continue
        t += j
        if j >= limit:
            break
    out[2] = t
    out[3] = j


@pytest.mark.parametrize("limit", [0, 1, 10, 50, 200])
def test_break_and_continue(run, limit):
    (out,) = run(break_and_continue, 1, limit, np.zeros(4, np.int32))
    s, last = 0, -1
    for i in range(100):
        if i % 3 == 0:
            continue
        if i > limit:
            break
        s += i
        last = i
    j = t = 0
    while True:
        j += 1
        if j % 2 == 1:
            continue
        t += j
        if j >= limit:
            break
    assert out.tolist() == [s, last, t, j]


@wp.kernel
def break_inner_only(out: wp.array(dtype=int)):
    count = 0
    for i in range(5):
        for j in range(5):
            if j > i:
                break
            count += 1
    out[0] = count


def test_break_leaves_only_the_inner_loop(run):
    (out,) = run(break_inner_only, 1, np.zeros(1, np.int32))
    assert out[0] == 15


# Return --------------------------------------------------------------------------------------


@wp.func
def first_index_above(a: wp.array(dtype=float), threshold: float) -> int:
    for i in range(a.shape[0]):
        if a[i] > threshold:
            return i
    return -1


@wp.func
def piecewise(x: float) -> float:
    if x < 0.0:
        return -x
    if x < 1.0:
        return x * x
    y = x * 2.0
    return y


@wp.func
def find_in_while(target: int) -> int:
    k = 0
    while k < 100:
        if k * k >= target:
            return k
        k += 1
    return 100


@wp.kernel
def early_returns(a: wp.array(dtype=float), thresholds: wp.array(dtype=float),
                  xs: wp.array(dtype=float), out_idx: wp.array(dtype=int),
                  out_pw: wp.array(dtype=float), out_w: wp.array(dtype=int)):
    i = wp.tid()
    out_idx[i] = first_index_above(a, thresholds[i])
    out_pw[i] = piecewise(xs[i])
    out_w[i] = find_in_while(i * 7)


def test_return_inside_loops_and_branches(run):
    a = np.array([0.5, 2.0, 1.0, 5.0], np.float32)
    thresholds = np.array([0.0, 1.5, 4.0, 10.0, -1.0], np.float32)
    xs = np.array([-2.0, 0.5, 3.0, 0.0, 1.0], np.float32)
    *_, idx, pw, w = run(early_returns, 5, a, thresholds, xs, np.zeros(5, np.int32),
                         np.zeros(5, np.float32), np.zeros(5, np.int32))
    expect_idx = [next((k for k, v in enumerate(a) if v > t), -1) for t in thresholds]
    assert idx.tolist() == expect_idx
    np.testing.assert_allclose(pw, [2.0, 0.25, 6.0, 0.0, 2.0])
    assert w.tolist() == [next(k for k in range(100) if k * k >= 7 * i) for i in range(5)]


@wp.func
def returns_early_then_assigns(x: float) -> float:
    if x < 0.0:
        if x < -10.0:
            return -1.0
        scale = 2.0  # assigned after a return in this branch, and in the other branch
    else:
        scale = 3.0
    return scale * x


@wp.kernel
def branch_with_early_return(xs: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = returns_early_then_assigns(xs[i])


def test_name_assigned_after_an_early_return_merges_with_the_other_branch(run):
    xs = np.array([-1.0, 2.0, -20.0], np.float32)
    (_, out) = run(branch_with_early_return, 3, xs, np.zeros(3, np.float32))
    np.testing.assert_array_equal(out, [-2.0, 6.0, -1.0])


@wp.kernel
def read_after_continue(xs: wp.array(dtype=float), out: wp.array(dtype=float)):
    for k in range(xs.shape[0]):
        if xs[k] < 0.0:
            continue
        last = xs[k]
    out[0] = last


@pytest.mark.parametrize("data,expected", [([1.0, 2.0, -3.0], 2.0), ([1.0, -2.0, 3.0], 3.0),
                                           ([-1.0, -2.0], 0.0)])
def test_name_assigned_after_a_continue_keeps_its_last_value_after_the_loop(data, expected):
    # Python's value: the last one assigned (none assigned: zero, as for a name assigned
    # in one branch of an if, where Python would raise)
    out = wp.zeros(1, dtype=float)
    wp.launch(read_after_continue, 1, [wp.array(np.array(data, np.float32)), out])
    assert out.numpy()[0] == expected


@wp.func
def assigned_after_break_in_one_branch(x: float, n: int) -> float:
    r = 0.0
    for i in range(n):
        if x > float(i):
            if x > 100.0:
                break
            w = x * float(i)  # the other branch assigns it too; read below, after the if
        else:
            w = -1.0
        r += w
    return r


@wp.kernel
def break_then_assign(xs: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = assigned_after_break_in_one_branch(xs[i], 3)


def test_name_assigned_after_a_break_merges_with_the_other_branch(run):
    # mujoco_warp / newton loops: `if c: break` then an assignment, in one branch of an if
    xs = np.array([-3.0, 2.5, 200.0], np.float32)
    (_, out) = run(break_then_assign, 3, xs, np.zeros(3, np.float32))
    np.testing.assert_array_equal(out, [-3.0, 2.5 * (0 + 1 + 2), 0.0])  # (200 breaks at once)


@wp.kernel
def kernel_early_return(n: int, out: wp.array(dtype=int)):
    i = wp.tid()
    if i >= n:
        return
    out[i] = 1
    for j in range(10):
        if j == i:
            return
        out[i] += 10


def test_early_return_in_kernel(run):
    (out,) = run(kernel_early_return, 8, 5, np.zeros(8, np.int32))
    assert out.tolist() == [1, 11, 21, 31, 41, 0, 0, 0]


@wp.kernel
def kernel_return_in_while(out: wp.array(dtype=int)):
    i = wp.tid()
    k = 0
    while True:
        k += 1
        if k > i:
            return
        out[i] = k


def test_return_inside_while_in_kernel(run):
    (out,) = run(kernel_return_in_while, 4, np.full(4, -1, np.int32))
    assert out.tolist() == [-1, 1, 2, 3]


@wp.kernel
def does_nothing(out: wp.array(dtype=int)):
    i = wp.tid()
    if i > 100:
        pass
    else:
        pass
    for _j in range(3):
        pass
    out[i] = i


def test_pass(run):
    (out,) = run(does_nothing, 3, np.zeros(3, np.int32))
    assert out.tolist() == [0, 1, 2]


# Print ---------------------------------------------------------------------------------------


@wp.kernel
def printer(x: float, k: int, v: wp.vec3):
    print("values:", x, k)
    print(v, 1.0, 2.5)
    wp.print(k * 2)


def test_print_goes_to_stdout(capfd):
    wp.launch(printer, 1, inputs=[1.5, 42, wp.vec3(1.0, 2.0, 3.0)])
    out = capfd.readouterr().out.splitlines()
    assert out[0] == "values: 1.5 42"
    assert out[1] == "[1, 2, 3] 1 2.5"  # floats print as C's %g, as in Warp
    assert out[2] == "84"


# Assert --------------------------------------------------------------------------------------


@pytest.fixture
def debug_mode():
    saved = wp.config.mode
    wp.config.mode = "debug"
    yield
    wp.config.mode = saved


def test_assert_in_debug_mode(debug_mode):
    @wp.kernel
    def checked(x: wp.array(dtype=float)):
        i = wp.tid()
        assert x[i] >= 0.0

    wp.launch(checked, 3, inputs=[wp.array(np.array([0.0, 1.0, 2.0], np.float32))])
    with pytest.raises(AssertionError) as excinfo:
        wp.launch(checked, 3, inputs=[wp.array(np.array([0.0, -1.0, 2.0], np.float32))])
    message = str(excinfo.value)
    assert "x[i] >= 0.0" in message
    assert "test_statements.py" in message


def test_assert_is_ignored_in_release_mode():
    assert wp.config.mode == "release"

    @wp.kernel
    def unchecked(x: wp.array(dtype=float)):
        i = wp.tid()
        assert x[i] >= 0.0
        x[i] = 1.0

    x = wp.array(np.array([-1.0], np.float32))
    wp.launch(unchecked, 1, inputs=[x])
    assert x.numpy()[0] == 1.0


# Compile-time constants ----------------------------------------------------------------------

SCALE = 3.0
COUNT = wp.constant(4)
OFFSET = wp.constant(wp.float64(0.25))
USE_SQUARE = True
GRAVITY = wp.constant(wp.vec3(0.0, -9.75, 0.0))
TABLE = [1.5, 2.5, 3.5]


@wp.kernel
def use_constants(out: wp.array(dtype=float), out64: wp.array(dtype=wp.float64)):
    s = 0.0
    for i in range(COUNT):
        s += SCALE * float(i)
    if wp.static(USE_SQUARE):
        s = s * s
    out[0] = s
    out[1] = float(wp.static(COUNT * 10 + 1))
    out64[0] = OFFSET + wp.float64(1.0)


def test_global_constants_and_static(run):
    out, out64 = run(use_constants, 1, np.zeros(2, np.float32), np.zeros(1, np.float64))
    assert out.tolist() == [(SCALE * 6) ** 2, 41.0]
    assert out64[0] == 1.25


@wp.kernel
def use_composite_constants(out: wp.array(dtype=float), v: wp.array(dtype=wp.vec3)):
    g = GRAVITY
    out[0] = wp.length(g)
    out[1] = GRAVITY[1] * 2.0
    out[2] = math.pi
    out[3] = wp.static(TABLE[2]) + float(wp.static(len(TABLE)))
    v[0] = GRAVITY + wp.vec3(1.0, 0.0, 0.0)


def test_vector_constants_and_module_attributes(run):
    out, v = run(use_composite_constants, 1, np.zeros(4, np.float32),
                 (np.zeros((1, 3), np.float32), wp.vec3))
    np.testing.assert_allclose(out, [9.75, -19.5, np.pi, 6.5], rtol=1e-7)
    np.testing.assert_array_equal(v, [[1.0, -9.75, 0.0]])


def make_scaler(factor, repeat):
    @wp.kernel
    def scale(x: wp.array(dtype=float)):
        i = wp.tid()
        for _k in range(wp.static(repeat)):
            x[i] = x[i] * factor
    return scale


def test_closure_constants():
    doubler, tripler = make_scaler(2.0, 1), make_scaler(3.0, 2)
    x = wp.array(np.ones(3, np.float32))
    wp.launch(doubler, 3, inputs=[x])
    np.testing.assert_array_equal(x.numpy(), [2.0] * 3)
    wp.launch(tripler, 3, inputs=[x])
    np.testing.assert_array_equal(x.numpy(), [18.0] * 3)


@wp.kernel
def static_branch_only_compiles_one_side(out: wp.array(dtype=int)):
    if wp.static(len("ab") == 2):
        out[0] = 1
    else:
        out[0] = undefined_name_never_compiled  # noqa: F821


def test_static_condition_skips_the_other_branch(run):
    (out,) = run(static_branch_only_compiles_one_side, 1, np.zeros(1, np.int32))
    assert out[0] == 1


@wp.kernel
def stack_after_an_early_return(out: wp.array(dtype=int)):
    i = wp.tid()
    if i % 3 == 0:
        return
    s = wp.tile_stack(capacity=4, dtype=int)  # (a value with no zero for the returned path)
    wp.tile_stack_push(s, i, True)
    out[i] = wp.tile_stack_count(s)


def test_a_value_without_a_zero_assigned_after_an_early_return():
    out = wp.full(6, -1, dtype=int)
    wp.launch(stack_after_an_early_return, 6, [out])
    np.testing.assert_array_equal(out.numpy(), [-1, 1, 1, -1, 1, 1])
