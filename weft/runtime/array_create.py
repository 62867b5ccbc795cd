"""Array factories (`zeros`, `full`, `*_like`, `from_numpy`, `clone`) and `copy`."""

from __future__ import annotations

import functools
import operator

import numpy as np

from .. import tape as tape_module
from ..types import CompositeValue, StructType, StructValue, Type, float32, int32, matrix, scalar_from_numpy, vector
from ..types.scalars import SCALAR_VALUES
from . import capture
from .array import DataShapeError, DataTypeError, array, element_numpy
from .array_memory import element_size, packed_strides, resolve_dtype, type_name
from .device import get_device


def empty(shape=None, dtype=float32, device=None, requires_grad=False, pinned=False,
          strides=None, retain_grad=False, n=None, **kwargs) -> array:
    """An array of `shape` (weft zero-fills it: no uninitialised memory is ever exposed)."""
    return zeros(shape, dtype, device, requires_grad, pinned, strides, retain_grad, n, **kwargs)


def zeros(shape=None, dtype=float32, device=None, requires_grad=False, pinned=False,
          strides=None, retain_grad=False, n=None, **kwargs) -> array:
    """An array of zeros of `shape` (`n=` is the old spelling of a 1-d shape). Other keyword
    arguments go to `array(...)`, as in Warp (`ndim=`, which `shape` overrides)."""
    if shape is None:
        shape = 0 if n is None else n
    kwargs.pop("ndim", None)  # (the shape gives it)
    return array(shape=shape, dtype=dtype, device=device, requires_grad=requires_grad,
                 strides=strides, retain_grad=retain_grad, pinned=pinned, **kwargs)


def full(shape=None, value=0, dtype=None, device=None, requires_grad=False, pinned=False,
         retain_grad=False, n=None, **kwargs) -> array:
    """An array of `shape` filled with `value`; without `dtype`, the value's own type."""
    if dtype is None:
        dtype = _dtype_of_value(value)
    a = zeros(shape, dtype=dtype, device=device, requires_grad=requires_grad,
              retain_grad=retain_grad, n=n, pinned=pinned, **kwargs)
    return a.fill_(value)


def ones(shape=None, dtype=float32, device=None, requires_grad=False, pinned=False,
         retain_grad=False, n=None, **kwargs) -> array:
    return full(shape, 1, dtype=dtype, device=device, requires_grad=requires_grad,
                retain_grad=retain_grad, n=n, pinned=pinned, **kwargs)


def _dtype_of_value(value) -> Type:
    """The dtype `full` gives `value`: its own type; float32, int32 or bool for a Python
    number; for a (nested) sequence, a vector or matrix of numpy's type for it, as in Warp
    (`(1.0, 2.0, 3.0)`: a vector of 3 float64, `[1, 2]`: of 2 int64)."""
    if isinstance(value, CompositeValue):
        return value.type
    if isinstance(value, StructValue):
        return value._type
    data = np.asarray(value)
    scalar = scalar_from_numpy(data.dtype)
    if scalar is None:
        raise TypeError(f"full: cannot infer a dtype from {value!r}; pass dtype=")
    if data.ndim == 0 and not isinstance(value, SCALAR_VALUES):  # Python numbers, as in annotations
        scalar = {"f": float32, "i": int32}.get(data.dtype.kind, scalar)
    if data.ndim == 1:
        return vector(data.shape[0], scalar)
    if data.ndim == 2:
        return matrix(data.shape, scalar)
    return scalar


def _like(src, dtype, device, requires_grad, pinned):
    return (src.shape, src.dtype if dtype is None else dtype, device or src.device,
            src.requires_grad if requires_grad is None else requires_grad,
            getattr(src, "pinned", False) if pinned is None else pinned)


# The *_like functions take Warp's parameters in Warp's order (so `zeros_like(a, "cpu")` names
# the device); `dtype` is weft's keyword-only addition.
def zeros_like(src, device=None, requires_grad=None, pinned=None, retain_grad=False, *, dtype=None) -> array:
    shape, dtype, device, rg, pinned = _like(src, dtype, device, requires_grad, pinned)
    return zeros(shape, dtype, device, rg, pinned, retain_grad=retain_grad)


def empty_like(src, device=None, requires_grad=None, pinned=None, retain_grad=False, *, dtype=None) -> array:
    return zeros_like(src, device, requires_grad, pinned, retain_grad, dtype=dtype)


def ones_like(src, device=None, requires_grad=None, pinned=None, retain_grad=False, *, dtype=None) -> array:
    shape, dtype, device, rg, pinned = _like(src, dtype, device, requires_grad, pinned)
    return ones(shape, dtype, device, rg, pinned, retain_grad=retain_grad)


def full_like(src, value, device=None, requires_grad=None, pinned=None, retain_grad=False, *,
              dtype=None) -> array:
    shape, dtype, device, rg, pinned = _like(src, dtype, device, requires_grad, pinned)
    return full(shape, value, dtype, device, rg, pinned, retain_grad=retain_grad)


def clone(src, device=None, requires_grad=None, pinned=None, retain_grad=False) -> array:
    """A contiguous copy of `src` (an array or an indexed array), recorded on an active Tape
    so that gradients flow back to `src`."""
    out = zeros_like(src, device=device, requires_grad=requires_grad, pinned=pinned, retain_grad=retain_grad)
    copy(out, src)
    return out


def from_numpy(arr, dtype=None, shape=None, device=None, requires_grad=False,
               retain_grad=False) -> array:
    """A weft array copied from numpy `arr`. Without `dtype`, a 2-d array becomes a vector
    array and a 3-d array a matrix array (one element per leading index), as in Warp."""
    arr = np.asarray(arr)
    if dtype is None:
        scalar = scalar_from_numpy(arr.dtype)
        if scalar is None:
            raise RuntimeError(f"Unsupported NumPy data type '{arr.dtype}'.")
        dtype = {2: lambda: vector(arr.shape[1], scalar),
                 3: lambda: matrix(arr.shape[1:], scalar)}.get(arr.ndim, lambda: scalar)()
    return array(arr, dtype=dtype, shape=shape, device=device, requires_grad=requires_grad,
                 retain_grad=retain_grad)


# copy ----------------------------------------------------------------------------------------
def _as_index(name: str, value) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise RuntimeError(f"Copy src_offset, dest_offset, and count must be integers, got "
                           f"{name}={value!r}") from None


def unrecorded() -> bool:
    """Whether nothing records a copy made now (no Tape, watcher or graph capture): it may go
    straight to memory."""
    return not (tape_module.active_tapes or tape_module.any_watchers() or capture.capturing())


def copy(dest, src, dest_offset: int = 0, src_offset: int = 0, count: int = 0, stream=None):
    """Copy `count` elements (0: all of `src`) of `src` from `src_offset` into `dest` at
    `dest_offset`, in row-major order. Contiguous arrays copy bytes (dtypes of the same size
    may differ); otherwise both sides must have the same shape, and offsets and counts are
    only accepted for 1-d arrays. When both arrays have a gradient, the gradient's elements
    are copied too (as Warp). Recorded on an active Tape (the adjoint moves `dest`'s
    gradient of the copied elements into `src`'s)."""
    if type(dest) is array and type(src) is array and dest.dtype is src.dtype and dest.shape == src.shape \
            and not (count or src_offset or dest_offset) and (dest.grad is None or src.grad is None) \
            and unrecorded():
        dest._np[...] = src._np  # (the common case, which nothing records; numpy handles overlap)
        return
    kinds = (array, *_gathered())
    if not isinstance(src, kinds) or not isinstance(dest, kinds):
        raise RuntimeError("Copy source and destination must be arrays")
    src_offset, dest_offset = _as_index("src_offset", src_offset), _as_index("dest_offset", dest_offset)
    count = _as_index("count", count)
    if src_offset < 0:
        raise RuntimeError(f"Source offset must be non-negative, got {src_offset}")
    if dest_offset < 0:
        raise RuntimeError(f"Destination offset must be non-negative, got {dest_offset}")
    if count < 0:
        raise RuntimeError(f"Copy count must be non-negative, got {count}")
    count = count or src.size
    if count == 0:
        return
    plan = _CopyPlan(dest, src, dest_offset, src_offset, count)
    if isinstance(src, _gathered()) or isinstance(dest, _gathered()):
        if tape_module.recording_tape() is not None and (src.requires_grad or dest.requires_grad):
            raise RuntimeError("copies to or from indexed arrays are not recorded on a Tape "
                               "(no gradient flows through them); copy outside the Tape")
    else:
        tape_module.on_copy(dest, src, dest_offset, src_offset, count)

    # as Warp: when both arrays have a gradient, the gradient is copied alike
    dest_grad, src_grad = getattr(dest, "grad", None), getattr(src, "grad", None)
    grads = None
    if dest_grad is not None and src_grad is not None:
        grads = (dest_grad, src_grad, _CopyPlan(dest_grad, src_grad, dest_offset, src_offset, count))

    def run():
        _move(plan, dest, src)
        if grads is not None:
            _move(grads[2], grads[0], grads[1])
    if not capture.record(run, ("call", "weft.copy", (dest, src, dest_offset, src_offset, count), {})):
        run()  # (inside a graph capture: runs when the graph does)


def _move(plan, dest, src):
    """The copy itself: straight from the source's memory, through a temporary only where
    the two arrays' memory may overlap (a shifted copy within one array) or the destination
    scatters its elements (an indexed or Fabric array: its numpy() would gather a copy)."""
    values = plan.read_src(src)
    if isinstance(dest, _gathered()) or np.may_share_memory(values, dest.numpy()):
        values = values.copy()
    plan.write_dest(dest, values)


class _CopyPlan:
    """Which elements `copy` moves: `count` elements from `src_offset` of the source to
    `dest_offset` of the destination in row-major order, or (`whole`) every element of two
    arrays of one shape. Its methods apply to any array laid out like the source or the
    destination."""

    def __init__(self, dest, src, dest_offset, src_offset, count):
        if element_size(src.dtype) != element_size(dest.dtype):
            raise RuntimeError(f"Incompatible array data types: destination dtype={type_name(dest.dtype)}, "
                               f"source dtype={type_name(src.dtype)}")
        partial = src_offset != 0 or dest_offset != 0 or count != src.size or count != dest.size
        same_shape = tuple(src.shape) == tuple(dest.shape)
        if not (src.is_contiguous and dest.is_contiguous):
            if partial and (isinstance(src, _gathered()) or isinstance(dest, _gathered())):
                raise RuntimeError("dest_offset, src_offset, and count are not supported when "
                                   "copying to/from non-contiguous indexed or Fabric arrays")
            if partial and (src.ndim != 1 or dest.ndim != 1):
                raise RuntimeError("dest_offset, src_offset, and count are only supported for "
                                   "1-D non-contiguous arrays")
            if not partial and not same_shape:
                raise RuntimeError(f"Incompatible array shapes: destination shape={tuple(dest.shape)}, "
                                   f"source shape={tuple(src.shape)}")
        if src_offset + count > src.size:
            raise RuntimeError(f"Trying to copy a range of {count} element(s) from source offset "
                               f"({src_offset}) exceeds the source size ({src.size})")
        if dest_offset + count > dest.size:
            raise RuntimeError(f"Trying to copy a range of {count} element(s) to destination offset "
                               f"({dest_offset}) exceeds the destination size ({dest.size})")
        self.whole = not partial and same_shape
        self.src_range = slice(src_offset, src_offset + count)
        self.dest_range = slice(dest_offset, dest_offset + count)
        self.src_dtype, self.dest_dtype = src.dtype, dest.dtype

    def read_src(self, a) -> np.ndarray:
        return a.numpy() if self.whole else _flat(a)[self.src_range]

    def write_dest(self, a, values):
        if self.src_dtype is not self.dest_dtype:
            values = _retyped(values, self.src_dtype, self.dest_dtype)
        if isinstance(a, _gathered()):
            a.assign(values)
        elif self.whole:
            a.numpy()[...] = values
        else:
            flat = _flat(a)
            flat[self.dest_range] = values
            if not np.shares_memory(flat, a.numpy()):  # the reshape copied: write back
                a.numpy()[...] = flat.reshape(a.numpy().shape)


@functools.cache  # (imported on first use: those modules import this one)
def _gathered() -> tuple:
    """The array classes whose elements are gathered to read and scattered to write
    (indexed and Fabric arrays): they have `numpy()` and `assign()` but no strides."""
    from .fabric import fabricarray, indexedfabricarray
    from .indexed_array import indexedarray
    return (indexedarray, fabricarray, indexedfabricarray)


def _flat(a) -> np.ndarray:
    """`a`'s elements in row-major order, shape (size, *components): a view when the
    memory allows, else a copy."""
    return a.numpy().reshape((a.size,) + element_numpy(a.dtype)[1])


def _retyped(values: np.ndarray, src_dtype, dtype) -> np.ndarray:
    """Elements of `src_dtype` reinterpreted bit for bit as elements of `dtype` (same size)."""
    scalar, trailing = element_numpy(dtype)
    lead = values.shape[:values.ndim - len(element_numpy(src_dtype)[1])]
    raw = np.ascontiguousarray(values).view(np.uint8)
    return raw.reshape(lead + (-1,)).view(scalar).reshape(lead + trailing)


def view_of(storage: np.ndarray, dtype=None, what: str = "data") -> array:
    """A weft array over numpy `storage` without copying (the memory of a torch tensor or a
    DLPack producer). `dtype`: None for the scalar type of `storage`; a vector or matrix
    type takes the trailing dimensions of `storage` as its components, which must be
    contiguous (empty storage may have any strides). Strided storage gives a strided array.
    `what` names the source in errors, which are also RuntimeErrors (as Warp's from_torch /
    from_dlpack raise)."""
    scalar = scalar_from_numpy(storage.dtype)
    if scalar is None:
        raise DataTypeError(f"{what}: numpy dtype {storage.dtype} has no weft dtype")
    t = scalar if dtype is None else resolve_dtype(dtype)
    np_scalar, trailing = element_numpy(t)
    if isinstance(t, StructType):
        raise DataTypeError(f"{what}: arrays of structs cannot be made from {storage.dtype} data")
    if np_scalar != storage.dtype:
        needed = f"{t.dtype!r} (the components of {t!r})" if trailing else repr(t)
        raise DataTypeError(f"{what}: holds {scalar!r} values, not {needed} (weft views the memory "
                            f"without converting it)")
    if storage.size == 0 and storage.strides != packed_strides(storage.shape, storage.itemsize):
        # an empty producer's strides mean nothing (torch's numpy() of a (0, 3) tensor has
        # strides (0, 0)): view it as packed memory, as Warp's empty arrays are
        storage = np.lib.stride_tricks.as_strided(storage, storage.shape,
                                                  packed_strides(storage.shape, storage.itemsize))
    if trailing:
        if storage.shape[storage.ndim - len(trailing):] != trailing:
            raise DataShapeError(f"{what}: shape {storage.shape} does not end in {trailing}, the "
                                 f"components of {t!r}")
        if storage.strides[storage.ndim - len(trailing):] != packed_strides(trailing, storage.itemsize):
            broadcast = " (it is broadcast, e.g. the gradient of a sum)" if 0 in storage.strides else ""
            raise DataShapeError(f"{what}: the components of each {t!r} are not contiguous in memory "
                                 f"(strides {storage.strides}){broadcast}; make it contiguous first")
    if storage.ndim == len(trailing):  # a single element: a one-element array
        storage = storage.reshape((1,) + trailing)
    out = array.__new__(array, shape=0)
    out.device = get_device("cpu")
    out._ref = storage
    out._set(storage, t)
    out._grad = None
    out._requires_grad = False
    out._retain_grad = False
    return out


def from_ptr(ptr, length, dtype=None, shape=None, device=None):
    """Deprecated (Warp's `wp.from_ptr`): an array over existing memory, given `ptr`, the
    address of a pointer (a `size_t`) to its first element. Use `array(ptr=..., dtype=...,
    shape=...)` instead."""
    import ctypes

    from ..logger import log_warning
    log_warning("This version of wp.from_ptr() is deprecated. OmniGraph applications should use "
                "from_omni_graph_ptr() instead. To create an array from a C pointer, use the array constructor "
                "and pass the ptr argument as a uint64 value representing the start address in memory where the "
                "existing array resides. For example, if using ctypes, pass "
                "ptr=ctypes.cast(pointer, ctypes.POINTER(ctypes.c_size_t)).contents.value. "
                "Be sure to also specify the dtype and shape parameters.", category=DeprecationWarning)
    if dtype is None:
        raise TypeError("from_ptr: a dtype is required")
    address = 0 if not ptr else ctypes.cast(ptr, ctypes.POINTER(ctypes.c_size_t)).contents.value
    return array(ptr=address, dtype=dtype, shape=shape if shape is not None else (int(length),), device=device)
