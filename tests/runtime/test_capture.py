"""CPU graph capture: work issued inside a capture is recorded, not run, and replayed (with
the arrays it was recorded with) by capture_launch."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def scale(x: wp.array(dtype=float), y: wp.array(dtype=float), s: float):
    i = wp.tid()
    y[i] = x[i] * s


@wp.kernel
def accumulate(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = y[i] + x[i]


@wp.kernel
def count_down(counter: wp.array(dtype=wp.int32), hits: wp.array(dtype=wp.int32)):
    wp.atomic_sub(counter, 0, 1)
    wp.atomic_add(hits, 0, 1)


def test_launches_run_on_replay_not_during_capture():
    x = wp.array(np.arange(8, dtype=np.float32))
    y = wp.zeros(8)
    with wp.ScopedCapture() as capture:
        wp.launch(scale, 8, inputs=[x, y, 3.0])
        wp.launch(accumulate, 8, inputs=[x, y])
    assert not y.numpy().any()  # nothing ran yet
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(y.numpy(), 4 * np.arange(8))
    x.assign(np.ones(8, dtype=np.float32))  # a replay sees the arrays' new contents
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(y.numpy(), 4 * np.ones(8))


def test_replays_accumulate():
    x, y = wp.ones(16), wp.zeros(16)
    with wp.ScopedCapture() as capture:
        wp.launch(accumulate, 16, inputs=[x, y])
    for _ in range(100):
        wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(y.numpy(), np.full(16, 100.0))


def test_fills_copies_and_assigns_are_recorded():
    a = wp.array(np.arange(6, dtype=np.float32))
    b = wp.zeros(6)
    grid = wp.zeros((4, 4))
    with wp.ScopedCapture() as capture:
        b.fill_(5.0)
        wp.copy(b, a, count=3)
        a.zero_()
        grid[:, 0].fill_(7.0)  # a strided view
        wp.copy(grid[:, 1], b[:4])
    assert a.numpy().tolist() == list(range(6)) and not b.numpy().any() and not grid.numpy().any()
    wp.capture_launch(capture.graph)
    assert b.numpy().tolist() == [0, 1, 2, 5, 5, 5] and not a.numpy().any()
    assert grid.numpy()[:, 0].tolist() == [7] * 4 and grid.numpy()[:, 1].tolist() == [0, 1, 2, 5]


def test_indexed_fills_are_recorded_and_read_their_indices_when_replayed():
    # (Warp refuses indexed and strided fills in a CPU capture; weft records and replays them)
    a = wp.zeros(8, dtype=wp.int32)
    idx = wp.array([0, 2, 4, 6], dtype=wp.int32)
    indexed = wp.indexedarray(a, [idx])
    with wp.ScopedCapture() as capture:
        indexed.fill_(42)
    assert not a.numpy().any()  # nothing ran yet
    wp.capture_launch(capture.graph)
    assert a.numpy().tolist() == [42, 0, 42, 0, 42, 0, 42, 0]
    with wp.ScopedCapture() as capture:
        indexed.zero_()
    idx.assign([1, 2, 3, 4])  # changed after the capture: the replay sees the new indices
    wp.capture_launch(capture.graph)
    assert a.numpy().tolist() == [42, 0, 0, 0, 0, 0, 42, 0]


def test_strided_copies_and_fills_replay_with_the_contents_at_replay_time():
    """Warp 1.19 refuses a non-contiguous copy or fill (and an indexed fill) inside a CPU
    capture with NotImplementedError (its test_graph_*_cpu_rejected); weft records them, and
    each replay reads the source as it is then."""
    src = wp.array(np.arange(16, dtype=np.int32).reshape(4, 4))
    dst = wp.zeros((4, 4), dtype=wp.int32)
    with wp.ScopedCapture() as capture:
        wp.copy(dst[:, 0], src[:, 2])  # strided on both sides
        dst[1:3, 3].fill_(-1)
    assert not dst.numpy().any()
    wp.capture_launch(capture.graph)
    expected = np.zeros((4, 4), np.int32)
    expected[:, 0], expected[1:3, 3] = [2, 6, 10, 14], -1
    np.testing.assert_array_equal(dst.numpy(), expected)
    src.assign(10 * np.arange(16, dtype=np.int32).reshape(4, 4))
    dst.zero_()
    wp.capture_launch(capture.graph)
    expected[:, 0] = [20, 60, 100, 140]
    np.testing.assert_array_equal(dst.numpy(), expected)
    np.testing.assert_array_equal(src.numpy(), 10 * np.arange(16).reshape(4, 4))  # (untouched)


def test_arrays_made_inside_the_capture_live_with_the_graph():
    x = wp.array(np.arange(4, dtype=np.float32) + 1)
    out = wp.zeros(4)
    with wp.ScopedCapture() as capture:
        tmp = wp.zeros(4)
        wp.launch(scale, 4, inputs=[x, tmp, 2.0])
        wp.launch(accumulate, 4, inputs=[tmp, out])
    del tmp
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(out.numpy(), 2 * (np.arange(4) + 1))


def test_capture_while_reads_its_condition_at_each_replay():
    counter = wp.zeros(1, dtype=wp.int32)
    hits = wp.zeros(1, dtype=wp.int32)
    with wp.ScopedCapture() as capture:
        counter.fill_(3)
        wp.capture_while(counter, while_body=lambda: wp.launch(count_down, 1, inputs=[counter, hits]))
    assert hits.numpy()[0] == 0
    for _ in range(4):
        wp.capture_launch(capture.graph)
    assert hits.numpy()[0] == 12


def test_capture_if_and_direct_calls():
    flag = wp.zeros(1, dtype=wp.int32)
    x, y = wp.ones(2), wp.zeros(2)
    with wp.ScopedCapture() as capture:
        wp.capture_if(flag, on_true=lambda: wp.launch(accumulate, 2, inputs=[x, y]),
                      on_false=lambda: y.fill_(-1.0))
    wp.capture_launch(capture.graph)
    assert y.numpy().tolist() == [-1, -1]
    flag.fill_(1)
    wp.capture_launch(capture.graph)
    assert y.numpy().tolist() == [0, 0]
    wp.capture_if(flag, on_true=lambda: y.fill_(9.0))  # outside a capture: runs now
    assert y.numpy().tolist() == [9, 9]
    with pytest.raises(TypeError, match="int32"):
        wp.capture_while(wp.zeros(1), while_body=lambda: None)


def test_adjoint_launches_and_sorts_are_recorded():
    x = wp.array(np.array([1.0, 2.0], dtype=np.float32))
    y = wp.zeros(2)
    adj_x, adj_y = wp.zeros(2), wp.ones(2)
    keys = wp.array(np.array([3, 1, 2, 0, 0, 0], dtype=np.int32))
    values = wp.array(np.array([30, 10, 20, 0, 0, 0], dtype=np.int32))
    with wp.ScopedCapture() as capture:
        wp.launch(scale, 2, inputs=[x, y, 3.0], adj_inputs=[adj_x, adj_y, 0.0], adjoint=True)
        wp.utils.radix_sort_pairs(keys, values, 3)
    assert not adj_x.numpy().any() and keys.numpy()[:3].tolist() == [3, 1, 2]
    wp.capture_launch(capture.graph)
    assert adj_x.numpy().tolist() == [3.0, 3.0]
    assert keys.numpy()[:3].tolist() == [1, 2, 3] and values.numpy()[:3].tolist() == [10, 20, 30]


def test_capture_begin_end_and_errors():
    wp.capture_begin()
    with pytest.raises(RuntimeError, match="already in progress"):
        wp.capture_begin()
    assert wp.get_device().is_capturing
    graph = wp.capture_end()
    assert isinstance(graph, wp.Graph) and not wp.get_device().is_capturing
    with pytest.raises(RuntimeError, match="not active"):
        wp.capture_end()
    with pytest.raises(TypeError, match="Graph"):
        wp.capture_launch("graph")
    with pytest.raises(RuntimeError, match="Graph debug dot print error: a CPU graph"):  # (Warp's too)
        wp.capture_debug_dot_print(graph, "graph.dot")


def test_an_error_inside_the_block_ends_the_capture():
    with pytest.raises(ZeroDivisionError), wp.ScopedCapture():
        1 / 0  # noqa: B018
    assert not wp.get_device().is_capturing


def test_a_recorded_launch_run_inside_a_capture_is_recorded():
    x, y = wp.ones(4), wp.zeros(4)
    cmd = wp.launch(accumulate, 4, inputs=[x, y], record_cmd=True)
    with wp.ScopedCapture() as capture:
        cmd.launch()
    assert not y.numpy().any()
    wp.capture_launch(capture.graph)
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(y.numpy(), 2.0)


@wp.struct
class Gain:
    k: float
    inner: wp.vec2


@wp.kernel
def apply_gain(g: Gain, y: wp.array(dtype=float), s: float):
    y[0] = g.k + g.inner[1] + s


def test_a_capture_keeps_the_parameters_and_struct_fields_it_was_recorded_with():
    # as Warp: a replay runs with the values captured; a Launch run directly reads its struct's fields
    g = Gain()
    g.k = 1.0
    y = wp.zeros(1)
    cmd = wp.launch(apply_gain, 1, inputs=[g, y, 0.0], record_cmd=True)
    with wp.ScopedCapture() as capture:
        cmd.launch()
        wp.launch(accumulate, 1, inputs=[y, y])
    g.k = 5.0
    g.inner = wp.vec2(0.0, 20.0)
    cmd.set_param_at_index(2, 100.0)
    wp.capture_launch(capture.graph)
    assert y.numpy()[0] == 2.0  # (1 + 0 + 0, doubled)
    cmd.launch()
    assert y.numpy()[0] == 125.0
    other = wp.zeros(1)
    cmd.set_param_at_index(1, other)
    wp.capture_launch(capture.graph)  # still writes the array it was captured with
    assert y.numpy()[0] == 2.0 and other.numpy()[0] == 0.0


def test_other_threads_are_not_captured():
    import threading
    x, y, z = wp.ones(4), wp.zeros(4), wp.zeros(4)
    with wp.ScopedCapture() as capture:
        wp.launch(accumulate, 4, inputs=[x, y])
        worker = threading.Thread(target=lambda: wp.launch(accumulate, 4, inputs=[x, z]))
        worker.start()
        worker.join()
    np.testing.assert_array_equal(z.numpy(), 1.0)  # ran at once, on its own thread
    assert not y.numpy().any()
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(y.numpy(), 1.0)
    np.testing.assert_array_equal(z.numpy(), 1.0)


def test_capture_pause_and_resume():
    from weft._src.context import capture_pause, capture_resume

    @wp.kernel
    def scale_into(src: wp.array(dtype=float), dst: wp.array(dtype=float), s: float):
        i = wp.tid()
        dst[i] = src[i] * s

    src = wp.array([1.0, 2.0], dtype=float)
    recorded = wp.zeros(2, dtype=float)
    immediate = wp.zeros(2, dtype=float)
    with wp.ScopedCapture() as capture:
        wp.launch(scale_into, dim=2, inputs=[src, recorded, 2.0])
        graph = capture_pause()
        assert not wp.get_device().is_capturing
        wp.launch(scale_into, dim=2, inputs=[src, immediate, 5.0])  # runs now, not recorded
        np.testing.assert_array_equal(immediate.numpy(), [5.0, 10.0])
        capture_resume(graph)
        assert wp.get_device().is_capturing
        wp.launch(scale_into, dim=2, inputs=[recorded, recorded, 3.0])
    assert len(capture.graph.ops) == 2
    np.testing.assert_array_equal(recorded.numpy(), [0.0, 0.0])
    immediate.zero_()
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(recorded.numpy(), [6.0, 12.0])
    np.testing.assert_array_equal(immediate.numpy(), [0.0, 0.0])
    with pytest.raises(RuntimeError, match="not paused"):
        capture_resume(capture.graph)
    with pytest.raises(RuntimeError, match="not active"):
        capture_pause()


@pytest.mark.parametrize("mode", list(wp.CaptureMode))
def test_every_capture_mode_records_the_same_work(mode):
    x = wp.array(np.arange(4.0), dtype=float)
    y = wp.zeros(4, dtype=float)
    with wp.ScopedCapture(capture_mode=mode) as capture:
        wp.launch(scale, 4, inputs=[x, y, 2.0])
    assert not y.numpy().any()  # recorded, not run
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(y.numpy(), 2.0 * np.arange(4.0))
    with pytest.raises(TypeError, match="CaptureMode"):
        wp.capture_begin(capture_mode="relaxed")
