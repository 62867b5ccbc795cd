"""Memory behind `weft.array`: element layout, strides, capacity, allocation, raw pointers.

An array's memory is a numpy array (`storage`) holding the elements with their components
as trailing dimensions: an array of `vec3` of shape `(n,)` is numpy `(n, 3)` float32, so
`.numpy()` is a view of the same memory. Allocation honours explicit (even gapped or
transposed) strides, and an array can be laid over a raw address without copying.
"""

from __future__ import annotations

import ctypes
import math
import operator

import numpy as np

from ..types import Matrix, Scalar, StructType, Type, Vector, resolve, scalar_from_numpy
from . import alloc_tracker


def element_numpy(dtype):
    """(numpy scalar dtype, trailing shape) that hold one element of weft type `dtype`."""
    return _element(dtype)[:2]


def element_size(dtype) -> int:
    """Bytes of one element of weft type `dtype`."""
    return _element(dtype)[2]


_ELEMENTS: dict = {}  # weft type -> (numpy scalar dtype, trailing shape, element bytes)


def _element(dtype) -> tuple:
    """(numpy scalar dtype, trailing shape, element bytes) of weft type `dtype`, worked out once
    (asked at every allocation and view)."""
    found = _ELEMENTS.get(dtype)
    if found is None:
        found = _ELEMENTS[dtype] = _element_layout(dtype)
    return found


def _element_layout(dtype) -> tuple:
    if isinstance(dtype, Scalar):
        scalar, trailing = dtype.np_dtype, ()
    elif isinstance(dtype, (Vector, Matrix)):
        scalar, trailing = dtype.dtype.np_dtype, dtype.np_shape
    elif isinstance(dtype, StructType):
        scalar, trailing = np.dtype(dtype.numpy_dtype()), ()
    else:
        raise TypeError(f"arrays cannot hold {dtype!r}")
    return scalar, trailing, scalar.itemsize * math.prod(trailing)


def type_name(t) -> str:
    """A type's short name as Warp spells it (`float32`, `vec3f`, `MyStruct`)."""
    return getattr(t, "__name__", None) or getattr(t, "name", None) or repr(t)


def resolve_dtype(dtype) -> Type:
    """The weft type for `dtype` (a weft type, `float`/`int`/`bool`, or a numpy dtype)."""
    t = resolve(dtype)
    if t is None:
        npt = scalar_from_numpy(dtype) if _is_numpy_dtype(dtype) else None
        if npt is None:
            raise TypeError(f"{dtype!r} is not a weft dtype")
        t = npt
    if t.is_array:
        raise TypeError("arrays of arrays are not supported")
    return t


def _is_numpy_dtype(x) -> bool:
    try:
        np.dtype(x)
        return True
    except TypeError:
        return False


#: The longest array dimension: kernels index arrays with 32-bit signed integers.
MAX_EXTENT = 2**31 - 1


def normalize_shape(shape) -> tuple:
    """`shape` (an int or a sequence of ints, numpy ints included) as a tuple of Python ints;
    negative extents and extents beyond MAX_EXTENT are refused."""
    if type(shape) is int:  # the common case, quickly
        if not 0 <= shape <= MAX_EXTENT:
            check_array_shape((shape,))
        return (shape,)
    dims = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    try:
        dims = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(f"array shapes are integers, got {shape!r}") from None
    check_array_shape(dims)
    return dims


def check_array_shape(dims: tuple) -> None:
    """ValueError unless every extent of `dims` is in 0 .. MAX_EXTENT."""
    if any(d < 0 for d in dims):
        raise ValueError(f"Array shapes must be non-negative, got {dims}")
    if any(d > MAX_EXTENT for d in dims):
        raise ValueError(f"Array shapes must not exceed the maximum representable value of a signed 32-bit "
                         f"integer ({MAX_EXTENT}), got {dims}: kernels index arrays with int32")


def packed_strides(shape, itemsize: int) -> tuple:
    """The strides (in bytes, or elements for `itemsize` 1) of C-order memory of `shape`."""
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def capacity_of(shape, strides, itemsize: int) -> int:
    """Bytes spanned by an array of `shape` and byte `strides` (0 when it is empty)."""
    if math.prod(shape) == 0:
        return 0
    return itemsize + sum((n - 1) * abs(s) for n, s in zip(shape, strides))


def check_strides(shape, strides) -> tuple:
    strides = tuple(operator.index(s) for s in strides)
    if len(strides) != len(shape):
        raise ValueError(f"Invalid number of strides, expected {len(shape)} strides, got "
                         f"{len(strides)}")
    return strides


def allocate(shape: tuple, dtype, strides=None) -> np.ndarray:
    """Zeroed storage for an array of `shape` and weft `dtype`, C-ordered or laid out with
    the given byte `strides` (non-negative; gaps and transposed orders allowed). Every
    array allocation of weft comes here: the allocation tracker (alloc_tracker.py) records
    it while tracking is on."""
    scalar, trailing = element_numpy(dtype)
    item = element_size(dtype)
    if strides is None:
        if math.prod(shape):  # numpy's own C order (the common case, and the fastest)
            storage = _aligned_zeros(math.prod(shape + trailing), scalar).reshape(shape + trailing)
            if alloc_tracker.enabled:
                alloc_tracker.record(storage, storage.nbytes, dtype, shape)
            return storage
        strides = packed_strides(shape, item)  # empty: Warp's strides, which numpy's differ from
    elif any(s < 0 for s in strides):
        raise NotImplementedError(f"Negative strides are not supported for allocation, got {strides}")
    capacity = capacity_of(shape, strides, item)
    base = _aligned_zeros(max(1, -(-capacity // scalar.itemsize)), scalar)
    if alloc_tracker.enabled and capacity:
        alloc_tracker.record(base, capacity, dtype, shape)
    return np.lib.stride_tricks.as_strided(
        base, shape + trailing, tuple(strides) + packed_strides(trailing, scalar.itemsize))


#: Byte alignment of every array allocation: a cache line, and what XLA's CPU backend needs
#: to view memory without a copy (`to_jax` shares an array's memory, as with Warp's arrays).
ALIGNMENT = 64


def _aligned_zeros(count: int, scalar: np.dtype) -> np.ndarray:
    """`count` zeroed elements of numpy dtype `scalar`, starting at an ALIGNMENT boundary.
    Its root numpy array (the end of the `.base` chain) spans exactly these bytes."""
    nbytes = count * scalar.itemsize
    raw = np.zeros(nbytes + ALIGNMENT, dtype=np.uint8)  # (calloc: untouched pages stay lazy)
    start = -ctypes.addressof(ctypes.c_char.from_buffer(raw)) % ALIGNMENT
    # (a ctypes array over the aligned bytes keeps `raw` alive and ends the chain of bases)
    return np.frombuffer((ctypes.c_uint8 * nbytes).from_buffer(raw, start), dtype=scalar)


def from_address(ptr: int, shape: tuple, dtype, strides=None, owner=None) -> np.ndarray:
    """Storage over memory someone else owns, at address `ptr` (not read here). `owner`
    (the object the memory belongs to) is kept alive by the storage and every numpy view
    of it, so that a view outliving its weft array never reads freed memory."""
    scalar, trailing = element_numpy(dtype)
    item = element_size(dtype)
    if strides is None:
        strides = packed_strides(shape, item)
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0) if math.prod(shape) else 0
    span = max(capacity_of(shape, strides, item), 1)
    raw = (ctypes.c_ubyte * span).from_address(ptr + low)
    raw.owner = owner  # (numpy views hold `raw` as their base; see memory_root)
    base = np.frombuffer(raw, dtype=np.uint8)
    flat = base[-low:] if low else base  # position 0 at ptr
    if scalar != np.uint8:
        flat = _retype(flat, scalar)
    return np.lib.stride_tricks.as_strided(
        flat, shape + trailing, tuple(strides) + packed_strides(trailing, scalar.itemsize))


def memory_root(storage: np.ndarray):
    """The object at the end of `storage`'s chain of bases: it lives exactly as long as some
    view of the memory does (the ctypes buffer of `from_address`, or the allocation)."""
    root = storage
    while getattr(root, "base", None) is not None:
        root = root.base
    return root


def _retype(raw: np.ndarray, scalar: np.dtype) -> np.ndarray:
    """The bytes `raw` seen as `scalar` values (a view; a partial tail is cut)."""
    usable = raw[: raw.size - raw.size % scalar.itemsize] if raw.size >= scalar.itemsize else None
    if usable is None:  # fewer bytes than one value: only an empty array uses them
        return np.lib.stride_tricks.as_strided(raw, (0,), (scalar.itemsize,)).view(scalar)
    return usable.view(scalar)
