"""Argument checks shared by builtins' expansions."""

from __future__ import annotations

import functools
import importlib

from ..ir.core import Value
from ..types import Scalar, int32, uint64


def as_int32(ctx, x, what: str) -> Value:
    """`x` (an integer Value of any width, or a constant) as an int32 Value; anything else
    is a TypeError naming `what`."""
    if isinstance(x, Value):
        if not (isinstance(x.type, Scalar) and x.type.is_int):
            ctx.error(f"{what} must be an integer, got {x.type!r}", kind=TypeError)
        return ctx.b.cast(x, int32)
    return ctx.coerce(x, int32, what=what)


def as_object_id(ctx, x, name: str, noun: str, source: str, kind=None) -> Value:
    """`x` (a 64-bit integer Value, or a constant) as the uint64 id of a Bvh, Mesh, HashGrid
    or Volume given to builtin `name`; `noun` ("grid id") and `source` ("HashGrid.id") word
    the error."""
    if isinstance(x, Value):
        if not (isinstance(x.type, Scalar) and x.type.is_int and x.type.bits == 64):
            ctx.error(f"{name}(): the {noun} must be a uint64 ({source}), got {x.type!r}", kind=kind)
        return ctx.b.cast(x, uint64)
    return ctx.coerce(x, uint64, what=f"{name}() {noun}")


def kernel_funcs(module: str):
    """A loader of builtins' kernel-language module `module` (e.g. ".bvh_funcs"), imported
    on first use: kernel-language code needs the frontend, which imports the builtins."""
    return functools.cache(lambda: importlib.import_module(module, __package__))
