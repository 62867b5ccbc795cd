"""Run-time errors in kernels: an out-of-range index raises IndexError after the launch,
naming the kernel, the array, the index, the shape and the user's file:line; the bad access
touches nothing, every valid access still happens, and the process carries on. Integer
division by zero raises ZeroDivisionError."""

import re

import numpy as np
import pytest

import weft as wp

HERE = __file__


def line_of(marker: str) -> int:
    """The line of this file that holds `# <marker>`."""
    with open(HERE) as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# {marker}"):
                return number
    raise AssertionError(marker)


@wp.kernel
def read_off(a: wp.array(dtype=float), off: int, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i + off]  # READ


@wp.kernel
def write_off(out: wp.array(dtype=float), off: int):
    i = wp.tid()
    out[i + off] = float(i)  # WRITE


@wp.kernel
def atomic_off(counts: wp.array(dtype=int), off: int):
    i = wp.tid()
    wp.atomic_add(counts, i + off, 1)  # ATOMIC


@wp.kernel
def write_2d(a: wp.array2d(dtype=float), di: int, dj: int):
    i, j = wp.tid()
    a[i + di, j + dj] = 1.0  # WRITE2D


@wp.kernel
def loop_sum(a: wp.array(dtype=float), n: int, out: wp.array(dtype=float)):
    i = wp.tid()
    s = 0.0
    for k in range(n):
        s += a[k]  # LOOP
    out[i] = s


@wp.kernel
def while_sum(a: wp.array(dtype=float), n: int, out: wp.array(dtype=float)):
    i = wp.tid()
    s = 0.0
    k = 0
    while k < n:
        s += a[k * 2]  # WHILE
        k += 1
    out[i] = s


@wp.kernel
def component(a: wp.array(dtype=wp.vec3), c: int, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i][c]  # COMPONENT


def check_message(err, kernel, what, index, shape, marker):
    """The place first (file:line:col, the source line, a caret), the message last."""
    msg = str(err.value)
    lines = msg.splitlines()
    assert re.fullmatch(f"{re.escape(HERE)}:{line_of(marker)}:\\d+:", lines[0]), msg
    assert lines[1].endswith(f"# {marker}") and lines[2].strip() == "^", msg  # the source line is shown
    expected = (f"kernel '{kernel}': index {re.escape(str(index))} "
                f"is out of bounds for {re.escape(what)} with shape {re.escape(str(shape))}")
    assert re.fullmatch(expected, lines[-1]) and len(lines) == 4, msg


def test_read_past_the_end():
    a = wp.array(np.arange(8, dtype=np.float32))
    out = wp.full(8, -1.0)
    with pytest.raises(IndexError) as e:
        wp.launch(read_off, 8, inputs=[a, 1, out])
    check_message(e, "read_off", "array 'a'", 8, (8,), "READ")
    np.testing.assert_array_equal(out.numpy()[:7], np.arange(1, 8))  # the other threads ran
    np.testing.assert_array_equal(a.numpy(), np.arange(8))


def test_negative_read():
    a = wp.array(np.arange(8, dtype=np.float32))
    out = wp.full(8, -1.0)
    with pytest.raises(IndexError) as e:
        wp.launch(read_off, 8, inputs=[a, -3, out])
    check_message(e, "read_off", "array 'a'", -3, (8,), "READ")
    np.testing.assert_array_equal(out.numpy()[3:], np.arange(5))


def test_write_past_the_end_corrupts_nothing():
    backing = wp.full(12, -7.0)
    out = backing[2:10]  # memory on both sides of the view belongs to the same buffer
    with pytest.raises(IndexError) as e:
        wp.launch(write_off, 8, inputs=[out, 2])
    check_message(e, "write_off", "array 'out'", 8, (8,), "WRITE")
    np.testing.assert_array_equal(backing.numpy(), [-7, -7, -7, -7, 0, 1, 2, 3, 4, 5, -7, -7])


def test_negative_write_corrupts_nothing():
    backing = wp.full(12, -7.0)
    with pytest.raises(IndexError) as e:
        wp.launch(write_off, 8, inputs=[backing[2:10], -1])
    check_message(e, "write_off", "array 'out'", -1, (8,), "WRITE")
    np.testing.assert_array_equal(backing.numpy(), [-7, -7, *range(1, 8), -7, -7, -7])


def test_atomic_out_of_range():
    backing = wp.zeros(10, dtype=int)
    with pytest.raises(IndexError) as e:
        wp.launch(atomic_off, 8, inputs=[backing[1:9], 3])
    check_message(e, "atomic_off", "array 'counts'", 8, (8,), "ATOMIC")
    np.testing.assert_array_equal(backing.numpy(), [0, 0, 0, 0, 1, 1, 1, 1, 1, 0])


@pytest.mark.parametrize("di, dj, index", [(0, 1, (0, 4)), (1, 0, (3, 0)), (-1, 0, (-1, 0)), (0, -2, (0, -2))])
def test_two_dimensional_index(di, dj, index):
    backing = wp.zeros((5, 6))
    a = backing[1:4, 1:5]
    with pytest.raises(IndexError) as e:
        wp.launch(write_2d, (3, 4), inputs=[a, di, dj])
    check_message(e, "write_2d", "array 'a'", index, (3, 4), "WRITE2D")
    expected = np.zeros((5, 6))
    for i in range(3):
        for j in range(4):
            if 0 <= i + di < 3 and 0 <= j + dj < 4:
                expected[1 + i + di, 1 + j + dj] = 1  # only in-range writes, only inside the view
    np.testing.assert_array_equal(backing.numpy(), expected)


def test_index_into_a_strided_view():
    base = wp.array(np.arange(20, dtype=np.float32))
    view = base[::2]
    out = wp.zeros(10)
    with pytest.raises(IndexError) as e:
        wp.launch(read_off, 10, inputs=[view, 1, out])
    check_message(e, "read_off", "array 'a'", 10, (10,), "READ")
    np.testing.assert_array_equal(out.numpy()[:9], np.arange(2, 20, 2))


def test_index_computed_in_a_for_loop():
    a = wp.array(np.arange(8, dtype=np.float32))
    out = wp.zeros(4)
    with pytest.raises(IndexError) as e:
        wp.launch(loop_sum, 4, inputs=[a, 9, out])
    check_message(e, "loop_sum", "array 'a'", 8, (8,), "LOOP")
    wp.launch(loop_sum, 4, inputs=[a, 8, out])  # the same kernel in range: the fast path
    assert out.numpy().tolist() == [28] * 4


def test_index_computed_in_a_while_loop():
    a = wp.array(np.arange(8, dtype=np.float32))
    out = wp.zeros(2)
    with pytest.raises(IndexError) as e:
        wp.launch(while_sum, 2, inputs=[a, 5, out])
    check_message(e, "while_sum", "array 'a'", 8, (8,), "WHILE")
    wp.launch(while_sum, 2, inputs=[a, 4, out])
    assert out.numpy().tolist() == [12, 12]


def test_vector_component_index():
    a = wp.array(np.arange(6, dtype=np.float32), dtype=wp.vec3)
    out = wp.zeros(2)
    with pytest.raises(IndexError) as e:
        wp.launch(component, 2, inputs=[a, 3, out])
    check_message(e, "component", "vec3f component", 3, (3,), "COMPONENT")
    with pytest.raises(IndexError):
        wp.launch(component, 2, inputs=[a, -1, out])
    wp.launch(component, 2, inputs=[a, 2, out])
    assert out.numpy().tolist() == [2, 5]


def test_launch_larger_than_the_array():
    a, out = wp.ones(4), wp.zeros(6)
    with pytest.raises(IndexError) as e:
        wp.launch(read_off, 6, inputs=[a, 0, out])
    check_message(e, "read_off", "array 'a'", 4, (4,), "READ")
    assert out.numpy().tolist()[:4] == [1] * 4


def test_null_array_argument():
    out = wp.zeros(2)
    with pytest.raises(IndexError) as e:
        wp.launch(read_off, 2, inputs=[None, 0, out])
    check_message(e, "read_off", "array 'a'", 0, (0,), "READ")


def test_the_process_carries_on():
    a, out = wp.ones(4), wp.zeros(4)
    for _ in range(20):
        with pytest.raises(IndexError):
            wp.launch(read_off, 4, inputs=[a, 100_000_000, out])
        with pytest.raises(IndexError):
            wp.launch(write_off, 4, inputs=[out, -(2**31) + 10])
    wp.launch(read_off, 4, inputs=[a, 0, out])
    assert out.numpy().tolist() == [1] * 4


@pytest.mark.parametrize("num_threads", [2, 4])
def test_bounds_errors_in_parallel_launches(monkeypatch, num_threads):
    monkeypatch.setattr(wp.config, "num_threads", num_threads)
    monkeypatch.setattr(wp.config, "parallel_threshold", 1)
    n = 1000
    backing = wp.full(n + 2, -7.0)
    out = backing[1:n + 1]
    with pytest.raises(IndexError) as e:
        wp.launch(write_off, n, inputs=[out, 1])
    check_message(e, "write_off", "array 'out'", n, (n,), "WRITE")
    np.testing.assert_array_equal(backing.numpy(), [-7, -7, *range(n - 1), -7])
    counts = wp.zeros(n, dtype=int)
    with pytest.raises(IndexError):
        wp.launch(atomic_off, n, inputs=[counts, -5])  # several threads fail; one error is reported
    assert counts.numpy().sum() == n - 5 and counts.numpy()[-5:].sum() == 0


# Bounds checks off ----------------------------------------------------------------------------------
def test_bounds_checks_can_be_turned_off(monkeypatch):
    monkeypatch.setattr(wp.config, "bounds_checks", False)

    @wp.kernel  # compiled after the flag is set: the variant has no checks
    def unchecked(a: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = a[i] * 2.0

    a, out = wp.array(np.arange(5, dtype=np.float32)), wp.zeros(5)
    wp.launch(unchecked, 5, inputs=[a, out])  # in-range accesses only
    assert out.numpy().tolist() == [0, 2, 4, 6, 8]
    wp.launch(unchecked, 3, inputs=[a[::2], out[1:4]])
    assert out.numpy().tolist() == [0, 0, 4, 8, 8]
    assert "weft_record_error" not in unchecked.llvm_ir(optimized=True)


def test_turning_bounds_checks_on_applies_to_compiled_kernels(monkeypatch):
    monkeypatch.setattr(wp.config, "bounds_checks", False)

    @wp.kernel
    def reader(a: wp.array(dtype=float), off: int, out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = a[i + off]

    backing, out = wp.ones(8), wp.zeros(4)
    wp.launch(reader, 4, inputs=[backing[:4], 0, out])
    monkeypatch.setattr(wp.config, "bounds_checks", True)
    with pytest.raises(IndexError):  # reads backing[4]: memory-safe even when unchecked
        wp.launch(reader, 4, inputs=[backing[:4], 1, out])


# Integer division by zero ------------------------------------------------------------------------------
@wp.kernel
def int_div(a: wp.array(dtype=int), d: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = a[i] / d[i]  # DIV


@wp.kernel
def int_mod(a: wp.array(dtype=int), d: int, out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = a[i] % d  # MOD


@wp.kernel
def int_floordiv(a: wp.array(dtype=wp.int64), d: wp.int64, out: wp.array(dtype=wp.int64)):
    i = wp.tid()
    out[i] = a[i] // (d - wp.int64(i))  # FLOORDIV


def check_division(err, kernel, marker):
    lines = str(err.value).splitlines()
    assert lines[0].startswith(f"{HERE}:{line_of(marker)}:"), lines
    assert lines[1].endswith(f"# {marker}"), lines
    assert lines[-1] == f"kernel '{kernel}': integer division by zero", lines


def test_integer_division_by_zero():
    a = wp.array(np.arange(1, 7, dtype=np.int32))
    d = wp.array(np.array([1, 2, 0, 3, 0, 1], np.int32))
    out = wp.full(6, -1, dtype=int)
    with pytest.raises(ZeroDivisionError) as e:
        wp.launch(int_div, 6, inputs=[a, d, out])
    check_division(e, "int_div", "DIV")
    got = out.numpy()
    assert got[[0, 1, 3, 5]].tolist() == [1, 1, 1, 6]  # the other threads ran


def test_integer_modulo_and_floordiv_by_zero():
    with pytest.raises(ZeroDivisionError) as e:
        wp.launch(int_mod, 4, inputs=[wp.ones(4, dtype=int), 0, wp.zeros(4, dtype=int)])
    check_division(e, "int_mod", "MOD")
    out = wp.zeros(6, dtype=wp.int64)
    with pytest.raises(ZeroDivisionError) as e:
        wp.launch(int_floordiv, 6, inputs=[wp.full(6, 7, dtype=wp.int64), 3, out])
    check_division(e, "int_floordiv", "FLOORDIV")
    assert out.numpy()[[0, 1, 2, 4, 5]].tolist() == [2, 3, 7, -7, -4]  # floors, as Python


def test_division_errors_leave_the_process_usable():
    a = wp.array(np.array([-2**31, 7], np.int32))
    out = wp.zeros(2, dtype=int)
    wp.launch(int_div, 2, inputs=[a, wp.array(np.array([-1, 2], np.int32)), out])  # no trap
    assert out.numpy()[1] == 3
    for _ in range(10):
        with pytest.raises(ZeroDivisionError):
            wp.launch(int_mod, 2, inputs=[a, 0, out])
    wp.launch(int_mod, 2, inputs=[a, 5, out])
    assert out.numpy().tolist() == [int(np.fmod(-2**31, 5)), 2]


@wp.kernel
def float_div(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] / 0.0


def test_float_division_by_zero_is_not_an_error():
    out = wp.zeros(3)
    wp.launch(float_div, 3, inputs=[wp.array(np.array([1.0, -1.0, 0.0], np.float32)), out])
    got = out.numpy()
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])
