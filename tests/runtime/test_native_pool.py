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
def _state(start, own_done, end, chunks, own_chunks, total=1000):
    s = native_pool.PoolState()
    s.t_start, s.t_chunks, s.t_end, s.chunks, s.own_chunks, s.total = start, own_done, end, chunks, own_chunks, total
    return s


def test_a_kernel_whose_workers_keep_losing_time_runs_alone_with_backoff():
    choice = native_pool.Choice()
    # the calling thread ran 16 of 32 chunks in 100 cycles, then waited 500 for a late worker:
    # alone it would have taken 200 < 600
    choice.ran_parallel(_state(0, 100, 600, 32, 16))
    assert choice.left == native_pool.SOLO_FIRST and choice.probe == 2 * native_pool.SOLO_FIRST
    ran = [choice.alone_now() for _ in range(native_pool.SOLO_FIRST + 1)]
    assert ran == [True] * native_pool.SOLO_FIRST + [False]  # then it tries the workers again
    choice.ran_parallel(_state(0, 100, 600, 32, 16))  # and they lose again: twice as long alone
    assert choice.left == 2 * native_pool.SOLO_FIRST


def test_one_slow_launch_among_good_ones_keeps_the_workers():
    choice = native_pool.Choice()
    for _ in range(20):  # the workers halve the time: 1000 cycles where alone takes 2000
        choice.ran_parallel(_state(0, 1000, 1050, 32, 16))
    choice.ran_parallel(_state(0, 1000, 20000, 32, 16))  # a hiccup: one launch 20x slower
    assert choice.left == 0
    choice.ran_parallel(_state(0, 1000, 1050, 32, 16))
    assert choice.left == 0 and choice.probe == native_pool.SOLO_FIRST


def test_measured_alone_runs_decide_against_slow_workers():
    choice = native_pool.Choice()
    choice.alone = 1.0  # cycles per thread, measured alone
    # the workers ran every chunk (no pace of its own to go by) and took 3x as long
    choice.ran_parallel(_state(0, 0, 3000, 2, 0))
    assert choice.left == native_pool.SOLO_FIRST


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
    choice = ck.__dict__.setdefault("pool_choice", native_pool.Choice())
    choice.left = 1  # the next launch runs alone
    alone = wp.zeros(7, dtype=float)
    wp.launch(scatter_sum, n, inputs=[idx, x, alone])
    assert choice.left == 0 and choice.alone is not None  # (it did run alone, and was timed)
    np.testing.assert_array_equal(alone.numpy(), parallel.numpy())  # the same chunks, the same sums


def _launches(choice, n, parallel_end):
    """Run `n` launches as the pool does (alone when the choice says so); the calling thread
    runs 16 of 32 chunks in 1000 cycles, alone it takes 2000; with the workers the launch
    ends at `parallel_end`. Returns how many ran alone."""
    alone = 0
    for _ in range(n):
        if choice.alone_now():
            alone += 1
            choice.ran_alone(_state(0, 0, 2000, 32, 0))
        else:
            choice.ran_parallel(_state(0, 1000, parallel_end, 32, 16))
    return alone


def test_after_a_passing_slowdown_the_workers_come_back_soon():
    choice = native_pool.Choice()
    assert _launches(choice, 50, 1050) == 0  # the workers halve the time
    assert _launches(choice, 500, 20000) > 450  # another process holds their core: mostly alone
    # over: the stretch alone under way ends, and the first probe brings the workers back
    assert _launches(choice, 400, 1050) <= native_pool.SOLO_MAX and choice.left == 0
    assert _launches(choice, 100, 1050) == 0
