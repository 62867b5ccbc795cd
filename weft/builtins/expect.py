"""Checks in kernels that report, not stop: `expect_eq`, `expect_neq`, `expect_near`.

As in Warp, a failed check prints a line (with the source location) and the kernel goes
on; tests look for the output. From Python scope they compare values and print the same.
"""

from __future__ import annotations

import numpy as np

from ..ir.core import Value
from ..types import Composite, Scalar, bool_
from . import arith
from .registry import builtin


def _report(ctx, failed: Value, what: str, a, b, relation: str):
    """Print `what` with both values when `failed` is true."""
    from .misc import print_

    loc = ctx.b.loc
    where = f"{loc.file}:{loc.line}" if loc is not None else "?"

    def then():
        print_.expand(ctx, [f"Error, {what} failed at {where}:", a, relation, b], {})
    ctx.emit_if(failed, then, None)


def _equal(ctx, a, b) -> Value:
    eq = arith.compare(ctx, "eq", a, b)
    return eq if isinstance(eq, Value) else ctx.b.const(bool(eq), bool_)


def _py_values(a, b):
    return np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)


def _py_expect_eq(a, b):
    x, y = _py_values(a, b)
    if x.shape != y.shape or not np.array_equal(x, y):
        print(f"Error, expect_eq() failed: {a} != {b}")


def _py_expect_neq(a, b):
    x, y = _py_values(a, b)
    if x.shape == y.shape and np.array_equal(x, y):
        print(f"Error, expect_neq() failed: {a} == {b}")


def _py_expect_near(a, b, tolerance=1e-6):
    x, y = _py_values(a, b)
    if x.shape != y.shape or not (np.abs(x - y) <= tolerance).all():
        print(f"Error, expect_near() failed: {a} and {b} differ by more than {tolerance}")


@builtin("expect_eq", py_impl=_py_expect_eq)
def expect_eq(ctx, args, kwargs):
    """expect_eq(a, b): print an error if a != b (scalars, vectors, matrices, structs)."""
    a, b = _two(ctx, "expect_eq", args, kwargs)
    _report(ctx, ctx.b.unary("not", _equal(ctx, a, b)), "expect_eq()", a, b, "!=")


@builtin("expect_neq", py_impl=_py_expect_neq)
def expect_neq(ctx, args, kwargs):
    """expect_neq(a, b): print an error if a == b."""
    a, b = _two(ctx, "expect_neq", args, kwargs)
    _report(ctx, _equal(ctx, a, b), "expect_neq()", a, b, "==")


@builtin("expect_near", py_impl=_py_expect_near)
def expect_near(ctx, args, kwargs):
    """expect_near(a, b, tolerance=1e-6): print an error if a component of a and b differ
    by more than the tolerance."""
    tolerance = kwargs.pop("tolerance", args[2] if len(args) > 2 else 1e-6)
    a, b = _two(ctx, "expect_near", args[:2], kwargs)
    a, b = arith.unify(ctx, a, b)
    if a.type is not b.type or not isinstance(a.type, (Scalar, Composite)):
        ctx.error(f"expect_near: cannot compare {a.type!r} with {b.type!r}")
    xs = ctx.b.components(a) if isinstance(a.type, Composite) else [a]
    ys = ctx.b.components(b) if isinstance(b.type, Composite) else [b]
    tol = ctx.coerce(tolerance, xs[0].type, what="tolerance")
    failed = ctx.b.const(False, bool_)
    for x, y in zip(xs, ys):
        d = ctx.b.sub(x, y)
        size = ctx.b.select(ctx.b.cmp("lt", d, ctx.b.const(0, d.type)), ctx.b.neg(d), d)
        off = ctx.b.unary("not", ctx.b.cmp("le", size, tol))  # (NaN fails too)
        failed = ctx.b.select(failed, failed, off)
    _report(ctx, failed, "expect_near()", a, b, "is not near")


def _two(ctx, name, args, kwargs):
    if kwargs or len(args) != 2:
        ctx.error(f"{name}(a, b) takes two values")
    return args
