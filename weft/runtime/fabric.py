"""`weft.fabricarray` and `weft.indexedfabricarray`: arrays over buckets of memory.

Omniverse Fabric stores an attribute of many prims in buckets, each a contiguous run of
elements at its own address. A Fabric array sees those buckets, in order, as one 1-d
array: kernels index it like an array (`a[i]`, `a[i] = x`, atomics), host code reads it
with `numpy()` and writes it with `assign`, `fill_`, `zero_` and `copy`. Nothing is
copied and nothing is owned: the buckets stay where Fabric put them (the array keeps the
interface object referenced, but whoever owns the buckets must keep them alive).

It is made from a Fabric interface dictionary (or an object with
`__fabric_arrays_interface__`): `{"version": 1, "device": "cpu", "attribs": {name:
{"type": (valid, base, count, array_depth, role), "access": ..., "pointers": [...],
"counts": [...], "array_lengths": [...]}}}`. With `array_depth` 1 (a `fabricarrayarray`),
each element is itself an array: a bucket's pointer leads to one pointer per element (to
the element's own data) and `array_lengths` to one uint64 length per element; in a kernel
`a[i]` is that array and `a[i, j]` its element j.

weft compiles for the CPU: at construction it turns the buckets into a table holding the
address of each element (for arrays of arrays, of each element's pointer and length
slots), so that an access is one table read where Warp searches the buckets. Fabric arrays
carry no gradient (as in Warp).
"""

from __future__ import annotations

import ctypes
import math
import typing

import numpy as np

from ..types import (
    FabricArrayType,
    IndexedFabricArrayType,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    matrix,
    quaternion,
    uint8,
    uint16,
    uint32,
    uint64,
    vector,
)
from ..types.array_type import subscript_type
from ..types.layout import FabricDesc
from . import capture
from .array import array
from .array_memory import element_numpy, element_size
from .device import get_device

_BASE_TYPES = {"b": bool_, "i1": int8, "i2": int16, "i4": int32, "i8": int64, "u1": uint8, "u2": uint16,
               "u4": uint32, "u8": uint64, "f2": float16, "f4": float32, "f8": float64}


def fabric_dtype(type_info, attrib: str):
    """The weft dtype of a Fabric attribute from its type tuple (valid, base type, element
    count, array depth, role): a scalar, a vector, a square matrix or a quaternion."""
    if not isinstance(type_info, (tuple, list)) or len(type_info) != 5:
        n = len(type_info) if hasattr(type_info, "__len__") else "no"
        raise ValueError(f"Fabric attribute '{attrib}' type metadata must contain five elements, "
                         f"got {n}: {type_info!r}")
    valid, base, count, _, role = type_info
    if not valid:
        raise RuntimeError(f"Attribute '{attrib}' cannot be used in weft")
    scalar = _BASE_TYPES.get(base)
    if scalar is None:
        raise RuntimeError(f"Attribute '{attrib}' base data type '{base}' is not supported")
    if role in ("text", "path"):
        raise RuntimeError(f"Attribute '{attrib}' role '{role}' is not supported")
    if count <= 1:
        return scalar
    if role == "quat" and count == 4:
        return quaternion(scalar)
    if role in ("matrix", "transform", "frame"):
        side = math.isqrt(count)
        if side * side != count:
            raise ValueError(f"Fabric attribute '{attrib}' matrix metadata must have a square element "
                             f"count, got {count}")
        return matrix((side, side), scalar)
    return vector(count, scalar)


def _bucket_view(ptr: int, count: int, dtype) -> np.ndarray:
    """A writable numpy view of `count` elements of `dtype` at address `ptr`."""
    scalar, trailing = element_numpy(dtype)
    if count == 0:
        return np.zeros((0, *trailing), dtype=scalar)
    raw = (ctypes.c_uint8 * (count * element_size(dtype))).from_address(ptr)
    return np.frombuffer(raw, dtype=scalar).reshape((count, *trailing))


def _element_value(dtype, value) -> np.ndarray:
    """`value` (a number, sequence, numpy array or weft value) as one element of `dtype`, by
    the rules of `array.fill_`."""
    one = array(shape=1, dtype=dtype)
    one.fill_(value)
    return one.numpy()[0].copy()


class _FabricBase:
    """What plain and indexed Fabric arrays share (host side)."""

    is_contiguous = False
    requires_grad = False
    grad = None

    def __len__(self):
        return self.size

    def __array__(self, dtype=None, copy=None):
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def list(self) -> list:
        from .array_create import clone
        return clone(self).list()

    def contiguous(self) -> array:
        from .array_create import clone
        return clone(self)

    def to(self, device):
        """This array, if `device` is its own: Fabric arrays are not moved."""
        if get_device(device) is not self.device:
            raise ValueError(f"a {self._type.family} cannot be moved to {device!r}: weft does not own "
                             f"Fabric's memory")
        return self

    def __ctype__(self):
        return self.descriptor()

    def fill_(self, value):
        """Set every element seen to `value` (arrays of arrays: not supported, their rows
        have lengths of their own)."""
        if self.ndim > 1:
            raise RuntimeError(f"Filling {self._type.family}s of arrays is not supported")
        self._write(_element_value(self.dtype, value))
        return self

    def zero_(self):
        return self.fill_(0)

    def assign(self, src):
        """Write `src` (an array, a numpy array, a list) into the elements seen, in order."""
        if self.ndim > 1:
            raise RuntimeError(f"assigning to a {self._type.family} of arrays is not supported")
        values = src.numpy() if hasattr(src, "numpy") else np.asarray(src)
        scalar, trailing = element_numpy(self.dtype)
        if values.size != self.size * math.prod(trailing):
            raise ValueError(f"assign: data of shape {values.shape} does not fit a {self._type.family} "
                             f"of shape {self.shape}")
        self._write(values.reshape((self.size, *trailing)).astype(scalar, copy=False))
        return self

    def _write(self, values):
        def write():
            self._scatter(values)
        if not capture.record(write):
            write()

    def __repr__(self):
        return f"{self._type.family}(shape={self.shape}, dtype={self.dtype!r})"

    def __str__(self):
        return str(self.numpy())


class fabricarray(_FabricBase):  # noqa: N801 - Warp's name
    """The attribute `attrib` of the Fabric interface `data` (a dict, or an object with
    `__fabric_arrays_interface__`). Without data, `fabricarray(dtype=float)` (or
    `fabricarray[float]`) is the annotation of a kernel parameter or struct field; `ndim=2`
    (or `fabricarrayarray(dtype=...)`) is an array of arrays."""

    def __new__(cls, data=None, attrib=None, dtype=typing.Any, ndim=None, *args, **kwargs):  # noqa: ARG003
        # (a subclass's __init__ may take more arguments: they pass through here)
        if data is None:
            return FabricArrayType(dtype, ndim or 1)
        return super().__new__(cls)

    def __class_getitem__(cls, key):  # fabricarray[float], fabricarray[float, Literal[2]]
        return subscript_type(FabricArrayType, key)

    def __init__(self, data=None, attrib=None, dtype=typing.Any, ndim=None):
        if not isinstance(attrib, str):
            raise ValueError(f"Invalid attribute name: {attrib!r}")
        iface = data if isinstance(data, dict) else getattr(data, "__fabric_arrays_interface__", None)
        if not isinstance(iface, dict):
            raise ValueError("Invalid data argument for fabricarray: expected a dict or an object with "
                             "__fabric_arrays_interface__")
        if iface.get("version") != 1:
            raise ValueError(f"Unsupported Fabric interface version: {iface.get('version')!r}")
        if not isinstance(iface.get("device"), str):
            raise ValueError(f"Invalid Fabric interface device: {iface.get('device')!r}")
        self.device = get_device(iface["device"])
        self._interface = data  # (kept referenced: what it holds may own the buckets' memory)
        info = (iface.get("attribs") or {}).get(attrib) if isinstance(iface.get("attribs"), dict) else None
        if not isinstance(info, dict):
            raise ValueError(f"Failed to get attribute '{attrib}'")
        self.dtype = fabric_dtype(info["type"], attrib)
        self.access = info.get("access")
        pointers, counts = info["pointers"], info["counts"]
        if not (hasattr(pointers, "__len__") and hasattr(counts, "__len__") and len(pointers) == len(counts)):
            raise RuntimeError("Attribute pointers and counts must be lists of the same size")
        depth = info["type"][3]
        if depth not in (0, 1):
            raise ValueError(f"Invalid attribute array depth: {depth}")
        self.ndim = depth + 1
        counts = [int(c) for c in counts]
        if any(c < 0 for c in counts):
            raise ValueError(f"Fabric attribute '{attrib}': negative bucket count in {counts}")
        starts = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
        self.buckets = [(int(starts[k]), int(starts[k + 1]), int(p or 0)) for k, p in enumerate(pointers)]
        self.size = int(starts[-1])
        self.shape = (self.size,)
        self._starts = starts[:-1]
        # the address of each element (arrays of arrays: of its row pointer and length slots)
        step = 8 if self.ndim == 2 else element_size(self.dtype)
        self._table = self._addresses(pointers, counts, step)
        self._lengths = None
        if self.ndim == 2:
            lengths = info.get("array_lengths")
            if not hasattr(lengths, "__len__") or len(lengths) != len(pointers):
                raise RuntimeError("Attribute `array_lengths` must be a list of the same size as `pointers` "
                                   "and `counts`")
            self._lengths = self._addresses(lengths, counts, 8)
        self._type = FabricArrayType(self.dtype, self.ndim)
        self._desc = None

    @staticmethod
    def _addresses(pointers, counts, step: int) -> np.ndarray:
        """Per element, its bucket's address plus its place in the bucket times `step`."""
        if not counts:
            return np.zeros(0, dtype=np.uint64)
        base = np.repeat(np.array([int(p or 0) for p in pointers], dtype=np.uint64), counts)
        place = np.arange(sum(counts), dtype=np.uint64) - np.repeat(
            np.concatenate([[0], np.cumsum(counts[:-1])]).astype(np.uint64), counts)
        return base + place * np.uint64(step)

    def descriptor(self):
        """The ctypes descriptor a kernel receives (types.layout.FabricDesc)."""
        if self._desc is None:
            desc = FabricDesc()
            desc.table = self._table.ctypes.data if self.size else None
            desc.shape[0] = desc.data_shape[0] = self.size
            desc.lengths[0] = self._lengths.ctypes.data if self._lengths is not None and self.size else 0
            self._desc = desc
        return self._desc

    def __getitem__(self, key):
        if isinstance(key, array):
            return indexedfabricarray(self, key)
        raise ValueError(f"Fabric arrays are indexed by index arrays only, got {type(key).__name__}")

    def _views(self) -> list[np.ndarray]:
        return [_bucket_view(p, end - start, self.dtype) for start, end, p in self.buckets]

    def numpy(self) -> np.ndarray:
        """The elements, gathered into a new numpy array (arrays of arrays: not supported)."""
        if self.ndim > 1:
            raise RuntimeError("numpy() of a Fabric array of arrays is not supported (its rows have "
                               "lengths of their own)")
        scalar, trailing = element_numpy(self.dtype)
        views = self._views()
        return np.concatenate(views) if views else np.zeros((0, *trailing), dtype=scalar)

    def _scatter(self, values, positions=None):
        """Write `values` (one element, or one per position) to the elements at `positions`
        (None: all, in order)."""
        values = np.asarray(values)
        one = values.ndim == len(element_numpy(self.dtype)[1])
        if positions is None:
            positions = np.arange(self.size)
        bucket = np.searchsorted(self._starts, positions, side="right") - 1
        for k, view in enumerate(self._views()):
            picked = bucket == k
            if picked.any():
                view[positions[picked] - self._starts[k]] = values if one else values[picked]


class indexedfabricarray(_FabricBase):  # noqa: N801 - Warp's name
    """The elements of Fabric array `fa` at the positions the int32 array `indices` lists
    (`fa[indices]`). Without fa, the annotation `indexedfabricarray(dtype=float)`."""

    def __new__(cls, fa=None, indices=None, dtype=typing.Any, ndim=None, *args, **kwargs):  # noqa: ARG003
        if fa is None:
            return IndexedFabricArrayType(dtype, ndim or 1)
        return super().__new__(cls)

    def __class_getitem__(cls, key):
        return subscript_type(IndexedFabricArrayType, key)

    def __init__(self, fa=None, indices=None, dtype=None, ndim=None):
        if not isinstance(fa, fabricarray):
            raise TypeError(f"indexedfabricarray indexes a fabricarray, got {type(fa).__name__}")
        if not isinstance(indices, array) or indices.dtype is not int32 or indices.ndim != 1:
            raise TypeError("indexedfabricarray: the indices must be a 1-d weft array of int32")
        if indices.device is not fa.device:
            raise ValueError(f"indexedfabricarray: the indices are on {indices.device}, the Fabric array "
                             f"on {fa.device}")
        self.fa, self.indices = fa, indices
        self.dtype, self.ndim, self.device = fa.dtype, fa.ndim, fa.device
        self.size = indices.size
        self.shape = (self.size,)
        self._type = IndexedFabricArrayType(self.dtype, self.ndim)
        self._desc = None

    def descriptor(self):
        if self._desc is None:
            desc = FabricDesc()
            ctypes.memmove(ctypes.addressof(desc), ctypes.addressof(self.fa.descriptor()), ctypes.sizeof(desc))
            desc.shape[0] = self.size
            desc.indices[0] = self.indices.ptr if self.size else None
            self._desc = desc
        return self._desc

    def _positions(self) -> np.ndarray:
        picks = self.indices.numpy().astype(np.int64)
        bad = (picks < 0) | (picks >= self.fa.size)
        if bad.any():
            raise IndexError(f"indexedfabricarray: index {int(picks[bad][0])} is out of bounds for a "
                             f"Fabric array of size {self.fa.size}")
        return picks

    def numpy(self) -> np.ndarray:
        return self.fa.numpy()[self._positions()]

    def _scatter(self, values):
        self.fa._scatter(values, self._positions())


def fabricarrayarray(**kwargs):
    """A Fabric array of arrays: `fabricarray(..., ndim=2)`."""
    kwargs["ndim"] = 2
    return fabricarray(**kwargs)


def indexedfabricarrayarray(**kwargs):
    """An indexed Fabric array of arrays: `indexedfabricarray(..., ndim=2)`."""
    kwargs["ndim"] = 2
    return indexedfabricarray(**kwargs)
