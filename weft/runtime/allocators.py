"""Warp's allocator objects and memory kinds, as a CPU-only Warp has them.

The CPU device's allocators (`device.default_allocator`, `device.pinned_allocator`,
`weft.get_device_allocator("cpu")`) hand out zeroed host memory by address; weft's arrays
take their memory from `array_memory.allocate` and name the allocator they stand for in
`_allocator`. Pinned memory is host memory on a machine without CUDA (its arrays report
`MemoryKind.PINNED`, as Warp's). Custom allocators are CUDA's: there is no CUDA device to
give one to.
"""

from __future__ import annotations

import enum
import threading
from typing import Protocol, runtime_checkable


class MemoryKind(enum.IntEnum):
    """The kind of memory behind an array (not where it resides now, nor who can reach it:
    see `weft.can_access`)."""

    UNKNOWN = 0
    HOST = 1
    PINNED = 2
    CUDA_DEVICE = 3
    CUDA_MEMPOOL = 4
    CUDA_MANAGED = 5


@runtime_checkable
class Allocator(Protocol):
    """What an allocator has: `allocate(size_in_bytes) -> int` (an address) and
    `deallocate(ptr, size_in_bytes)`."""

    def allocate(self, size_in_bytes: int) -> int: ...

    def deallocate(self, ptr: int, size_in_bytes: int) -> None: ...


def validate_allocator(allocator) -> None:
    """TypeError unless `allocator` is None or has callable `allocate` and `deallocate`."""
    if allocator is None:
        return
    if not (callable(getattr(allocator, "allocate", None)) and callable(getattr(allocator, "deallocate", None))):
        raise TypeError("allocator must implement the Allocator protocol (allocate(size_in_bytes) -> int, "
                        f"deallocate(ptr, size_in_bytes) -> None), got {type(allocator)!r}")


class _HostAllocator:
    """Zeroed host memory by address; the memory lives until `deallocate(ptr, size)`."""

    memory_kind = MemoryKind.HOST
    deallocate_requires_context_guard = False

    def __init__(self, device):
        if not device.is_cpu:
            raise ValueError(f"{type(self).__name__} requires a CPU device, got '{device}'")
        self.device = device
        self._blocks: dict[int, object] = {}
        self._lock = threading.Lock()

    def allocate(self, size_in_bytes: int) -> int:
        from ..types import uint8
        from .array_memory import allocate
        size = int(size_in_bytes)
        if size < 0:
            raise ValueError(f"cannot allocate {size} bytes")
        block = allocate((max(size, 1),), uint8)
        ptr = block.ctypes.data
        with self._lock:
            self._blocks[ptr] = block
        return ptr

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        with self._lock:
            if self._blocks.pop(int(ptr), None) is None:
                raise ValueError(f"address {int(ptr):#x} was not allocated by this allocator")

    def __repr__(self):
        return f"<weft {type(self).__name__} of {self.device}>"


class CpuDefaultAllocator(_HostAllocator):
    """The CPU's allocator of ordinary host memory."""


class CpuPinnedAllocator(_HostAllocator):
    """The CPU's allocator of pinned host memory (ordinary host memory without CUDA)."""

    memory_kind = MemoryKind.PINNED


class CudaManagedAllocator:
    """Warp's allocator of CUDA managed memory: it needs a current CUDA device, which a
    CPU-only weft never has."""

    memory_kind = MemoryKind.CUDA_MANAGED
    deallocate_requires_context_guard = False

    def allocate(self, size_in_bytes: int) -> int:
        raise RuntimeError("CudaManagedAllocator.allocate() requires an active CUDA context")

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        raise RuntimeError("CudaManagedAllocator.deallocate() requires an active CUDA context")


class AllocatorRmm:
    """Warp's allocator through RAPIDS Memory Manager (`weft.utils.AllocatorRmm`): RMM
    allocates CUDA memory, for `set_device_allocator` of a CUDA device. ImportError where
    RMM is not installed; without a CUDA device it cannot allocate."""

    memory_kind = MemoryKind.UNKNOWN
    deallocate_requires_context_guard = True

    def __init__(self):
        import rmm  # noqa: F401 - ImportError where RMM is not installed, as Warp's

    def allocate(self, size_in_bytes: int) -> int:
        raise RuntimeError("AllocatorRmm allocates CUDA memory, and weft's CUDA backend is not available")

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        raise RuntimeError("AllocatorRmm frees CUDA memory, and weft's CUDA backend is not available")
