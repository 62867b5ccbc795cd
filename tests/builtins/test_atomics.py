"""Atomics: atomic_add/sub/min/max on int, float and vector arrays, from many threads at once.

Launches are large enough to run on several threads, so lost updates would show.
"""

import numpy as np
import pytest

import weft as wp

N = 100_000


@wp.kernel
def int_atomics(values: wp.array(dtype=int), acc: wp.array(dtype=int)):
    i = wp.tid()
    v = values[i]
    wp.atomic_add(acc, 0, v)
    wp.atomic_sub(acc, 1, v)
    wp.atomic_min(acc, 2, v)
    wp.atomic_max(acc, 3, v)
    wp.atomic_add(acc, 4, 1)


def test_int_atomics_from_many_threads(run):
    values = np.random.default_rng(0).integers(-1000, 1000, N).astype(np.int32)
    acc = np.array([0, 0, 2**31 - 1, -(2**31), 0], np.int32)
    _, acc = run(int_atomics, N, values, acc)
    assert acc.tolist() == [values.sum(), -values.sum(), values.min(), values.max(), N]


@wp.kernel
def float_atomics(values: wp.array(dtype=float), acc: wp.array(dtype=float)):
    i = wp.tid()
    v = values[i]
    wp.atomic_add(acc, 0, v)
    wp.atomic_sub(acc, 1, v)
    wp.atomic_min(acc, 2, v)
    wp.atomic_max(acc, 3, v)


def test_float_atomics_from_many_threads(run):
    # Multiples of 1/8 below 2^10: every partial sum is exact, so any order gives one result.
    values = (np.random.default_rng(1).integers(-8000, 8000, N) / 8).astype(np.float32)
    acc = np.array([0.0, 0.0, np.inf, -np.inf], np.float32)
    _, acc = run(float_atomics, N, values, acc)
    assert acc.tolist() == [values.sum(dtype=np.float64), -values.sum(dtype=np.float64),
                            values.min(), values.max()]


@wp.kernel
def bounds_with_nans(values: wp.array(dtype=float), lo: wp.array(dtype=float), hi: wp.array(dtype=float),
                     old_lo: wp.array(dtype=float)):
    i = wp.tid()
    old_lo[i] = wp.atomic_min(lo, 0, values[i])
    wp.atomic_max(hi, 0, values[i])


def test_min_max_into_one_slot_skip_the_updates_that_keep_it():
    """Reading first and updating only where x would change the bound (many threads, one
    element) gives the atomic's own result: NaN values leave the bound, a NaN bound takes the
    next value, and every returned old value is one the bound held (never below the final)."""
    values = np.random.default_rng(5).standard_normal(N).astype(np.float32)
    values[::97] = np.nan
    lo, hi = wp.array([np.nan], dtype=float), wp.array([-np.inf], dtype=float)
    old_lo = wp.zeros(N)
    wp.launch(bounds_with_nans, N, inputs=[wp.array(values), lo, hi, old_lo])
    assert lo.numpy()[0] == np.nanmin(values) and hi.numpy()[0] == np.nanmax(values)
    olds = old_lo.numpy()
    assert np.isnan(olds).sum() >= 1 and (olds[~np.isnan(olds)] >= np.nanmin(values)).all()


@wp.kernel
def float64_atomics(values: wp.array(dtype=wp.float64), acc: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(acc, 0, values[i])
    wp.atomic_min(acc, 1, values[i])
    wp.atomic_max(acc, 2, values[i])


def test_float64_atomics(run):
    values = np.random.default_rng(2).integers(-10**6, 10**6, N).astype(np.float64)
    _, acc = run(float64_atomics, N, values, np.array([0.0, np.inf, -np.inf]))
    assert acc.tolist() == [values.sum(), values.min(), values.max()]


@wp.kernel
def int64_and_unsigned(values: wp.array(dtype=wp.int64), acc: wp.array(dtype=wp.int64),
                       uacc: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    wp.atomic_add(acc, 0, values[i])
    wp.atomic_min(acc, 1, values[i])
    wp.atomic_max(uacc, 0, wp.uint32(i))
    wp.atomic_min(uacc, 1, wp.uint32(i + 5))


def test_int64_and_unsigned_atomics(run):
    values = np.random.default_rng(3).integers(-2**40, 2**40, N).astype(np.int64)
    _, acc, uacc = run(int64_and_unsigned, N, values, np.array([0, 2**62], np.int64),
                       np.array([0, 2**32 - 1], np.uint32))
    assert acc.tolist() == [values.sum(), values.min()]
    assert uacc.tolist() == [N - 1, 5]


@wp.kernel
def vec3_atomics(values: wp.array(dtype=wp.vec3), acc: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    wp.atomic_add(acc, 0, values[i])
    wp.atomic_sub(acc, 1, values[i])
    wp.atomic_min(acc, 2, values[i])
    wp.atomic_max(acc, 3, values[i])


def test_vector_atomics_are_componentwise(run):
    values = (np.random.default_rng(4).integers(-800, 800, (N, 3)) / 8).astype(np.float32)
    acc = np.array([[0, 0, 0], [0, 0, 0], [np.inf] * 3, [-np.inf] * 3], np.float32)
    _, acc = run(vec3_atomics, N, (values, wp.vec3), (acc, wp.vec3))
    np.testing.assert_array_equal(acc, [values.sum(0, dtype=np.float64), -values.sum(0, dtype=np.float64),
                                        values.min(0), values.max(0)])


@wp.kernel
def return_old_value(a: wp.array(dtype=int), v: wp.array(dtype=wp.vec2), olds: wp.array(dtype=int),
                     vold: wp.array(dtype=wp.vec2)):
    olds[0] = wp.atomic_add(a, 0, 3)
    olds[1] = wp.atomic_sub(a, 0, 1)
    olds[2] = wp.atomic_min(a, 1, -4)
    olds[3] = wp.atomic_max(a, 1, 10)
    olds[4] = wp.atomic_max(a, 1, 2)  # no change: returns the current value
    vold[0] = wp.atomic_add(v, 0, wp.vec2(1.0, 2.0))


def test_atomics_return_the_old_value(run):
    a, v, olds, vold = run(return_old_value, 1, np.array([5, 7], np.int32),
                           (np.array([[0.5, -1.0]], np.float32), wp.vec2), np.zeros(5, np.int32),
                           (np.zeros((1, 2), np.float32), wp.vec2))
    assert olds.tolist() == [5, 8, 7, -4, 10]
    assert a.tolist() == [7, 10]
    np.testing.assert_array_equal(vold, [[0.5, -1.0]])
    np.testing.assert_array_equal(v, [[1.5, 1.0]])


@wp.kernel
def compact_positive(values: wp.array(dtype=float), count: wp.array(dtype=int),
                     out: wp.array(dtype=int)):
    i = wp.tid()
    if values[i] > 0.0:
        slot = wp.atomic_add(count, 0, 1)  # the old count is this thread's slot
        out[slot] = i


def test_atomic_return_value_as_a_slot_index(run):
    values = np.random.default_rng(5).standard_normal(N).astype(np.float32)
    _, count, out = run(compact_positive, N, values, np.zeros(1, np.int32), np.full(N, -1, np.int32))
    expect = np.flatnonzero(values > 0)
    assert count[0] == len(expect)
    np.testing.assert_array_equal(np.sort(out[: count[0]]), expect)
    assert np.all(out[count[0]:] == -1)


@wp.kernel
def atomic_2d(cells: wp.array(dtype=int, ndim=2), weights: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    wp.atomic_add(cells, i % 4, i % 3, 1)
    wp.atomic_add(weights, i % 2, 0, 0.25)


def test_atomics_on_2d_arrays(run):
    n = 12_000
    cells, weights = run(atomic_2d, n, np.zeros((4, 3), np.int32), np.zeros((2, 1), np.float32))
    expect = np.zeros((4, 3), np.int64)
    np.add.at(expect, (np.arange(n) % 4, np.arange(n) % 3), 1)
    np.testing.assert_array_equal(cells, expect)
    np.testing.assert_array_equal(weights, [[n / 8], [n / 8]])


@wp.kernel
def atomic_out_of_bounds(a: wp.array(dtype=int), index: int):
    wp.atomic_add(a, index, 1)


def test_atomic_index_is_bounds_checked(run):
    with pytest.raises(IndexError, match="out of bounds"):
        run(atomic_out_of_bounds, 1, np.zeros(3, np.int32), 3)
