"""Edge cases of bounds checking and integer semantics in generated code (found in review).

Each kernel here once read or wrote outside an array, crashed, or gave a wrong answer.
"""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def unsigned_loop(a: wp.array(dtype=float), n: wp.uint32, out: wp.array(dtype=float)):
    for i in range(wp.uint32(0), n):
        if i == wp.uint32(1000):
            out[0] = a[i]


def test_unsigned_loop_bound_beyond_int32_keeps_its_checks():
    a, out = wp.array(np.arange(10, dtype=np.float32)), wp.zeros(1)
    with pytest.raises(IndexError, match="index 1000 is out of bounds"):
        wp.launch(unsigned_loop, 1, inputs=[a, wp.uint32(2**31 + 5), out])
    assert out.numpy()[0] == 0.0


@wp.kernel
def huge_constant_index(a: wp.array(dtype=float)):
    a[wp.uint64(18446744073709551615)] = 123.0


def test_uint64_constant_index_is_checked_and_reported_unsigned():
    a = wp.zeros(10)
    with pytest.raises(IndexError, match="index 18446744073709551615 is out of bounds"):
        wp.launch(huge_constant_index, 1, inputs=[a])
    assert not a.numpy().any()


@wp.kernel
def matrix_component(r: int, c: int, out: wp.array(dtype=float)):
    m = wp.mat33(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)
    out[0] = m[r, c]


@pytest.mark.parametrize("r,c", [(0, 3), (1, -1), (3, 0)])
def test_dynamic_matrix_indices_are_checked_per_axis(r, c):
    with pytest.raises(IndexError, match=rf"index \({r}, {c}\) is out of bounds .* shape \(3, 3\)"):
        wp.launch(matrix_component, 1, inputs=[r, c, wp.zeros(1)])


def test_dynamic_matrix_index_in_range():
    out = wp.zeros(1)
    wp.launch(matrix_component, 1, inputs=[2, 1, out])
    assert out.numpy()[0] == 8.0


@wp.kernel
def write_row(a: wp.array2d(dtype=float), r: int):
    row = a[r]
    for j in range(a.shape[1]):
        row[j] = 1.0e6


def test_a_view_at_a_bad_index_has_no_elements():
    a = wp.zeros((4, 100000))
    with pytest.raises(IndexError, match="index 7"):
        wp.launch(write_row, 1, inputs=[a, 7])
    assert not a.numpy().any()


big = wp.types.matrix(shape=(32, 32), dtype=wp.float64)  # 8 KiB per element


@wp.kernel
def store_big(a: wp.array(dtype=big), n: int):
    i = wp.tid()
    a[i + n] = big()


def test_redirected_accesses_of_large_elements_stay_in_scratch_memory():
    a = wp.zeros(2, dtype=big)
    for _ in range(5):
        with pytest.raises(IndexError):
            wp.launch(store_big, 2, inputs=[a, 3])


@wp.kernel
def strided_count(start: int, stop: int, step: int, out: wp.array(dtype=int)):
    c = 0
    for _i in range(start, stop, step):
        c += 1
    out[0] = c


@pytest.mark.parametrize("start,stop,step", [(2147483000, 2147483647, 1000), (-2147483000, -2147483648, -1000),
                                             (0, 2147483647, 2**30)])
def test_loop_counters_do_not_overflow(start, stop, step):
    out = wp.zeros(1, dtype=int)
    wp.launch(strided_count, 1, inputs=[start, stop, step, out])
    assert out.numpy()[0] == len(range(start, stop, step))


@wp.kernel
def float_to_int(x: float, out: wp.array(dtype=int)):
    out[0] = int(x)


@pytest.mark.parametrize("x,expected", [(1.0e20, -(2**31)), (-1.0e20, -(2**31)), (float("nan"), -(2**31)), (-2.7, -2)])
def test_float_to_int_out_of_range_is_defined_as_warps_x86_value(x, expected):
    """Undefined in C; never poison here: the value Warp's x86-64 code gives (the lowest int;
    more cases in test_special_values.py)."""
    out = wp.zeros(1, dtype=int)
    wp.launch(float_to_int, 1, inputs=[x, out])
    assert out.numpy()[0] == expected


@wp.kernel
def shifts(a: int, s: int, out: wp.array(dtype=int)):
    out[0] = a << s
    out[1] = a >> s


@pytest.mark.parametrize("a,s,expected", [(1, 3, [8, 0]), (-16, 2, [-64, -4]), (5, 40, [0, 0]), (-5, 40, [0, -1])])
def test_shifts_by_the_width_or_more_are_defined(a, s, expected):
    out = wp.zeros(2, dtype=int)
    wp.launch(shifts, 1, inputs=[a, s, out])
    assert out.numpy().tolist() == expected
