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
from ..types import Matrix, Scalar, Vector, bfloat16

CPU, CUDA, CUDA_HOST = 1, 2, 3  # DLPack device types
_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 10: "rocm",
                 13: "cuda_managed", 14: "oneapi"}


class DLPackStreamError(TypeError, BufferError):
    """A stream weft cannot synchronise with (a TypeError in Warp, a BufferError in the
    DLPack standard: both can catch it)."""


class UnsupportedDeviceError(TypeError, ValueError):
    """DLPack memory on a device weft cannot view (Warp's TypeError; weft's ValueError)."""


class IncompatibleDtypeError(TypeError, RuntimeError):
    """Memory that cannot be viewed as the requested dtype (Warp's RuntimeError; weft's TypeError)."""


def export(a: array, stream=None, max_version=None, dl_device=None, copy=None):
    """`a.__dlpack__(...)`: a DLPack capsule viewing `a`'s memory (see the module docstring).
    `stream`: None or -1 (the CPU has no streams to order the consumer after)."""
    if stream is not None and (isinstance(stream, bool) or stream != -1):
        raise DLPackStreamError(f"DLPack stream must be None or -1 for CPU device (weft arrays live on the "
                                f"CPU, which has no streams), got {stream!r}")
    if dl_device is not None and tuple(dl_device) != (CPU, 0):
        raise BufferError(f"weft arrays live on the CPU, not on DLPack device {tuple(dl_device)}")
    if any(s < 0 for s in a.strides):
        raise BufferError(f"an array with negative strides {a.strides} (a reversed view) is not exported "
                          "through DLPack (consumers such as torch mishandle it); use .contiguous() first")
    kwargs = {k: v for k, v in (("max_version", max_version), ("copy", copy)) if v is not None}
    view = _writable(a.numpy())
    bf16 = view.dtype == bfloat16.np_dtype
    if bf16:  # numpy exports no bfloat16: export the bits as int16, then say what they are
        view = view.view(np.int16)
    try:
        capsule = view.__dlpack__(**kwargs)
    except TypeError:  # numpy before 2.1 takes no keywords: the legacy capsule
        capsule = (np.array(view) if copy else view).__dlpack__()
    if bf16:
        _set_dtype(capsule, _DL_BFLOAT, 16)
    return capsule


class _Interface:
    """An `__array_interface__` holder: numpy views its memory without a copy, and it
    keeps the array it describes alive."""

    def __init__(self, interface, owner):
        self.__array_interface__ = interface
        self.owner = owner


def _writable(view: np.ndarray) -> np.ndarray:
    """`view`, writable. A weft array's memory is writable by kernels even where its numpy
    view is flagged read-only (an array made from a read-only buffer, as np.asarray of a
    JAX array gives); numpy refuses to export such a view to legacy DLPack consumers
    (which cannot mark it read-only), so the export sees the memory as it is."""
    if view.flags.writeable:
        return view
    interface = dict(view.__array_interface__)
    interface["data"] = (interface["data"][0], False)
    return np.asarray(_Interface(interface, view)).view(view.dtype)  # (the interface loses bfloat16)


def to_dlpack(a: array):
    """A DLPack capsule viewing weft array `a`'s memory (Warp's `to_dlpack`; any consumer's
    `from_dlpack` takes it, or the array itself)."""
    if not isinstance(a, array):
        raise TypeError(f"to_dlpack: expected a weft array, got {type(a).__name__}")
    return a.__dlpack__()


def dlpack_name(np_dtype) -> str:
    """DLPack's name of a numpy dtype (`bool8`, `float32`, ...), for messages."""
    return "bool8" if np.dtype(np_dtype) == np.bool_ else np.dtype(np_dtype).name


def reinterpret(storage: np.ndarray, dtype, what: str) -> np.ndarray:
    """`storage` with the element type `dtype` asks for, where only the signedness differs
    (int32 <-> uint32, bool <-> int8/uint8: the same bits, as Warp allows); otherwise
    unchanged (`view_of` then checks it)."""
    if dtype is None:
        return storage
    try:
        scalar = scalar_type_of(dtype)
    except TypeError:
        return storage
    want = np.dtype(scalar.np_dtype)
    if want == storage.dtype:
        return storage
    integral = "biu"
    if want.itemsize == storage.dtype.itemsize and want.kind in integral and storage.dtype.kind in integral:
        return storage.view(want)
    raise IncompatibleDtypeError(f"{what}: Incompatible data types: DLPack {dlpack_name(storage.dtype)} and "
                                 f"Warp {scalar.name} (weft views the memory without converting it)")


def scalar_type_of(dtype):
    """The scalar type of weft `dtype` (a vector's or matrix's components)."""
    from ..runtime.array_memory import resolve_dtype as _resolve_dtype
    t = _resolve_dtype(dtype)
    t = t.dtype if isinstance(t, (Vector, Matrix)) else t
    if not isinstance(t, Scalar):
        raise TypeError(f"{t!r} is not a scalar, vector or matrix type")
    return t


def from_dlpack(source, dtype=None) -> array:
    """A weft array viewing the memory of `source` (anything with `__dlpack__`, or a DLPack
    capsule) without a copy. `dtype`: None for the scalar type; a vector or matrix type
    takes the trailing dimensions as components; an integer type of the same size as the
    data's (signed for unsigned, int8 for bool) reinterprets the bits, as in Warp."""
    if isinstance(source, array):
        if dtype is None:
            return source
        return view_of(reinterpret(source.numpy(), dtype, "from_dlpack"), dtype, "from_dlpack")
    if type(source).__name__ == "PyCapsule":
        source = _Capsule(source)
    if not hasattr(source, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, "
                        f"got {type(source).__name__}")
    kind, index = source.__dlpack_device__()
    if kind not in (CPU, CUDA_HOST):
        name = _DEVICE_NAMES.get(int(kind))
        raise UnsupportedDeviceError(f"from_dlpack: Unsupported source device for DLPack: device_type={kind}, "
                                     f"device_id={index} (DLPack device {name or kind}:{index}): weft arrays "
                                     "live on the CPU")
    if not isinstance(source, _Capsule):
        capsule = source.__dlpack__()
        if type(capsule).__name__ != "PyCapsule":
            raise TypeError(f"from_dlpack: Expected a valid DLPack capsule, got {type(capsule).__name__} from "
                            f"{type(source).__name__}.__dlpack__()")
        source = _Capsule(capsule, source)
    bf16 = _dtype_of(source.capsule) == (_DL_BFLOAT, 16)
    if bf16:  # numpy imports no bfloat16: import the bits as int16 (the capsule is ours to read)
        _set_dtype(source.capsule, _DL_INT, 16)
    try:
        storage = np.from_dlpack(source)
        if not storage.flags.writeable:  # a read-only producer (JAX): Warp's views write anyway
            storage = np.asarray(_Writable(storage))
        if bf16:
            storage = storage.view(bfloat16.np_dtype)
    except (RuntimeError, BufferError, TypeError) as e:  # e.g. complex, which weft lacks
        dtype_name = getattr(source.owner, "dtype", "this dtype")
        raise TypeError(f"from_dlpack: a {type(source.owner).__name__} of {dtype_name} cannot be viewed as a "
                        f"weft array ({e})") from None
    what = f"from_dlpack: {type(source.owner).__name__} of shape {storage.shape} and dtype {storage.dtype}"
    return view_of(reinterpret(storage, dtype, "from_dlpack"), dtype, what)


class _Writable:
    """A writable numpy view of read-only `storage` (`np.asarray(_Writable(storage))`), which
    it keeps alive. Warp's arrays over a producer's memory are writable whatever the producer
    says (a JAX array's buffer, immutable to JAX), and kernels write through them either way."""

    def __init__(self, storage: np.ndarray):
        self.storage = storage
        interface = dict(storage.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


class _Capsule:
    """A bare DLPack capsule (a legacy producer's) seen as a DLPack object, so that numpy
    can import it; the device is read from the capsule's DLTensor."""

    def __init__(self, capsule, owner=None):
        self.capsule = capsule
        self.owner = owner if owner is not None else self  # the producer, for messages

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        device = (ctypes.c_int32 * 2).from_address(_tensor_address(self.capsule) + ctypes.sizeof(ctypes.c_void_p))
        return int(device[0]), int(device[1])


_DL_INT, _DL_BFLOAT = 0, 4  # DLPack type codes
_DTYPE_OFFSET = 20  # DLTensor: data pointer (8), device (8), ndim (4), then dtype (code, bits, lanes)


def _tensor_address(capsule) -> int:
    """The address of the DLTensor of an unused DLPack capsule. DLManagedTensor starts
    with it; the versioned one has a version, a manager context, a deleter and flags (32
    bytes) before it."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    name = get_name(capsule)
    if name not in (b"dltensor", b"dltensor_versioned"):
        raise ValueError(f"from_dlpack: a capsule named {name!r} is not an unused DLPack tensor")
    return get_pointer(capsule, name) + (32 if name == b"dltensor_versioned" else 0)


def _dtype_of(capsule) -> tuple:
    """(type code, bits) of the tensor in `capsule`."""
    code_bits = (ctypes.c_uint8 * 2).from_address(_tensor_address(capsule) + _DTYPE_OFFSET)
    return int(code_bits[0]), int(code_bits[1])


def _set_dtype(capsule, code: int, bits: int) -> None:
    """Relabel the elements of the tensor in `capsule` (same size: bfloat16 <-> int16)."""
    code_bits = (ctypes.c_uint8 * 2).from_address(_tensor_address(capsule) + _DTYPE_OFFSET)
    code_bits[0], code_bits[1] = code, bits
