"""Queries of a kernel's CUDA launch resources (`get_cuda_kernel_properties`,
`get_suggested_block_size`, `get_cuda_max_cluster_dim`), as a CPU-only Warp answers them:
CUDA properties need a CUDA device (a RuntimeError for the CPU); the block size and
cluster size a CPU launch uses are 1."""

from __future__ import annotations

from .device import get_device


def _check_kernel(kernel, api_name: str):
    from ..lang.kernel import Kernel
    if not isinstance(kernel, Kernel):
        raise TypeError(f"{api_name}() expected a wp.Kernel, got {type(kernel)}")


def _check_concrete(kernel, api_name: str):
    if kernel.is_generic:
        raise RuntimeError(f"{api_name}() requires a concrete overload of generic kernel '{kernel.key}'; "
                           "create one with wp.overload() and pass the returned kernel")


def get_cuda_kernel_properties(kernel, device=None, block_dim: int | None = None) -> dict:
    """The properties (`register_count`, `local_memory_size`) of `kernel` compiled for a
    CUDA device. TypeError for a non-kernel, RuntimeError for a generic kernel (pass an
    overload) or a device that is not CUDA (weft compiles for the CPU only)."""
    _check_kernel(kernel, "get_cuda_kernel_properties")
    _check_concrete(kernel, "get_cuda_kernel_properties")
    device = get_device(device)
    if not device.is_cuda:
        raise RuntimeError(f"get_cuda_kernel_properties() requires a CUDA device, got '{device}'")
    raise RuntimeError(f"get_cuda_kernel_properties(): weft has no CUDA backend for device '{device}'")


def get_suggested_block_size(kernel, device=None) -> tuple[int, int]:
    """(block size, minimum grid size) that fill the device: (1, 1) on the CPU, where each
    thread of a launch runs alone."""
    _check_kernel(kernel, "get_suggested_block_size")
    device = get_device(device)
    if not device.is_cuda:
        return (1, 1)
    _check_concrete(kernel, "get_suggested_block_size")
    raise RuntimeError(f"get_suggested_block_size(): weft has no CUDA backend for device '{device}'")


def get_cuda_max_cluster_dim(kernel, device=None, *, block_dim: int | None = None,
                             dynamic_smem_bytes: int = 0) -> int:
    """The largest thread-block cluster `kernel` can launch with: 1 where clusters do not
    exist (the CPU, and CUDA devices before sm_90)."""
    device = get_device(device)
    if not device.is_cuda or device.arch < 90:
        return 1
    raise RuntimeError(f"get_cuda_max_cluster_dim(): weft has no CUDA backend for device '{device}'")
