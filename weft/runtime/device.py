"""Devices. Only the CPU exists for now; CUDA names give a clear error."""

from __future__ import annotations


class Device:
    def __init__(self, alias: str):
        self.alias = alias
        self.is_cpu = alias == "cpu"
        self.is_cuda = alias.startswith("cuda")

    def __repr__(self):
        return f'"{self.alias}"'

    def __str__(self):
        return self.alias

    def __eq__(self, other):
        if isinstance(other, str):
            return self.alias == other
        return isinstance(other, Device) and other.alias == self.alias

    def __hash__(self):
        return hash(self.alias)


CPU = Device("cpu")
_default = CPU


def get_device(device=None) -> Device:
    """The Device for `device` (None: the default, "cpu", or a Device)."""
    if device is None:
        return _default
    if isinstance(device, Device):
        return device
    if isinstance(device, str):
        if device == "cpu":
            return CPU
        if device.startswith("cuda"):
            raise ValueError(f"device {device!r}: weft's CUDA backend is not available yet; "
                             f"use device='cpu'")
    raise ValueError(f"unknown device {device!r}; weft supports 'cpu'")


def set_device(device) -> None:
    global _default
    _default = get_device(device)


class ScopedDevice:
    """`with ScopedDevice("cpu"):` makes `device` the default inside the block (as in Warp)."""

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


def get_preferred_device() -> Device:
    return CPU


def get_cuda_device_count() -> int:
    return 0


def is_cuda_available() -> bool:
    return False


def synchronize() -> None:
    """CPU launches finish before `launch` returns; nothing to wait for."""


def synchronize_device(device=None) -> None:
    get_device(device)
