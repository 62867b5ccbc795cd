"""The native thread pool: chunks, many back-to-back launches, sleeping and waking."""

import time

import numpy as np
import pytest

import weft as wp
from weft.runtime import native_pool
from weft.runtime.threads import get_pool

pytestmark = pytest.mark.skipif(not native_pool.supported(), reason="native pool needs Linux x86-64")


@wp.kernel
def count_up(hits: wp.array(dtype=int)):
    i = wp.tid()
    hits[i] = hits[i] + 1


@pytest.fixture
def forced_parallel(monkeypatch):
    monkeypatch.setattr(wp.config, "parallel_threshold", 1)
    monkeypatch.setattr(wp.config, "num_threads", 2)


def test_the_pool_is_native_here(forced_parallel):
    wp.launch(count_up, 4, inputs=[wp.zeros(4, dtype=int)])
    assert isinstance(get_pool(), native_pool.NativePool)


@pytest.mark.parametrize("n", [1, 2, 3, 1000, 4097])
def test_every_thread_runs_exactly_once(forced_parallel, n):
    hits = wp.zeros(n, dtype=int)
    for _ in range(50):
        wp.launch(count_up, n, inputs=[hits])
    assert (hits.numpy() == 50).all()


def test_workers_wake_after_sleeping(forced_parallel):
    hits = wp.zeros(64, dtype=int)
    wp.launch(count_up, 64, inputs=[hits])
    time.sleep(0.05)  # long past the spin window: the worker is asleep on its futex
    wp.launch(count_up, 64, inputs=[hits])
    np.testing.assert_array_equal(hits.numpy(), np.full(64, 2))


@wp.kernel
def chunk_of(first: wp.array(dtype=int)):
    i = wp.tid()
    first[i] = i


def test_chunks_are_claimed_until_none_is_left(forced_parallel, monkeypatch):
    """More chunks than threads: every index once whatever thread runs it."""
    monkeypatch.setattr(native_pool, "CHUNKS_PER_THREAD", 7)
    out = wp.full(10007, -1, dtype=int)
    for _ in range(20):
        wp.launch(chunk_of, 10007, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), np.arange(10007))


def test_float_atomics_keep_one_chunk_per_thread():
    """A kernel whose float atomics make its result depend on their order keeps one chunk
    per thread (its partial sums do not change with the chunking); others get more."""

    @wp.kernel
    def float_sum(x: wp.array(dtype=float), total: wp.array(dtype=float)):
        wp.atomic_add(total, 0, x[wp.tid()])

    summing = float_sum.compiled((True, True))
    counting = count_up.compiled((True,))
    assert summing.order_dependent and not counting.order_dependent
    assert native_pool.chunk_count(summing, 10**6, 2) == 2
    assert native_pool.chunk_count(counting, 10**6, 2) == 2 * native_pool.CHUNKS_PER_THREAD
    assert native_pool.chunk_count(counting, 5, 2) == 5


# Launches that run on the calling thread alone when the workers lost time --------------------
def _state(start, own_done, end, chunks, own_chunks):
    s = native_pool.PoolState()
    s.t_start, s.t_chunks, s.t_end, s.chunks, s.own_chunks = start, own_done, end, chunks, own_chunks
    return s


def test_two_lost_launches_in_a_row_send_the_kernel_alone_with_backoff():
    solo = [0, native_pool.SOLO_FIRST, 0]
    # the calling thread ran 16 of 32 chunks in 100 cycles, then waited 500 for a late worker:
    # alone it would have taken 200 < 600
    native_pool._judge(_state(0, 100, 600, 32, 16), solo)
    assert solo[0] == 0  # one loss may be a passing hiccup
    native_pool._judge(_state(0, 100, 600, 32, 16), solo)
    assert solo[0] == native_pool.SOLO_FIRST and solo[1] == 2 * native_pool.SOLO_FIRST
    native_pool._judge(_state(0, 100, 600, 32, 16), solo)  # (the next probe lost again)
    assert solo[0] == 2 * native_pool.SOLO_FIRST
    # a launch where the workers paid off (alone: 2 x 100 > 110) resets the backoff
    native_pool._judge(_state(0, 100, 110, 2, 1), solo)
    assert solo[1] == native_pool.SOLO_FIRST and solo[2] == 0


def test_workers_that_pay_off_are_kept():
    solo = [0, native_pool.SOLO_FIRST, 0]
    for _ in range(5):
        native_pool._judge(_state(0, 1000, 1050, 32, 16), solo)  # alone: 2000 > 1050
    assert solo[0] == 0


@wp.kernel
def scatter_sum(idx: wp.array(dtype=int), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, idx[i], x[i] * x[i])


def test_a_kernel_run_alone_gives_the_results_of_its_parallel_launch(forced_parallel):
    rng = np.random.default_rng(3)
    n = 20000
    idx = wp.array(rng.integers(0, 7, n).astype(np.int32), dtype=int)
    x = wp.array(rng.standard_normal(n).astype(np.float32), dtype=float)
    parallel = wp.zeros(7, dtype=float)
    wp.launch(scatter_sum, n, inputs=[idx, x, parallel])
    ck = next(iter(scatter_sum._compiled.values()))
    ck.__dict__["solo"] = [1, native_pool.SOLO_FIRST, 0]  # the next launch runs alone
    alone = wp.zeros(7, dtype=float)
    wp.launch(scatter_sum, n, inputs=[idx, x, alone])
    assert ck.solo[0] == 0  # (it did run alone)
    np.testing.assert_array_equal(alone.numpy(), parallel.numpy())  # the same chunks, the same sums
