"""Array type descriptors, as written in kernel annotations: `array(dtype=float, ndim=2)`."""

from __future__ import annotations

import typing

from .scalars import PYTHON_TYPES, Type

MAX_DIMS = 4


class AnyArray:
    """`array(dtype=Any, ndim=n)` in a func's annotation: any array of `n` dimensions (the
    func is compiled per dtype). Kernels need concrete array types."""

    _cache: dict = {}
    dtype = typing.Any

    def __new__(cls, ndim: int = 1):
        if ndim not in cls._cache:
            self = super().__new__(cls)
            self.ndim = int(ndim)
            cls._cache[ndim] = self
        return cls._cache[ndim]

    def __repr__(self):
        return f"array(dtype=Any, ndim={self.ndim})"


class ArrayType(Type):
    """An array parameter type: element `dtype` and number of dimensions `ndim` (1 to 4)."""

    is_array = True
    indexed = False  # see IndexedArrayType
    _cache: dict = {}

    def __new__(cls, dtype, ndim: int = 1):
        if dtype is typing.Any or isinstance(dtype, typing.TypeVar) or getattr(dtype, "is_generic", False):
            return AnyArray(ndim)  # (an open vector/scalar dtype: any dtype, checked at the call)
        dtype = PYTHON_TYPES.get(dtype, dtype)
        if not isinstance(dtype, Type) or dtype.is_array:
            raise TypeError(f"array dtype must be a weft scalar, vector, matrix or struct type, "
                            f"got {dtype!r}")
        if not 1 <= int(ndim) <= MAX_DIMS:
            raise ValueError(f"arrays have 1 to {MAX_DIMS} dimensions, got ndim={ndim}")
        key = (dtype, int(ndim))
        if key not in cls._cache:
            self = super().__new__(cls)
            self.dtype, self.ndim = key
            self.name = f"array(dtype={dtype!r}, ndim={self.ndim})"
            cls._cache[key] = self
        return cls._cache[key]

    def __reduce__(self):
        return (ArrayType, (self.dtype, self.ndim))


def subscript_args(key) -> tuple:
    """(dtype, ndim) of an array annotation subscript: `array[float]`, `array[float, 2]` or
    `array[float, Literal[2]]`."""
    if not isinstance(key, tuple):
        return key, 1
    if len(key) != 2:
        raise TypeError(f"array annotations take a dtype and optionally a dimension count, got {key!r}")
    dtype, ndim = key
    if typing.get_origin(ndim) is typing.Literal:
        (ndim,) = typing.get_args(ndim)
    if isinstance(ndim, bool) or not isinstance(ndim, int):
        raise TypeError(f"the dimension count of an array annotation is an int or Literal[int], got {ndim!r}")
    return dtype, ndim


class IndexedArrayType(ArrayType):
    """An indexed array parameter (`indexedarray(dtype=float, ndim=2)`): an array read and
    written through one int32 index array (or none) per dimension. Kernels index it like
    an array; views and slices of it are not supported."""

    _cache: dict = {}
    indexed = True

    def __new__(cls, dtype, ndim: int = 1):
        self = super().__new__(cls, dtype, ndim)
        if isinstance(self, IndexedArrayType):
            self.name = f"indexedarray(dtype={self.dtype!r}, ndim={self.ndim})"
        return self

    def __reduce__(self):
        return (IndexedArrayType, (self.dtype, self.ndim))
