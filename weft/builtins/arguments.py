"""Argument checks shared by builtins' expansions."""

from __future__ import annotations

from ..ir.core import Value
from ..types import Scalar, int32


def as_int32(ctx, x, what: str) -> Value:
    """`x` (an integer Value of any width, or a constant) as an int32 Value; anything else
    is a TypeError naming `what`."""
    if isinstance(x, Value):
        if not (isinstance(x.type, Scalar) and x.type.is_int):
            ctx.error(f"{what} must be an integer, got {x.type!r}", kind=TypeError)
        return ctx.b.cast(x, int32)
    return ctx.coerce(x, int32, what=what)
