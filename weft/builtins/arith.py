"""Operators and element access, for scalars and composites (vectors, matrices, structs).

Composite arithmetic is expanded here into scalar ops on components, so the IR (and the
autodiff that reads it) only ever sees scalar arithmetic plus construct/extract/insert.
`ctx` is the frontend's FunctionCompiler: `ctx.b` builds IR, `ctx.error` reports.
"""

from __future__ import annotations

import numpy as np

from ..ir.core import Value
from ..lang import promotion
from ..types import ArrayType, Composite, Matrix, Scalar, StructType, TupleType, Vector, bool_, int32

RANGE = range


class _Static:
    """`weft.static(expr)`: evaluate `expr` in Python when the kernel is compiled."""

    def __call__(self, value):
        return value

    def __repr__(self):
        return "weft.static"


STATIC = _Static()


def zero(ctx, t) -> Value:
    if isinstance(t, Scalar):
        return ctx.b.const(0, t)
    if isinstance(t, Composite):
        from ..ir.ops import component_type
        return ctx.b.construct(t, [zero(ctx, component_type(t, i)) for i in range(t.num_components)])
    if isinstance(t, ArrayType):
        return ctx.b.op("null_array", [], [t]).result  # every access is out of bounds
    ctx.error(f"no zero value for {t!r}")


def splat(ctx, t, x) -> Value:
    """A composite of type `t` with every component `x` (a scalar Value)."""
    return ctx.b.construct(t, [x] * t.num_components)


# Arithmetic ---------------------------------------------------------------------------------
def unify(ctx, a, b):
    """Make two operands' scalar types agree (weak constants adapt); return them as Values."""
    ta, tb = promotion.value_type(a), promotion.value_type(b)
    sa, sb = promotion.scalar_of(ta), promotion.scalar_of(tb)
    if ta is None:
        a = ctx.coerce(a, sb, what="constant") if sb else ctx.materialize(a)
    if tb is None:
        b = ctx.coerce(b, sa, what="constant") if sa else ctx.materialize(b)
    sa, sb = promotion.scalar_of(a.type), promotion.scalar_of(b.type)
    if sa is not None and sb is not None and sa is not sb:
        ctx.error(f"operands have different types {a.type!r} and {b.type!r}; "
                  f"convert one explicitly, e.g. {sb!r}(x)", kind=TypeError)
    return a, b


def binary(ctx, op: str, a, b) -> Value:
    a, b = unify(ctx, a, b)
    ta, tb = a.type, b.type
    if isinstance(ta, Scalar) and isinstance(tb, Scalar):
        return scalar_binary(ctx, op, a, b)
    if op == "matmul" or (op == "mul" and isinstance(ta, Matrix) and isinstance(tb, (Matrix, Vector))) \
            or (op == "mul" and isinstance(ta, Vector) and isinstance(tb, Matrix)):
        return matmul(ctx, a, b)
    if isinstance(ta, (Vector, Matrix)) and ta is tb and op in _COMPONENTWISE:
        return componentwise(ctx, op, a, b)
    if isinstance(ta, (Vector, Matrix)) and isinstance(tb, Scalar) and op in ("mul", "div", "floordiv", "mod"):
        return componentwise(ctx, op, a, splat(ctx, ta, b))
    if isinstance(ta, Scalar) and isinstance(tb, (Vector, Matrix)) and op in ("mul", "div"):
        return componentwise(ctx, op, splat(ctx, tb, a), b)
    if isinstance(ta, Vector) and ta is tb and op == "mul" and ta.flavor != "vec":
        from .vector import quat_mul, transform_mul
        return quat_mul(ctx.b, a, b) if ta.flavor == "quat" else transform_mul(ctx, a, b)
    if isinstance(ta, Vector) and ta is tb and op in ("mul", "div"):
        ctx.error(f"'{_SYMBOLS.get(op, op)}' between two vectors is ambiguous: use "
                  f"weft.cw_{op}(a, b) for componentwise, or weft.dot(a, b)")
    ctx.error(f"unsupported operand types for {_SYMBOLS.get(op, op)}: {ta!r} and {tb!r}")


# operators that apply component by component to two composites of one type
_COMPONENTWISE = ("add", "sub", "mod", "bitand", "bitor", "bitxor", "shl", "shr")

_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "mod": "%",
            "pow": "**", "matmul": "@", "bitand": "&", "bitor": "|", "bitxor": "^",
            "shl": "<<", "shr": ">>"}


def scalar_binary(ctx, op: str, a: Value, b: Value) -> Value:
    t = a.type
    if op == "pow":
        from .math import PRIM
        if not t.is_float:
            ctx.error(f"** needs float operands, got {t!r}")
        return ctx.b.call(PRIM["pow"], [a, b])
    if op in ("bitand", "bitor", "bitxor") and t is bool_:
        return ctx.b.binary(op, a, b)
    if op in ("bitand", "bitor", "bitxor", "shl", "shr") and not t.is_int:
        ctx.error(f"'{_SYMBOLS[op]}' needs integer operands, got {t!r}")
    if t is bool_:
        ctx.error(f"arithmetic on bool values: convert with int(x) first ('{_SYMBOLS.get(op, op)}')")
    return ctx.b.binary(op, a, b)


def componentwise(ctx, op: str, a: Value, b: Value) -> Value:
    parts = [scalar_binary(ctx, op, x, y) for x, y in zip(ctx.b.components(a), ctx.b.components(b))]
    return ctx.b.construct(a.type, parts)


def matmul(ctx, a: Value, b: Value) -> Value:
    ta, tb = a.type, b.type
    bld = ctx.b
    if isinstance(ta, Matrix) and isinstance(tb, Vector):
        if ta.cols != tb.length:
            ctx.error(f"cannot multiply {ta!r} by {tb!r}: shapes do not match")
        v = bld.components(b)
        rows = [_dot_list(ctx, [bld.extract(a, r * ta.cols + c) for c in range(ta.cols)], v)
                for r in range(ta.rows)]
        return bld.construct(Vector(ta.rows, ta.dtype), rows)
    if isinstance(ta, Vector) and isinstance(tb, Matrix):
        if ta.length != tb.rows:
            ctx.error(f"cannot multiply {ta!r} by {tb!r}: shapes do not match")
        v = bld.components(a)
        cols = [_dot_list(ctx, v, [bld.extract(b, r * tb.cols + c) for r in range(tb.rows)])
                for c in range(tb.cols)]
        return bld.construct(Vector(tb.cols, tb.dtype), cols)
    if isinstance(ta, Matrix) and isinstance(tb, Matrix):
        if ta.cols != tb.rows:
            ctx.error(f"cannot multiply {ta!r} by {tb!r}: shapes do not match")
        out = []
        for r in range(ta.rows):
            row = [bld.extract(a, r * ta.cols + k) for k in range(ta.cols)]
            for c in range(tb.cols):
                out.append(_dot_list(ctx, row, [bld.extract(b, k * tb.cols + c) for k in range(tb.rows)]))
        return bld.construct(Matrix((ta.rows, tb.cols), ta.dtype), out)
    ctx.error(f"@ needs matrices or a matrix and a vector, got {ta!r} and {tb!r}")


def _dot_list(ctx, xs, ys) -> Value:
    acc = ctx.b.mul(xs[0], ys[0])
    for x, y in zip(xs[1:], ys[1:]):
        acc = ctx.b.add(acc, ctx.b.mul(x, y))
    return acc


def unary(ctx, kind: str, v: Value) -> Value:
    t = v.type
    if isinstance(t, Scalar):
        if kind == "invert" and not (t.is_int or t is bool_):
            ctx.error(f"~ needs an integer, got {t!r}")
        if kind == "neg" and t is bool_:
            ctx.error("cannot negate a bool")
        return ctx.b.unary("not" if (kind == "invert" and t is bool_) else kind, v)
    if isinstance(t, (Vector, Matrix)) and kind in ("neg", "invert"):
        if kind == "invert" and not t.dtype.is_int:
            ctx.error(f"~ needs integer components, got {t!r}")
        return ctx.b.construct(t, [ctx.b.unary(kind, c) for c in ctx.b.components(v)])
    ctx.error(f"unsupported unary operator on {t!r}")


def compare(ctx, pred: str, a, b) -> Value:
    a, b = unify(ctx, a, b)
    if isinstance(a.type, Scalar) and a.type is b.type:
        return ctx.b.cmp(pred, a, b)
    if isinstance(a.type, Composite) and a.type is b.type and pred in ("eq", "ne"):
        eqs = [ctx.b.cmp("eq", x, y) for x, y in zip(ctx.b.components(a), ctx.b.components(b))]
        result = eqs[0]
        for e in eqs[1:]:
            result = ctx.b.select(result, e, ctx.b.const(False, bool_))
        return result if pred == "eq" else ctx.b.unary("not", result)
    ctx.error(f"cannot compare {a.type!r} with {b.type!r} using '{pred}'")


# Construction and casts ---------------------------------------------------------------------
def construct(ctx, t, args, kwargs) -> Value:
    """`T(...)` inside a kernel: a cast for scalars, a constructor for composites."""
    if isinstance(t, Scalar):
        if len(args) != 1 or kwargs:
            ctx.error(f"{t!r}(x) takes one argument")
        (x,) = args
        if not isinstance(x, Value):
            if t is bool_:
                return ctx.b.const(bool(x), t)
            value = x
            if t.is_int and isinstance(x, (float, np.floating)):
                if not np.isfinite(x):
                    ctx.error(f"{t!r}({x!r}): not a finite number")
                value = int(x)  # an explicit conversion truncates, as in C
            if t.is_int and not promotion.fits(value, t):
                value = _wrap_int(int(value), t)  # an explicit conversion wraps, as in C
            if not promotion.fits(value, t):
                ctx.error(f"{t!r}({x!r}): the value does not fit {t!r}")
            return ctx.coerce(value, t)
        if not isinstance(x.type, Scalar):
            ctx.error(f"cannot convert {x.type!r} to {t!r}")
        if t is bool_:
            return ctx.b.cmp("ne", x, ctx.b.const(0, x.type))
        return ctx.b.cast(x, t)
    if isinstance(t, StructType):
        if args:
            ctx.error(f"struct {t.name}(...) takes keyword arguments only")
        fields = []
        for name, ft in t.fields.items():
            fields.append(ctx.coerce(kwargs.pop(name), ft, what=f"field {name}") if name in kwargs
                          else zero(ctx, ft))
        if kwargs:
            ctx.error(f"struct {t.name} has no field '{next(iter(kwargs))}'")
        return ctx.b.construct(t, fields)
    if isinstance(t, (Vector, Matrix)):
        return construct_composite(ctx, t, args, kwargs)
    ctx.error(f"cannot construct a {t!r} inside a kernel")


def _wrap_int(value: int, t) -> int:
    """`value` converted to integer type `t` as C converts: modulo 2**bits."""
    value %= 1 << t.bits
    if t.is_signed and value >= 1 << (t.bits - 1):
        value -= 1 << t.bits
    return value


def construct_composite(ctx, t, args, kwargs) -> Value:
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        ctx.error(f"{t!r}(...) got unexpected keyword '{next(iter(kwargs))}'")
    if dtype is not None and dtype is not t.dtype:
        t = Vector(t.length, dtype, t.flavor) if isinstance(t, Vector) else Matrix(t.shape, dtype)
    n = t.num_components
    if not args:
        return zero(ctx, t)
    if len(args) == 1:
        (x,) = args
        if isinstance(x, Value) and isinstance(x.type, type(t)) and x.type.num_components == n:
            if x.type.dtype is t.dtype:
                return x
            return ctx.b.construct(t, [ctx.b.cast(c, t.dtype) for c in ctx.b.components(x)])
        if not isinstance(x, Value) or isinstance(x.type, Scalar):
            return splat(ctx, t, ctx.coerce(x, t.dtype, what="component"))
    flat = []
    for x in args:
        if isinstance(x, Value) and isinstance(x.type, Vector):
            flat.extend(ctx.b.components(x))  # matrices from row vectors, vec4 from (vec3, w)
        else:
            flat.append(ctx.coerce(x, t.dtype, what="component"))
    if len(flat) != n:
        ctx.error(f"{t!r} takes {n} components, got {len(flat)}")
    for c in flat:
        if c.type is not t.dtype:
            ctx.error(f"{t!r} components must be {t.dtype!r}, got {c.type!r}")
    return ctx.b.construct(t, flat)


# Element and component access ----------------------------------------------------------------
_SWIZZLE = "xyzw"


def get_attr(ctx, v: Value, name: str):
    t = v.type
    if isinstance(t, StructType):
        if name not in t.fields:
            ctx.error(f"struct {t.name} has no field '{name}'")
        return ctx.b.extract(v, t.field_index(name))
    if isinstance(t, Vector) and len(name) == 1 and name in _SWIZZLE[: min(t.length, 4)]:
        return ctx.b.extract(v, _SWIZZLE.index(name))
    if isinstance(t, Vector) and t.flavor == "transform" and name in ("p", "q"):
        from .vector import transform_part
        return transform_part(ctx, v, name)
    if isinstance(t, (Vector, Matrix)) and name == "dtype":
        return t.dtype  # the component type (a compile-time value)
    if isinstance(t, ArrayType):
        if name in ("shape", "ptr"):
            from . import array_ops
            return array_ops.shape_of(ctx, v) if name == "shape" else array_ops.ptr_of(ctx, v)
        if name == "ndim":
            return t.ndim
        if name == "dtype":
            return t.dtype
    ctx.error(f"{t!r} has no attribute '{name}'")


def set_attr(ctx, v: Value, name: str, value) -> Value:
    t = v.type
    if isinstance(t, StructType):
        if name not in t.fields:
            ctx.error(f"struct {t.name} has no field '{name}'")
        i = t.field_index(name)
        return ctx.b.insert(v, i, ctx.coerce(value, t.fields[name], what=f"field {name}"))
    if isinstance(t, Vector) and len(name) == 1 and name in _SWIZZLE[: min(t.length, 4)]:
        return ctx.b.insert(v, _SWIZZLE.index(name), ctx.coerce(value, t.dtype, what="component"))
    if isinstance(t, Vector) and t.flavor == "transform" and name in ("p", "q"):
        from .mutating import set_transform_part
        return set_transform_part(ctx, v, name, value)
    ctx.error(f"cannot assign attribute '{name}' of {t!r}")


def _static_index(ctx, k, n: int, what: str):
    """A constant index in range, or None if `k` is a runtime value."""
    if isinstance(k, Value):
        if not (isinstance(k.type, Scalar) and k.type.is_int):
            ctx.error(f"{what} index must be an integer, got {k.type!r}")
        return None
    if not isinstance(k, int) or isinstance(k, bool):
        ctx.error(f"{what} index must be an integer, got {k!r}")
    if not -n <= k < n:
        ctx.error(f"{what} index {k} is out of range for size {n}")
    return k % n


def get_item(ctx, v: Value, key: tuple):
    t = v.type
    if isinstance(t, (Vector, TupleType)) and len(key) == 1:
        i = _static_index(ctx, key[0], t.num_components, repr(t))
        if i is None:
            if isinstance(t, TupleType):
                ctx.error("tuples must be indexed with constants")
            return ctx.b.op("extract_dyn", [v, key[0]], [t.dtype]).result
        return ctx.b.extract(v, i)
    if isinstance(t, Matrix):
        if len(key) == 1:
            row = [get_item(ctx, v, (key[0], c)) for c in range(t.cols)]
            return ctx.b.construct(t.row_type(), row)
        if len(key) == 2:
            r = _static_index(ctx, key[0], t.rows, repr(t))
            c = _static_index(ctx, key[1], t.cols, repr(t))
            if r is not None and c is not None:
                return ctx.b.extract(v, r * t.cols + c)
            return ctx.b.op("extract_dyn", [v, *_matrix_index(ctx, key)], [t.dtype]).result
    ctx.error(f"cannot index {t!r} with {len(key)} index(es)")


def set_item(ctx, v: Value, key: tuple, value) -> Value:
    t = v.type
    if isinstance(t, Vector) and len(key) == 1:
        x = ctx.coerce(value, t.dtype, what="component")
        i = _static_index(ctx, key[0], t.length, repr(t))
        if i is None:
            return ctx.b.op("insert_dyn", [v, key[0], x], [t]).result
        return ctx.b.insert(v, i, x)
    if isinstance(t, Matrix):
        if len(key) == 2:
            x = ctx.coerce(value, t.dtype, what="component")
            r = _static_index(ctx, key[0], t.rows, repr(t))
            c = _static_index(ctx, key[1], t.cols, repr(t))
            if r is not None and c is not None:
                return ctx.b.insert(v, r * t.cols + c, x)
            return ctx.b.op("insert_dyn", [v, *_matrix_index(ctx, key), x], [t]).result
        if len(key) == 1:
            row = ctx.coerce(value, t.row_type(), what="matrix row")
            for c, comp in enumerate(ctx.b.components(row)):
                v = set_item(ctx, v, (key[0], c), comp)
            return v
    ctx.error(f"cannot assign an element of {t!r} with {len(key)} index(es)")


def _matrix_index(ctx, key) -> list[Value]:
    """(row, column) as Values; each is checked against its own extent at run time."""
    return [k if isinstance(k, Value) else ctx.coerce(k, int32, what="index") for k in key]


# Arrays ---------------------------------------------------------------------------------------
def load(ctx, arr: Value, indices) -> Value:
    t = arr.type
    if len(indices) < t.ndim:
        if t.indexed:
            ctx.error(f"an {t!r} takes {t.ndim} indices (views of indexed arrays are not supported)")
        view_t = ArrayType(t.dtype, t.ndim - len(indices))
        return ctx.b.op("view", [arr, *indices], [view_t]).result
    return ctx.b.op("load", [arr, *indices], [t.dtype]).result


def store(ctx, arr: Value, indices, value):
    v = ctx.coerce(value, arr.type.dtype, what="the stored value")
    ctx.b.op("store", [arr, *indices, v], [])


def atomic(ctx, kind: str, arr: Value, indices, value) -> Value:
    """`a[i] += x` and friends: the atomic update (see builtins/atomic.py)."""
    from .atomic import emit
    return emit(ctx, kind, arr, indices, value)
