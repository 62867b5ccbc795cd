"""`weft.indexedarray`: a view of an array through integer index arrays.

`a[idx]` (or `a[idx_i, :, idx_k]`) with weft int32 arrays as indices selects, along each
indexed dimension, the entries the index array lists; the other dimensions are taken
whole. Nothing is copied: reading (`numpy()`, `list()`) gathers, writing (`assign`,
`fill_`, `zero_`, `copy` into it) scatters into the source array.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import tape as tape_module
from ..types import MAX_DIMS, IndexedArrayType, float32, int32
from ..types.array_type import subscript_type
from ..types.layout import ctype_of
from . import capture
from .array import DataShapeError, array, element_numpy
from .array_operators import ArrayOperators
from .device import get_device


class indexedarray(ArrayOperators):  # noqa: N801 - Warp's name
    """`data` viewed through `indices`: one int32 index array (or None for "all") per
    dimension of `data`; a single array indexes the first dimension. Without data,
    `indexedarray(dtype=float, ndim=2)` (or `indexedarray[float]`) is the annotation of a
    kernel parameter."""

    def __new__(cls, data=None, indices=None, dtype=None, ndim=None, *args, **kwargs):  # noqa: ARG003
        # (a subclass's __init__ may take more arguments: they pass through here)
        if data is None:
            return IndexedArrayType(float32 if dtype is None else dtype, ndim or 1)
        return super().__new__(cls)

    def __class_getitem__(cls, key):  # indexedarray[float], indexedarray[float, Literal[2]]
        return subscript_type(IndexedArrayType, key)

    def __init__(self, data: array | None = None, indices=None, dtype=None, ndim=None):
        if not isinstance(data, array):
            raise ValueError(f"indexedarray indexes a weft array, got {type(data).__name__}")
        if isinstance(indices, array) or indices is None:
            indices = [indices]
        indices = list(indices) + [None] * (data.ndim - len(indices))
        if len(indices) != data.ndim:
            raise ValueError(f"indexedarray: {len(indices)} index arrays for an array of "
                             f"{data.ndim} dimension(s)")
        for d, idx in enumerate(indices):
            if idx is None:
                continue
            if not isinstance(idx, array) or idx.dtype is not int32 or idx.ndim != 1:
                raise ValueError(f"indexedarray: the index array of dimension {d} must be a 1-d "
                                f"weft array of int32, got {_describe(idx)}")
        self.data = data
        self.indices = indices
        self.dtype = data.dtype
        self.ndim = data.ndim
        self.device = data.device
        self.shape = tuple(data.shape[d] if idx is None else idx.size for d, idx in enumerate(indices))
        self.size = math.prod(self.shape)
        self.is_contiguous = False
        self._type = IndexedArrayType(self.dtype, self.ndim)
        self._desc = None

    @property
    def requires_grad(self) -> bool:
        return self.data.requires_grad

    @property
    def grad(self):
        """The gradient seen through the same indices: an indexed array over `data.grad`."""
        if self.data.grad is None:
            return None
        return indexedarray(self.data.grad, self.indices)

    def descriptor(self):
        """The ctypes descriptor a kernel receives (see types.layout.indexed_descriptor)."""
        if self._desc is None:
            desc = ctype_of(self._type)()
            desc.data = self.data.ptr
            desc.shape[:] = self.shape
            desc.strides[:] = self.data.strides
            desc.indices[:] = [0 if idx is None else idx.ptr or 0 for idx in self.indices]
            desc.data_shape[:] = self.data.shape
            self._desc = desc
        return self._desc

    def _mesh(self):
        """numpy index tuple selecting the indexed elements of `data` (checked in range)."""
        picks = []
        for d, idx in enumerate(self.indices):
            if idx is None:
                picks.append(np.arange(self.data.shape[d]))
                continue
            values = idx.numpy().astype(np.int64)
            bad = (values < 0) | (values >= self.data.shape[d])
            if bad.any():
                raise IndexError(f"indexedarray: index {int(values[bad][0])} is out of bounds for "
                                 f"dimension {d} of extent {self.data.shape[d]}")
            picks.append(values)
        return np.ix_(*picks)

    def numpy(self) -> np.ndarray:
        """The indexed elements, gathered into a new numpy array."""
        return self.data.numpy()[self._mesh()]

    def __array__(self, dtype=None, copy=None):
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def list(self) -> list:
        return self.contiguous().list()

    def contiguous(self) -> array:
        from .array_create import clone
        return clone(self)

    def to(self, device):
        """This indexed array on `device`: itself (the CPU is the only device), as Warp's on
        the device it is on."""
        get_device(device)
        return self

    def assign(self, src):
        """Write `src` (array, numpy array, list) into the indexed elements."""
        values = src.numpy() if isinstance(src, (array, indexedarray)) else np.asarray(src)
        target = self.shape + element_numpy(self.dtype)[1]
        if values.size != math.prod(target):
            raise DataShapeError(f"assign: data of shape {values.shape} does not fit an indexed "
                                 f"array of shape {self.shape}")
        self.data.numpy()[self._mesh()] = values.reshape(target)
        return self

    def fill_(self, value):
        from ..types import StructType
        from .array import _fill_struct, _fill_value  # (one rule for what fills an element)
        self._write(_fill_struct(self.dtype, value) if isinstance(self.dtype, StructType)
                    else _fill_value(self.dtype, value))
        return self

    def zero_(self):
        self._write(0)
        return self

    def _write(self, value):
        """Scatter `value` into the indexed elements now, or, during a graph capture, when the
        graph runs (with the index arrays' contents of that time, as a launch would read)."""
        def write():
            self.data.numpy()[self._mesh()] = value
        tape_module.protect(self.data, whole=False)  # (only the indexed elements are set)
        if not capture.record(write):
            write()

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"indexedarray(shape={self.shape}, dtype={self.dtype!r})"

    def __str__(self):
        return str(self.numpy())


def _describe(x) -> str:
    if isinstance(x, array):
        return f"an array of {x.dtype!r} with {x.ndim} dimension(s)"
    return type(x).__name__


def index_with_arrays(a: array, keys: tuple) -> indexedarray:
    """`a[keys]` where some keys are index arrays: ints and slices first make a view (an
    int removes its dimension), then the index arrays select along the dimensions left."""
    if len(keys) > a.ndim:
        raise IndexError(f"too many indices ({len(keys)}) for an array of {a.ndim} dimension(s)")
    view_key, indices = [], []
    for k in keys:
        if isinstance(k, array):
            view_key.append(slice(None))
            indices.append(k)
        elif isinstance(k, slice):
            view_key.append(k)
            indices.append(None)
        elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
            view_key.append(k)
        else:
            raise TypeError(f"arrays are indexed by ints, slices and int32 index arrays, got {k!r}")
    view = a[tuple(view_key)] if any(not isinstance(k, slice) or k != slice(None) for k in view_key) else a
    if not isinstance(view, array):
        raise IndexError("index arrays need at least one dimension left to index")
    indices += [None] * (view.ndim - len(indices))
    assert view.ndim <= MAX_DIMS
    return indexedarray(view, indices)
