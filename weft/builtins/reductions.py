"""Reductions of vectors and matrices: ddot, get_diag, argmin, argmax.

Each expands into scalar ops on components (derivatives come from those).
"""

from __future__ import annotations

from ..ir.core import Value
from ..types import Matrix, Vector, uint32
from .registry import builtin


def _one(ctx, args, kwargs, name, kind):
    if len(args) != 1 or kwargs:
        ctx.error(f"{name}() takes one argument")
    (x,) = args
    if not (isinstance(x, Value) and isinstance(x.type, kind)):
        ctx.error(f"{name}() needs a {kind.__name__.lower()}, got {getattr(x, 'type', x)!r}")
    return x


@builtin("ddot")
def ddot(ctx, args, kwargs):
    """The double dot product of two matrices of one type: the sum of a[i, j] * b[i, j]."""
    if len(args) != 2 or kwargs:
        ctx.error("ddot(a, b) takes two arguments")
    a, c = args
    if not (isinstance(a, Value) and isinstance(a.type, Matrix) and isinstance(c, Value) and a.type is c.type):
        ctx.error(f"ddot() needs two matrices of one type, got {getattr(a, 'type', a)!r} and "
                  f"{getattr(c, 'type', c)!r}")
    from .arith import muladd_list
    return muladd_list(ctx, ctx.b.components(a), ctx.b.components(c))


@builtin("get_diag")
def get_diag(ctx, args, kwargs):
    """The diagonal of a square matrix, as a vector."""
    m = _one(ctx, args, kwargs, "get_diag", Matrix)
    t = m.type
    if t.rows != t.cols:
        ctx.error(f"get_diag() needs a square matrix, got {t!r}")
    return ctx.b.construct(Vector(t.rows, t.dtype), [ctx.b.extract(m, i * t.cols + i) for i in range(t.rows)])


def _arg_extreme(name, pred):
    @builtin(name)
    def expand(ctx, args, kwargs):
        v = _one(ctx, args, kwargs, name, Vector)
        b = ctx.b
        parts = b.components(v)
        best, index = parts[0], b.const(0, uint32)
        for i, x in enumerate(parts[1:], start=1):
            better = b.cmp(pred, x, best)
            if v.type.dtype.is_float:  # NaN is skipped: a number replaces a NaN best so far
                best_is_nan = b.cmp("ne", best, best)
                x_is_number = b.cmp("eq", x, x)
                better = b.select(better, better, b.select(best_is_nan, x_is_number, better))
            best = b.select(better, x, best)
            index = b.select(better, b.const(i, uint32), index)
        return index
    expand.__doc__ = (f"The index (uint32) of the {'smallest' if pred == 'lt' else 'largest'} component "
                      "of a vector: the first one on ties; NaN components are skipped (0 if all are).")
    return expand


argmin = _arg_extreme("argmin", "lt")
argmax = _arg_extreme("argmax", "gt")
