"""Python's operators as named builtins: `weft.add(a, b)` is `a + b`, `weft.neg(x)` is `-x`, ...

Warp spells every operator as a builtin too (`wp.mul(m, v)`, `wp.bit_and(a, b)`). Each one
here does exactly what its operator does in a kernel (the frontend's own dispatch), so the
two spellings cannot disagree; in Python scope they compile like any other builtin.
"""

from __future__ import annotations

from ..ir.core import Value
from ..types import ArrayType, bool_
from . import arith
from .array_ops import is_not_null
from .registry import builtin

# builtin name -> the frontend's operator name
_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "floordiv": "floordiv",
           "mod": "mod", "bit_and": "bitand", "bit_or": "bitor", "bit_xor": "bitxor",
           "lshift": "shl", "rshift": "shr"}


def _register_binary(name: str, op: str):
    @builtin(name)
    def expand(ctx, args, kwargs, name=name, op=op):
        if len(args) != 2 or kwargs:
            ctx.error(f"{name}(a, b) takes two arguments")
        return ctx.binop(op, args[0], args[1], None, user=False)  # (wp.add is the builtin)
    expand.__doc__ = f"`a {arith._SYMBOLS[op]} b`, as the operator computes it in a kernel."
    return expand


for _name, _op in _BINARY.items():
    _register_binary(_name, _op)


def _unary_args(ctx, name, args, kwargs):
    if len(args) != 1 or kwargs:
        ctx.error(f"{name}(x) takes one argument")
    (x,) = args
    return x if isinstance(x, Value) else ctx.materialize(x)


@builtin("neg")
def neg(ctx, args, kwargs):
    """`-x`, for scalars, vectors, matrices, quaternions and transforms."""
    return arith.unary(ctx, "neg", _unary_args(ctx, "neg", args, kwargs))


@builtin("pos")
def pos(ctx, args, kwargs):
    """`+x`: x unchanged (a number or a composite)."""
    x = _unary_args(ctx, "pos", args, kwargs)
    if not (x.type.is_scalar or x.type.is_composite) or x.type is bool_:
        ctx.error(f"pos() needs a number or a vector/matrix, got {x.type!r}")
    return x


@builtin("invert")
def invert(ctx, args, kwargs):
    """`~x`: the bitwise complement of an integer (componentwise for integer vectors)."""
    return arith.unary(ctx, "invert", _unary_args(ctx, "invert", args, kwargs))


@builtin("unot")
def unot(ctx, args, kwargs):
    """`not x`: True where x is False or zero; for an array, True where it is null."""
    x = _unary_args(ctx, "unot", args, kwargs)
    if isinstance(x.type, ArrayType):
        return ctx.b.unary("not", is_not_null(ctx, x))
    if not x.type.is_scalar or x.type.is_float:
        ctx.error(f"unot() needs a bool or an integer, got {x.type!r}")
    return ctx.b.unary("not", ctx.truth(x))


@builtin("div_approx")
def div_approx(ctx, args, kwargs):
    """`a / b` for floats (scalars, or a composite and a scalar). Warp may use approximate
    GPU intrinsics here; on the CPU it divides exactly, and so does weft."""
    if len(args) != 2 or kwargs:
        ctx.error("div_approx(a, b) takes two arguments")
    result = ctx.binop("div", args[0], args[1], None, user=False)
    t = result.type if isinstance(result, Value) else None
    if t is None or not getattr(t, "dtype", t).is_float:
        ctx.error(f"div_approx() needs float operands, got {t or type(result).__name__}")
    return result
