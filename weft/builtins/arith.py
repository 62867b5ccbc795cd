"""Operators and element access, for scalars and composites (vectors, matrices, structs).

Composite arithmetic is expanded here into scalar ops on components, so the IR (and the
autodiff that reads it) only ever sees scalar arithmetic plus construct/extract/insert.
`ctx` is the frontend's FunctionCompiler: `ctx.b` builds IR, `ctx.error` reports.
"""

from __future__ import annotations

import numpy as np

from ..ir.core import Op, Value, constant_value
from ..lang import promotion
from ..types import ArrayType, Composite, Matrix, Scalar, StructType, TileType, TupleType, Vector, bool_, int32, uint64
from ..types.scalars import wrap_int

RANGE = range


class _Static:
    """`weft.static(expr)`: evaluate `expr` in Python when the kernel is compiled."""

    def __call__(self, value):
        return value

    def __repr__(self):
        return "weft.static"


STATIC = _Static()


def has_zero(t) -> bool:
    """Whether `zero` makes a value of type `t` (a tile stack, say, has none)."""
    return isinstance(t, (Scalar, Composite, ArrayType, TileType))


def zero(ctx, t) -> Value:
    if isinstance(t, Scalar):
        return ctx.b.const(0, t)
    if isinstance(t, Composite):
        from ..ir.ops import component_type
        return ctx.b.construct(t, [zero(ctx, component_type(t, i)) for i in range(t.num_components)])
    if isinstance(t, ArrayType):
        return ctx.b.op("null_array", [], [t]).result  # every access is out of bounds
    if isinstance(t, TileType):  # (a tile assigned in some branches only)
        from .tiles.core import zeros
        return zeros(ctx.b, t)
    ctx.error(f"no zero value for {t!r}")


def splat(ctx, t, x) -> Value:
    """A composite of type `t` with every component `x` (a scalar Value)."""
    return ctx.b.construct(t, [x] * t.num_components)


# Arithmetic ---------------------------------------------------------------------------------
def unify(ctx, a, b, bit_patterns: bool = False):
    """Make two operands' scalar types agree (weak constants adapt); return them as Values.
    `bit_patterns`: an integer literal may be a bit pattern of the other operand's width
    (arithmetic and bitwise operators; see `_adapt_constant`)."""
    ta, tb = promotion.value_type(a), promotion.value_type(b)
    sa, sb = promotion.scalar_of(ta), promotion.scalar_of(tb)
    if ta is None:
        a = _adapt_constant(ctx, a, sb, bit_patterns) if sb else ctx.materialize(a)
    if tb is None:
        b = _adapt_constant(ctx, b, sa, bit_patterns) if sa else ctx.materialize(b)
    sa, sb = promotion.scalar_of(a.type), promotion.scalar_of(b.type)
    if sa is not None and sb is not None and sa is not sb:
        ctx.error(f"operands have different types {a.type!r} and {b.type!r}; "
                  f"convert one explicitly, e.g. {sb!r}(x)", kind=TypeError)
    return a, b


_BIT_PATTERN_OPS = frozenset({"add", "sub", "mul", "bitand", "bitor", "bitxor"})


def _adapt_constant(ctx, x, t: Scalar, bit_patterns: bool = False) -> Value:
    """Weak constant `x` as a value of the other operand's scalar type `t`. With
    `bit_patterns`, an integer literal that is a bit pattern of t's width (`h * 2654435761`,
    `x & 0xFFFFFFFF`, `x ^ 0x80000000` with an int32 x) wraps to t, as Warp's int32 literal
    does (hashing code relies on it); elsewhere (`x < 3000000000`) it stays an error, where
    the wrapped value would silently change the meaning. A float literal with an integer
    operand is a type mismatch (`n * 1.5`: write `float(n) * 1.5`)."""
    raw = x.item() if isinstance(x, np.generic) else x
    if t.is_int and isinstance(raw, float):
        ctx.error(f"Input types must be the same, got ['{t.name}', 'float32'] (the constant {raw!r} "
                  f"with an integer operand); convert one explicitly, e.g. float(x) * {raw!r}", kind=TypeError)
    return ctx.coerce(x, t, what="constant", bit_patterns=bit_patterns)


def binary(ctx, op: str, a, b) -> Value:
    if _is_tile(a) or _is_tile(b):
        from .tiles import elementwise
        return elementwise.binary(ctx, op, a, b)
    a, b = unify(ctx, a, b, bit_patterns=op in _BIT_PATTERN_OPS)
    ta, tb = a.type, b.type
    if isinstance(ta, StructType) and ta is tb and op in ("add", "sub"):
        return _struct_binary(ctx, op, a, b)
    if isinstance(ta, StructType) and op in ("bitand", "bitor", "bitxor"):
        ctx.error(f"bitwise inplace and binary operators ('{_SYMBOLS[op]}') are not supported on Warp struct "
                  f"values ({ta!r})", kind=TypeError)
    if op == "matmul" and (isinstance(ta, Scalar) or isinstance(tb, Scalar)):
        op = "mul"  # (Warp's `@` is its `mul`, which takes scalars too)
    if isinstance(ta, Scalar) and isinstance(tb, Scalar):
        return scalar_binary(ctx, op, a, b)
    if op == "matmul" or (op == "mul" and isinstance(ta, Matrix) and isinstance(tb, (Matrix, Vector))) \
            or (op == "mul" and isinstance(ta, Vector) and isinstance(tb, Matrix)):
        return matmul(ctx, a, b)
    if isinstance(ta, (Vector, Matrix)) and ta is tb and op in _COMPONENTWISE:
        return componentwise(ctx, op, a, b)
    if isinstance(ta, (Vector, Matrix)) and isinstance(tb, Scalar) and op == "div" and tb.is_float:
        return _divide_by_scalar(ctx, a, b)
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


def _struct_binary(ctx, op, x, y):
    """x + y and x - y of two structs, as Warp's tiles of structs do: field by field, where
    a field's type has that arithmetic; other fields (bools, 8/16-bit integers, arrays)
    keep x's value."""
    fields = []
    for k, ft in enumerate(x.type.fields.values()):
        fx, fy = ctx.b.extract(x, k), ctx.b.extract(y, k)
        fields.append(binary(ctx, op, fx, fy) if _has_arithmetic(ft) else fx)
    return ctx.b.construct(x.type, fields)


def _has_arithmetic(t) -> bool:
    if isinstance(t, Scalar):
        return t.is_float or (t.is_int and t.bits >= 32)
    if isinstance(t, (Vector, Matrix)):
        return _has_arithmetic(t.dtype)
    return isinstance(t, StructType)


def _is_tile(x) -> bool:
    return isinstance(x, Value) and isinstance(x.type, TileType)


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


def _divide_by_scalar(ctx, a: Value, s: Value) -> Value:
    """A vector or matrix divided by a float scalar, component by component. The divisions
    are marked `by_scalar`: the reverse pass gives `s` the adjoint -a_i g_i / s^2, Warp's
    form for this case (the same value as -(g_i / s) r_i in exact arithmetic; in float16
    their roundings differ, and Warp's is the reference)."""
    b = ctx.b
    parts = [b.op("binary", (x, s), (s.type,), {"op": "div", "by_scalar": True}).result for x in b.components(a)]
    return b.construct(a.type, parts)


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
        rows = [dot_list(ctx, [bld.extract(a, r * ta.cols + c) for c in range(ta.cols)], v)
                for r in range(ta.rows)]
        return bld.construct(Vector(ta.rows, ta.dtype), rows)
    if isinstance(ta, Vector) and isinstance(tb, Matrix):
        if ta.length != tb.rows:
            ctx.error(f"cannot multiply {ta!r} by {tb!r}: shapes do not match")
        v = bld.components(a)
        cols = [dot_list(ctx, v, [bld.extract(b, r * tb.cols + c) for r in range(tb.rows)])
                for c in range(tb.cols)]
        return bld.construct(Vector(tb.cols, tb.dtype), cols)
    if isinstance(ta, Matrix) and isinstance(tb, Matrix):
        if ta.cols != tb.rows:
            ctx.error(f"cannot multiply {ta!r} by {tb!r}: shapes do not match")
        out = []
        for r in range(ta.rows):
            row = [bld.extract(a, r * ta.cols + k) for k in range(ta.cols)]
            for c in range(tb.cols):
                out.append(muladd_list(ctx, row, [bld.extract(b, k * tb.cols + c) for k in range(tb.rows)]))
        return bld.construct(Matrix((ta.rows, tb.cols), ta.dtype), out)
    ctx.error(f"@ needs matrices or a matrix and a vector, got {ta!r} and {tb!r}")


def dot_list(ctx, xs, ys) -> Value:
    """sum x_k y_k from the first product, as Warp's matrix-vector products (vector ops)."""
    acc = ctx.b.mul(xs[0], ys[0])
    for x, y in zip(xs[1:], ys[1:]):
        acc = ctx.b.add(acc, ctx.b.mul(x, y))
    return acc


def muladd_list(ctx, xs, ys) -> Value:
    """sum x_k y_k as Warp's matrix products and ddot accumulate it: from 0, one fused
    multiply-add per term in float32 and float64 (its muladd is fmaf / fma), `acc + x * y`
    for other types."""
    from .math import PRIM
    b = ctx.b
    t = xs[0].type
    acc = b.const(0, t)
    for x, y in zip(xs, ys):
        acc = b.call(PRIM["fma"], [x, y, acc]) if t.is_float and t.bits >= 32 else b.add(acc, b.mul(x, y))
    return acc


def unary(ctx, kind: str, v: Value) -> Value:
    t = v.type
    if isinstance(t, TileType):
        from .tiles import elementwise
        return elementwise.unary(ctx, kind, v)
    if isinstance(t, Scalar):
        if kind == "invert" and not (t.is_int or t is bool_):
            ctx.error(f"~ needs an integer, got {t!r}")
        if kind == "neg" and t is bool_:
            ctx.error("cannot negate a bool")
        if kind == "neg" and t.is_float:  # Warp's scalar neg is 0 - x: -(+0.0) is +0.0 ...
            known = constant_value(v)
            if known is not None:  # ... but a constant Warp folds, as C++ negates it: -0.0
                return ctx.b.const(-known, t)
            return ctx.b.sub(ctx.b.const(0.0, t), v)
        return ctx.b.unary("not" if (kind == "invert" and t is bool_) else kind, v)
    if isinstance(t, (Vector, Matrix)) and kind in ("neg", "invert"):
        if kind == "invert" and not t.dtype.is_int:
            ctx.error(f"~ needs integer components, got {t!r}")
        return ctx.b.construct(t, [ctx.b.unary(kind, c) for c in ctx.b.components(v)])
    ctx.error(f"unsupported unary operator on {t!r}")


def compare(ctx, pred: str, a, b) -> Value:
    if isinstance(a, Value) and isinstance(b, Value) and isinstance(a.type, Scalar) \
            and isinstance(b.type, Scalar) and a.type is not b.type:  # (as C++ compares them)
        common = promotion.comparison_type(a.type, b.type)
        a, b = (x if x.type is common else ctx.b.cast(x, common) for x in (a, b))
    a, b = unify(ctx, a, b)
    if isinstance(a.type, Scalar) and a.type is b.type:
        return ctx.b.cmp(pred, a, b)
    if isinstance(a.type, Composite) and a.type is b.type and pred in ("eq", "ne"):
        eqs = [ctx.b.cmp("eq", x, y) for x, y in zip(ctx.b.components(a), ctx.b.components(b))]
        result = eqs[0] if eqs else ctx.b.const(True, bool_)  # (empty vectors are equal)
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
        x = literal_of(args[0])  # (a name bound to a literal converts from the literal's value)
        if not isinstance(x, Value):
            if t is bool_:
                return ctx.b.const(bool(x), t)
            value = x
            if t.is_int and isinstance(x, (float, np.floating)):
                if not np.isfinite(x):
                    ctx.error(f"{t!r}({x!r}): not a finite number")
                value = int(x)  # an explicit conversion truncates, as in C
            if t.is_int and not promotion.fits(value, t):
                value = wrap_int(int(value), t.bits, t.is_signed)  # an explicit conversion wraps, as in C
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


def _count_rule(t, given: int, components: int) -> str:
    """Warp's words for a constructor given the wrong number of values."""
    what = f"values given ({given})" if given == components else f"components given ({components})"
    if isinstance(t, Matrix):
        return f"incompatible number of {what} when constructing a matrix of shape {t.shape}"
    if t.flavor == "transform":
        return f"incompatible number of {what} when constructing a transform; expected 0, 1, or 7"
    if t.flavor == "quat":
        return f"incompatible number of {what} when constructing a quaternion; expected 0, 1, or 4"
    return f"incompatible number of {what} when constructing a vector of length {t.length}"


def literal_of(x):
    """`x`, or the Python number it holds if it is a name bound to a literal (`a = 0.1`):
    Warp's typed constructors take such a name as the literal, in their own dtype
    (`vec3d(a, 0.0, 0.0)`), leaving the name's own value as it was."""
    if isinstance(x, Value) and isinstance(x.owner, Op) and x.owner.name == "const" and x.owner.attrs.get("literal"):
        return x.owner.attrs["value"]
    return x

def construct_composite(ctx, t, args, kwargs) -> Value:
    dtype = kwargs.pop("dtype", None)
    if isinstance(t, Vector) and t.flavor == "transform":
        return _construct_transform(ctx, t if dtype is None else Vector(7, dtype, "transform"), args, kwargs,
                                    dtype is not None)
    own_size = ("length", t.length) if isinstance(t, Vector) else ("shape", t.shape)
    if own_size[0] in kwargs and tuple(np.atleast_1d(kwargs[own_size[0]])) == tuple(np.atleast_1d(own_size[1])):
        kwargs.pop(own_size[0])  # mat32d(c, shape=(3, 2)): the type's own size, said again
    if kwargs:
        ctx.error(f"{t!r}(...) got unexpected keyword '{next(iter(kwargs))}'")
    if dtype is not None and dtype is not t.dtype:
        t = Vector(t.length, dtype, t.flavor) if isinstance(t, Vector) else Matrix(t.shape, dtype)
    n = t.num_components
    kind = "matrix" if isinstance(t, Matrix) else "vector"
    if not args:
        return zero(ctx, t)
    if len(args) == 1:
        (x,) = args
        if isinstance(x, Value) and isinstance(x.type, type(t)) and x.type.num_components == n:
            if x.type.dtype is t.dtype:
                return x
            if getattr(t, "flavor", None) == "transform" == x.type.flavor:  # (Warp's rule; vectors convert)
                ctx.error(f"{t!r}({x.type!r}): copy constructing a transform requires matching source "
                          f"and target dtypes, got `{x.type.dtype!r}` and `{t.dtype!r}`")
            return ctx.b.construct(t, [ctx.b.cast(c, t.dtype) for c in ctx.b.components(x)])
        if isinstance(x, Value) and isinstance(t, Matrix) and isinstance(x.type, Matrix):
            ctx.error(f"{t!r}({x.type!r}): the shapes differ; incompatible matrix of shape {t.shape} "
                      f"given when copy constructing a matrix of shape {x.type.shape}")
        if isinstance(x, Value) and isinstance(t, Vector) and isinstance(x.type, Vector) and t.flavor == "vec":
            ctx.error(f"{t!r}({x.type!r}): the lengths differ; incompatible vector of length {t.length} "
                      f"given when copy constructing a vector of length {x.type.length}")
        x = literal_of(x)
        if not isinstance(x, Value) or isinstance(x.type, Scalar):
            if isinstance(x, Value) and x.type is not t.dtype:
                ctx.error(f"{t!r}({x.type!r}): the value used to fill this {kind} is expected to be of "
                          f"the type `{t.dtype.name}`")
            return splat(ctx, t, ctx.coerce(x, t.dtype, what="component"))
    flat = []
    for x in args:
        if isinstance(x, Value) and isinstance(x.type, Vector):
            if kind == "matrix":  # (Warp 1.19 refuses it: older Warp read the vectors as columns)
                ctx.error(f"Passing vectors to `{t!r}()` isn't supported, use `wp.matrix_from_rows()` or "
                          "`wp.matrix_from_cols()` instead.")
            flat.extend(ctx.b.components(x))  # vec4 from (vec3, w)
        else:
            x = literal_of(x)
            if isinstance(x, Value) and isinstance(x.type, Scalar) and x.type is not t.dtype:
                ctx.error(f"{t!r}(...) got a {x.type!r} value: all values used to initialize this "
                          f"{kind} are expected to be of the type `{t.dtype.name}`")
            flat.append(ctx.coerce(x, t.dtype, what="component"))
    if len(flat) != n:
        ctx.error(f"{t!r}() takes {n} components: {_count_rule(t, len(args), len(flat))}")
    for c in flat:
        if c.type is not t.dtype:
            ctx.error(f"{t!r} components must be {t.dtype!r}, got {c.type!r}")
    return ctx.b.construct(t, flat)


def _construct_transform(ctx, t, args, kwargs, dtype_given) -> Value:
    """Warp's transform constructors in a kernel: `T()` (zeros), `T(s)` (fill), `T(other)`
    (copy, same dtype), seven components, or translation and rotation `T(p, q)` /
    `T(p=..., q=...)` where a missing `q` is the identity rotation."""
    b = ctx.b
    unexpected = [k for k in kwargs if k not in ("p", "q")]
    if unexpected:
        ctx.error(f"{t!r}(...) got unexpected keyword '{unexpected[0]}'")
    vectors = [a for a in args if isinstance(a, Value) and isinstance(a.type, Vector)]
    if kwargs or (vectors and len(args) <= 2 and not (len(args) == 1 and args[0].type.flavor == "transform")):
        if len(args) + len(kwargs) > 2 or any(k in kwargs for k in ("p", "q")[:len(args)]):
            ctx.error(f"{t!r}(p, q): give the translation p and the rotation q once each")
        parts = dict(zip(("p", "q"), args), **kwargs)
        p = parts.get("p")
        if p is None:
            p = zero(ctx, Vector(3, t.dtype))
        q = parts.get("q")
        if q is None:
            one, nil = b.const(1.0, t.dtype), b.const(0.0, t.dtype)
            q = b.construct(Vector(4, t.dtype, "quat"), [nil, nil, nil, one])
        for name, x, n in (("p", p, 3), ("q", q, 4)):
            if not (isinstance(x, Value) and isinstance(x.type, Vector) and x.type.length == n):
                ctx.error(f"{t!r}(p, q): {name} must be a {'vec3' if n == 3 else 'quat'}, got "
                          f"{getattr(x, 'type', x)!r}")
            if x.type.dtype is not t.dtype:
                if dtype_given:
                    ctx.error(f"all values used to initialize this transformation matrix are expected to "
                              f"be of the type `{t.dtype.name}`")
                ctx.error(f"{t!r}(p, q): {name} is {x.type!r}; its components must be {t.dtype!r}")
        return b.construct(t, b.components(p) + b.components(q))
    if len(args) == 1 and isinstance(args[0], Value) and getattr(args[0].type, "flavor", None) == "transform":
        if args[0].type.dtype is not t.dtype:
            ctx.error("copy constructing a transform requires matching source and target dtypes, "
                      f"got `{args[0].type.dtype.name}` and `{t.dtype.name}`")
        return args[0]
    if len(args) not in (0, 1, 7):
        ctx.error(f"incompatible number of values given ({len(args)}) when constructing a transform; "
                  "expected 0, 1, or 7")
    if not args:
        return zero(ctx, t)
    if len(args) == 1:
        return splat(ctx, t, ctx.coerce(args[0], t.dtype, what="the fill value"))
    flat = [ctx.coerce(x, t.dtype, what="component") for x in args]
    for c in flat:
        if c.type is not t.dtype:
            ctx.error(f"{t!r} components must be {t.dtype!r}, got {c.type!r}")
    return b.construct(t, flat)


# Element and component access ----------------------------------------------------------------
SWIZZLE = "xyzw"


def get_attr(ctx, v: Value, name: str):
    t = v.type
    if isinstance(t, TileType) and name in ("shape", "dtype", "ndim", "size"):  # compile-time constants
        return {"shape": t.shape, "dtype": t.dtype, "ndim": t.ndim, "size": t.num_elements}[name]
    if isinstance(t, StructType):
        if name not in t.fields:
            ctx.error(f"struct {t.name} has no field '{name}'")
        return ctx.b.extract(v, t.field_index(name))
    if isinstance(t, Vector) and len(name) == 1 and name in SWIZZLE[: min(t.length, 4)]:
        return ctx.b.extract(v, SWIZZLE.index(name))
    if isinstance(t, Vector) and t.flavor == "transform" and name in ("p", "q"):
        from .vector import transform_part
        return transform_part(ctx, v, name)
    if isinstance(t, (Vector, Matrix)) and name == "dtype":
        return t.dtype  # the component type (a compile-time value)
    if isinstance(t, Vector) and name == "length":
        return t.length  # (compile-time, as the type's own attribute)
    if isinstance(t, Matrix) and name == "shape":
        return (t.rows, t.cols)
    if isinstance(t, Scalar) and name in ("dtype", "length"):
        return t if name == "dtype" else 1  # (as Warp: a scalar is its own dtype, of length 1)
    if isinstance(t, ArrayType) and t.fabric and name in ("shape", "size", "ptr"):
        # a Fabric array: its number of elements (`size`, a uint64 as in Warp; `shape[0]`)
        if name == "ptr" or (name == "shape" and t.ndim > 1):
            ctx.error(f"a {t!r} has no '{name}' (its elements lie in separate buckets"
                      f"{'' if name == 'ptr' else ' and its rows have lengths of their own'}); use a.size")
        n = ctx.b.op("array_shape", [v], [int32], {"dim": 0}).result
        if name == "shape":
            from .array_ops import ArrayShape
            return ArrayShape([n])
        return ctx.b.cast(n, uint64)
    if isinstance(t, ArrayType):
        if name in ("shape", "ptr"):
            from . import array_ops
            return array_ops.shape_of(ctx, v) if name == "shape" else array_ops.ptr_of(ctx, v)
        if name == "ndim":
            return t.ndim
        if name == "dtype":
            return t.dtype
    ctx.error(f"`{name}` is not an attribute of a {t!r} value: {t!r} has no attribute '{name}'",
              kind=AttributeError)


def slot_value(ctx, value, want, t):
    """`value` as a component (or row) of composite type `t`, whose slot holds `want`."""
    if isinstance(value, Value) and value.type is not want:
        ctx.error(f"{t!r} component: Composite slot assignment expects value of type {want!r}, "
                  f"got {value.type!r}", kind=TypeError)
    return ctx.coerce(value, want, what="component", bit_patterns=True)


def set_attr(ctx, v: Value, name: str, value) -> Value:
    t = v.type
    if isinstance(t, StructType):
        if name not in t.fields:
            ctx.error(f"struct {t.name} has no field '{name}'")
        i = t.field_index(name)
        return ctx.b.insert(v, i, ctx.coerce(value, t.fields[name], what=f"field {name}"))
    if isinstance(t, Vector) and len(name) == 1 and name in SWIZZLE[: min(t.length, 4)]:
        return ctx.b.insert(v, SWIZZLE.index(name), slot_value(ctx, value, t.dtype, t))
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
    if isinstance(t, TileType):
        from .tiles import elements
        return elements.get_element(ctx, v, key)
    if any(isinstance(k, slice) for k in key):
        return _get_slice(ctx, v, key)
    if isinstance(t, (Vector, TupleType)) and len(key) == 1:
        i = _static_index(ctx, key[0], t.num_components, repr(t))
        if i is None:
            if isinstance(t, TupleType):
                return _tuple_dynamic_item(ctx, v, key[0])
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


def _tuple_dynamic_item(ctx, v: Value, k: Value) -> Value:
    """`t[i]` for a runtime `i` (a loop over `range(len(t))`): the element chosen by `i`,
    which needs every element to have one type. An `i` out of range gives the last element
    (as a constant index out of range is an error, this only arises in code that cannot
    reach it)."""
    t = v.type
    if any(e is not t.elements[0] for e in t.elements):
        ctx.error(f"a {t!r} with elements of different types must be indexed with constants "
                  f"(wp.static(i), or a loop over range(wp.static(len(t))))", kind=TypeError)
    b = ctx.b
    picked = b.extract(v, t.num_components - 1)
    for i in range(t.num_components - 2, -1, -1):
        picked = b.select(b.cmp("eq", k, b.const(i, k.type)), b.extract(v, i), picked)
    return picked


def set_item(ctx, v: Value, key: tuple, value) -> Value:
    t = v.type
    if isinstance(t, TileType):
        from .tiles import elements
        return elements.set_element(ctx, v, key, value)
    if any(isinstance(k, slice) for k in key):
        return _set_slice(ctx, v, key, value)
    if isinstance(t, Vector) and len(key) == 1:
        x = slot_value(ctx, value, t.dtype, t)
        i = _static_index(ctx, key[0], t.length, repr(t))
        if i is None:
            return ctx.b.op("insert_dyn", [v, key[0], x], [t]).result
        return ctx.b.insert(v, i, x)
    if isinstance(t, Matrix):
        if len(key) == 2:
            x = slot_value(ctx, value, t.dtype, t)
            r = _static_index(ctx, key[0], t.rows, repr(t))
            c = _static_index(ctx, key[1], t.cols, repr(t))
            if r is not None and c is not None:
                return ctx.b.insert(v, r * t.cols + c, x)
            return ctx.b.op("insert_dyn", [v, *_matrix_index(ctx, key), x], [t]).result
        if len(key) == 1:
            row = slot_value(ctx, value, t.row_type(), t)
            for c, comp in enumerate(ctx.b.components(row)):
                v = set_item(ctx, v, (key[0], c), comp)
            return v
    ctx.error(f"cannot assign an element of {t!r} with {len(key)} index(es)")


# Slices of vectors and matrices (static sizes: bounds are compile-time constants) ----------
def _slice_plan(ctx, t, key):
    """For `v[key]` with a slice in it: the (row, column) or (component,) index tuples it
    selects, row-major, and the type of the result (a vector, or a matrix for two slices)."""
    if isinstance(t, Vector) and len(key) == 1:
        picked = range(*key[0].indices(t.length))
        return [(i,) for i in picked], Vector(len(picked), t.dtype)
    if isinstance(t, Matrix) and len(key) in (1, 2):
        rows_key, cols_key = (key[0], key[1] if len(key) == 2 else slice(None))
        rows = range(*rows_key.indices(t.rows)) if isinstance(rows_key, slice) else None
        cols = range(*cols_key.indices(t.cols)) if isinstance(cols_key, slice) else None
        if rows is not None and cols is not None:
            shape = (len(rows), len(cols)) if len(rows) and len(cols) else (0, 0)  # (Warp's empty matrix)
            return [(r, c) for r in rows for c in cols], Matrix(shape, t.dtype)
        if rows is not None:
            return [(r, cols_key) for r in rows], Vector(len(rows), t.dtype)
        return [(rows_key, c) for c in cols], Vector(len(cols), t.dtype)
    ctx.error(f"cannot slice {t!r} with {len(key)} index(es)")


def _get_slice(ctx, v: Value, key: tuple) -> Value:
    picked, result = _slice_plan(ctx, v.type, key)
    return ctx.b.construct(result, [get_item(ctx, v, k) for k in picked])


def _set_slice(ctx, v: Value, key: tuple, value) -> Value:
    picked, expected = _slice_plan(ctx, v.type, key)
    got = value.type if isinstance(value, Value) else None
    n = len(picked)
    if isinstance(expected, Vector):
        if not isinstance(got, Vector):
            ctx.error(f"The provided value is expected to be a vector of length {n}, with dtype "
                      f"{expected.dtype.name}.", kind=ValueError)
        if got.length != n:
            ctx.error(f"The length of the provided vector ({got.length}) isn't compatible with the given "
                      f"slice (expected {n}).", kind=ValueError)
        if got.dtype is not expected.dtype:
            ctx.error(f"The provided vector is expected to be of length {n} with dtype {expected.dtype.name}.",
                      kind=ValueError)
    elif not isinstance(got, Matrix):
        ctx.error(f"The provided value is expected to be a matrix of shape {expected.shape}, with dtype "
                  f"{expected.dtype.name}.", kind=ValueError)
    elif got.shape != expected.shape:
        ctx.error(f"The shape of the provided matrix {got.shape} isn't compatible with the given slice "
                  f"(expected {expected.shape}).", kind=ValueError)
    elif got.dtype is not expected.dtype:
        ctx.error(f"The provided matrix is expected to be of shape {expected.shape} with dtype "
                  f"{expected.dtype.name}.", kind=ValueError)
    for k, component in zip(picked, ctx.b.components(value)):
        v = set_item(ctx, v, k, component)
    return v


def _matrix_index(ctx, key) -> list[Value]:
    """(row, column) as Values; each is checked against its own extent at run time."""
    return [k if isinstance(k, Value) else ctx.coerce(k, int32, what="index") for k in key]


# Arrays ---------------------------------------------------------------------------------------
def load(ctx, arr: Value, indices) -> Value:
    t = arr.type
    if len(indices) < t.ndim:
        # an indexed array's view is indexed too (a Fabric array of arrays: `a[i]` is row i)
        view_t = (type(t) if t.indexed and not t.fabric else ArrayType)(t.dtype, t.ndim - len(indices))
        return ctx.b.op("view", [arr, *indices], [view_t]).result
    return ctx.b.op("load", [arr, *indices], [t.dtype]).result


def store(ctx, arr: Value, indices, value):
    v = ctx.coerce(value, arr.type.dtype, what="the stored value", bit_patterns=True)
    ctx.b.op("store", [arr, *indices, v], [])


def atomic(ctx, kind: str, arr: Value, indices, value) -> Value:
    """`a[i] += x` and friends: the atomic update (see builtins/atomic.py)."""
    from .atomic import emit
    return emit(ctx, kind, arr, indices, value)
