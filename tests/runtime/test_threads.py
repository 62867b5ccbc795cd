"""The CPU thread pool: results do not depend on the number of threads, errors in one
launch leave later launches working, and launches from several Python threads at once are
safe."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import weft as wp
from weft.runtime.threads import ThreadPool, get_pool, thread_count

THREADS = [1, 2, 3, 8]


@pytest.fixture
def pooled(monkeypatch):
    """Run every launch on the pool, with `set(n)` threads."""
    monkeypatch.setattr(wp.config, "parallel_threshold", 1)

    def set_threads(n):
        monkeypatch.setattr(wp.config, "num_threads", n)

    return set_threads


@wp.kernel
def smooth(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    n = a.shape[0]
    left = a[wp.max(i - 1, 0)]
    right = a[wp.min(i + 1, n - 1)]
    out[i] = wp.sin(a[i]) * 0.5 + (left + right) * 0.25


@wp.kernel
def grid_poly(out: wp.array2d(dtype=wp.float64)):
    i, j = wp.tid()
    x = wp.float64(i) * wp.float64(0.01)
    y = wp.float64(j) * wp.float64(0.02)
    out[i, j] = x * x * y - y + wp.float64(3.0)


@wp.kernel
def row_loop(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    s = 0.0
    for j in range(a.shape[1]):
        s = s * 0.5 + a[i, j]
    out[i] = s


@wp.kernel
def histogram(values: wp.array(dtype=int), bins: wp.array(dtype=int), total: wp.array(dtype=wp.int64)):
    i = wp.tid()
    v = values[i]
    wp.atomic_add(bins, v % bins.shape[0], 1)
    wp.atomic_add(total, 0, wp.int64(v))


@wp.kernel
def extremes(values: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    wp.atomic_max(out, 0, values[i])
    wp.atomic_min(out, 1, values[i])
    wp.atomic_sub(out, 2, 1)


@wp.kernel
def write_off(out: wp.array(dtype=float), off: int):
    i = wp.tid()
    out[i + off] = float(i)


RNG = np.random.default_rng(7)
DATA = RNG.standard_normal(10_007).astype(np.float32)
INTS = RNG.integers(-1000, 1000, 20_011).astype(np.int32)


def test_elementwise_results_do_not_depend_on_thread_count(pooled):
    a = wp.array(DATA)
    results = []
    for n in THREADS:
        pooled(n)
        out = wp.zeros(len(DATA))
        wp.launch(smooth, len(DATA), inputs=[a, out])
        results.append(out.numpy().copy())
    expected = np.sin(DATA) * 0.5 + (DATA[np.maximum(np.arange(len(DATA)) - 1, 0)]
                                     + DATA[np.minimum(np.arange(len(DATA)) + 1, len(DATA) - 1)]) * 0.25
    np.testing.assert_allclose(results[0], expected, rtol=1e-5, atol=1e-6)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


def test_2d_and_loop_results_do_not_depend_on_thread_count(pooled):
    a = wp.array(DATA[:9_000].reshape(300, 30))
    firsts = None
    for n in THREADS:
        pooled(n)
        g = wp.zeros((37, 101), dtype=wp.float64)
        wp.launch(grid_poly, (37, 101), inputs=[g])
        rows = wp.zeros(300)
        wp.launch(row_loop, 300, inputs=[a, rows])
        if firsts is None:
            firsts = (g.numpy().copy(), rows.numpy().copy())
            x, y = np.meshgrid(np.arange(37) * 0.01, np.arange(101) * 0.02, indexing="ij")
            np.testing.assert_allclose(firsts[0], x * x * y - y + 3.0, rtol=1e-12)
        np.testing.assert_array_equal(g.numpy(), firsts[0])
        np.testing.assert_array_equal(rows.numpy(), firsts[1])


@pytest.mark.parametrize("n", THREADS)
def test_integer_atomics_are_exact(pooled, n):
    pooled(n)
    values = wp.array(np.abs(INTS))
    bins, total = wp.zeros(17, dtype=int), wp.zeros(1, dtype=wp.int64)
    wp.launch(histogram, len(INTS), inputs=[values, bins, total])
    np.testing.assert_array_equal(bins.numpy(), np.bincount(np.abs(INTS) % 17, minlength=17))
    assert total.numpy()[0] == np.abs(INTS).astype(np.int64).sum()
    out = wp.array(np.array([-(2**31), 2**31 - 1, 0], np.int32))
    wp.launch(extremes, len(INTS), inputs=[wp.array(INTS), out])
    assert out.numpy().tolist() == [INTS.max(), INTS.min(), -len(INTS)]


@pytest.mark.parametrize("n, dim", [(8, 1), (8, 3), (3, 7), (2, 2), (8, 1001)])
def test_launches_smaller_than_or_uneven_across_the_pool(pooled, n, dim):
    pooled(n)
    out = wp.full(dim, -1.0)
    wp.launch(write_off, dim, inputs=[out, 0])
    np.testing.assert_array_equal(out.numpy(), np.arange(dim))


def test_errors_do_not_break_later_launches(pooled):
    for n in THREADS:
        pooled(n)
        out = wp.zeros(500)
        with pytest.raises(IndexError):
            wp.launch(write_off, 500, inputs=[out, 1])
        wp.launch(write_off, 500, inputs=[out, 0])
        np.testing.assert_array_equal(out.numpy(), np.arange(500))
        with pytest.raises(TypeError):
            wp.launch(write_off, 500, inputs=[out, "1"])
        out.zero_()
        wp.launch(write_off, 500, inputs=[out, 0])
        np.testing.assert_array_equal(out.numpy(), np.arange(500))


def test_serial_below_the_threshold(monkeypatch):
    monkeypatch.setattr(wp.config, "num_threads", 4)
    monkeypatch.setattr(wp.config, "parallel_threshold", 10**9)
    out = wp.zeros(100)
    wp.launch(write_off, 100, inputs=[out, 0])
    np.testing.assert_array_equal(out.numpy(), np.arange(100))


def test_concurrent_launches_from_python_threads(pooled):
    pooled(3)
    arrays = [wp.array(DATA[k * 1000:(k + 1) * 1000]) for k in range(8)]
    outs = [wp.zeros(1000) for _ in range(8)]
    expected = []
    for a in arrays:
        ref = wp.zeros(1000)
        wp.launch(smooth, 1000, inputs=[a, ref])
        expected.append(ref.numpy().copy())

    def work(k):
        for _ in range(20):
            wp.launch(smooth, 1000, inputs=[arrays[k], outs[k]])
            np.testing.assert_array_equal(outs[k].numpy(), expected[k])
            outs[k].zero_()
        return k

    with ThreadPoolExecutor(4) as ex:
        assert sorted(ex.map(work, range(8))) == list(range(8))


def test_thread_count_follows_config(monkeypatch):
    monkeypatch.setattr(wp.config, "num_threads", 5)
    assert thread_count() == 5
    assert get_pool().size >= 5
    monkeypatch.setattr(wp.config, "num_threads", 0)
    assert thread_count() >= 1


# The pool itself --------------------------------------------------------------------------------------
def test_pool_covers_every_index_once():
    pool = ThreadPool(4)
    for total, threads in [(10, 4), (3, 4), (1, 1), (1001, 3), (7, 2)]:
        seen = []
        lock = threading.Lock()

        def chunk(begin, end):
            with lock:
                seen.extend(range(begin, end))

        pool.run(chunk, total, lambda b, e: (b, e), threads)
        assert sorted(seen) == list(range(total))


def test_pool_hands_back_a_worker_error_and_keeps_working():
    pool = ThreadPool(3)

    def chunk(begin, end):
        if begin > 0:
            raise RuntimeError(f"chunk {begin}")

    with pytest.raises(RuntimeError, match="chunk"):
        pool.run(chunk, 9, lambda b, e: (b, e), 3)
    done = []
    pool.run(lambda b, e: done.append((b, e)), 9, lambda b, e: (b, e), 3)
    assert sorted(done) == [(0, 3), (3, 6), (6, 9)]
