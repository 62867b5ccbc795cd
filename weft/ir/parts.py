"""A part of a struct, vector or matrix value named by a path: struct field indices, then
one flat index into a vector's or matrix's components (the `part` of a store and the `path`
of a `component` view, see lang/array_parts.py)."""

from __future__ import annotations

from ..types import StructType, Vector
from .core import Value


def extract_path(b, agg: Value, path: list, part_type) -> Value:
    """The part of `agg` at `path`, of type `part_type` (a vector part: consecutive components)."""
    t = agg.type
    if isinstance(t, StructType):
        field = b.extract(agg, path[0])
        return extract_path(b, field, path[1:], part_type) if path[1:] else field
    start = path[0]
    if isinstance(part_type, Vector):
        return b.construct(part_type, [b.extract(agg, start + j) for j in range(part_type.num_components)])
    return b.extract(agg, start)


def insert_path(b, agg: Value, path: list, part_type, x: Value) -> Value:
    """`agg` with its part at `path` (of type `part_type`) replaced by `x`."""
    t = agg.type
    if isinstance(t, StructType):
        k = path[0]
        field = b.extract(agg, k)
        return b.insert(agg, k, insert_path(b, field, path[1:], part_type, x) if path[1:] else x)
    start = path[0]  # a flat component index of a vector or matrix
    if isinstance(part_type, Vector):
        for j, comp in enumerate(b.components(x)):
            agg = b.insert(agg, start + j, comp)
        return agg
    return b.insert(agg, start, x)
