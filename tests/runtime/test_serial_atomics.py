"""Atomics in a launch that runs in one call are plain read-modify-writes (ctx.serial);
split over the cores they stay atomic. Both give exact integer counts and the same float
sums (up to rounding order)."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def histogram(values: wp.array(dtype=int), bins: wp.array(dtype=int), total: wp.array(dtype=float),
              weights: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(bins, values[i] % 7, 1)
    wp.atomic_sub(bins, 7, 1)
    wp.atomic_add(total, values[i] % 3, weights[i])


@pytest.mark.parametrize("threshold", [1 << 40, 1], ids=["one call", "every core"])
def test_atomics_exact_in_one_call_and_across_cores(threshold):
    n = 200_000
    rng = np.random.default_rng(0)
    values = rng.integers(0, 1000, n).astype(np.int32)
    weights = rng.random(n).astype(np.float32)
    bins = wp.zeros(8, dtype=int)
    total = wp.zeros(3, dtype=float)
    saved = wp.config.parallel_threshold
    wp.config.parallel_threshold = threshold
    try:
        wp.launch(histogram, n, inputs=[wp.array(values), bins, total, wp.array(weights)])
    finally:
        wp.config.parallel_threshold = saved
    expected = np.bincount(values % 7, minlength=7)
    np.testing.assert_array_equal(bins.numpy()[:7], expected)
    assert bins.numpy()[7] == -n
    sums = np.array([weights[values % 3 == k].astype(np.float64).sum() for k in range(3)])
    np.testing.assert_allclose(total.numpy(), sums, rtol=1e-4)
