"""Tile types, as Warp spells them in annotations: `wp.tile[float]` (any shape),
`wp.tile[float, Literal[8], Literal[4]]`, `wp.tile[wp.float64, 16, 8]`, `wp.tile[float, (4, 4)]`.

In a kernel a tile is a value of a `TileType` with a concrete shape: a row-major block of
elements that tile ops read whole and produce anew (weft/builtins/tiles/). On the CPU a
block has one thread (Warp's CPU tile semantics), so a tile belongs to its thread and
"register" and "shared" storage behave alike: storage is accepted and not part of the type.
"""

from __future__ import annotations

import typing

from .composite import _subscript_dim
from .scalars import PYTHON_TYPES, Scalar, Type


class TileType(Type):
    """A tile of `dtype` elements (a scalar, vector or matrix type) and `shape` (a tuple of
    ints, or `typing.Any` in annotations). `storage` ("register" or "shared", as Warp names
    them) is accepted for Warp's spelling and ignored (see the module docstring)."""

    _cache: dict = {}

    def __new__(cls, dtype, shape=typing.Any, storage: str = "register"):
        dtype = PYTHON_TYPES.get(dtype, dtype)
        if not isinstance(dtype, Type):
            raise TypeError(f"a tile's dtype must be a weft type, got {dtype!r}")
        key = (dtype, shape if shape is typing.Any else tuple(int(d) for d in shape))
        if key not in cls._cache:
            self = super().__new__(cls)
            self.dtype, self.shape = key
            self.storage = "register"
            dims = "Any" if self.shape is typing.Any else ", ".join(map(str, self.shape))
            self.name = self.__name__ = f"tile(dtype={dtype!r}, shape=({dims}))"
            cls._cache[key] = self
        return cls._cache[key]

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        """Bytes of the elements, packed as in an array (the element's size each)."""
        return self.num_elements * self.dtype.size

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_generic(self) -> bool:
        """`wp.tile[float]` (no shape) in a func's annotation takes a tile of any shape: the
        func is compiled per shape (lang/function.py)."""
        return self.shape is typing.Any

    def matches(self, t) -> bool:
        """Whether tile type `t` fits this annotation: the same dtype, and the same shape
        unless the annotation leaves it open."""
        return isinstance(t, TileType) and t.dtype is self.dtype and (self.shape is typing.Any or t.shape == self.shape)

    def with_shape(self, shape) -> TileType:
        return TileType(self.dtype, shape)

    def __init__(self, *args, **kwargs):
        pass


class tile:  # noqa: N801 - Warp's name
    """`wp.tile[dtype, *shape]`: a tile type for annotations. `wp.tile(x)` in a kernel is
    Warp's tile-from-thread-values builtin (the frontend calls the builtin of that name)."""

    def __new__(cls, *args, **kwargs):
        # a tile type, as tile[...] (Warp's `storage` and `layout` choose where a GPU keeps it;
        # weft's tiles are values)
        if not args and set(kwargs) <= {"dtype", "shape", "storage", "layout"} and "dtype" in kwargs:
            shape = kwargs.get("shape", ())
            return cls[(kwargs["dtype"], *(shape if isinstance(shape, (tuple, list)) else (shape,)))]
        raise RuntimeError("wp.tile(x) builds a tile from per-thread values: it can only be called inside a kernel")

    def __class_getitem__(cls, params) -> TileType:
        params = params if isinstance(params, tuple) else (params,)
        if not params:
            raise TypeError("wp.tile[...] requires at least a dtype: wp.tile[dtype, *shape]")
        dtype, dims = params[0], params[1:]
        if len(dims) == 1 and isinstance(dims[0], tuple):  # wp.tile[float, (4, 4)]
            dims = dims[0]
        if not isinstance(PYTHON_TYPES.get(dtype, dtype), (Scalar, Type)):
            raise TypeError(f"wp.tile[...]: the dtype must be a weft type, got {dtype!r}")
        shape = tuple(_subscript_dim(d, "tile dimension") for d in dims) if dims else typing.Any
        return TileType(dtype, shape)
