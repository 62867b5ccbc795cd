"""Builtins: every function a kernel can call, each defined once (see registry.py)."""

from . import (  # noqa: F401 - registers the builtins
    angles,
    array_ops,
    atomic,
    bvh,
    cast,
    decompositions,
    dense,
    expect,
    geometry,
    hash_grid,
    math,
    mesh,
    misc,
    mutating,
    noise,
    operators,
    random,
    reductions,
    rotation,
    special,
    texture,
    tiles,
    vector,
    volume,
)
from .registry import BUILTINS, PRIMITIVES, Builtin, Primitive

__all__ = ["BUILTINS", "PRIMITIVES", "Builtin", "Primitive"]
