"""Allocators, memory kinds and pinned arrays as a CPU-only Warp has them."""

import ctypes
import importlib.util

import numpy as np
import pytest

import weft as wp
from weft._src import context


def test_arrays_report_their_memory_kind_and_allocator():
    cpu = wp.get_device("cpu")
    a = wp.zeros(8)
    p = wp.zeros(8, pinned=True)
    assert not a.pinned and p.pinned
    assert a.memory_kind == wp.MemoryKind.HOST and p.memory_kind == wp.MemoryKind.PINNED
    assert a[2:].memory_kind == wp.MemoryKind.HOST and p[2:].memory_kind == wp.MemoryKind.PINNED
    assert context._get_array_allocator(a[1:]) is a._allocator is cpu.default_allocator
    assert context._get_array_allocator(p[1:]) is cpu.pinned_allocator
    assert cpu.get_allocator(pinned=True) is cpu.pinned_allocator
    for make in (wp.zeros_like, wp.empty_like, wp.ones_like):
        assert make(p).pinned and not make(p, pinned=False).pinned and not make(a).pinned
    assert wp.clone(p).pinned and not wp.clone(a).pinned
    assert wp.full(3, 2.0, pinned=True).pinned and wp.empty(3, pinned=True).pinned
    assert wp.array([1.0, 2.0], pinned=True).pinned
    # memory weft did not allocate has no allocator (it is still host memory)
    raw = np.ones(4, np.float32)
    alias = wp.array(raw, copy=False)
    assert context._get_array_allocator(alias) is None and alias.memory_kind == wp.MemoryKind.HOST
    assert context._get_array_memory_kind(p) == wp.MemoryKind.PINNED
    assert context._get_array_memory_kind(3.0) == wp.MemoryKind.UNKNOWN


def test_cpu_allocator_hands_out_host_memory():
    alloc = wp.get_device_allocator("cpu")
    assert alloc is wp.get_device("cpu").default_allocator and alloc.memory_kind == wp.MemoryKind.HOST
    assert isinstance(alloc, wp.Allocator)
    ptr = alloc.allocate(64)
    buf = (ctypes.c_ubyte * 64).from_address(ptr)
    assert bytes(buf) == bytes(64)  # zeroed
    view = wp.array(ptr=ptr, shape=(16,), dtype=wp.float32)
    view.fill_(3.0)
    assert np.frombuffer(bytes(buf), np.float32).tolist() == [3.0] * 16
    del view
    alloc.deallocate(ptr, 64)
    with pytest.raises(ValueError, match="not allocated by this allocator"):
        alloc.deallocate(ptr, 64)


def test_custom_allocators_are_cuda_only():
    class Bump:
        def allocate(self, size_in_bytes):
            return 0

        def deallocate(self, ptr, size_in_bytes):
            pass

    with pytest.raises(RuntimeError, match="only supported on CUDA devices"):
        wp.set_device_allocator("cpu", Bump())
    with pytest.raises(RuntimeError, match="only supported on CUDA devices"):
        wp.ScopedAllocator("cpu", Bump())
    with pytest.raises(RuntimeError, match="no CUDA devices"):
        wp.set_cuda_allocator(Bump())
    with pytest.raises(TypeError, match="Allocator protocol"):
        wp.set_cuda_allocator(object())
    with pytest.raises(RuntimeError, match="CUDA context"):
        wp.CudaManagedAllocator().allocate(16)


@pytest.mark.skipif(importlib.util.find_spec("rmm") is not None, reason="RMM is installed")
def test_rmm_allocator_needs_rmm():
    with pytest.raises(ImportError):
        wp.utils.AllocatorRmm()
