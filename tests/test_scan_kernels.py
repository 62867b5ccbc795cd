"""array_scan of large arrays runs as two launches over chunks (weft/scan_kernels.py)."""

import numpy as np
import pytest

import weft as wp
from weft.runtime import algorithms


@pytest.fixture
def kernels_from_small_sizes(monkeypatch):
    monkeypatch.setattr(algorithms, "SCAN_KERNELS_FROM", 16)
    monkeypatch.setattr(algorithms, "thread_count", lambda: 3)  # (so that a 2-core machine chunks too)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("inclusive", [True, False])
def test_chunked_scan_matches_the_sequential_one(kernels_from_small_sizes, dtype, inclusive):
    x = (np.random.default_rng(3).random(1001) * 100).astype(dtype)
    a, out = wp.array(x), wp.empty(1001, dtype=wp.dtype_from_numpy(dtype))
    wp.utils.array_scan(a, out, inclusive=inclusive)
    expected = np.cumsum(x.astype(np.float64))
    if not inclusive:
        expected = np.concatenate([[0.0], expected[:-1]])
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(out.numpy(), expected.astype(dtype))
    else:
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_chunked_scan_of_vectors_views_and_in_place(kernels_from_small_sizes):
    rng = np.random.default_rng(4)
    v = wp.array(rng.random((500, 3)).astype(np.float32), dtype=wp.vec3)
    vo = wp.empty_like(v)
    wp.utils.array_scan(v, vo)
    np.testing.assert_allclose(vo.numpy(), np.cumsum(v.numpy().astype(np.float64), axis=0), rtol=1e-5)
    base = wp.array(np.arange(900, dtype=np.int32))
    strided, so = base[::3], wp.empty(300, dtype=wp.int32)
    wp.utils.array_scan(strided, so, inclusive=False)
    np.testing.assert_array_equal(so.numpy(), np.concatenate([[0], np.cumsum(np.arange(0, 900, 3))[:-1]]))
    ones = wp.ones(777, dtype=wp.int32)
    wp.utils.array_scan(ones, ones, inclusive=False)  # (in place)
    np.testing.assert_array_equal(ones.numpy(), np.arange(777))
