"""Devices. Only the CPU exists for now; CUDA names give a clear error.

The CPU device answers the queries Warp programs make of a device (`ordinal`, `arch`,
`sm_count`, `is_uva`, `total_memory`, ...) with what a CPU-only Warp reports: no CUDA
features, ordinal -1. Work on the CPU is finished when the call that issued it returns,
so every `synchronize*` is immediate (see `stream.py` for streams and events).
"""

from __future__ import annotations

import os
import platform
from typing import Union


class Device:
    """A device (only "cpu" for now). Compares equal to its alias."""

    def __init__(self, alias: str):
        self.alias = alias
        self.is_cpu = alias == "cpu"
        self.is_cuda = alias.startswith("cuda")
        self.ordinal = -1
        self.arch = 0
        self.sm_count = 0
        self.max_shared_memory_per_block = 0
        self.is_uva = False
        self.is_cubin_supported = False
        self.is_mempool_supported = False
        self.is_mempool_enabled = False
        self.is_ipc_supported = False
        self.is_primary = False
        self.is_cpu_memory_access_from_gpu_supported = False
        self.is_gpu_memory_access_from_cpu_supported = False
        self.is_cpu_gpu_atomic_supported = False
        self.is_managed_memory_supported = False
        self.is_concurrent_managed_access_supported = False
        self.context = None
        self.pci_bus_id = None
        self.uuid = None
        self._stream = None
        self._name = None
        self._allocators = None
        self._custom_allocator = None  # (CUDA devices only)

    @property
    def name(self) -> str:
        """The processor's name, as `platform.processor()` reports it, else "CPU", as Warp
        names it (asked on first use: on Linux it runs `uname -p` in a subprocess)."""
        if self._name is None:
            self._name = platform.processor() or "CPU"
        return self._name

    @name.setter
    def name(self, value: str):
        self._name = value

    @property
    def default_allocator(self):
        """The allocator of the device's ordinary memory (allocators.py)."""
        if self._allocators is None:
            from .allocators import CpuDefaultAllocator, CpuPinnedAllocator
            self._allocators = (CpuDefaultAllocator(self), CpuPinnedAllocator(self))
        return self._allocators[0]

    @property
    def pinned_allocator(self):
        """The allocator of pinned host memory (the CPU's; plain host memory without CUDA)."""
        return self.default_allocator and self._allocators[1]

    current_allocator = default_allocator

    def get_allocator(self, pinned: bool = False):
        return self.pinned_allocator if pinned and self.is_cpu else self.default_allocator

    @property
    def total_memory(self) -> int:
        """Physical memory of the machine in bytes (0 where the OS does not say)."""
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return 0

    @property
    def free_memory(self) -> int:
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return 0

    @property
    def stream(self):
        """The device's current stream: CUDA devices have streams, the CPU has none (a
        RuntimeError, as in Warp)."""
        if not self.is_cuda:
            raise RuntimeError(f"Device {self} is not a CUDA device: it has no stream")
        if self._stream is None:
            from .stream import Stream
            self._stream = Stream(self)
        return self._stream

    @stream.setter
    def stream(self, stream):
        self.set_stream(stream)

    def set_stream(self, stream, sync: bool = True) -> None:
        """Make `stream` (one of this device's) the current stream: CUDA devices only."""
        if not self.is_cuda:
            raise RuntimeError(f"Device {self} is not a CUDA device: it has no stream")
        if stream.device != self:
            raise RuntimeError(f"Stream from device {stream.device} cannot be used on device {self}")
        if sync and self._stream is not None:
            stream.wait_stream(self._stream)
        self._stream = stream

    @property
    def has_stream(self) -> bool:
        return self._stream is not None

    @property
    def is_capturing(self) -> bool:
        from . import capture
        return capture.active_graph(self) is not None

    def can_access(self, other) -> bool:
        """Whether this device can read memory of `other`'s allocator (the CPU reads its
        own); `weft.can_access(device, array)` asks about one array."""
        return get_device(other) == self

    def __repr__(self):
        return f"'{self.alias}'"  # (as Warp's)

    def __str__(self):
        return self.alias

    def __eq__(self, other):
        if isinstance(other, str):
            return self.alias == other
        return isinstance(other, Device) and other.alias == self.alias

    def __hash__(self):
        return hash(self.alias)


class CudaUnavailableError(RuntimeError, ValueError):
    """A CUDA device asked for: Warp raises RuntimeError where CUDA is missing ("cuda") and
    ValueError for an ordinal it does not know ("cuda:0"); programs catch either."""


CPU = Device("cpu")
_default = CPU

DeviceLike = Union[Device, str, None]  # noqa: UP007 - a runtime alias, as Warp's


def get_device(ident=None) -> Device:
    """The Device for `ident` (None: the default, "cpu", or a Device)."""
    if ident is None:
        return _default
    if isinstance(ident, Device):
        return ident
    if isinstance(ident, str):
        if ident == "cpu":
            return CPU
        if ident.startswith("cuda"):
            raise CudaUnavailableError(f"device {ident!r}: weft's CUDA backend is not available yet; "
                                       f"use device='cpu'")
    raise ValueError(f"unknown device {ident!r}; weft supports 'cpu'")


def set_device(ident) -> None:
    """Make `ident` the default device."""
    global _default
    _default = get_device(ident)


class ScopedDevice:
    """`with ScopedDevice("cpu"):` makes `device` the default inside the block (as in Warp;
    `None` keeps the current default)."""

    def __init__(self, device):
        self.device = get_device(device)
        self._saved = None

    def __enter__(self) -> Device:
        global _default
        self._saved, _default = _default, self.device
        return self.device

    def __exit__(self, *exc_info):
        global _default
        _default = self._saved


def get_devices() -> list[Device]:
    """Every device weft can run on."""
    return [CPU]


def get_cuda_devices() -> list[Device]:
    return []


def get_preferred_device() -> Device:
    return CPU


def get_cuda_device_count() -> int:
    return 0


def get_cuda_device(ordinal=None) -> Device:
    raise RuntimeError("CUDA is not available: weft's CUDA backend is not built yet")


def get_cuda_supported_archs() -> list[int]:
    """The CUDA architectures weft can compile for: none (no CUDA backend)."""
    return []


def get_cuda_toolkit_version():
    return None


def get_cuda_driver_version():
    return None


def is_cuda_available() -> bool:
    return False


def is_cpu_available() -> bool:
    return True


def is_device_available(device) -> bool:
    return get_device(device) in get_devices()


def map_cuda_device(alias: str, context=None) -> Device:
    raise RuntimeError(f"cannot map CUDA device {alias!r}: CUDA is not available")


def unmap_cuda_device(alias: str) -> None:
    raise RuntimeError(f"invalid CUDA device alias {alias!r}: CUDA is not available")


def is_peer_access_supported(target_device, peer_device) -> bool:
    """Whether `peer_device` could read `target_device`'s memory directly: never without
    two CUDA devices."""
    get_device(target_device), get_device(peer_device)
    return False


def is_peer_access_enabled(target_device, peer_device) -> bool:
    return is_peer_access_supported(target_device, peer_device)


def set_peer_access_enabled(target_device, peer_device, enable: bool) -> None:
    """Enabling needs two CUDA devices (ValueError for the CPU, as Warp); disabling is
    always accepted."""
    target, peer = get_device(target_device), get_device(peer_device)
    if enable:
        if not (target.is_cuda and peer.is_cuda):
            raise ValueError("Peer access is only supported between CUDA devices")
        raise RuntimeError(f"Device {peer} cannot access device {target}")


def is_mempool_supported(device) -> bool:
    """Whether `device` has a CUDA memory pool allocator (the CPU has none)."""
    return get_device(device).is_mempool_supported


def is_mempool_enabled(device) -> bool:
    return get_device(device).is_mempool_enabled


def _check_mempool_device(device) -> Device:
    device = get_device(device)
    if not device.is_cuda:
        raise ValueError("Memory pools are only supported on CUDA devices")
    if not device.is_mempool_supported:
        raise RuntimeError(f"Device {device} does not support memory pools")
    return device


def set_mempool_enabled(device, enable: bool) -> None:
    """Use (or stop using) `device`'s memory pool for its allocations. The CPU has no pool:
    enabling it is a ValueError, disabling it changes nothing (as in Warp)."""
    device = get_device(device)
    if enable:
        _check_mempool_device(device)
    device.is_mempool_enabled = bool(enable) and device.is_mempool_supported


def set_mempool_release_threshold(device, threshold) -> None:
    """Bytes a CUDA memory pool keeps before returning memory to the system (a fraction of
    the device's memory for values in (0, 1]). ValueError on the CPU, which has no pool."""
    _check_mempool_device(device)


def get_mempool_release_threshold(device=None) -> int:
    _check_mempool_device(device)
    return 0


def get_mempool_used_mem_current(device=None) -> int:
    """Bytes of the device's memory pool in use (ValueError on the CPU: no pool)."""
    _check_mempool_device(device)
    return 0


def get_mempool_used_mem_high(device=None) -> int:
    _check_mempool_device(device)
    return 0


def is_mempool_access_supported(target_device, peer_device) -> bool:
    """Whether `peer_device` could use allocations of `target_device`'s memory pool."""
    target = get_device(target_device)
    return target.is_mempool_supported and is_peer_access_supported(target, peer_device)


def is_mempool_access_enabled(target_device, peer_device) -> bool:
    target, peer = get_device(target_device), get_device(peer_device)
    if not (target.is_cuda and peer.is_cuda and target.is_mempool_supported):
        return False
    return target == peer


def set_mempool_access_enabled(target_device, peer_device, enable: bool) -> None:
    """Let `peer_device` use `target_device`'s pool allocations: needs two CUDA devices
    (ValueError for the CPU, as Warp); disabling is always accepted."""
    target, peer = get_device(target_device), get_device(peer_device)
    if not enable:
        return
    if not (target.is_cuda and peer.is_cuda):
        raise ValueError("Memory pool access is only supported between CUDA devices")
    _check_mempool_device(target)
    raise RuntimeError(f"Device {peer} cannot access device {target}")


def synchronize() -> None:
    """CPU launches finish before `launch` returns; nothing to wait for."""


def synchronize_device(device=None) -> None:
    get_device(device)


def cuda_profiler_start(device=None) -> None:
    """Start an external CUDA profiler's capture range; no effect on the CPU (Warp's rule)."""
    if get_device(device).is_cuda:
        raise RuntimeError("cuda_profiler_start: CUDA is not available")


def cuda_profiler_stop(device=None) -> None:
    """End an external CUDA profiler's capture range; no effect on the CPU."""
    if get_device(device).is_cuda:
        raise RuntimeError("cuda_profiler_stop: CUDA is not available")


class ScopedCudaProfiler:
    """`with ScopedCudaProfiler(device):` limits a CUDA profiler's capture to the block;
    nothing to do on the CPU."""

    def __init__(self, device=None):
        self.device = get_device(device)

    def __enter__(self):
        cuda_profiler_start(self.device)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        cuda_profiler_stop(self.device)
