"""Builtins that update their first argument in place: transform_set_translation and
transform_set_rotation (in a kernel, the same as `xform.p = p` / `xform.q = q`).

Like the random builtins they are `inout` in their first argument, which must be a local
variable: the frontend rebinds it to the updated value. From Python scope the caller's
transform is updated in place (lang/pyscope.py writes inout composites back).
"""

from __future__ import annotations

from ..ir.core import Value
from ..types import Vector
from ..types.composite import transform_part_type
from .registry import builtin


def set_transform_part(ctx, xform: Value, name: str, part) -> Value:
    """`xform` with its translation (`name` 'p', a vec3) or rotation ('q', a quat) replaced."""
    t = xform.type
    want = transform_part_type(t, name)
    part = ctx.coerce(part, want, what="the translation" if name == "p" else "the rotation")
    b = ctx.b
    comps = b.components(xform)
    new = b.components(part)
    comps = new + comps[3:] if name == "p" else comps[:3] + new
    return b.construct(t, comps)


def _setter(name: str, part: str):
    @builtin(name, inout=(0,))
    def expand(ctx, args, kwargs):
        if len(args) != 2 or kwargs:
            ctx.error(f"{name}(xform, value) takes two arguments")
        xform, value = args
        if not (isinstance(xform, Value) and isinstance(xform.type, Vector) and xform.type.flavor == "transform"):
            ctx.error(f"{name}() needs a transform, got {getattr(xform, 'type', xform)!r}")
        return [set_transform_part(ctx, xform, part, value)], None
    expand.__doc__ = f"Set the {'translation' if part == 'p' else 'rotation'} of a transform in place."
    return expand


transform_set_translation = _setter("transform_set_translation", "p")
transform_set_rotation = _setter("transform_set_rotation", "q")
