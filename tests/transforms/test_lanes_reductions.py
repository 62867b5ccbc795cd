"""Reductions, stores and atomic adds in cooperative CPU blocks (config.enable_cpu_blocks)
skip the elements of the threads that do not run: those past the launch's threads in its
last block and those that returned early, as Warp's CPU blocks do (element k of a tile is
thread k % block_dim's; builtins/tiles/reduce.py, memory.py)."""

import numpy as np
import pytest

import weft as wp

B = 8


@pytest.fixture(autouse=True)
def cpu_blocks(monkeypatch):
    monkeypatch.setattr(wp.config, "enable_cpu_blocks", True)


@wp.func
def smaller(a: float, b: float):
    return wp.min(a, b)


@wp.kernel
def block_stats(x: wp.array(dtype=float), out: wp.array2d(dtype=float), args: wp.array2d(dtype=int)):
    i = wp.tid()
    t = wp.tile(x[i])
    t2 = wp.tile(wp.vec2(x[i], -x[i]))  # shape (2, B): element (r, k) is thread k's
    r = wp.tile_reduce(wp.max, t2, axis=1)
    c = wp.tile_reduce(wp.max, t2, axis=0)  # -inf (max's identity) for a missing thread
    stats = wp.vec4(wp.tile_max(t)[0], wp.tile_min(t)[0], wp.tile_sum(t)[0], wp.tile_reduce(wp.mul, t)[0])
    more = wp.vec4(wp.tile_reduce(smaller, t)[0], r[1], wp.tile_dot(t, t)[0], c[B - 1])
    amax = wp.tile_argmax(t)[0]
    amin = wp.tile_argmin(t)[0]
    if i % B == 0:
        b = i // B
        for k in range(4):
            out[b, k] = stats[k]
            out[b, 4 + k] = more[k]
        args[b, 0] = amax
        args[b, 1] = amin


def test_the_last_partial_block_reduces_over_the_threads_that_exist():
    n = 2 * B + 3  # the third block has 3 threads
    xn = -1.0 - np.arange(n, dtype=np.float32) * 0.5  # negative: the missing threads' zeros would win a max
    xn[B + 2] = 4.0
    out = wp.zeros((3, 8), dtype=float)
    args = wp.zeros((3, 2), dtype=int)
    wp.launch(block_stats, dim=n, inputs=[wp.array(xn), out, args], block_dim=B)
    for b in range(3):
        v = xn[b * B:(b + 1) * B].astype(np.float64)
        last = max(v[B - 1], -v[B - 1]) if len(v) == B else -np.inf
        expected = [v.max(), v.min(), v.sum(), np.prod(v), v.min(), -v.min(), v @ v, last]
        np.testing.assert_allclose(out.numpy()[b], expected, rtol=1e-6, err_msg=f"block {b}")
        np.testing.assert_array_equal(args.numpy()[b], [np.argmax(v), np.argmin(v)])


@wp.kernel
def survivors_max(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    if i % 3 == 0:
        return
    t = wp.tile(x[i])
    out[i] = wp.tile_max(t)[0] + wp.tile_min(t)[0]


def test_threads_that_returned_early_are_left_out_of_reductions():
    xn = np.array([9.0, -1.0, -2.0, 50.0, -3.0, -4.0, -60.0, -5.0], dtype=np.float32)
    out = wp.zeros(B, dtype=float)
    wp.launch(survivors_max, dim=B, inputs=[wp.array(xn), out], block_dim=B)
    kept = [k for k in range(B) if k % 3 != 0]
    expected = np.zeros(B, dtype=np.float32)
    expected[kept] = xn[kept].max() + xn[kept].min()
    np.testing.assert_array_equal(out.numpy(), expected)


@wp.kernel
def partial_max_loss(x: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = wp.tile(x[i] * x[i])
    m = wp.tile_max(t * wp.float64(-1.0))  # (the missing threads' zeros would win it)
    if i % B == 0:
        wp.atomic_add(loss, 0, -m[0])


def test_the_gradient_of_a_partial_block_max_reaches_only_its_threads():
    n = B + 3
    xn = np.linspace(2.0, 1.0, n)  # the smallest square of each block is its last thread's
    x = wp.array(xn, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(partial_max_loss, dim=n, inputs=[x, loss], block_dim=B)
    tape.backward(loss)
    expected = np.zeros(n)
    expected[[B - 1, n - 1]] = 2.0 * xn[[B - 1, n - 1]]
    np.testing.assert_allclose(loss.numpy(), [xn[B - 1] ** 2 + xn[n - 1] ** 2], rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


@wp.kernel
def rows_of_threads(x: wp.array(dtype=float), out: wp.array2d(dtype=float)):
    i = wp.tid()
    g = wp.tile_reshape(wp.tile(x[i]), shape=(2, B // 2))  # needs block_dim elements: no 1-thread form
    wp.tile_store(out[i // B], wp.tile_sum(g, axis=1))


def test_a_kernel_that_compiles_only_for_its_blocks_is_launched_as_a_block_program():
    xn = np.arange(2 * B, dtype=np.float32)
    out = wp.zeros((2, 2), dtype=float)
    wp.launch(rows_of_threads, dim=2 * B, inputs=[wp.array(xn), out], block_dim=B)
    np.testing.assert_allclose(out.numpy(), xn.reshape(2, 2, B // 2).sum(axis=2))


@wp.kernel
def store_and_add(x: wp.array(dtype=float), copy: wp.array(dtype=float), acc: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile(x[i])
    wp.tile_store(copy, t, offset=(i // B) * B)
    wp.tile_atomic_add(acc, t + wp.tile_ones(B, dtype=float))


def test_the_missing_threads_of_a_partial_block_store_and_add_nothing():
    n = B + 3
    xn = np.arange(1, n + 1, dtype=np.float32)
    copy = wp.full(2 * B, -5.0, dtype=float)
    acc = wp.zeros(B, dtype=float)
    wp.launch(store_and_add, dim=n, inputs=[wp.array(xn), copy, acc], block_dim=B)
    expected = np.full(2 * B, -5.0, dtype=np.float32)
    expected[:n] = xn
    np.testing.assert_array_equal(copy.numpy(), expected)
    added = xn[:B] + 1.0
    added[:3] += xn[B:] + 1.0  # the second block's three threads
    np.testing.assert_array_equal(acc.numpy(), added)


@wp.kernel
def scans_of_loaded(x: wp.array2d(dtype=float), inc: wp.array2d(dtype=float), top: wp.array2d(dtype=float)):
    blk = wp.tid() // B
    t = wp.tile_load(x[blk], shape=2 * B)  # element k is thread k % B's
    wp.tile_store(inc[blk], wp.tile_scan_inclusive(t))
    wp.tile_store(top, wp.tile_reshape(wp.tile_scan_max_inclusive(t), shape=(1, 2 * B)), offset=(blk, 0))


def test_scans_in_a_partial_block_run_over_the_elements_of_the_threads_that_run():
    active = 3
    xn = np.stack([np.full(2 * B, 100.0), np.arange(1.0, 2 * B + 1)]).astype(np.float32)
    inc = wp.full((2, 2 * B), -1.0, dtype=float)
    top = wp.full((2, 2 * B), -1.0, dtype=float)
    wp.launch(scans_of_loaded, dim=B + active, inputs=[wp.array(xn), inc, top], block_dim=B)
    runs = np.arange(2 * B) % B < active
    expected = np.full(2 * B, -1.0, dtype=np.float32)
    expected[runs] = np.cumsum(xn[1][runs])
    np.testing.assert_array_equal(inc.numpy()[1], expected)
    expected[runs] = np.maximum.accumulate(xn[1][runs])
    np.testing.assert_array_equal(top.numpy()[1], expected)
    np.testing.assert_array_equal(inc.numpy()[0], np.cumsum(xn[0]))


@wp.func
def plus(a: float, b: float):
    return a + b


@wp.kernel
def custom_rows(x: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(B, 2))  # row r holds elements 2r, 2r+1: threads 2r % B, (2r+1) % B
    wp.tile_store(out, wp.tile_reduce(plus, t, axis=1))


def test_a_custom_reduction_of_a_slice_with_no_running_thread_is_an_error():
    x = wp.ones((B, 2), dtype=float)
    out = wp.zeros(B, dtype=float)
    with pytest.raises(Exception, match="no declared identity"):
        wp.launch(custom_rows, dim=2, inputs=[x, out], block_dim=B)  # rows 1..: threads 2.. do not run


@wp.kernel
def scatter_rows(x: wp.array(dtype=float), out: wp.array(dtype=float), acc: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile(x[i])
    idx = wp.tile_arange(B, dtype=int) * 2 + wp.tile_full(B, i // B, dtype=int)  # (blocks: even, odd)
    wp.tile_store_indexed(out, idx, t, axis=0)
    wp.tile_atomic_add_indexed(acc, idx, t + wp.tile_ones(B, dtype=float), axis=0)


def test_indexed_stores_and_adds_leave_out_the_threads_that_do_not_run():
    n = B + 3
    xn = np.arange(1, n + 1, dtype=np.float32)
    out = wp.full(2 * B, -1.0, dtype=float)
    acc = wp.zeros(2 * B, dtype=float)
    wp.launch(scatter_rows, dim=n, inputs=[wp.array(xn), out, acc], block_dim=B)
    expected = np.full(2 * B, -1.0, dtype=np.float32)
    expected[0:2 * B:2] = xn[:B]
    expected[1:7:2] = xn[B:]  # the second block's three threads
    np.testing.assert_array_equal(out.numpy(), expected)
    added = np.zeros(2 * B, dtype=np.float32)
    added[0:2 * B:2] = xn[:B] + 1.0
    added[1:7:2] = xn[B:] + 1.0
    np.testing.assert_array_equal(acc.numpy(), added)
