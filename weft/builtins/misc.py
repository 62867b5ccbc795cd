"""Thread index, selection, interpolation helpers, len and print (atomics: atomic.py)."""

from __future__ import annotations

import re

from ..ir.core import Value
from ..types import ArrayType, Composite, Matrix, Scalar, StructType, TileType, TupleType, Vector, int32
from . import arith
from .registry import builtin


@builtin("tid")
def tid(ctx, args, kwargs):
    """The launch index: an int for `i = tid()`, a tuple for `i, j = tid()`."""
    if args or kwargs:
        ctx.error("tid() takes no arguments")
    return ctx.b.op("tid", [], [int32], {"dim": -1, "of": 1}).result


def _pick(ctx, cond, if_true, if_false, name):
    cond = ctx.truth(cond)
    if not isinstance(cond, Value):
        return if_true if cond else if_false
    a, b = arith.unify(ctx, if_true, if_false)
    if a.type is not b.type:
        ctx.error(f"{name}() branches have different types {a.type!r} and {b.type!r}")
    return ctx.b.select(cond, a, b)


@builtin("select")
def select(ctx, args, kwargs):
    """select(cond, value_if_false, value_if_true): Warp's argument order."""
    if len(args) != 3 or kwargs:
        ctx.error("select(cond, value_if_false, value_if_true) takes three arguments")
    return _pick(ctx, args[0], args[2], args[1], "select")


@builtin("where")
def where(ctx, args, kwargs):
    """where(cond, value_if_true, value_if_false)."""
    if len(args) != 3 or kwargs:
        ctx.error("where(cond, value_if_true, value_if_false) takes three arguments")
    return _pick(ctx, args[0], args[1], args[2], "where")


def _call_math(ctx, name, *args):
    from .registry import BUILTINS
    return BUILTINS[name].expand(ctx, list(args), {})


@builtin("clamp")
def clamp(ctx, args, kwargs):
    if len(args) != 3 or kwargs:
        ctx.error("clamp(x, low, high) takes three arguments")
    x, lo, hi = args
    # min(max(lo, x), hi), in this operand order: on a tie the gradient goes to the second
    # operand, so x is differentiated at lo and hi at hi (Warp's adj_clamp)
    return _call_math(ctx, "min", _call_math(ctx, "max", lo, x), hi)


@builtin("lerp")
def lerp(ctx, args, kwargs):
    """a * (1 - t) + b * t, for scalars, vectors and matrices (Warp's rounding: exactly b
    at t = 1)."""
    if len(args) != 3 or kwargs:
        ctx.error("lerp(a, b, t) takes three arguments")
    a, b, t = args
    one_minus_t = arith.binary(ctx, "sub", 1.0, t)
    return arith.binary(ctx, "add", arith.binary(ctx, "mul", a, one_minus_t),
                        arith.binary(ctx, "mul", b, t))


@builtin("smoothstep")
def smoothstep(ctx, args, kwargs):
    """Hermite step from edge0 to edge1: t = clamp((x - e0) / (e1 - e0), 0, 1); t*t*(3 - 2t)."""
    if len(args) != 3 or kwargs:
        ctx.error("smoothstep(edge0, edge1, x) takes three arguments")
    e0, e1, x = args
    width = arith.binary(ctx, "sub", e1, e0)
    if isinstance(width, Value) and isinstance(width.type, Scalar):
        # equal edges: a step (as the division by zero gives), whose gradient is zero
        # (Warp's adjoint), not the 0 * inf = NaN of differentiating the division
        degenerate = arith.compare(ctx, "eq", width, 0.0)
        t = arith.binary(ctx, "div", arith.binary(ctx, "sub", x, e0), _pick(ctx, degenerate, 1.0, width, "smoothstep"))
        one, zero = ctx.b.const(1.0, width.type), ctx.b.const(0.0, width.type)
        step = _pick(ctx, arith.compare(ctx, "gt", x, e0), one, zero, "smoothstep")
        t = _pick(ctx, degenerate, step, clamp.expand(ctx, [t, 0.0, 1.0], {}), "smoothstep")
    else:
        t = arith.binary(ctx, "div", arith.binary(ctx, "sub", x, e0), width)
        t = clamp.expand(ctx, [t, 0.0, 1.0], {})
    return arith.binary(ctx, "mul", arith.binary(ctx, "mul", t, t),
                        arith.binary(ctx, "sub", 3.0, arith.binary(ctx, "mul", 2.0, t)))


@builtin("step")
def step(ctx, args, kwargs):
    """1 where x < 0, else 0 (Warp's convention), for float and integer scalars."""
    if len(args) != 1 or kwargs:
        ctx.error("step(x) takes one argument")
    x = ctx.materialize(args[0]) if not isinstance(args[0], Value) else args[0]
    if not (isinstance(x.type, Scalar) and not x.type.is_bool):
        ctx.error(f"step() needs a number, got {x.type!r}")
    b = ctx.b
    one, zero = (1.0, 0.0) if x.type.is_float else (1, 0)
    return b.select(b.cmp("lt", x, b.const(zero, x.type)), b.const(one, x.type), b.const(zero, x.type))


@builtin("frac")
def frac(ctx, args, kwargs):
    """x - trunc(x): keeps the sign of x (frac(-1.25) == -0.25)."""
    if len(args) != 1 or kwargs:
        ctx.error("frac(x) takes one argument")
    return arith.binary(ctx, "sub", args[0], _call_math(ctx, "trunc", args[0]))


@builtin("len", py_impl=len)
def length_of(ctx, args, kwargs):
    (x,) = args
    if isinstance(x, Value) and isinstance(x.type, ArrayType):
        return ctx.b.op("array_shape", [x], [int32], {"dim": 0}).result
    if isinstance(x, Value) and isinstance(x.type, Composite) and not isinstance(x.type, StructType):
        return x.type.np_shape[0] if hasattr(x.type, "np_shape") else x.type.num_components
    if isinstance(x, tuple):
        return len(x)
    if isinstance(x, Value) and isinstance(x.type, TileType):
        return x.type.shape[0]  # (a compile-time constant, as in Warp)
    ctx.error(f"len() of {getattr(x, 'type', x)!r}")


@builtin("print")
def print_(ctx, args, kwargs):
    """print(a, b, ...) from a CPU kernel; floats are formatted as printf's %g (as Warp).
    One vector, matrix, quaternion or transform prints as Warp's does (components followed
    by a space, a matrix row by row); one value Warp cannot print (a struct, an array)
    prints `<type without print implementation>`, as in Warp. Several values (weft's own)
    print on one line, composites in brackets."""
    emit_print(ctx, args, adjoint=True)


def emit_print(ctx, args, adjoint: bool):
    """The print op(s) of print(*args); `adjoint`: the adjoint pass prints "adj: " and the
    value's adjoint, as Warp's adj_print (not for the messages of other builtins)."""
    if len(args) == 1 and _is_tuple(args[0]):  # (Warp prints a tuple's elements one by one)
        for item in (ctx.b.components(args[0]) if isinstance(args[0], Value) else args[0]):
            emit_print(ctx, [item], adjoint)
        return
    pieces, values = [], []
    warp_composite = len(args) == 1 and isinstance(args[0], Value) and isinstance(args[0].type, (Vector, Matrix))
    if len(args) == 1 and isinstance(args[0], Value) and not _warp_format(ctx, args[0], pieces, values):
        pieces, values = [], []
    if not pieces:
        for k, a in enumerate(args):
            if k:
                pieces.append(" ")
            _format(ctx, a, pieces, values)
    pieces.append("\n")
    attrs = {"fmt": tuple(pieces)}
    if warp_composite:  # (Warp prints each component as printf("%g", float(c)))
        attrs["as_float32"] = True
    if adjoint and len(args) == 1 and not isinstance(getattr(args[0], "type", None), TileType):
        attrs["adj_fmt"] = _adjoint_format(args[0], pieces)
    ctx.b.op("print", values, [], attrs)


def _is_tuple(a) -> bool:
    """A tuple value, or a tuple of constants (not an array's shape, which prints whole)."""
    from .array_ops import ArrayShape
    return isinstance(a, Value) and isinstance(a.type, TupleType) or \
        isinstance(a, tuple) and not isinstance(a, ArrayShape)


def _adjoint_format(a, pieces: list) -> tuple:
    """The pieces of Warp's `adj_print(a)`: "adj: " then a's adjoint, one value per piece
    None of `pieces` (print's own), laid out as Warp lays it out."""
    t = getattr(a, "type", None)
    if isinstance(a, str):  # (Warp's adjoint of a string is the string)
        return ("adj: ", *pieces)
    if not isinstance(a, Value):  # a constant: its adjoint is zero
        return ("adj: False\n",) if isinstance(a, bool) else ("adj: 0\n",)
    if isinstance(t, Matrix):
        rows, cols = t.shape
        out = []
        for r in range(rows):
            out.extend(["adj:" if r == 0 else "    ", *[" ", None] * cols, "\n"])
        return tuple(out)
    if isinstance(t, Vector) and t.flavor == "vec":
        return ("adj:", *[" ", None] * t.length, "\n")
    return ("adj: ", *pieces)


def _warp_format(ctx, a: Value, pieces: list, values: list) -> bool:
    """Warp's format of print(a) for a composite, an array or a struct, into `pieces`
    (without the final newline); False for other values."""
    t = a.type
    if isinstance(t, (ArrayType, StructType)):
        pieces.append("<type without print implementation>")
        return True
    if not isinstance(t, (Vector, Matrix)):
        return False
    parts = ctx.b.components(a)
    values.extend(parts)
    if isinstance(t, Matrix):
        rows, cols = t.shape
        for r in range(rows):
            pieces.extend([None, " "] * cols)
            if r < rows - 1:
                pieces.append("\n")
    elif t.flavor == "quat":
        pieces.extend([None, " ", None, " ", None, " ", None])
    elif t.flavor == "transform":
        pieces.extend(["(", None, " ", None, " ", None, ") (", None, " ", None, " ", None, " ", None, ")"])
    else:
        pieces.extend([None, " "] * t.length)
    return True


def _format(ctx, a, pieces, values):
    from .array_ops import ArrayShape
    if isinstance(a, str):
        pieces.append(a)
    elif isinstance(a, ArrayShape):  # as Warp's shape_t: four extents, 0 past the array's
        pieces.append("(")
        for d in range(4):
            if d:
                pieces.append(", ")
            _format(ctx, a[d], pieces, values)
        pieces.append(")")
    elif isinstance(a, float):
        pieces.append(f"{a:g}")  # as printf's %g prints a float value
    elif not isinstance(a, Value):
        pieces.append(str(a))
    elif isinstance(a.type, Scalar):
        pieces.append(None)
        values.append(a)
    elif isinstance(a.type, (Vector, Matrix, TupleType)):
        pieces.append("[")
        for i, c in enumerate(ctx.b.components(a)):
            if i:
                pieces.append(", ")
            _format(ctx, c, pieces, values)
        pieces.append("]")
    elif isinstance(a.type, TileType):
        _format_tile(ctx, a, pieces, values)
    else:
        ctx.error(f"cannot print a {a.type!r}")


#: tiles with more elements print their first ones and "..."
_PRINTED_TILE_ELEMENTS = 1024


def _format_tile(ctx, t, pieces, values):
    """As Warp prints a tile: nested rows of elements, then `= tile(shape=(...), storage=...)`."""
    from .tiles.core import TILE_GET
    tt = t.type
    count = [0]

    def rows(prefix):
        depth = len(prefix)
        pieces.append("[")
        for i in range(tt.shape[depth]):
            if i:
                pieces.append(" " if depth == tt.ndim - 1 else "\n" + " " * (depth + 1))
            if count[0] >= _PRINTED_TILE_ELEMENTS:
                pieces.append("...")
                break
            if depth == tt.ndim - 1:
                count[0] += 1
                index = [ctx.b.const(k, int32) for k in (*prefix, i)]
                _format(ctx, ctx.b.call(TILE_GET, [t, *index]), pieces, values)
            else:
                rows((*prefix, i))
        pieces.append("]")
    rows(())
    storage = "shared" if t.id in ctx.__dict__.get("_tile_shared", ()) else "register"
    pieces.append(f" = tile(shape=({','.join(map(str, tt.shape))}), storage={storage})")  # (Warp's spelling)


@builtin("printf")
def printf(ctx, args, kwargs):
    """printf(fmt, *values) with C-style %d/%f/%g placeholders."""
    if not args or not isinstance(args[0], str):
        ctx.error("printf() needs a format string first")
    if len(args) - 1 > 32:  # (Warp's limit, that of CUDA's printf)
        ctx.error("the maximum number of variadic arguments that can be passed to `printf` is 32")
    fmt, values = _fold_string_arguments(ctx, args[0], list(args[1:]))
    ctx.b.op("print", [ctx.materialize(a) for a in values], [], {"fmt": (fmt,), "raw": True})


_PRINTF_SPEC = re.compile(r"%(?:%|[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|z|j|t)?([diouxXeEfFgGaAcsp]))")


def _fold_string_arguments(ctx, fmt: str, values: list) -> tuple[str, list]:
    """`fmt` with each `%s` whose argument is a string constant replaced by that string (a
    kernel has no string values; Warp's C printf receives the literal), and the other values."""
    if not any(isinstance(v, str) for v in values):
        return fmt, values
    out, kept, pos, k = [], [], 0, 0
    for m in _PRINTF_SPEC.finditer(fmt):
        if m.group(0) == "%%":
            continue
        if k < len(values) and isinstance(values[k], str):
            if m.group(1) != "s" or "*" in m.group(0):
                ctx.error(f"printf(): the string argument {values[k]!r} needs a %s placeholder, got {m.group(0)!r}")
            text = m.group(0) % values[k]  # (its width, precision and `-` flag, as C's printf)
            out.append(fmt[pos:m.start()] + text.replace("%", "%%"))
            pos = m.end()
        elif k < len(values):
            kept.append(values[k])
        k += 1
    return "".join(out) + fmt[pos:], kept + values[k:]
