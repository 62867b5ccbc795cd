"""Memory access between devices, as a CPU-only Warp presents it: `can_access(device,
array)`, the scoped settings of memory pools and peer access (`ScopedMempool`,
`ScopedMempoolAccess`, `ScopedPeerAccess`) and the choice of allocators
(`get_device_allocator`; custom allocators are CUDA's, see allocators.py).

Every weft array lives in the CPU's memory, which the CPU reads directly; a memory pool or
peer access needs CUDA devices, so on the CPU these scopes can only disable (which changes
nothing), and enabling raises the ValueError Warp raises for the CPU.
"""

from __future__ import annotations

from ..types.introspect import array_classes
from . import device as _device
from .allocators import validate_allocator
from .device import get_device


def _backing_arrays(resource):
    """The arrays whose memory a kernel reads through `resource` (an indexed array: its
    data and its index arrays)."""
    from .indexed_array import indexedarray
    if isinstance(resource, indexedarray):
        yield resource.data
        yield from (i for i in resource.indices if i is not None)
    else:
        yield resource


def can_access(device, resource) -> bool:
    """Whether `device` can read and write `resource` (a concrete array) directly in a
    kernel: every array weft makes is in the CPU's memory, so the CPU can."""
    device = get_device(device)
    if not isinstance(resource, array_classes()) or getattr(resource, "device", None) is None:
        what = getattr(resource, "__name__", None) or type(resource).__name__
        raise TypeError(f"can_access(device, resource): resource must be a concrete Warp array (an array, "
                        f"indexedarray or fabric array with memory), got {what}; only Warp arrays are "
                        f"supported")
    return all(get_device(a.device).can_access(device) and device.can_access(a.device)
               for a in _backing_arrays(resource))


class ScopedMempool:
    """`with ScopedMempool(device, enable):` enables or disables `device`'s memory pool
    inside the block (the CPU has none: disabling changes nothing, enabling is a
    ValueError)."""

    def __init__(self, device, enable: bool):
        self.device = get_device(device)
        self.enable = enable
        self.saved_setting = None

    def __enter__(self):
        self.saved_setting = _device.is_mempool_enabled(self.device)
        _device.set_mempool_enabled(self.device, self.enable)

    def __exit__(self, *exc_info):
        _device.set_mempool_enabled(self.device, self.saved_setting)


class _ScopedAccess:
    _is_enabled = _set_enabled = None

    def __init__(self, target_device, peer_device, enable: bool):
        self.target_device = target_device
        self.peer_device = peer_device
        self.enable = enable
        self.saved_setting = None

    def __enter__(self):
        self.saved_setting = type(self)._is_enabled(self.target_device, self.peer_device)
        type(self)._set_enabled(self.target_device, self.peer_device, self.enable)

    def __exit__(self, *exc_info):
        type(self)._set_enabled(self.target_device, self.peer_device, self.saved_setting)


class ScopedMempoolAccess(_ScopedAccess):
    """`with ScopedMempoolAccess(target, peer, enable):` lets `peer` use (or not) the memory
    pool allocations of `target` inside the block (CUDA devices only: with the CPU,
    disabling changes nothing and enabling is a ValueError)."""

    _is_enabled = staticmethod(_device.is_mempool_access_enabled)
    _set_enabled = staticmethod(_device.set_mempool_access_enabled)


class ScopedPeerAccess(_ScopedAccess):
    """`with ScopedPeerAccess(target, peer, enable):` lets `peer` read (or not) the memory of
    `target` inside the block (CUDA devices only, as ScopedMempoolAccess)."""

    _is_enabled = staticmethod(_device.is_peer_access_enabled)
    _set_enabled = staticmethod(_device.set_peer_access_enabled)


def get_device_allocator(device):
    """The allocator `device`'s arrays take their memory from (the CPU's default one)."""
    device = get_device(device)
    if device.is_cuda and device._custom_allocator is not None:
        return device._custom_allocator
    return device.get_allocator()


def set_device_allocator(device, allocator) -> None:
    """Give a CUDA device a custom allocator (None: its own again); RuntimeError for the CPU."""
    device = get_device(device)
    if not device.is_cuda:
        raise RuntimeError("Custom allocators are only supported on CUDA devices")
    validate_allocator(allocator)
    device._custom_allocator = allocator


def set_cuda_allocator(allocator) -> None:
    """Give every CUDA device a custom allocator: RuntimeError without CUDA devices."""
    validate_allocator(allocator)
    devices = _device.get_cuda_devices()
    if not devices:
        raise RuntimeError("set_cuda_allocator: no CUDA devices available")
    for d in devices:
        d._custom_allocator = allocator


class ScopedAllocator:
    """`with ScopedAllocator(device, allocator):` gives a CUDA device a custom allocator
    inside the block (RuntimeError for the CPU)."""

    def __init__(self, device, allocator):
        self.device = get_device(device)
        if not self.device.is_cuda:
            raise RuntimeError("Custom allocators are only supported on CUDA devices")
        validate_allocator(allocator)
        self.allocator = allocator
        self.saved = None

    def __enter__(self):
        self.saved, self.device._custom_allocator = self.device._custom_allocator, self.allocator
        return self

    def __exit__(self, *exc_info):
        self.device._custom_allocator = self.saved
