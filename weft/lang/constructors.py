"""Warp's generic constructors inside kernels: `vector(...)`, `matrix(...)`,
`quaternion(...)`, `transformation(...)` build a value whose type comes from the arguments
(`dtype=` and `length=`/`shape=` where given; else the component type of the first typed
argument, float32 for plain numbers). Outside kernels the same names make types."""

from __future__ import annotations

from ..builtins import arith
from ..ir.core import Value
from ..types import Scalar, float32, matrix, quaternion, transformation, vector

FACTORIES = (vector, matrix, quaternion, transformation)


def builds_value(func, args, kwargs) -> bool:
    """Whether a call of a type factory builds a value (it has component arguments)."""
    if func not in FACTORIES:
        return False
    components = {k: v for k, v in kwargs.items() if k not in ("dtype", "length", "shape")}
    return bool(args or components) and any(isinstance(a, Value) for a in [*args, *components.values()]) \
        or (func in (quaternion, transformation) and bool(args or components))


def construct(ctx, func, args, kwargs, node):
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    if dtype is None:
        dtype = _component_type(list(args) + list(kwargs.values()))
    dtype = ctx.resolve_type(dtype, node)
    if func is vector:
        length = kwargs.pop("length", None)
        if length is None:
            if not all(not isinstance(a, Value) or isinstance(a.type, Scalar) for a in args):
                ctx.error("vector(...) from vectors needs length=", node)
            length = len(args)
        t = vector(length, dtype)
    elif func is matrix:
        shape = kwargs.pop("shape", None)
        if shape is None:
            ctx.error("matrix(...) inside a kernel needs shape=(rows, cols)", node)
        t = matrix(tuple(shape), dtype)
    elif func is quaternion:
        t = quaternion(dtype)
    else:
        t = transformation(dtype)
        if "p" in kwargs or "q" in kwargs:  # transformation(p=..., q=...): the other as identity
            p = kwargs.pop("p", None)
            q = kwargs.pop("q", None)
            args = [*args,
                    p if p is not None else ctx.materialize(vector(3, dtype)()),
                    q if q is not None else ctx.materialize(quaternion(dtype)(0.0, 0.0, 0.0, 1.0))]
    if kwargs:
        ctx.error(f"{func.__name__}(...): unexpected keyword argument(s) {', '.join(kwargs)}", node)
    return arith.construct(ctx, t, list(args), {})


def _component_type(values):
    for v in values:
        if isinstance(v, Value):
            t = v.type
            return t if isinstance(t, Scalar) else getattr(t, "dtype", float32)
    return float32
