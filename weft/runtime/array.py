"""`weft.array`: an n-d array (1 to 4 dims) of any weft dtype, in CPU memory.

The memory is a numpy array holding the elements with their components as trailing
dimensions (an array of `vec3` of shape `(n,)` is stored as numpy `(n, 3)` float32), so
`.numpy()` is a view and numpy code can read and write the same memory.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from ..types import (
    MAX_DIMS,
    ArrayType,
    CompositeValue,
    Matrix,
    Scalar,
    StructType,
    StructValue,
    Type,
    Vector,
    float32,
    int32,
    matrix,
    resolve,
    scalar_from_numpy,
    vector,
)
from ..types.layout import array_descriptor
from . import capture
from .device import get_device


def element_numpy(dtype):
    """(numpy scalar dtype, trailing shape) that hold one element of weft type `dtype`."""
    if isinstance(dtype, Scalar):
        return dtype.np_dtype, ()
    if isinstance(dtype, (Vector, Matrix)):
        return dtype.dtype.np_dtype, dtype.np_shape
    if isinstance(dtype, StructType):
        return np.dtype(dtype.numpy_dtype()), ()
    raise TypeError(f"arrays cannot hold {dtype!r}")


def _resolve_dtype(dtype) -> Type:
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


class array:  # noqa: N801 - Warp's name
    """An array of `dtype` elements. `array(dtype=float)` with no data or shape is the type
    annotation `ArrayType(float32, 1)` (also `array[float]`); `array(dtype=..., ndim=2)` too."""

    #: Set by a Tape when `config.verify_autograd_array_access` is on: a recorded launch read it.
    _is_read = False
    #: The array this one is a view of (None: it owns its memory).
    _ref = None
    _retain_grad = False

    def __new__(cls, data=None, dtype=None, shape=None, strides=None, device=None,
                requires_grad=False, copy=True, ndim=None, retain_grad=False, **unsupported):
        if data is None and shape is None:
            if requires_grad or strides is not None:
                raise ValueError("an array needs data or a shape")
            return ArrayType(dtype if dtype is not None else float32, ndim or 1)
        return super().__new__(cls)

    def __class_getitem__(cls, dtype):
        return ArrayType(dtype, 1)

    def __init__(self, data=None, dtype=None, shape=None, strides=None, device=None,
                 requires_grad=False, copy=True, ndim=None, retain_grad=False, **unsupported):
        if unsupported:
            raise TypeError(f"array() got unsupported arguments: {', '.join(unsupported)}")
        self.device = get_device(device)
        if data is not None:
            self._init_from_data(data, dtype, shape, copy)
        else:
            t = _resolve_dtype(dtype if dtype is not None else float32)
            shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
            scalar, trailing = element_numpy(t)
            self._set(np.zeros(tuple(int(s) for s in shape) + trailing, dtype=scalar), t)
        self._requires_grad = False
        self.grad = None
        self.requires_grad = requires_grad
        if retain_grad:
            self.retain_grad = True

    def _init_from_data(self, data, dtype, shape, copy):
        if isinstance(data, array):
            data = data.numpy()
        t = None if dtype is None else _resolve_dtype(dtype)
        if t is None:
            src = np.asarray(data)
            t = scalar_from_numpy(src.dtype)
            if t is None:
                raise TypeError(f"cannot infer a weft dtype from numpy dtype {src.dtype}")
        scalar, trailing = element_numpy(t)
        if isinstance(t, StructType) and isinstance(data, (list, tuple)):
            data = np.array([struct_record(t, v) for v in data], dtype=scalar)
        src = np.asarray(data)
        if isinstance(t, StructType):
            if src.dtype != scalar:
                raise TypeError(f"struct arrays need numpy data of dtype {scalar}")
        elif src.dtype != scalar:
            src = src.astype(scalar, order="C")
            copy = False  # astype already copied
        if trailing and src.shape[-len(trailing):] != trailing:
            if src.size % int(np.prod(trailing)) == 0 and src.ndim == 1:
                src = src.reshape((-1,) + trailing)
            else:
                raise ValueError(f"data of shape {src.shape} does not hold {t!r} elements "
                                 f"(trailing dimensions {trailing} expected)")
        if shape is not None:
            shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
            src = src.reshape(tuple(shape) + trailing)
        if src.ndim - len(trailing) == 0:
            src = src.reshape((1,) + trailing)
        self._set(np.array(src, order="C") if copy else src, t)

    def _set(self, storage: np.ndarray, dtype: Type):
        scalar, trailing = element_numpy(dtype)
        ndim = storage.ndim - len(trailing)
        if not 1 <= ndim <= MAX_DIMS:
            raise ValueError(f"arrays have 1 to {MAX_DIMS} dimensions, got {ndim}")
        self._np = storage
        self.dtype = dtype
        self.ndim = ndim
        self.shape = storage.shape[:ndim]
        self.strides = storage.strides[:ndim]
        self.size = math.prod(self.shape)
        self._desc = None
        self._type = ArrayType(dtype, ndim)
        c_strides = packed_strides(storage.shape, storage.itemsize)  # components included
        inner = storage.strides[ndim:] == c_strides[ndim:]
        self.is_contiguous = bool(inner and (self.size <= 1 or self.strides == c_strides[:ndim]))
        self._item_size = storage.itemsize * math.prod(trailing)

    # Interop --------------------------------------------------------------------------------
    @property
    def ptr(self) -> int:
        return self._np.ctypes.data

    def numpy(self) -> np.ndarray:
        """A numpy view of the same memory (components as trailing dimensions)."""
        return self._np

    @property
    def __array_interface__(self):
        return self._np.__array_interface__

    def __array__(self, dtype=None, copy=None):
        a = self._np if dtype is None else self._np.astype(dtype)
        return a.copy() if copy and a is self._np else a

    def list(self):
        """The elements as a flat Python list: numbers, vector/matrix values, struct
        instances (whose array fields come back as None), as Warp's `list()`."""
        t = self.dtype
        if isinstance(t, StructType):
            return [t.from_record(r) for r in self._np.reshape(-1)]
        if isinstance(t, (Vector, Matrix)):
            flat = self._np.reshape(-1, t.num_components)
            return [CompositeValue(t, row.copy()) for row in flat]
        return self._np.reshape(-1).tolist()

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule viewing this array's memory (see weft/interop/dlpack.py)."""
        from ..interop.dlpack import export
        return export(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple:
        return (1, 0)  # DLPack's CPU device

    def descriptor(self):
        """The ctypes descriptor a kernel receives (cached: pointer, shape, strides)."""
        if self._desc is None:
            desc = array_descriptor(self.ndim)()
            desc.data = self.ptr
            desc.shape[:] = self.shape
            desc.strides[:] = self.strides
            self._desc = desc
        return self._desc

    __ctype__ = descriptor  # (Warp's name for the packed form)

    # Gradients ------------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool):
        self._requires_grad = bool(value)
        if value and self.grad is None:
            self.grad = zeros(self.shape, dtype=self.dtype, device=self.device)

    @property
    def retain_grad(self) -> bool:
        """Whether a Tape's backward pass keeps this array's gradient where a kernel overwrote
        the array, instead of consuming it (for inspecting an intermediate's gradient; an
        array written more than once then counts the gradient more than once)."""
        return self._retain_grad

    @retain_grad.setter
    def retain_grad(self, value: bool):
        if value and not self._requires_grad:
            raise ValueError("retain_grad=True requires requires_grad=True")
        self._retain_grad = bool(value)

    # Overwrite checks (config.verify_autograd_array_access) -----------------------------------
    def mark_init(self):
        """Forget that a recorded launch read this array."""
        self._is_read = False

    def mark_read(self):
        """Note that a recorded launch read this array (and so every array it views)."""
        a = self
        while a is not None:
            a._is_read = True
            a = a._ref

    def mark_write(self, **where):
        """Warn if a recorded launch read this array, which is now being overwritten. `where`:
        `arg_name`, `kernel_name`, `filename`, `lineno` for a launch, or `operation`,
        `filename`, `lineno` for another write."""
        if self._is_read:
            from ..tape import warn_overwrite
            warn_overwrite(self, where)

    # Filling and copying --------------------------------------------------------------------
    def assign(self, src):
        """Copy `src` (array, numpy array, list) into this array; shapes must match. Inside
        `with Tape():` it is recorded as `weft.copy` is."""
        from ..tape import active_tapes
        if active_tapes:
            active_tapes[-1].record_assign(self, src)
        data = src.numpy() if isinstance(src, array) else np.asarray(src)
        if data.shape != self._np.shape and data.size != self._np.size:
            raise ValueError(f"assign: shape {data.shape} does not match {self._np.shape}")
        data = data.reshape(self._np.shape)
        if not capture.record(functools.partial(self._np.__setitem__, Ellipsis, data)):  # see capture.py
            self._np[...] = data
        return self

    def fill_(self, value):
        """Set every element to `value` (a scalar fills every component of a vector)."""
        if isinstance(self.dtype, StructType):
            value = struct_record(self.dtype, value)
        elif isinstance(value, (tuple, list, CompositeValue)):
            value = np.asarray(value)
        if not capture.record(functools.partial(self._np.__setitem__, Ellipsis, value)):
            self._np[...] = value
        return self

    def zero_(self):
        if not capture.record(functools.partial(self._np.__setitem__, Ellipsis, 0)):
            self._np[...] = 0
        return self

    def _index(self, key) -> tuple:
        """`key` as a tuple of at most `ndim` ints and slices, so that indexing never reaches
        the components (the trailing numpy dimensions) and always gives a view."""
        key = key if isinstance(key, tuple) else (key,)
        for k in key:
            if isinstance(k, bool) or not (k is Ellipsis or isinstance(k, (slice, numbers.Integral))):
                raise TypeError(f"arrays are indexed by ints and slices, got {k!r} "
                                f"(index arrays would make a copy, not a view)")
        ellipses = [at for at, k in enumerate(key) if k is Ellipsis]
        if ellipses:
            at = ellipses[0]
            key = key[:at] + (slice(None),) * (self.ndim - len(key) + 1) + key[at + 1:]
        if len(key) > self.ndim:
            raise IndexError(f"too many indices ({len(key)}) for an array of {self.ndim} "
                             f"dimension(s)")
        return key

    def __getitem__(self, key):
        key = self._index(key)
        view = self._np[key]
        trailing = element_numpy(self.dtype)[1]
        if view.ndim - len(trailing) < 1:
            return view if trailing else view[()]
        return self._view(view, None if self.grad is None else self.grad[key])

    def __setitem__(self, key, value):
        self._np[self._index(key)] = value.numpy() if isinstance(value, array) else value

    def _view(self, storage: np.ndarray, grad) -> array:
        """An array over `storage` (part of this one's memory) with this one's dtype."""
        out = array.__new__(array, shape=0)
        out.device = self.device
        out._set(storage, self.dtype)
        out.grad = grad
        out._requires_grad = self._requires_grad and grad is not None
        out._retain_grad = self._retain_grad and out._requires_grad
        out._ref = self
        return out

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"weft.array(shape={self.shape}, dtype={self.dtype!r}, device={self.device})\n{self._np!r}"

    def __str__(self):
        return str(self._np)

    def to(self, device):
        get_device(device)
        return self

    def contiguous(self):
        return self if self.is_contiguous else clone(self)

    def reshape(self, shape):
        """A view with another shape (and the gradient reshaped alike). An array whose
        memory cannot be viewed with the new shape (a strided view) is refused."""
        shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
        view = self._np.reshape(shape + element_numpy(self.dtype)[1])
        if view.size and not np.may_share_memory(view, self._np):
            raise ValueError(f"cannot reshape an array of shape {self.shape} and strides "
                             f"{self.strides} to {shape} without a copy; use .contiguous() first")
        return self._view(view, None if self.grad is None else self.grad.reshape(shape))

    def flatten(self):
        return self.reshape((self.size,))


def _shape(shape):
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)


def empty(shape, dtype=float32, device=None, requires_grad=False, retain_grad=False) -> array:
    return array(shape=_shape(shape), dtype=dtype, device=device, requires_grad=requires_grad,
                 retain_grad=retain_grad)


def zeros(shape, dtype=float32, device=None, requires_grad=False, retain_grad=False) -> array:
    return array(shape=_shape(shape), dtype=dtype, device=device, requires_grad=requires_grad,
                 retain_grad=retain_grad)


def full(shape, value, dtype=None, device=None, requires_grad=False) -> array:
    if dtype is None:
        dtype = _dtype_of_value(value)
    a = zeros(shape, dtype=dtype, device=device, requires_grad=requires_grad)
    return a.fill_(value)


def _dtype_of_value(value) -> Type:
    """The dtype `full` gives `value`: its own type; float32, int32 or bool for a Python
    number; a vector or matrix of those for a (nested) sequence."""
    if isinstance(value, CompositeValue):
        return value.type
    if isinstance(value, StructValue):
        return value._type
    data = np.asarray(value)
    scalar = scalar_from_numpy(data.dtype)
    if scalar is None:
        raise TypeError(f"full: cannot infer a dtype from {value!r}; pass dtype=")
    if not isinstance(value, (np.generic, np.ndarray)):  # Python numbers, as in annotations
        scalar = {"f": float32, "i": int32}.get(data.dtype.kind, scalar)
    if data.ndim == 1:
        return vector(data.shape[0], scalar)
    if data.ndim == 2:
        return matrix(data.shape, scalar)
    return scalar


def ones(shape, dtype=float32, device=None, requires_grad=False) -> array:
    return full(shape, 1, dtype=dtype, device=device, requires_grad=requires_grad)


def _like(src: array, dtype, device, requires_grad):
    return (src.shape, src.dtype if dtype is None else dtype, device or src.device,
            src.requires_grad if requires_grad is None else requires_grad)


def zeros_like(src, dtype=None, device=None, requires_grad=None) -> array:
    shape, dtype, device, rg = _like(src, dtype, device, requires_grad)
    return zeros(shape, dtype, device, rg)


def empty_like(src, dtype=None, device=None, requires_grad=None) -> array:
    return zeros_like(src, dtype, device, requires_grad)


def ones_like(src, dtype=None, device=None, requires_grad=None) -> array:
    shape, dtype, device, rg = _like(src, dtype, device, requires_grad)
    return ones(shape, dtype, device, rg)


def full_like(src, value, dtype=None, device=None, requires_grad=None) -> array:
    shape, dtype, device, rg = _like(src, dtype, device, requires_grad)
    return full(shape, value, dtype, device, rg)


def clone(src: array, device=None, requires_grad=None, retain_grad=False) -> array:
    """A copy of `src` in new memory (recorded on an active Tape, as `copy` is)."""
    out = zeros_like(src, device=device, requires_grad=requires_grad)
    out.retain_grad = retain_grad
    copy(out, src)
    return out


def copy(dest: array, src: array, dest_offset: int = 0, src_offset: int = 0, count: int = 0):
    """Copy `count` elements of `src` from `src_offset` into `dest` at `dest_offset` (in
    row-major order). `count=0` copies the rest of `src`, which must fit in `dest`."""
    if dest.dtype is not src.dtype:
        raise TypeError(f"copy: dtypes differ ({dest.dtype!r} and {src.dtype!r})")
    d, s = elements(dest), elements(src)
    n = count or s.shape[0] - src_offset
    if min(n, src_offset, dest_offset) < 0 or src_offset + n > s.shape[0] \
            or dest_offset + n > d.shape[0]:
        raise ValueError(f"copy: {n} elements from offset {src_offset} of an array of "
                         f"{src.size} do not fit at offset {dest_offset} of an array of {dest.size}")
    from ..tape import active_tapes
    if active_tapes:
        active_tapes[-1].record_copy(dest, src, dest_offset, src_offset, n)
    def run():
        d, s = elements(dest), elements(src)
        d[dest_offset:dest_offset + n] = s[src_offset:src_offset + n]
        if not np.shares_memory(d, dest.numpy()):  # reshape copied: write back
            dest.numpy()[...] = d.reshape(dest.numpy().shape)
    if not capture.record(run):  # inside a graph capture: runs when the graph does
        run()


def elements(a: array) -> np.ndarray:
    """`a`'s elements in row-major order, as a numpy array of shape (size, *element shape)
    (a view where the memory allows, else a copy)."""
    return a.numpy().reshape((a.size,) + element_numpy(a.dtype)[1])


def from_numpy(arr, dtype=None, shape=None, device=None, requires_grad=False) -> array:
    return array(np.asarray(arr), dtype=dtype, shape=shape, device=device,
                 requires_grad=requires_grad)


def packed_strides(shape, itemsize: int) -> tuple:
    """The strides (in bytes, or elements for `itemsize` 1) of C-order memory of `shape`."""
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def view_of(storage: np.ndarray, dtype=None, what: str = "data") -> array:
    """A weft array over numpy `storage` without copying (the memory of a torch tensor or a
    DLPack producer). `dtype`: None for the scalar type of `storage`; a vector or matrix
    type takes the trailing dimensions of `storage` as its components, which must be
    contiguous. Strided storage gives a strided array. `what` names the source in errors."""
    scalar = scalar_from_numpy(storage.dtype)
    if scalar is None:
        raise TypeError(f"{what}: numpy dtype {storage.dtype} has no weft dtype")
    t = scalar if dtype is None else _resolve_dtype(dtype)
    np_scalar, trailing = element_numpy(t)
    if isinstance(t, StructType):
        raise TypeError(f"{what}: arrays of structs cannot be made from {storage.dtype} data")
    if np_scalar != storage.dtype:
        needed = f"{t.dtype!r} (the components of {t!r})" if trailing else repr(t)
        raise TypeError(f"{what}: holds {scalar!r} values, not {needed} (weft views the memory "
                        f"without converting it)")
    if trailing:
        if storage.shape[storage.ndim - len(trailing):] != trailing:
            raise ValueError(f"{what}: shape {storage.shape} does not end in {trailing}, the "
                             f"components of {t!r}")
        if storage.strides[storage.ndim - len(trailing):] != packed_strides(trailing, storage.itemsize):
            broadcast = " (it is broadcast, e.g. the gradient of a sum)" if 0 in storage.strides else ""
            raise ValueError(f"{what}: the components of each {t!r} are not contiguous in memory "
                             f"(strides {storage.strides}){broadcast}; make it contiguous first")
    if storage.ndim == len(trailing):  # a single element: a one-element array
        storage = storage.reshape((1,) + trailing)
    out = array.__new__(array, shape=0)
    out.device = get_device("cpu")
    out._set(storage, t)
    out.grad = None
    out._requires_grad = False
    return out


def struct_record(t: StructType, value) -> np.void:
    """A struct value as one element of a `t` array's numpy storage."""
    from .launch import pack_value
    packed = pack_value(None, f"{t.name} value", t, value)
    return np.frombuffer(bytes(packed), dtype=element_numpy(t)[0])[0]
