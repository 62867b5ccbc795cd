"""Streams, events, memory pools and device queries as a CPU-only Warp presents them:
streams and events are CUDA's (a RuntimeError for the CPU), the CPU's work is done when
issued, and memory pools and peer access can only be disabled on the CPU."""

import numpy as np
import pytest

import weft as wp


def test_cpu_device_answers_warp_queries():
    d = wp.get_device("cpu")
    assert d.ordinal == -1 and d.arch == 0 and d.sm_count == 0 and d.max_shared_memory_per_block == 0
    assert not d.is_uva and not d.is_mempool_supported and not d.is_mempool_enabled
    for flag in ("is_cpu_memory_access_from_gpu_supported", "is_gpu_memory_access_from_cpu_supported",
                 "is_cpu_gpu_atomic_supported", "is_managed_memory_supported",
                 "is_concurrent_managed_access_supported"):
        assert getattr(d, flag) is False
    assert d.total_memory > 0 and 0 <= d.free_memory <= d.total_memory
    assert d.can_access(d) and d.can_access("cpu")
    assert wp.get_devices() == [d] and wp.get_cuda_devices() == [] and wp.get_cuda_supported_archs() == []
    assert wp.is_device_available("cpu") and wp.is_cpu_available()
    assert not wp.is_peer_access_supported("cpu", "cpu") and not wp.is_peer_access_enabled("cpu", "cpu")
    assert not wp.is_mempool_supported("cpu") and not wp.is_mempool_enabled("cpu")
    assert not wp.is_mempool_access_supported("cpu", "cpu") and not wp.is_mempool_access_enabled("cpu", "cpu")


def test_cuda_only_calls_are_clear_errors():
    for call in (lambda: wp.get_cuda_device(), lambda: wp.map_cuda_device("x"),
                 lambda: wp.unmap_cuda_device("imaginary:0")):
        with pytest.raises(RuntimeError):
            call()


def test_memory_pools_and_peer_access_on_the_cpu():
    # enabling needs CUDA devices: Warp's ValueError for the CPU; disabling is accepted
    for call in (lambda: wp.set_mempool_enabled("cpu", True),
                 lambda: wp.set_mempool_access_enabled("cpu", "cpu", True),
                 lambda: wp.set_peer_access_enabled("cpu", "cpu", True),
                 lambda: wp.set_mempool_release_threshold("cpu", 42000),
                 lambda: wp.set_mempool_release_threshold("cpu", 0.5),
                 lambda: wp.get_mempool_release_threshold("cpu"),
                 lambda: wp.get_mempool_used_mem_current("cpu"),
                 lambda: wp.get_mempool_used_mem_high()):
        with pytest.raises(ValueError, match="CUDA devices"):
            call()
    wp.set_mempool_enabled("cpu", False)
    wp.set_mempool_access_enabled("cpu", "cpu", False)
    wp.set_peer_access_enabled("cpu", "cpu", False)
    assert not wp.is_mempool_enabled("cpu")
    with wp.ScopedMempool("cpu", False), wp.ScopedMempoolAccess("cpu", "cpu", False), \
            wp.ScopedPeerAccess("cpu", "cpu", False):
        a = wp.array(np.arange(5, dtype=np.float32))
        b = wp.zeros(5)
        wp.copy(b, a)
    np.testing.assert_array_equal(b.numpy(), np.arange(5))
    assert not wp.is_mempool_enabled("cpu")
    for scope in (wp.ScopedMempool("cpu", True), wp.ScopedMempoolAccess("cpu", "cpu", True),
                  wp.ScopedPeerAccess("cpu", "cpu", True)):
        with pytest.raises(ValueError):
            with scope:
                pass
    assert not wp.is_mempool_enabled("cpu")


def test_streams_and_events_need_a_cuda_device():
    cpu = wp.get_device("cpu")
    for call in (lambda: wp.Stream(), lambda: wp.Stream("cpu"), lambda: wp.Event(cpu),
                 lambda: cpu.stream, lambda: wp.get_stream(), lambda: wp.get_stream("cpu"),
                 lambda: wp.record_event()):
        with pytest.raises(RuntimeError, match="not a CUDA device"):
            call()
    with pytest.raises(RuntimeError, match="not a CUDA device"):
        cpu.stream = None
    assert not cpu.has_stream
    # an instance whose __init__ refused (or never ran) can still be deleted
    wp.Stream.__new__(wp.Stream).__del__()
    wp.Event.__new__(wp.Event).__del__()


def test_cpu_work_is_done_when_issued():
    a = wp.zeros(4)
    with wp.ScopedStream(None) as s:  # no stream: nothing changes
        assert s is None
        a.fill_(2.0)
    wp.synchronize_stream()
    wp.synchronize_stream("cpu")
    wp.synchronize_device("cpu")
    wp.synchronize()
    np.testing.assert_array_equal(a.numpy(), 2.0)


def test_can_access_takes_a_device_and_an_array():
    cpu = wp.get_device("cpu")
    a = wp.empty(4, dtype=wp.float32)
    assert wp.can_access(cpu, a) and wp.can_access("cpu", a[1:])
    idx = wp.indexedarray(a, [wp.array(np.array([0, 2], dtype=np.int32))])
    assert wp.can_access(cpu, idx)
    for resource in (cpu, "cpu", np.zeros(3), wp.array(dtype=wp.float32), wp.array[wp.float32],
                     wp.indexedarray[wp.float32]):
        with pytest.raises(TypeError, match="concrete Warp array"):
            wp.can_access(cpu, resource)


@wp.kernel
def _fill_one(out: wp.array(dtype=float)):
    out[wp.tid()] = 1.0


def test_launch_array_access_mode_takes_only_its_enum():
    mode = wp.config.LaunchArrayAccessMode
    assert [int(m) for m in mode] == [0, 1, 2]
    saved = wp.config.launch_array_access_mode
    assert saved is mode.RELAXED
    try:
        for m in mode:
            wp.config.launch_array_access_mode = m
            assert wp.config.launch_array_access_mode is m
            out = wp.zeros(3)
            wp.launch(_fill_one, 3, inputs=[out])  # every array is on the CPU: every mode launches
            np.testing.assert_array_equal(out.numpy(), 1.0)
        for bad in (False, True, 0, 2, "checked"):
            with pytest.raises(ValueError, match="launch_array_access_mode"):
                wp.config.launch_array_access_mode = bad
        assert wp.config.launch_array_access_mode is mode.STRICT
    finally:
        wp.config.launch_array_access_mode = saved
