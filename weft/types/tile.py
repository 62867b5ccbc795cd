"""Tile types, as Warp spells them in annotations: `wp.tile[float]` (any shape),
`wp.tile[float, Literal[8], Literal[4]]`, `wp.tile[wp.float64, 16, 8]`, `wp.tile[float, (4, 4)]`.

Only the types exist so far: programs that annotate funcs with them import, and
`wp.types.is_tile` answers for them. Tile values and the tile builtins (`tile_load`,
`tile_matmul`, ..., `launch_tiled`) are issue 11; a kernel that uses a tile is a clear
compile error until then.
"""

from __future__ import annotations

import typing

from .composite import _subscript_dim
from .scalars import PYTHON_TYPES, Scalar, Type

TILES_MISSING = "tiles are not available in weft yet (issue 11: block-cooperative tile programming)"


class TileType(Type):
    """A tile of scalar `dtype` and `shape` (a tuple, or `typing.Any` in annotations),
    held in `storage` ("register" or "shared", as Warp names them)."""

    _cache: dict = {}

    def __new__(cls, dtype, shape=typing.Any, storage: str = "register"):
        dtype = PYTHON_TYPES.get(dtype, dtype)
        if not isinstance(dtype, Type):
            raise TypeError(f"a tile's dtype must be a weft type, got {dtype!r}")
        key = (dtype, shape if shape is typing.Any else tuple(shape), storage)
        if key not in cls._cache:
            self = super().__new__(cls)
            self.dtype, self.shape, self.storage = key
            dims = "Any" if self.shape is typing.Any else ", ".join(map(str, self.shape))
            self.name = self.__name__ = f"tile(dtype={dtype!r}, shape=({dims}))"
            cls._cache[key] = self
        return cls._cache[key]

    def __init__(self, *args, **kwargs):
        pass


class tile:  # noqa: N801 - Warp's name
    """`wp.tile[dtype, *shape]`: a tile type for annotations. Calling `wp.tile(x)` (Warp's
    tile-from-thread-values builtin) needs tile support: a clear error for now."""

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(f"wp.tile(...): {TILES_MISSING}")

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
