"""Which types carry gradient: type predicates of the reverse pass, in a module of their
own so that the runtime (which adjoint arrays a launch passes) asks them without
importing the reverse pass."""

from __future__ import annotations

from ..types import ArrayType, Matrix, Scalar, StructType, TileType, TupleType, Vector


def active_types(t) -> list[Scalar]:
    """The float scalars of a value of type `t`, in order: the leaves that carry gradient."""
    if isinstance(t, Scalar):
        return [t] if t.is_float else []
    if isinstance(t, (Vector, Matrix)):
        return [t.dtype] * t.num_components if t.dtype.is_float else []
    if isinstance(t, (StructType, TupleType)):
        parts = t.fields.values() if isinstance(t, StructType) else t.elements
        return [leaf for p in parts for leaf in active_types(p)]
    if isinstance(t, TileType):  # one leaf: the adjoint is a tile (tiles.py)
        return [t] if active_types(t.dtype) else []
    return []


def has_adjoint_array(t) -> bool:
    """Whether a parameter of type `t` gets an adjoint: an array of float values, or a
    struct holding one (its adjoint is a struct of the same type whose arrays are the
    adjoint arrays of the fields)."""
    if isinstance(t, ArrayType):  # (Fabric arrays carry no gradient, as in Warp)
        return not t.fabric and bool(active_types(t.dtype))
    return isinstance(t, StructType) and any(has_adjoint_array(f) for f in t.fields.values())
