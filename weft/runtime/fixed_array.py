"""`weft.fixedarray`: the class of the fixed-size arrays a kernel makes with
`zeros(shape, dtype)` (in the thread's own memory, see builtins/array_ops.local_array).

They exist only inside kernels; in Python, `fixedarray(dtype=int, shape=(2, 3))` is the
annotation a func that returns one writes (`-> wp.fixedarray(shape=(2, 3), dtype=int)`).
"""

from __future__ import annotations

import typing

from ..types import FixedArrayType
from .array import array


class fixedarray(array):  # noqa: N801 - Warp's name
    """A fixed-size array made inside a kernel; `fixedarray(dtype, shape)` is its annotation."""

    def __new__(cls, dtype=typing.Any, shape=None):
        return FixedArrayType(dtype, shape)
