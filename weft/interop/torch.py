"""PyTorch tensors as weft arrays and back, without copies.

`from_torch(t)` views a tensor's memory as a weft array (a write through one is seen by the
other); `to_torch(a)` views an array's memory as a tensor. Vector and matrix dtypes map to
tensors whose trailing dimensions are their components (`vec3` arrays of shape `(n,)` and
tensors of shape `(n, 3)`). When gradients are required, the tensor's `.grad` and the
array's `.grad` are the same memory too.

Synchronisation: on the CPU both libraries finish their work before returning (a torch op
has joined its threads; a weft launch has run its kernel), so an array made from a tensor
can be launched on at once and a tensor made from an array read at once.
`synchronize_with_torch` is the one place that will order the two on a GPU: weft's CUDA
launches will go on torch's current stream of the device, or wait on an event recorded
there; until that backend exists, CUDA tensors are refused with a clear error.

PyTorch is imported on first use, so `import weft` does not need it.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..runtime.array import array, view_of
from ..runtime.device import CPU, Device, get_device
from ..types import Matrix, Scalar, Vector, bfloat16
from ..types.scalars import scalar_by_name
from .dlpack import reinterpret

_SCALAR_NAMES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                 "float16", "bfloat16", "float32", "float64")
_to_torch_dtype: dict = {}
_from_torch_dtype: dict = {}


_torch_module = None


def _torch():
    """The torch module, with a clear error where PyTorch is not installed."""
    global _torch_module
    if _torch_module is not None:
        return _torch_module
    try:
        import torch
    except ImportError:
        raise ImportError("weft's PyTorch interop needs PyTorch: pip install torch==2.13.0 "
                          "(a CPU build)") from None
    if not _to_torch_dtype:
        for name in _SCALAR_NAMES:
            torch_dtype = getattr(torch, name, None)
            if torch_dtype is not None:  # uint16..64 exist from torch 2.3
                _from_torch_dtype[torch_dtype] = scalar_by_name(name)
        for name in _SCALAR_NAMES:
            # unsigned types map to torch's signed ones of the same size, as in Warp: most torch
            # ops lack uint16..64; the bits are the same and from_torch(t, dtype=uint32) reads them back
            torch_name = _SIGNED_TWIN.get(name, name)
            _to_torch_dtype[scalar_by_name(name)] = getattr(torch, torch_name)
    _torch_module = torch
    return torch


_SIGNED_TWIN = {"uint16": "int16", "uint32": "int32", "uint64": "int64"}


def dtype_from_torch(torch_dtype) -> Scalar:
    """The weft scalar type of a torch dtype (`torch.float32` -> `weft.float32`)."""
    _torch()
    t = _from_torch_dtype.get(torch_dtype)
    if t is None:
        raise TypeError(f"torch dtype {torch_dtype} has no weft equivalent (weft has "
                        f"{', '.join(_SCALAR_NAMES)})")
    return t


def dtype_to_torch(dtype):
    """The torch dtype holding weft `dtype`: a scalar's own, a vector's or matrix's
    component type (their components become trailing tensor dimensions)."""
    _torch()
    scalar = dtype.dtype if isinstance(dtype, (Vector, Matrix)) else dtype
    t = _to_torch_dtype.get(scalar)
    if t is None:
        raise TypeError(f"weft dtype {dtype!r} has no torch equivalent")
    return t


class UnsupportedTorchDevice(ValueError, RuntimeError):
    """A torch device weft has no counterpart of (Warp raises RuntimeError)."""


def device_from_torch(torch_device) -> Device:
    """The weft device of a torch device (`torch.device("cpu")` or "cpu" -> weft's CPU)."""
    name = str(torch_device)
    try:
        return get_device(name)
    except ValueError as e:  # (Warp: RuntimeError "Unsupported Torch device")
        raise UnsupportedTorchDevice(f"Unsupported Torch device {name}: {e}") from None


def device_to_torch(device=None) -> str:
    """The torch device name of a weft device (None: the default device)."""
    return get_device(device).alias


def stream_from_torch(stream_or_device=None):
    """The weft stream of a torch CUDA stream (or of a device's current torch stream).
    Streams order work on a CUDA device; weft runs on the CPU, where torch has no streams
    and both libraries finish their work before returning, so there is none to give: a
    clear error says so (as a CPU-only Warp raises)."""
    torch = _torch()
    if isinstance(stream_or_device, torch.device) or isinstance(stream_or_device, str):
        where = str(stream_or_device)
    else:
        where = f"torch stream {stream_or_device!r}" if stream_or_device is not None else "torch's current device"
    raise RuntimeError(f"stream_from_torch({where}): streams exist on CUDA devices only, and weft's CUDA backend "
                       "is not available; on the CPU no stream is needed (weft and torch run to completion "
                       "in order)")


def stream_to_torch(stream_or_device=None):
    """The torch CUDA stream of a weft stream or device: CUDA only (see `stream_from_torch`)."""
    raise RuntimeError(f"stream_to_torch({stream_or_device!r}): streams exist on CUDA devices only, and weft's "
                       "CUDA backend is not available; on the CPU no stream is needed")


def synchronize_with_torch(device) -> None:
    """Order weft's next launch on `device` after the work torch has queued there, and
    torch's next op after weft's launches. On the CPU both run to completion before
    returning, so there is nothing to wait for (see the module docstring for CUDA)."""
    if device is CPU:  # the wrapped ops' path, once per call
        return
    device = get_device(device)
    if not device.is_cpu:  # unreachable until weft has a CUDA backend: get_device refuses
        raise NotImplementedError(f"synchronising weft with torch on {device}")


class _TensorName:
    """How error messages name tensor `t`, written only when one is (in f-strings)."""

    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t

    def __format__(self, spec) -> str:
        return f"from_torch: tensor of shape {tuple(self.t.shape)} and dtype {self.t.dtype}"

    __str__ = __repr__ = lambda self: format(self)


def from_torch(t, dtype=None, requires_grad=None, grad=None, return_ctype=False, retain_grad=False):
    """A weft array viewing tensor `t`'s memory (no copy; strided tensors give strided
    arrays). `dtype`: None for `t`'s scalar type, a vector/matrix type whose components
    are `t`'s trailing dimensions, or an integer type of `t`'s size (uint32 for int32,
    int8 for bool: the bits are reinterpreted, as in Warp). `requires_grad` (default
    `t.requires_grad`): the array's `.grad` views `grad` (a tensor or a weft array), else
    `t.grad`, which is created (zeros) if `t` has none. `retain_grad` is kept on the array
    (as Warp's `array.retain_grad`). `return_ctype=True` gives Warp's low-level descriptor
    (`ArrayCtype`: data and grad pointers, shape, byte strides, ndim) instead of an array.
    (In a torch.autograd.Function's backward, return fresh gradient arrays, not this shared
    `.grad`: torch would add the gradient to itself.)"""
    torch = _torch()
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"from_torch: expected a torch.Tensor, got {type(t).__name__}")
    device_from_torch(t.device)
    what = _TensorName(t)
    dtype_from_torch(t.dtype)
    try:
        if t.dtype == torch.bfloat16:  # torch gives numpy no bfloat16: view the bits, then relabel them
            storage = t.detach().view(torch.int16).numpy().view(bfloat16.np_dtype)
        else:
            storage = t.detach().numpy()  # shares t's memory, and keeps it alive
    except (RuntimeError, TypeError) as e:
        raise ValueError(f"{what}: cannot be viewed without a copy ({e})") from None
    a = view_of(reinterpret(storage, dtype, what), dtype, what)
    # Warp's capacity of a view: the bytes of the tensor's storage from its first element on
    a.capacity = max(0, t.untyped_storage().nbytes() - t.storage_offset() * t.element_size()) if t.numel() else 0
    if requires_grad is None:
        requires_grad = t.requires_grad or grad is not None
    if requires_grad:
        a.grad = _gradient_array(t, a, dtype, grad, what)  # (which sets requires_grad)
    if retain_grad:
        a.retain_grad = True  # (the array refuses it without requires_grad)
    return ArrayCtype.of(a) if return_ctype else a


def _gradient_array(t, a, dtype, grad, what):
    """The weft array that holds the gradient of `a` (made from tensor `t`): `grad` (a
    tensor or weft array), else `t.grad` (created if missing)."""
    torch = _torch()
    # (integer tensors too, as in Warp: their gradient is an integer tensor of zeros, which
    # torch takes as .grad; weft's arrays of integers may have gradients as well)
    if isinstance(grad, array):
        if grad.dtype is not a.dtype or grad.shape != a.shape:
            raise ValueError(f"{what}: grad= must be an array of {a.dtype!r} with shape {a.shape}, got one of "
                             f"{grad.dtype!r} with shape {grad.shape}")
        return grad
    if grad is None:
        # (reading .grad of a non-leaf tensor warns: it never has one unless retained)
        grad = t.grad if t.is_leaf or t.retains_grad else None
        if grad is None:  # zeros laid out as `a` (a strided view too), shared with torch, as Warp
            out = a._zero_gradient()
            t.grad = to_torch(out, requires_grad=False)
            return out
    elif not isinstance(grad, torch.Tensor) or grad.dtype != t.dtype:
        raise TypeError(f"{what}: grad= must be a tensor of {t.dtype} or a weft array, got "
                        f"{getattr(grad, 'dtype', type(grad).__name__)}")
    out = from_torch(grad, dtype, requires_grad=False)
    if out.shape != a.shape:
        raise ValueError(f"{what}: its gradient has shape {tuple(grad.shape)}")
    return out


class ArrayCtype(ctypes.Structure):
    """Warp's low-level array descriptor (`from_torch(..., return_ctype=True)`): the data
    and gradient addresses (0: none), the shape and byte strides (4 slots each) and the
    number of dimensions. It keeps the array it describes alive (`weft_array`), and a launch
    takes it for that array."""

    _fields_ = [("data", ctypes.c_uint64), ("grad", ctypes.c_uint64), ("shape", ctypes.c_int32 * 4),
                ("strides", ctypes.c_int32 * 4), ("ndim", ctypes.c_int32)]

    @classmethod
    def of(cls, a: array) -> ArrayCtype:
        desc = cls()
        desc.data = a.ptr or 0  # (None for an empty array)
        desc.grad = (a.grad.ptr or 0) if a.grad is not None else 0
        desc.ndim = a.ndim
        desc.shape[:a.ndim] = a.shape
        desc.strides[:a.ndim] = a.strides
        desc.weft_array = a  # the memory stays alive as long as the descriptor
        return desc


def to_torch(a: array, requires_grad=None):
    """A new tensor viewing weft array `a`'s memory (no copy; a write through either is seen
    by the other), with `a`'s shape and scalar type: vector and matrix components become
    trailing dimensions, unsigned types stay unsigned (torch.uint32 for a uint32 array).
    `requires_grad` (default `a.requires_grad`): the tensor is a leaf requiring gradients
    whose `.grad` views `a.grad`. As in Warp, an array made by `from_torch(t)` gives a new
    leaf tensor over `t`'s memory, not `t` itself (nothing of `t`'s autograd graph follows)."""
    if _torch_module is None:
        _torch()
    if not isinstance(a, array):
        raise TypeError(f"to_torch: expected a weft array, got {type(a).__name__}")
    t = _tensor_viewing(a)
    if a.requires_grad if requires_grad is None else requires_grad:
        t.requires_grad_(True)
        if a.grad is not None:
            t.grad = _tensor_viewing(a.grad)
    return t


def _tensor_viewing(a: array):
    """A tensor over `a`'s memory, of `a`'s own scalar type (`dtype_to_torch` names the
    signed twin of an unsigned type instead)."""
    storage = a.numpy()
    try:
        return _torch_module.from_numpy(storage)
    except (TypeError, ValueError):  # bfloat16, a struct, negative strides: see which
        pass
    dtype_to_torch(a.dtype)  # (a clear error for structs)
    if any(s < 0 for s in storage.strides):
        raise ValueError(f"to_torch: an array with negative strides {a.strides} (a reversed view) "
                         "cannot be a tensor; use .contiguous() first")
    # bfloat16: torch takes no numpy bfloat16, so pass the bits
    return _torch_module.from_numpy(storage.view(np.int16)).view(_torch_module.bfloat16)
