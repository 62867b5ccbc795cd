"""`TileStackType`: the type of Warp's `tile_stack(capacity, dtype)` (weft/builtins/tiles/stack.py).

A stack is a reference to a buffer of the kernel's (its element count, then `capacity`
elements), not a value: a func that pushes onto a stack it was given pushes onto the
caller's, as in Warp. `wp.tile_stack(capacity=..., dtype=...)` in Python scope is this type
(for annotations); in a kernel it makes an empty stack.
"""

from __future__ import annotations

from .scalars import PYTHON_TYPES, Type

#: bytes before the elements: the count (an int32), padded so that elements are aligned
HEADER_BYTES = 16


class TileStackType(Type):
    _cache: dict = {}

    def __new__(cls, dtype, capacity: int):
        dtype = PYTHON_TYPES.get(dtype, dtype)
        if not isinstance(dtype, Type):
            raise TypeError(f"a tile stack's dtype must be a weft type, got {dtype!r}")
        key = (dtype, int(capacity))
        if key not in cls._cache:
            self = super().__new__(cls)
            self.dtype, self.capacity = key
            self.name = self.__name__ = f"tile_stack(capacity={self.capacity}, dtype={dtype!r})"
            cls._cache[key] = self
        return cls._cache[key]

    def __init__(self, *args, **kwargs):
        pass

    @property
    def nbytes(self) -> int:
        return HEADER_BYTES + self.capacity * self.dtype.size
