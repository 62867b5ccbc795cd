"""DLPack: weft arrays to and from any library that speaks it (torch, JAX, CuPy, numpy),
without copies.

Export goes through the array's numpy view, which writes the DLPack capsule; vector and
matrix arrays export their components as trailing dimensions, as `numpy()` shows them.
Import accepts an object with `__dlpack__` / `__dlpack_device__` or a bare capsule.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..runtime.array import array, view_of

CPU, CUDA, CUDA_HOST = 1, 2, 3  # DLPack device types
_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 10: "rocm",
                 13: "cuda_managed", 14: "oneapi"}


def export(a: array, stream=None, max_version=None, dl_device=None, copy=None):
    """`a.__dlpack__(...)`: a DLPack capsule viewing `a`'s memory (see the module docstring)."""
    if stream is not None:
        raise BufferError("weft arrays live on the CPU: __dlpack__ takes no stream")
    if dl_device is not None and tuple(dl_device) != (CPU, 0):
        raise BufferError(f"weft arrays live on the CPU, not on DLPack device {tuple(dl_device)}")
    if any(s < 0 for s in a.strides):
        raise BufferError(f"an array with negative strides {a.strides} (a reversed view) is not exported "
                          "through DLPack (consumers such as torch mishandle it); use .contiguous() first")
    kwargs = {k: v for k, v in (("max_version", max_version), ("copy", copy)) if v is not None}
    try:
        return a.numpy().__dlpack__(**kwargs)
    except TypeError:  # numpy before 2.1 takes no keywords: the legacy capsule
        if copy:
            return np.array(a.numpy()).__dlpack__()
        return a.numpy().__dlpack__()


def from_dlpack(source, dtype=None) -> array:
    """A weft array viewing the memory of `source` (anything with `__dlpack__`, or a DLPack
    capsule) without a copy. `dtype` as in `from_torch`: None for the scalar type, or a
    vector/matrix type taking the trailing dimensions as components."""
    if isinstance(source, array):
        return source if dtype is None else view_of(source.numpy(), dtype, "from_dlpack")
    if type(source).__name__ == "PyCapsule":
        source = _Capsule(source)
    if not hasattr(source, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, "
                        f"got {type(source).__name__}")
    kind, index = source.__dlpack_device__()
    if kind not in (CPU, CUDA_HOST):
        raise ValueError(f"from_dlpack: the memory is on DLPack device "
                         f"{_DEVICE_NAMES.get(int(kind), int(kind))}:{index}; weft arrays live on the CPU")
    try:
        storage = np.from_dlpack(source)
    except (RuntimeError, BufferError, TypeError) as e:  # e.g. bfloat16, which numpy lacks
        dtype_name = getattr(source, "dtype", "this dtype")
        raise TypeError(f"from_dlpack: a {type(source).__name__} of {dtype_name} cannot be viewed as a weft "
                        f"array ({e})") from None
    return view_of(storage, dtype, f"from_dlpack: {type(source).__name__} of shape {storage.shape} "
                                   f"and dtype {storage.dtype}")


class _Capsule:
    """A bare DLPack capsule (a legacy producer's) seen as a DLPack object, so that numpy
    can import it; the device is read from the capsule's DLTensor."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        name = get_name(self.capsule)
        if name not in (b"dltensor", b"dltensor_versioned"):
            raise ValueError(f"from_dlpack: a capsule named {name!r} is not an unused DLPack tensor")
        # DLManagedTensor starts with its DLTensor; the versioned one has a version, a manager
        # context, a deleter and flags (32 bytes) before it. DLTensor: data pointer, then device.
        tensor_at = get_pointer(self.capsule, name) + (32 if name == b"dltensor_versioned" else 0)
        device = (ctypes.c_int32 * 2).from_address(tensor_at + ctypes.sizeof(ctypes.c_void_p))
        return int(device[0]), int(device[1])
