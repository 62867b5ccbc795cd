"""Names that outlive the block that set them, as in Python and Warp: a loop's index after
the loop, a name set in one branch of an `if`, and arrays as conditions."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def index_after_loops(n: int, out: wp.array(dtype=int)):
    for i in range(4):  # noqa: B007 - read after the loop
        pass
    out[0] = i  # Python keeps the last index
    for j in range(n):  # noqa: B007
        pass
    out[1] = j
    k = 7
    for k in range(n, 0):  # noqa: B007 - an empty range leaves k as it was
        pass
    out[2] = k
    for m in range(10):
        if m == n:
            break
    out[3] = m  # the index at the break
    for p in range(3):
        p = p * 10  # rebinding the index inside the body counts too
    out[4] = p


def test_loop_index_keeps_its_last_value():
    out = wp.zeros(5, dtype=int)
    wp.launch(index_after_loops, 1, inputs=[3, out])
    assert out.numpy().tolist() == [3, 2, 7, 3, 20]


@wp.kernel
def set_in_one_branch(flags: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    if flags[i] != 0:
        y = 2.5
    out[i] = y  # zero where the branch did not run, as in Warp


def test_name_set_in_one_branch_is_zero_on_the_other_path():
    out = wp.full(2, -1.0)
    wp.launch(set_in_one_branch, 2, inputs=[wp.array([1, 0], dtype=int), out])
    assert out.numpy().tolist() == [2.5, 0.0]


@wp.kernel
def array_as_condition(arr: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    if arr and arr[i] == 0:  # `and` does not evaluate arr[i] for a null array
        out[i] = -1
    elif not arr:
        out[i] = 2
    else:
        out[i] = 1


def test_an_array_is_true_unless_it_is_null():
    out = wp.zeros(3, dtype=int)
    wp.launch(array_as_condition, 3, inputs=[None, out])
    assert out.numpy().tolist() == [2, 2, 2]
    wp.launch(array_as_condition, 3, inputs=[wp.array([0, 1, 0], dtype=int), out])
    assert out.numpy().tolist() == [-1, 1, -1]
    assert np.all(out.numpy() != 0)


@wp.kernel
def index_rebound_in_a_later_loop(out: wp.array(dtype=int)):
    for i in range(2):  # noqa: B007
        pass
    k = 0
    while k < 3:
        i = i + 1  # the leaked index is a variable: carried by this loop
        k = k + 1
    out[0] = i


def test_leaked_index_is_carried_by_a_later_loop():
    out = wp.zeros(1, dtype=int)
    wp.launch(index_rebound_in_a_later_loop, 1, inputs=[out])
    assert out.numpy()[0] == 4


@wp.kernel
def backwards(n: int, step: int, out: wp.array(dtype=int)):
    k = 0
    for i in reversed(range(1, n, step)):
        out[k] = i
        k += 1
    for j in reversed(range(4)):
        out[k] = j
        k += 1
    for m in reversed(range(n, 0, -step)):
        out[k] = m
        k += 1


def test_reversed_ranges():
    for n, step in ((8, 3), (1, 2), (7, 2)):
        out = wp.full(32, -1, dtype=int)
        wp.launch(backwards, 1, inputs=[n, step, out])
        want = [*reversed(range(1, n, step)), *reversed(range(4)), *reversed(range(n, 0, -step))]
        assert out.numpy()[: len(want)].tolist() == want and out.numpy()[len(want)] == -1


@wp.kernel
def backwards_counted(a: int, b: int, s: int, out: wp.array(dtype=int), count: wp.array(dtype=int)):
    c = 0
    for i in reversed(range(a, b, s)):
        out[c] = i
        c += 1
    count[0] = c


def test_reversed_range():
    for a, b, s in [(0, 10, 3), (10, 0, -3), (0, 0, 1), (5, 2, 1), (-3, 7, 2), (7, -3, -2)]:
        out, count = wp.zeros(8, dtype=int), wp.zeros(1, dtype=int)
        wp.launch(backwards_counted, 1, inputs=[a, b, s, out, count])
        assert out.numpy()[: count.numpy()[0]].tolist() == list(reversed(range(a, b, s)))


def test_comparing_unequal_types_is_a_type_error():
    @wp.kernel
    def unequal(out: wp.array(dtype=int)):
        x = wp.int32(10)
        y = 10
        z = True
        if x == y == z:
            out[0] = 1

    # (one comparison of two types converts them as C++ does, as in Warp; a chain of them,
    # as in Warp, is refused)
    with pytest.raises(TypeError, match="Cannot chain comparisons of unequal types: int32 == bool"):
        wp.launch(unequal, 1, inputs=[wp.zeros(1, dtype=int)])


@wp.kernel
def first_assigned_in_loops(n: int, out: wp.array(dtype=float)):
    t = 0.0
    for _ in range(n):
        d = 1.0 / (t + 1.0)  # first assigned here, read after the loop (a ray-marching step)
        t = t + d
    out[0] = d
    k = 0
    while k < n:
        v = wp.vec2(float(k), 2.0)
        k += 1
    out[1] = v[0] + v[1]


def test_a_name_first_assigned_in_a_loop_keeps_its_last_value():
    """Python's rule (and Warp's): the value of the last iteration; zero if the loop never ran."""
    out = wp.zeros(2)
    wp.launch(first_assigned_in_loops, 1, inputs=[4, out])
    t = d = 0.0
    for _ in range(4):
        d = 1.0 / (t + 1.0)
        t += d
    np.testing.assert_allclose(out.numpy(), [d, 3.0 + 2.0], rtol=1e-6)
    wp.launch(first_assigned_in_loops, 1, inputs=[0, out])
    np.testing.assert_array_equal(out.numpy(), [0.0, 0.0])
