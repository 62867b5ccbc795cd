"""Streams, events and device queries as a CPU-only Warp presents them: CPU work is done
when the call returns, so streams are always complete and events time host intervals."""

import time

import numpy as np
import pytest

import weft as wp


def test_cpu_device_answers_warp_queries():
    d = wp.get_device("cpu")
    assert d.ordinal == -1 and d.arch == 0 and d.sm_count == 0 and d.max_shared_memory_per_block == 0
    assert not d.is_uva and not d.is_mempool_supported and not d.is_mempool_enabled
    assert d.total_memory > 0 and 0 <= d.free_memory <= d.total_memory
    assert d.can_access(d) and wp.can_access("cpu", "cpu")
    assert wp.get_devices() == [d] and wp.get_cuda_devices() == [] and wp.get_cuda_supported_archs() == []
    assert wp.is_device_available("cpu") and wp.is_cpu_available()
    assert not wp.is_peer_access_supported("cpu", "cpu") and not wp.is_mempool_supported("cpu")


def test_cuda_only_calls_are_clear_errors():
    for call in (lambda: wp.get_cuda_device(), lambda: wp.map_cuda_device("x"),
                 lambda: wp.unmap_cuda_device("imaginary:0"),
                 lambda: wp.set_peer_access_enabled("cpu", "cpu", True),
                 lambda: wp.set_mempool_enabled("cpu", True)):
        with pytest.raises(RuntimeError):
            call()


def test_streams_and_scoped_stream():
    default = wp.get_stream()
    s = wp.Stream("cpu")
    assert s.device == "cpu" and s.is_complete and s != default
    with wp.ScopedStream(s) as current:
        assert current is s and wp.get_stream() is s and wp.get_device() == "cpu"
    assert wp.get_stream() is default
    with wp.ScopedStream(None):
        assert wp.get_stream() is default
    wp.set_stream(s)
    assert wp.get_stream("cpu") is s
    wp.set_stream(default)


def test_events_order_and_time_host_work():
    start, end = wp.Event(enable_timing=True), wp.Event(enable_timing=True)
    wp.record_event(start)
    time.sleep(0.02)
    wp.get_stream().record_event(end)
    elapsed = wp.get_event_elapsed_time(start, end)
    assert 15.0 <= elapsed < 2000.0
    other = wp.Stream()
    other.wait_event(end)
    other.wait_stream(wp.get_stream())
    wp.wait_stream(other)
    wp.wait_event(end)
    wp.synchronize_event(end)
    wp.synchronize_stream(other)
    assert end.is_complete
    with pytest.raises(RuntimeError, match="enable_timing"):
        wp.get_event_elapsed_time(wp.record_event(), end)


def test_work_on_a_stream_is_done_when_issued():
    s = wp.Stream()
    a = wp.zeros(4)
    with wp.ScopedStream(s):
        a.fill_(2.0)
        wp.synchronize_stream(s)
    np.testing.assert_array_equal(a.numpy(), 2.0)
