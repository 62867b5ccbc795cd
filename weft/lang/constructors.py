"""Warp's generic constructors inside kernels: `vector(...)`, `matrix(...)`,
`quaternion(...)`, `transformation(...)` build a value whose type comes from the arguments
(`dtype=` and `length=`/`shape=` where given; else the component type of the first typed
argument, float32 for plain numbers). Outside kernels the same names make types."""

from __future__ import annotations

import numpy as np

from ..builtins import arith
from ..ir.core import Value, constant_value
from ..types import Matrix, Scalar, Vector, bool_, float32, int32, matrix, quaternion, transformation, vector

FACTORIES = (vector, matrix, quaternion, transformation)


def builds_value(func, args, kwargs) -> bool:
    """Whether a call of a type factory builds a value: it has component arguments, or it
    is Warp's keyword form `vector(length=3, dtype=float)` / `matrix(shape=(3, 3),
    dtype=float)`, which inside a kernel is a zero value (the positional forms
    `vector(3, float)` and `matrix((3, 3), float)` stay types), or it is `quaternion(...)`."""
    if func not in FACTORIES:
        return False
    if func is quaternion:  # (Warp's kernel builtin: quaternion() and quaternion(dtype) are zero values)
        return True
    if func is transformation:
        return bool(args or set(kwargs) - {"dtype"})
    size_kw = "length" if func is vector else "shape"
    components = {k: v for k, v in kwargs.items() if k not in ("dtype", "length", "shape")}
    if components or any(isinstance(a, Value) for a in args):
        return True
    if not args:  # vector(length=3, dtype=float): a zero value; vector(): a value lacking its length
        return size_kw in kwargs or not kwargs
    size_like = (int, np.integer) if func is vector else (tuple, list)
    type_form = len(args) <= 2 and isinstance(args[0], size_like) and not isinstance(args[0], bool) \
        and size_kw not in kwargs and (len(args) == 1 or "dtype" not in kwargs)
    return not type_form


def construct(ctx, func, args, kwargs, node):
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    if func is quaternion and len(args) == 1 and dtype is None and not isinstance(args[0], Value) \
            and not isinstance(args[0], (int, float, np.number, tuple, list)):
        dtype, args = args[0], ()  # quaternion(float64): Warp's zero quaternion of that type
    if dtype is None:
        parts = [v for k, v in kwargs.items() if k not in ("length", "shape")]
        dtype = _component_type(ctx, func, list(args) + parts, node)
    dtype = ctx.resolve_type(dtype, node)
    if func is vector:
        length = kwargs.pop("length", None)
        if length is None:
            if not args:
                ctx.error("the `length` argument must be specified when zero-initializing a vector", node)
            vectors = [a for a in args if isinstance(a, Value) and isinstance(a.type, Vector)]
            if len(args) == 1 and vectors:
                length = vectors[0].type.length  # vector(v, dtype=...): a converting copy
            elif vectors:
                ctx.error("vector(...) from vectors needs length=", node)
            else:
                length = len(args)
        t = vector(_constant_size(ctx, length, "length", node), dtype)
    elif func is matrix:
        shape = kwargs.pop("shape", None)
        if shape is None:
            if len(args) == 1 and isinstance(args[0], Value) and isinstance(args[0].type, Matrix):
                shape = args[0].type.shape
            else:
                ctx.error("the `shape` argument must be specified when initializing a matrix by value", node)
        if isinstance(shape, Value) or not isinstance(shape, (tuple, list)):
            ctx.error(f"the `shape` of a matrix must be a tuple of two constant ints, got {shape!r}", node)
        t = matrix(tuple(_constant_size(ctx, n, "shape", node) for n in shape), dtype)
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


def _component_type(ctx, func, values, node):
    """The component type of an untyped constructor: that of its first typed argument; else
    of its numbers (float32 for floats, int32 for ints, bool), which must then be of one kind."""
    for v in values:
        if isinstance(v, Value):
            t = v.type
            return t if isinstance(t, Scalar) else getattr(t, "dtype", float32)
    kinds = {bool_ if isinstance(v, (bool, np.bool_)) else int32 if isinstance(v, (int, np.integer))
             else float32 for v in values if not isinstance(v, (tuple, list))}
    if len(kinds) > 1:
        what = "a vector" if func is vector else f"a {func.__name__}"
        ctx.error(f"all values given when constructing {what} must have the same type", node)
    return kinds.pop() if kinds else float32


def _constant_size(ctx, n, what: str, node) -> int:
    """A vector's length or a matrix dimension: an int known when the kernel compiles (a local
    holding a constant, `N = wp.static(n)`, included)."""
    if isinstance(n, Value):
        value = constant_value(n)
        if not isinstance(value, int) or isinstance(value, bool):
            ctx.error(f"the `{what}` of a vector or matrix must be known when the kernel compiles "
                      f"(a constant or wp.static(...)), got a {n.type!r} computed at run time", node)
        return value
    return n
