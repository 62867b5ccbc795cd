"""A func's return value against its return annotation (`-> float`, `-> tuple[int, float]`).

A weak constant converts where it fits; anything else that differs from the annotation is
a compile error naming the function, the annotation as written and what the code returns.
"""

from __future__ import annotations

import typing

from ..ir.core import Op, Value
from ..types import FixedArrayType, TupleType
from . import promotion


def annotated_return(ctx, value, node) -> Value:
    """`value` (a Value, a weak constant or a tuple of them) as a Value of `ctx.ret_type`."""
    want = ctx.ret_type
    parts = _parts(ctx, value)
    head = f"The function `{ctx.name}` has its return type annotated as"
    if isinstance(want, TupleType):
        if parts is None:
            parts = [value]
        if len(parts) != len(want.elements):
            ctx.error(f"{head} a tuple of {len(want.elements)} elements but the code returns "
                      f"{len(parts)} value{'s' if len(parts) != 1 else ''}.", node, kind=TypeError)
        converted = [_convert(ctx, p, t) for p, t in zip(parts, want.elements)]
        if any(c is None for c in converted):
            got = ", ".join(repr(_type_of(p)) for p in parts)
            ctx.error(f"{head} `{_annotation_text(ctx)}` but the code returns a tuple with types `({got})`.",
                      node, kind=TypeError)
        return ctx.b.construct(want, converted)
    if parts is not None:
        ctx.error(f"{head} `{_annotation_text(ctx)}` but the code returns {len(parts)} values.", node,
                  kind=TypeError)
    _check_local_array(ctx, value, node)
    converted = _convert(ctx, value, want)
    if converted is None:
        ctx.error(f"{head} `{_annotation_text(ctx)}` but the code returns a value of type "
                  f"`{_type_of(value)!r}`.", node, kind=TypeError)
    return converted


def _check_local_array(ctx, value, node):
    """A fixed-size array made in the func (`zeros()`, or a view of one) may be returned
    only where the annotation says so (`-> fixedarray(shape=..., dtype=...)`): an `array`
    annotation promises memory that outlives the call's caller."""
    from .function import _annotations
    root = value
    while isinstance(root, Value) and isinstance(root.owner, Op) and root.owner.name in ("view", "slice", "component"):
        root = root.owner.operands[0]
    if not (isinstance(root, Value) and isinstance(root.owner, Op) and root.owner.name == "local_array"):
        return
    annotation = _annotations(ctx.src.pyfunc).get("return")
    if not isinstance(annotation, FixedArrayType):
        ctx.error(f"The function `{ctx.name}` returns a fixed-size array whereas it has its return type annotated "
                  f"as `{_annotation_text(ctx)}`.", node, kind=TypeError)
    got = tuple(root.owner.attrs["shape"]) if root is value else None
    if annotation.shape is not None and got != annotation.shape:
        what = f"a fixed-size array of shape {got}" if got is not None else "a view of a fixed-size array"
        ctx.error(f"The function `{ctx.name}` has its return type annotated as `{annotation!r}` but the code "
                  f"returns {what}.", node, kind=TypeError)


def _parts(ctx, value):
    """The elements of a returned tuple (a Python tuple or a tuple Value); None if not one."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Value) and isinstance(value.type, TupleType):
        return [ctx.b.extract(value, k) for k in range(len(value.type.elements))]
    return None


def _convert(ctx, value, want):
    if isinstance(value, Value):
        return value if value.type is want else None
    if promotion.is_weak(value) and getattr(want, "is_scalar", False) and promotion.fits(value, want):
        return ctx.coerce(value, want)
    v = ctx.materialize(value)
    return v if v.type is want else None


def _type_of(value):
    return value.type if isinstance(value, Value) else promotion.default_type(value)


def _annotation_text(ctx) -> str:
    from .function import _annotations
    return _annotation_name(_annotations(ctx.src.pyfunc).get("return"))


def _annotation_name(annotation) -> str:
    from ..types import ArrayType
    if isinstance(annotation, ArrayType) and not annotation.indexed:  # as Warp names it: Array[dtype]
        return f"Array[{getattr(annotation.dtype, 'name', annotation.dtype)}]"
    if typing.get_origin(annotation) is tuple:
        return "tuple[" + ", ".join(_annotation_name(a) for a in typing.get_args(annotation)) + "]"
    return getattr(annotation, "__name__", None) or repr(annotation)
