"""`weft.array`: an n-d array (1 to 4 dims) of any weft dtype, in CPU memory.

The memory is a numpy array holding the elements with their components as trailing
dimensions (see `array_memory`), so `.numpy()` is a view and numpy code can read and write
the same memory. Views (`a[1:, 2]`, `reshape`, `transpose`, `view(dtype)`) share it, and
carry the matching view of the gradient.
"""

from __future__ import annotations

import ctypes
import functools
import math
import numbers
import typing
import weakref

import numpy as np

from .. import tape as tape_module
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
    bfloat16,
    float32,
)
from ..types.array_type import subscript_type
from ..types.layout import array_descriptor
from ..types.scalars import BoxedScalar
from . import capture
from .array_data import (  # noqa: F401 - (errors others import from here)
    ArrayIndexError,
    DataRangeError,
    DataShapeError,
    DataTypeError,
    _asarray,
    _converted,
    _dtype_of_data,
    _group_components,
    _numpy_of,
    _unboxed,
    struct_record,
    struct_records,
)
from .array_memory import (
    allocate,
    capacity_of,
    check_array_shape,
    check_strides,
    element_numpy,
    element_size,
    from_address,
    memory_root,
    normalize_shape,
    packed_strides,
    resolve_dtype,
    type_name,
)
from .array_operators import ArrayOperators
from .device import get_device


def _check_int_range(data, src: np.ndarray, scalar: np.dtype) -> None:
    """Python lists and tuples of numbers must fit an integer dtype (Warp converts them with
    numpy, which refuses out-of-range Python integers); numpy data is cast, wrapping, as in Warp."""
    if not isinstance(data, (list, tuple)) or scalar.kind not in "iu" or src.dtype.kind not in "iufO":
        return
    info = np.iinfo(scalar)
    values = src.ravel().tolist() if src.dtype.kind == "O" else np.trunc(src).ravel()
    bad = [v for v in values if not info.min <= v <= info.max][:1] if src.dtype.kind == "O" else \
        values[(values < info.min) | (values > info.max) | np.isnan(values)][:1].tolist()
    if bad and bad[0] != bad[0]:
        raise DataRangeError(f"array: cannot convert float NaN to {scalar}")
    if bad:
        raise DataRangeError(f"array: the value {bad[0]!r} is out of range for {scalar} "
                             f"[{info.min}, {info.max}]")


def _is_any(dtype) -> bool:
    return dtype is None or dtype is typing.Any


class array(ArrayOperators):  # noqa: N801 - Warp's name
    """An array of `dtype` elements.

    `array(data)` copies (or with `copy=False` aliases) a list, numpy array, weft array or
    any object with `__array_interface__`; `array(shape=..., dtype=...)` allocates zeros
    (optionally with byte `strides`); `array(ptr=..., shape=..., dtype=...)` views memory
    at a raw address. `array(dtype=float)` with nothing else is the type annotation
    `ArrayType(float32, 1)` (also `array[float]`; `ndim=2` for two dimensions)."""

    def __new__(cls, data=None, dtype=None, shape=None, strides=None, ptr=None, *args, **kwargs):  # noqa: ARG003
        if data is None and shape is None and ptr is None:
            if kwargs.get("requires_grad") or strides is not None:
                raise ValueError("an array needs data or a shape (or ptr=)")
            return ArrayType(typing.Any if dtype is None else dtype, kwargs.get("ndim") or 1)  # (Warp's default)
        return super().__new__(cls)

    _is_read = False  # a recorded launch read it (config.verify_autograd_array_access)
    _retain_grad = False
    pinned = False  # allocated as pinned host memory (plain host memory without CUDA)
    _allocator = None  # the allocator the memory stands for, on the array that owns it
    _finalizer = None  # calls the deleter (see `deleter`)

    def __class_getitem__(cls, key):  # array[float], array[float, Literal[2]]
        return subscript_type(ArrayType, key)

    def __init__(self, data=None, dtype=None, shape=None, strides=None, ptr=None, capacity=None,
                 device=None, pinned=False, copy=True, deleter=None, ndim=None, grad=None,
                 requires_grad=False, retain_grad=False):
        self.device = get_device(device)
        self._ref = None  # what owns the memory, when someone else does
        if ptr is not None:
            t = resolve_dtype(float32 if _is_any(dtype) else dtype)
            dims = normalize_shape(shape if shape is not None else 0)
            steps = None if strides is None else check_strides(dims, strides)
            owner = None if callable(deleter) else deleter  # (weft passes the memory's owner here)
            self._set(from_address(int(ptr), dims, t, steps, owner), t)
            self._ref = owner
            if callable(deleter):
                self.deleter = deleter
            if pinned:
                self.pinned = self.device.is_cpu
        elif data is not None:
            if strides is not None:
                raise ValueError("array(data, strides=...): strides apply to allocations "
                                 "(shape=) and pointers (ptr=), not to data")
            try:
                self._init_from_data(data, dtype, shape, copy)
            except (ValueError, TypeError) as e:  # numpy's own errors (ragged lists, strings)
                if isinstance(e, RuntimeError):
                    raise
                kind = DataTypeError if isinstance(e, TypeError) else DataShapeError
                what = "of the dtype of the data" if _is_any(dtype) else f"with type {type_name(dtype)}"
                raise kind(f"Failed to convert input data to an array {what}: {e}") from e
            if self._ref is None:
                self._owned(pinned)
        else:
            t = resolve_dtype(float32 if _is_any(dtype) else dtype)
            dims = normalize_shape(shape if shape is not None else 0)
            steps = None if strides is None else check_strides(dims, strides)
            self._set(allocate(dims, t, steps), t)
            self._owned(pinned)
        self._requires_grad = False
        self._retain_grad = False
        self.grad = grad
        self.requires_grad = requires_grad or grad is not None
        self.retain_grad = retain_grad

    def _owned(self, pinned):
        """The memory was allocated for this array (from the device's allocator)."""
        if pinned and self.device.is_cpu:
            self.pinned = True
            self._allocator = self.device.pinned_allocator
        else:
            self._allocator = self.device.default_allocator

    @property
    def memory_kind(self):
        """The kind of memory behind the array (allocators.MemoryKind): HOST, or PINNED for
        pinned arrays, for arrays on the CPU; views answer for their owner."""
        from .allocators import MemoryKind
        owner = self
        while isinstance(owner._ref, array):
            owner = owner._ref
        return MemoryKind.PINNED if owner.pinned else MemoryKind.HOST

    def _init_from_data(self, data, dtype, shape, copy):
        t = None if _is_any(dtype) else resolve_dtype(dtype)
        if isinstance(data, array):
            t = data.dtype if t is None else t
            src = data.numpy()
            if data.dtype is not t:  # regroup or convert the source's scalars
                src = src if isinstance(data.dtype, Scalar) else _scalars_of(data)
        else:
            if isinstance(data, (numbers.Number, np.generic, BoxedScalar)):
                raise DataTypeError(f"array: data must be a sequence or an array, got the scalar {data!r}")
            if t is None:
                t = _dtype_of_data(data)
            src = _numpy_of(data, t)
            if getattr(t, "is_texture", False) and isinstance(data, (list, tuple)):
                self._textures = list(data)  # (elements hold their addresses: keep them alive)
        scalar, trailing = element_numpy(t)
        if isinstance(t, StructType):
            if src.dtype != scalar:
                raise TypeError(f"struct arrays need numpy data of dtype {scalar} (arrays of "
                                f"{t.name}), got {src.dtype}")
        elif src.dtype != scalar:
            _check_int_range(data, src, scalar)
            src = _converted(src, scalar)
            copy = True  # a converted copy: nothing is aliased
        src = _group_components(src, trailing, t)
        if shape is not None:
            dims = normalize_shape(shape)
            if math.prod(dims) != math.prod(src.shape[:src.ndim - len(trailing)]):
                raise DataShapeError(f"data of {math.prod(src.shape[:src.ndim - len(trailing)])} "
                                     f"elements cannot take the shape {dims}")
            src = src.reshape(dims + trailing)
        if src.ndim == len(trailing):  # a single element: a one-element array
            src = src.reshape((1,) + trailing)
        check_array_shape(src.shape[:src.ndim - len(trailing)])
        if copy:
            dims = src.shape[:src.ndim - len(trailing)]
            storage = allocate(dims, t)
            storage[...] = src
            src = storage
        else:
            self._ref = data
        self._set(src, t)

    def _set(self, storage: np.ndarray, dtype: Type):
        trailing = element_numpy(dtype)[1]
        ndim = storage.ndim - len(trailing)
        if not 1 <= ndim <= MAX_DIMS:
            raise DataShapeError(f"arrays have 1 to {MAX_DIMS} dimensions, got {ndim}")
        self._np = storage
        self._address = None
        self.dtype = dtype
        self.ndim = ndim
        self.shape = storage.shape[:ndim]  # (numpy's extents and strides are Python ints)
        self.strides = storage.strides[:ndim]
        self.size = math.prod(self.shape)
        self._desc = None
        self._type = ArrayType._cache.get((dtype, ndim)) or ArrayType(dtype, ndim)
        item = element_size(dtype)
        self._item_size = item
        # Contiguous means Warp's rule: the strides are those of packed row-major memory,
        # also along a dimension of extent 1 (where numpy's flag ignores them).
        if storage.flags.c_contiguous and self.size and 1 not in storage.shape:
            self.capacity, self.is_contiguous = self.size * item, True
            return
        self.capacity = capacity_of(self.shape, self.strides, item)
        c_strides = packed_strides(storage.shape, storage.itemsize)  # components included
        inner = storage.strides[ndim:] == c_strides[ndim:]
        self.is_contiguous = bool(inner and (self.size == 0 or self.strides == c_strides[:ndim]))

    # Interop --------------------------------------------------------------------------------
    @property
    def ptr(self):
        """Address of the first element (None for an array without memory)."""
        if self.capacity == 0:
            return None
        address = self._address
        if address is None:  # (asked often: zero_, copies, descriptors; numpy's is slow to get)
            address = self._address = self._np.__array_interface__["data"][0]
        return address

    def numpy(self) -> np.ndarray:
        """A numpy view of the same memory (components as trailing dimensions)."""
        return self._np

    @property
    def __array_interface__(self):
        interface = dict(self._np.__array_interface__)
        interface["strides"] = self._np.strides  # explicit, as Warp gives them (empty arrays too)
        return interface

    def __array__(self, dtype=None, copy=None):
        a = self._np if dtype is None else self._np.astype(dtype)
        return a.copy() if copy and a is self._np else a

    def list(self) -> list:
        """The elements in row-major order as Python values (numbers, vectors, matrices or
        struct instances)."""
        trailing = element_numpy(self.dtype)[1]
        flat = self._np.reshape((self.size,) + trailing)
        if self.dtype is bfloat16:  # (numpy has no bfloat16 of its own: weft's values, as Warp's)
            return [bfloat16(x) for x in flat.tolist()]
        if isinstance(self.dtype, Scalar):
            return flat.tolist()
        if isinstance(self.dtype, StructType):
            return [struct_value(self.dtype, record) for record in flat]
        rows = np.array(flat.reshape(self.size, math.prod(trailing)))  # (a copy: the values do not alias the array)
        return [CompositeValue(self.dtype, row) for row in rows]

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule viewing this array's memory (see weft/interop/dlpack.py)."""
        from ..interop.dlpack import export
        return export(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple:
        return (1, 0)  # DLPack's CPU device

    def descriptor(self):
        """The ctypes descriptor a kernel receives (cached: pointer, shape, strides; the
        gradient's address is refreshed, as `.grad` may change)."""
        if self._desc is None:
            desc = array_descriptor(self.ndim)()
            desc.data = self.ptr
            desc.shape[:] = self.shape
            desc.strides[:] = self.strides
            desc.ndim = self.ndim
            self._desc = desc
        g = self.grad
        same = g is not None and getattr(g, "shape", None) == self.shape and getattr(g, "strides", None) == self.strides
        self._desc.grad = g.ptr if same else None
        return self._desc

    @property
    def vars(self) -> dict:
        """The attributes kernels may read: `shape` (and `ndim`, `ptr`)."""
        return {"shape": self.shape, "ndim": self.ndim, "ptr": self.ptr}

    __ctype__ = descriptor  # (Warp's name for the packed form)

    @property
    def deleter(self):
        """The function called as `deleter(ptr, capacity)` once this array is garbage (set by
        `array(ptr=..., deleter=...)` for memory the program allocated, as in Warp); None
        when there is none. It runs after the last view of the memory goes (weft views and
        numpy views, as `numpy()` returns). Setting None keeps the memory; setting a function
        replaces the deleter."""
        f = self._finalizer
        info = f.peek() if f is not None else None
        return None if info is None else info[1]

    @deleter.setter
    def deleter(self, fn):
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if fn is None:
            return
        if not callable(fn):
            raise TypeError(f"an array's deleter is a function deleter(ptr, capacity), got {type(fn).__name__}")
        if self.ptr is None:
            return  # (no memory to release, as in Warp)
        self._finalizer = weakref.finalize(memory_root(self._np), fn, self.ptr, self.capacity)
        self._finalizer.atexit = False  # (the process's memory goes with it)

    # Gradients ------------------------------------------------------------------------------
    _grad = None

    @property
    def grad(self):
        """The gradient array (this one's dtype, shape and strides), or None."""
        return self._grad

    @grad.setter
    def grad(self, grad):
        """As in Warp: None drops the gradient (and requires_grad); an array must match this
        one's dtype, shape and strides (a kernel writes the gradient where it writes this
        array: a broadcast torch gradient, strides 0, would take every thread's value in one
        element), and sets requires_grad."""
        if grad is None:
            self._grad = None
            self._requires_grad = self._retain_grad = False
            return
        for what in ("dtype", "shape", "strides"):
            want, got = getattr(self, what), getattr(grad, what, None)
            if want != got:
                raise ValueError(f"The given gradient array is incompatible: expected {what} {want!r}, got {got!r}")
        self._grad = grad
        self._requires_grad = True

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool):
        self._requires_grad = bool(value)
        if value and self._grad is None:
            self._grad = self._zero_gradient()
        if not value:  # (as Warp: the gradient goes with it)
            self._grad = None
            self._retain_grad = False

    def _zero_gradient(self):
        """Zeros laid out as this array (its strides, as Warp's; a reversed axis reversed
        too), so that a kernel finds the gradient where it finds the array; contiguous where
        no memory has this layout (a broadcast axis, stride 0)."""
        flips = tuple(slice(None, None, -1) if s < 0 else slice(None) for s in self.strides)
        try:
            g = zeros(self.shape, dtype=self.dtype, device=self.device, strides=tuple(abs(s) for s in self.strides))
        except (ValueError, NotImplementedError):
            return zeros(self.shape, dtype=self.dtype, device=self.device)
        return g[flips] if any(s < 0 for s in self.strides) else g

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
        while isinstance(a, array):  # (`_ref` may also hold the foreign owner of the memory)
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
        """Copy `src` (array, numpy array, list) into this array, as `weft.copy(self, src)`
        (Warp's rule): a source with fewer elements fills the first ones (a buffer of some
        capacity taking fewer particles), a larger one is an error. Recorded on an active
        Tape and in a graph capture."""
        if isinstance(src, array):
            if src.size > self.size:
                raise DataShapeError(f"assign: an array of shape {src.shape} does not fit the array's "
                                     f"shape {self.shape}")
            copy(self, src)
            return self
        if isinstance(self.dtype, StructType) and isinstance(src, (list, tuple)):
            data = _numpy_of(src, self.dtype)  # struct values, as records
        else:
            data = np.asarray(src.numpy() if hasattr(src, "numpy") and not isinstance(src, np.ndarray)
                              else src)
        if data.ndim == 0:
            raise TypeError(f"assign: data must be a sequence or an array, got the scalar {src!r} "
                            "(fill_ sets every element to one value)")
        if isinstance(self.dtype, StructType) and data.dtype != self._np.dtype:
            raise TypeError(f"assign: arrays of {self.dtype.name} take numpy data of dtype "
                            f"{self._np.dtype}, got {data.dtype}")
        per_element = self._np.size // self.size if self.size else 1
        if data.size > self._np.size or data.size % per_element:
            raise DataShapeError(f"assign: data of shape {data.shape} does not fit the array's "
                                 f"shape {self._np.shape}")
        if data.size == self._np.size and unrecorded():
            # (nothing records the copy: straight into the memory; numpy handles a source
            # that overlaps it)
            if data.dtype != self._np.dtype and self._np.dtype.type is not np.void:
                data = _converted(data, self._np.dtype)
            self._np[...] = data.reshape(self._np.shape)
            return self
        # (the source's elements, to copy to the first ones of this array in memory order)
        staged = array(shape=self.shape if data.size == self._np.size else data.size // per_element,
                       dtype=self.dtype)  # gradient-less source data
        if data.dtype != staged._np.dtype and staged._np.dtype.type is not np.void:
            data = _converted(data, staged._np.dtype)  # (bfloat16: uint16 data are bits, as Warp)
        staged._np[...] = data.reshape(staged._np.shape)
        copy(self, staged)
        return self

    def fill_(self, value):
        """Set every element to `value` (a scalar fills every component of a vector)."""
        value = _fill_struct(self.dtype, value) if isinstance(self.dtype, StructType) else \
            _fill_value(self.dtype, value)
        tape_module.protect(self)
        trailing = self._np.ndim - self.ndim
        if trailing and self.is_contiguous and self.size >= 2 * _FILL_BLOCK:
            fill = functools.partial(_fill_blocks, self._np, trailing, value)
        else:
            fill = functools.partial(self._np.__setitem__, Ellipsis, value)
        if not (capture.capturing() and capture.record(fill, ("fill", self, value))):
            fill()
        return self

    def zero_(self):
        tape_module.protect(self)
        clear = functools.partial(ctypes.memset, self.ptr, 0, self.capacity) if self.is_contiguous and self.size \
            else functools.partial(self._np.__setitem__, Ellipsis, 0)  # (a memset where the memory is one block)
        if not (capture.capturing() and capture.record(clear, ("fill", self, 0))):
            clear()
        return self

    # Views ----------------------------------------------------------------------------------
    def _index(self, key) -> tuple:
        """`key` as a tuple of at most `ndim` ints and slices, so that indexing never reaches
        the components (the trailing numpy dimensions) and always gives a view."""
        key = key if isinstance(key, tuple) else (key,)
        for k in key:
            if isinstance(k, bool) or not (k is Ellipsis or isinstance(k, (slice, numbers.Integral))):
                raise DataTypeError(f"arrays are indexed by ints and slices (int32 weft arrays give "
                                    f"an indexedarray), got {k!r}")
            if isinstance(k, slice) and k.step == 0:
                raise ValueError("slice step cannot be zero")
        ellipses = [at for at, k in enumerate(key) if k is Ellipsis]
        if ellipses:
            at = ellipses[0]
            key = key[:at] + (slice(None),) * (self.ndim - len(key) + 1) + key[at + 1:]
        if len(key) > self.ndim:
            raise ArrayIndexError(f"too many indices ({len(key)}) for an array of {self.ndim} "
                                  f"dimension(s)")
        for k, n in zip(key, self.shape):
            if isinstance(k, numbers.Integral) and not -n <= k < n:
                raise ArrayIndexError(f"index {k} is out of bounds for a dimension of size {n} "
                                      f"(array of shape {self.shape})")
        return key

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, array) for k in keys):
            from .indexed_array import index_with_arrays
            return index_with_arrays(self, keys)
        key = self._index(key)
        view = self._np[key]
        trailing = element_numpy(self.dtype)[1]
        if view.ndim - len(trailing) < 1:
            return view if trailing else view[()]
        return self._view(view, None if self.grad is None else self.grad[key])

    def __setitem__(self, key, value):
        self._np[self._index(key)] = value.numpy() if isinstance(value, array) else value

    def _view(self, storage: np.ndarray, grad, dtype=None) -> array:
        """An array over `storage` (part of this one's memory) with this one's dtype."""
        out = array.__new__(array, shape=0)
        out.device = self.device
        out._ref = self
        out.pinned = self.pinned
        out._set(storage, self.dtype if dtype is None else dtype)
        out._grad = grad
        out._requires_grad = self._requires_grad and grad is not None
        out._retain_grad = self._retain_grad and out._requires_grad
        return out

    def __len__(self):
        return self.shape[0]

    def __bool__(self):
        return self.size > 0

    def __repr__(self):
        return f"array(shape={self.shape}, dtype={self.dtype!r})"  # (Warp's form; str() shows the values)

    def __str__(self):
        return str(self._np)

    def to(self, device, requires_grad=None):
        get_device(device)
        return self

    def cptr(self):
        """The elements as a ctypes array over this array's memory (contiguous arrays)."""
        from ..types.layout import ctype_of
        if not self.is_contiguous:
            raise RuntimeError("cptr() needs a contiguous array; use .contiguous() first")
        return (ctype_of(self.dtype) * self.size).from_address(self._np.ctypes.data)

    def contiguous(self):
        return self if self.is_contiguous else clone(self)

    def reshape(self, shape):
        """A view with another shape (one extent may be -1), the gradient reshaped alike.
        An array whose memory cannot be viewed with the new shape is refused (RuntimeError, as
        Warp's refusal of non-contiguous arrays; one strided evenly is reshaped here)."""
        dims = (shape,) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        if dims.count(-1) == 1:
            known = math.prod(d for d in dims if d != -1)
            dims = tuple(self.size // known if d == -1 and known else d for d in dims)
        if any(d < 0 for d in dims) or math.prod(dims) != self.size:
            raise RuntimeError(f"cannot reshape array of shape {self.shape} (size {self.size}) into "
                               f"shape {dims} (size {math.prod(dims) if min(dims, default=0) >= 0 else '?'})")
        trailing = element_numpy(self.dtype)[1]
        view = self._np.view()
        try:
            view.shape = dims + trailing  # raises rather than copy
        except AttributeError:
            raise RuntimeError(f"cannot reshape an array of shape {self.shape} and strides "
                               f"{self.strides} to {dims} without a copy; use .contiguous() "
                               f"first") from None
        return self._view(view, None if self.grad is None else self.grad.reshape(dims))

    def flatten(self):
        return self.reshape((self.size,))

    def transpose(self, axes=None):
        """A view with the dimensions permuted (reversed by default), as numpy's."""
        axes = tuple(reversed(range(self.ndim))) if axes is None else tuple(int(a) for a in axes)
        if sorted(axes) != list(range(self.ndim)):
            raise RuntimeError(f"transpose: axes {axes} are not a permutation of {self.ndim} dimensions")
        trailing = tuple(range(self.ndim, self._np.ndim))
        view = self._np.transpose(axes + trailing)
        return self._view(view, None if self.grad is None else self.grad.transpose(axes))

    def view(self, dtype):
        """The same memory seen as elements of `dtype`: a scalar type of the same size, a
        vector/matrix of the same total size, scalars as the components of a vector or
        matrix (the trailing dimensions of the array), or the reverse."""
        return reinterpret(self, resolve_dtype(dtype))


def reinterpret(a: array, t: Type) -> array:
    """`a.view(t)`; see `array.view`. The gradient is seen the same way (Warp's rule)."""
    out = _reinterpret_values(a, t)
    if a.grad is not None:
        out._grad = _reinterpret_values(a.grad, t)
        out._requires_grad = a.requires_grad
        out._retain_grad = a._retain_grad and out._requires_grad
    return out


def _reinterpret_values(a: array, t: Type) -> array:
    src_scalar, src_trailing = element_numpy(a.dtype)
    dst_scalar, dst_trailing = element_numpy(t)
    what = f"cannot create an array view with dtype {type_name(t)} from source dtype {type_name(a.dtype)}"
    src_composite = isinstance(a.dtype, (Vector, Matrix))
    dst_composite = isinstance(t, (Vector, Matrix))
    if (src_composite or dst_composite) and a.is_contiguous and element_size(a.dtype) == element_size(t) and \
            not isinstance(a.dtype, StructType) and not isinstance(t, StructType):
        # elements of the same size: the same shape, each element reinterpreted (as Warp's)
        return a._view(a._np.reshape(-1).view(dst_scalar).reshape(a.shape + dst_trailing), None, t)
    if src_composite and not dst_composite:
        if src_scalar.itemsize != dst_scalar.itemsize:
            raise TypeError(f"{what}: source scalar dtype {type_name(a.dtype.dtype)} has size "
                            f"{src_scalar.itemsize} bytes, but target dtype has size "
                            f"{dst_scalar.itemsize} bytes")
        return a._view(a._np.view(dst_scalar), None, t)
    if dst_composite and not src_composite:
        if src_scalar.itemsize != dst_scalar.itemsize:
            raise TypeError(f"{what}: source dtype has size {src_scalar.itemsize} bytes, but target "
                            f"scalar dtype {type_name(t.dtype)} has size {dst_scalar.itemsize} bytes")
        n = len(dst_trailing)
        if a.shape[a.ndim - n:] != dst_trailing:
            raise RuntimeError(f"{what}: the array's trailing dimensions {a.shape[a.ndim - n:]} are "
                             f"not the shape {dst_trailing} of {type_name(t)}")
        storage = a._np.view(dst_scalar)
        if storage.ndim == n:
            storage = storage.reshape((1,) + dst_trailing)
        return a._view(storage, None, t)
    if element_size(a.dtype) != element_size(t) or src_scalar.itemsize != dst_scalar.itemsize:
        raise TypeError(f"{what}: source dtype has size {element_size(a.dtype)} bytes, but target "
                        f"dtype has size {element_size(t)} bytes")
    storage = a._np.view(dst_scalar)
    if src_trailing != dst_trailing:
        flat = storage.reshape(storage.shape[:a.ndim] + (-1,))
        storage = flat.reshape(a.shape + dst_trailing)
    return a._view(storage, None, t)


def struct_value(t: StructType, record) -> StructValue:
    """One element of a `t` array's numpy storage as a struct instance; arrays held in its
    fields come back as arrays viewing the same memory."""
    out = t.from_record(record)
    for name, ft in t.fields.items():
        if isinstance(ft, ArrayType) and not ft.fabric and record[name]["data"]:
            field = record[name]
            setattr(out, name, array(ptr=int(field["data"]), dtype=ft.dtype,
                                     shape=tuple(int(n) for n in field["shape"]),
                                     strides=tuple(int(n) for n in field["strides"])))
    return out


def _scalars_of(a: array) -> np.ndarray:
    """A vector/matrix array's memory as scalars, one trailing dimension for all components."""
    flat = a.numpy()
    return flat.reshape(a.shape + (-1,))


def elements(a: array) -> np.ndarray:
    """`a`'s elements in row-major order, as a numpy array of shape (size, *element shape)
    (a view where the memory allows, else a copy)."""
    return a.numpy().reshape((a.size,) + element_numpy(a.dtype)[1])


# The factories live beside the class; they are part of this module's interface.
def _fill_struct(t: StructType, value):
    """`value` as one element of a struct array for fill_: an instance of the struct, or 0 for
    a default (zero) instance, as Warp takes; anything else is a ValueError, as in Warp."""
    if isinstance(value, StructValue) and value._type is t:
        return struct_record(t, value)
    if isinstance(value, numbers.Number) and value == 0:
        return struct_record(t, t())
    raise ValueError(f"fill_: an array of struct {t.name} is filled with an instance of {t.name} "
                     f"or 0, got {value!r}")


_FILL_BLOCK = 1024  # elements


def _fill_blocks(storage: np.ndarray, trailing: int, value) -> None:
    """`storage[...] = value` (one element, of `trailing` component dimensions) for contiguous
    storage: numpy's broadcast over a short inner dimension (a vec3's 3 floats) runs 10-20x
    slower than copying a block of elements filled once."""
    element_shape = storage.shape[storage.ndim - trailing:]
    block = np.empty((_FILL_BLOCK,) + element_shape, storage.dtype)
    block[...] = value  # (numpy's own conversion, as the assignment to all of them makes)
    rows = storage.reshape((-1,) + element_shape)
    whole = rows.shape[0] - rows.shape[0] % _FILL_BLOCK
    rows[:whole].reshape((-1,) + block.shape)[...] = block
    rows[whole:] = block[:rows.shape[0] - whole]


def _fill_value(dtype, value):
    """`value` as one element of `dtype` for fill_: a number fills every component, a sequence
    must have the element's shape (a matrix may be given flat); a float cannot fill integers.
    Anything else is refused, as Warp refuses it, rather than broadcast across the elements."""
    scalar, trailing = element_numpy(dtype)
    data = np.asarray(value.numpy() if isinstance(value, array) else value)
    if isinstance(dtype, Matrix) and data.shape == (dtype.rows * dtype.cols,):
        data = data.reshape(dtype.rows, dtype.cols)  # a flat matrix value, as in Warp
    if data.shape not in ((), trailing) or data.dtype == object:
        raise ValueError(f"fill_: cannot fill an array of {dtype!r} with {value!r} (a value of shape "
                         f"{data.shape}; expected a number or an element of shape {trailing})")
    if scalar.kind in "iub" and data.dtype.kind in "fc":
        raise ValueError(f"fill_: cannot fill an array of {dtype!r} with the non-integer {value!r}")
    return data


from .array_create import (  # noqa: E402
    clone,
    copy,
    empty,
    empty_like,
    from_numpy,
    full,
    full_like,
    ones,
    ones_like,
    unrecorded,
    view_of,
    zeros,
    zeros_like,
)

__all__ = [
    "array", "clone", "copy", "elements", "element_numpy", "empty", "empty_like", "from_numpy",
    "full", "full_like", "ones", "ones_like", "packed_strides", "reinterpret", "struct_record",
    "view_of", "zeros", "zeros_like",
]
