"""Cooperative CPU blocks (config.enable_cpu_blocks): a block's threads meet in tile ops.

The block program (weft/transforms/lanes.py) must give what block_dim threads running
together give: tile(x) gathers one value per thread, stacks and scatters take one per
thread, early returns leave the other threads going, and gradients count each thread once.
"""

import numpy as np
import pytest

import weft as wp

B = 8


@pytest.fixture(autouse=True)
def cpu_blocks(monkeypatch):
    monkeypatch.setattr(wp.config, "enable_cpu_blocks", True)


@wp.kernel
def gather_sum(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i, lane = wp.tid()
    v = x[i * B + lane]
    t = wp.tile(v * v)
    total = wp.tile_sum(t)
    y[i * B + lane] = wp.untile(t) * total[0] + wp.float64(wp.block_dim())


def _gather_sum_numpy(x):
    sq = x.reshape(-1, B) ** 2
    return (sq * sq.sum(axis=1, keepdims=True)).ravel() + B


def test_tile_gathers_one_value_per_thread_and_untile_gives_each_its_own():
    x = np.linspace(0.5, 2.0, 2 * B)
    y = wp.zeros(2 * B, dtype=wp.float64)
    wp.launch_tiled(gather_sum, dim=[2], inputs=[wp.array(x), y], block_dim=B)
    np.testing.assert_allclose(y.numpy(), _gather_sum_numpy(x), rtol=1e-12)


def test_gradient_counts_each_thread_once():
    x0 = np.linspace(0.5, 2.0, 2 * B)
    x = wp.array(x0, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(2 * B, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(gather_sum, dim=[2], inputs=[x, y], block_dim=B)
    w = np.cos(np.arange(2 * B))  # d(w . y)/dx
    tape.backward(grads={y: wp.array(w, dtype=wp.float64)})
    eps = 1e-6
    fd = np.array([(w @ _gather_sum_numpy(x0 + eps * e) - w @ _gather_sum_numpy(x0 - eps * e)) / (2 * eps)
                   for e in np.eye(2 * B)])
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-6)
    # analytic: y_j = s_j S + B with s_j = x_j^2, S the block's sum of s
    sq = x0.reshape(-1, B) ** 2
    wb = w.reshape(-1, B)
    analytic = 2 * x0.reshape(-1, B) * (wb * sq.sum(axis=1, keepdims=True) + (wb * sq).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(x.grad.numpy(), analytic.ravel(), rtol=1e-9)


@wp.kernel
def stack_round_trip(counts: wp.array(dtype=int), popped: wp.array(dtype=int)):
    _, lane = wp.tid()
    s = wp.tile_stack(capacity=16, dtype=int)
    wp.tile_stack_push(s, lane * 10, lane % 2 == 0)
    counts[lane] = wp.tile_stack_count(s)
    value, slot = wp.tile_stack_pop(s)
    if slot >= 0:
        popped[slot] = value


def test_a_stack_takes_one_push_and_one_pop_per_thread():
    counts = wp.zeros(B, dtype=int)
    popped = wp.full(B, -1, dtype=int)
    wp.launch_tiled(stack_round_trip, dim=[1], inputs=[counts, popped], block_dim=B)
    np.testing.assert_array_equal(counts.numpy(), np.full(B, B // 2))
    assert sorted(popped.numpy()[popped.numpy() >= 0].tolist()) == [0, 20, 40, 60]


@wp.kernel
def scatter_same_slot(out: wp.array(dtype=float)):
    t = wp.tile_zeros(shape=4, dtype=float)
    wp.tile_scatter_add(t, 1, 1.0, True)
    wp.tile_store(out, t)


def test_scatters_add_once_per_thread():
    out = wp.zeros(4, dtype=float)
    wp.launch_tiled(scatter_same_slot, dim=[1], inputs=[out], block_dim=B)
    np.testing.assert_array_equal(out.numpy(), [0.0, B, 0.0, 0.0])


@wp.kernel
def survivors(counts: wp.array(dtype=int)):
    tid = wp.tid()
    lane = tid % B
    if lane % 3 == 0:
        return
    s = wp.tile_stack(capacity=B, dtype=int)
    wp.tile_stack_push(s, lane, True)
    counts[tid] = wp.tile_stack_count(s)


def test_threads_that_return_early_leave_the_others_going_and_partial_blocks_run_their_prefix():
    n = 2 * B - 3  # the second block has B - 3 threads
    counts = wp.full(n, -1, dtype=int)
    wp.launch(survivors, dim=n, inputs=[counts], block_dim=B)
    expected = np.full(n, -1)
    for start in (0, B):
        lanes = [lane for lane in range(min(B, n - start)) if lane % 3 != 0]
        expected[[start + lane for lane in lanes]] = len(lanes)
    np.testing.assert_array_equal(counts.numpy(), expected)


@wp.kernel
def from_thread(out: wp.array(dtype=int)):
    i = wp.tid()
    t = wp.tile_from_thread(shape=(2,), value=i * 3, thread_idx=5)
    wp.tile_store(out, t, offset=2 * (i // B))


def test_tile_from_thread_takes_the_named_thread_value():
    out = wp.zeros(4, dtype=int)
    wp.launch(from_thread, dim=2 * B, inputs=[out], block_dim=B)
    np.testing.assert_array_equal(out.numpy(), [15, 15, (B + 5) * 3, (B + 5) * 3])


@wp.kernel
def no_tiles(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = float(i) * 2.0


def test_kernels_without_tiles_run_thread_by_thread():
    a = wp.zeros(10, dtype=float)
    wp.launch(no_tiles, dim=10, inputs=[a], block_dim=B)
    np.testing.assert_array_equal(a.numpy(), np.arange(10) * 2.0)
    assert no_tiles.__dict__.get("_lane_variants", {}) == {}  # (no block program was made)


@wp.kernel
def scatter_values(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    _, lane = wp.tid()
    t = wp.tile_zeros(shape=4, dtype=wp.float64)
    wp.tile_scatter_add(t, lane % 4, x[lane] * x[lane], True)
    wp.tile_store(out, t)


@wp.kernel
def assign_values(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    _, lane = wp.tid()
    t = wp.tile_zeros(shape=4, dtype=wp.float64)
    t[lane % 4] = x[lane] * 3.0  # lanes 4..7 overwrite lanes 0..3
    wp.tile_store(out, t)


def _grad_of(kernel, x0, w):
    x = wp.array(x0, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(kernel, dim=[1], inputs=[x, out], block_dim=B)
    tape.backward(grads={out: wp.array(w, dtype=wp.float64)})
    return out.numpy(), x.grad.numpy()


def test_gradients_through_updates_the_threads_make_in_turn():
    x0 = np.linspace(1.0, 2.0, B)
    w = np.array([1.0, 2.0, 3.0, 4.0])
    out, grad = _grad_of(scatter_values, x0, w)
    np.testing.assert_allclose(out, (x0 ** 2).reshape(2, 4).sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(grad, 2 * x0 * np.tile(w, 2), rtol=1e-12)
    eps = 1e-6
    fd = [(w @ _grad_of(scatter_values, x0 + eps * e, w)[0] - w @ _grad_of(scatter_values, x0 - eps * e, w)[0])
          / (2 * eps) for e in np.eye(B)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6)
    out, grad = _grad_of(assign_values, x0, w)  # the last writer's value stays: only it gets a gradient
    np.testing.assert_allclose(out, 3 * x0[4:], rtol=1e-12)
    np.testing.assert_allclose(grad, np.concatenate([np.zeros(4), 3 * w]), rtol=1e-12)


@wp.kernel
def scale_in_turn(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    _, lane = wp.tid()
    t = wp.tile_ones(shape=4, dtype=wp.float64)
    t[0] = t[0] * x[lane]  # each thread reads what the ones before it left
    t[lane % 4] += x[lane]
    wp.tile_store(out, t)


def _scale_in_turn_numpy(x):
    t = np.ones(4)
    for v in x:  # (an element write is a barrier: every thread's first, then every second)
        t[0] *= v
    for lane, v in enumerate(x):
        t[lane % 4] += v
    return t


def test_gradients_through_threads_reading_the_tile_they_update_in_turn():
    x0 = np.linspace(0.5, 1.5, B)
    w = np.array([1.0, -2.0, 0.5, 3.0])
    out, grad = _grad_of(scale_in_turn, x0, w)
    np.testing.assert_allclose(out, _scale_in_turn_numpy(x0), rtol=1e-12)
    eps = 1e-6
    fd = [(w @ _scale_in_turn_numpy(x0 + eps * e) - w @ _scale_in_turn_numpy(x0 - eps * e)) / (2 * eps)
          for e in np.eye(B)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6)


@wp.kernel
def scale_some_in_turn(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    _, lane = wp.tid()
    t = wp.tile_ones(shape=4, dtype=wp.float64)
    if lane > 2:
        t[0] = t[0] * x[lane]
    wp.tile_store(out, t)


def test_gradients_through_threads_reading_the_tile_they_update_under_a_branch_and_in_partial_blocks():
    x0 = np.linspace(0.5, 1.5, B)
    w = np.array([1.0, -2.0, 0.5, 3.0])
    out, grad = _grad_of(scale_some_in_turn, x0, w)
    assert np.isclose(out[0], np.prod(x0[3:]))
    analytic = np.zeros(B)
    analytic[3:] = w[0] * np.prod(x0[3:]) / x0[3:]
    np.testing.assert_allclose(grad, analytic, rtol=1e-12)
    # a launch of 6 threads in blocks of 8: lanes 6 and 7 do nothing
    x = wp.array(x0, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scale_first_in_turn, dim=6, inputs=[x, out], block_dim=B)
    assert np.isclose(out.numpy()[0], np.prod(x0[:6]))
    tape.backward(grads={out: wp.array(w, dtype=wp.float64)})
    analytic = np.zeros(B)
    analytic[:6] = w[0] * np.prod(x0[:6]) / x0[:6]
    np.testing.assert_allclose(x.grad.numpy(), analytic, rtol=1e-12)


@wp.kernel
def scale_first_in_turn(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = wp.tile_ones(shape=4, dtype=wp.float64)
    t[0] = t[0] * x[i]
    wp.tile_store(out, t)


@wp.kernel
def loop_with_lane_values(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64),
                          per_lane: wp.array(dtype=wp.float64)):
    _, lane = wp.tid()
    acc = wp.float64(0.0)
    t = wp.tile_zeros(shape=B, dtype=wp.float64)
    for k in range(4):
        a = wp.tile_load(x, shape=B, offset=k * B)
        t += a * a
        acc += wp.untile(a) * wp.float64(k + 1)
    wp.tile_store(out, t)
    per_lane[lane] = acc


def test_loops_carry_tiles_and_each_thread_own_values_with_gradients():
    x0 = np.linspace(0.1, 1.0, 4 * B)
    x = wp.array(x0, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(B, dtype=wp.float64, requires_grad=True)
    per_lane = wp.zeros(B, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(loop_with_lane_values, dim=[1], inputs=[x, out, per_lane], block_dim=B)
    rows = x0.reshape(4, B)
    weights = np.arange(1, 5)[:, None]
    np.testing.assert_allclose(out.numpy(), (rows ** 2).sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(per_lane.numpy(), (rows * weights).sum(axis=0), rtol=1e-12)
    tape.backward(grads={out: wp.ones(B, dtype=wp.float64), per_lane: wp.ones(B, dtype=wp.float64)})
    np.testing.assert_allclose(x.grad.numpy(), (2 * rows + weights).ravel(), rtol=1e-12)


@wp.kernel
def while_with_lane_values(n: wp.array(dtype=int), out: wp.array(dtype=int)):
    _, lane = wp.tid()
    s = wp.tile_zeros(shape=B, dtype=int)
    k = 0
    count = 0
    while k < n[0]:
        s += wp.tile(lane + k)
        count += lane
        k += 1
    wp.tile_store(out, s)
    out[B + lane] = count


def test_while_loops_holding_tile_ops_run_once_per_block():
    out = wp.zeros(2 * B, dtype=int)
    wp.launch_tiled(while_with_lane_values, dim=[1], inputs=[wp.array([3], dtype=int), out], block_dim=B)
    lanes = np.arange(B)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([3 * lanes + 3, 3 * lanes]))


@wp.kernel
def store_row_of_block(x: wp.array(dtype=float), rows: wp.array2d(dtype=float)):
    i = wp.tid()
    s = wp.tile_sum(wp.tile(x[i] * 2.0))
    if i % B == 0:  # one thread per block stores, into a view it indexes with its own value
        wp.tile_store(rows[i // B], s)


def test_a_view_a_thread_makes_inside_a_branch_is_made_again_for_the_block():
    xn = np.arange(3 * B, dtype=np.float32)
    rows = wp.zeros((3, 1), dtype=float)
    wp.launch(store_row_of_block, dim=3 * B, inputs=[wp.array(xn), rows], block_dim=B)
    np.testing.assert_allclose(rows.numpy().ravel(), 2.0 * xn.reshape(3, B).sum(axis=1))


def test_tile_elements_written_in_loops_by_every_thread_update_the_shared_tile():
    """`for i in range(n): K[i, 0] = x[i]` in each thread (a kernel matrix built element by
    element before a tile solve): the loop carries the block's tile, updated in place; the
    same with a `while` loop and augmented writes."""
    n = 4

    @wp.kernel
    def fill(x: wp.array(dtype=float), out: wp.array2d(dtype=float)):
        K = wp.tile_zeros(shape=(n, n), dtype=float, storage="shared")
        for i in range(n):
            K[i, 0] = x[i]
        j = int(0)  # noqa: UP018 - a variable, as Warp requires
        while j < n:
            K[j, j] += 2.0
            j += 1
        wp.tile_store(out, K)

    out = wp.zeros((n, n), dtype=float)
    wp.launch_tiled(fill, dim=1, inputs=[wp.array([1.0, 2.0, 3.0, 4.0], dtype=float), out], block_dim=B)
    expected = np.zeros((n, n))
    expected[:, 0] = [1, 2, 3, 4]
    expected[np.arange(n), np.arange(n)] += 2.0 * B  # (each of the B threads adds 2)
    np.testing.assert_array_equal(out.numpy(), expected)


@wp.kernel
def unpacks_more_indices_than_the_launch_has(x: wp.array(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()  # a 1-D launch: j is 0, as without blocks (and in Warp)
    s = wp.tile_sum(wp.tile(x[i]))
    out[i, 0] = float(j)
    out[i, 1] = s[0]


def test_tid_unpacked_into_more_indices_than_the_launch_has():
    x = np.arange(16, dtype=np.float32)
    out = wp.zeros((16, 2), dtype=float)
    wp.launch(unpacks_more_indices_than_the_launch_has, dim=16, inputs=[wp.array(x), out], block_dim=B)
    np.testing.assert_array_equal(out.numpy()[:, 0], 0)
    np.testing.assert_array_equal(out.numpy()[:, 1], np.repeat(x.reshape(-1, B).sum(axis=1), B))
