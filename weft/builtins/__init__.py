"""Builtins: every function a kernel can call, each defined once (see registry.py)."""

from . import angles, cast, expect, math, misc, operators, random, reductions, rotation, vector  # noqa: F401 - registers the builtins
from .registry import BUILTINS, PRIMITIVES, Builtin, Primitive

__all__ = ["BUILTINS", "PRIMITIVES", "Builtin", "Primitive"]
