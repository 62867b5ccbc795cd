"""expect_eq, expect_neq, expect_near: checks that print a message when they fail and let
the kernel go on (Warp's behaviour; `assert` is the check that stops a kernel)."""

from __future__ import annotations

import numpy as np

from ..ir.core import Value
from ..types import Composite, Scalar, bool_
from . import arith
from .misc import _format
from .registry import BUILTINS, builtin


def _report(ctx, name: str, failed, a, b, relation: str):
    """Print `name(a, b) failed: a relation b` where `failed` (a bool Value or a constant) holds."""
    def emit():
        pieces, values = [f"{name} failed at {ctx.b.loc}: "], []
        _format(ctx, a, pieces, values)
        pieces.append(f" {relation} ")
        _format(ctx, b, pieces, values)
        pieces.append("\n")
        ctx.b.op("print", values, [], {"fmt": tuple(pieces)})
    if isinstance(failed, Value):
        ctx.emit_if(failed, emit, None)
    elif failed:
        emit()


def _two_args(ctx, name, args, kwargs):
    if len(args) != 2 or kwargs:
        ctx.error(f"{name}(a, b) takes two arguments")
    a, b = args
    if isinstance(a, Value) and isinstance(b, Value) and a.type is not b.type:
        ctx.error(f"{name}() of {a.type!r} and {b.type!r}: Can't test equality for objects with "
                  "different types")
    return args


def _py_values(a, b):
    return np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)


def _py_eq(a, b):
    if np.shape(a) != np.shape(b):
        return False
    return bool(np.all(np.asarray(a) == np.asarray(b)))


def _py_expect(name, relation, failed_rule):
    def check(a, b, *rest):
        if failed_rule(a, b, *rest):
            print(f"{name} failed: {a} {relation} {b}")
    return check


@builtin("expect_eq", py_impl=_py_expect("expect_eq", "!=", lambda a, b: not _py_eq(a, b)))
def expect_eq(ctx, args, kwargs):
    """expect_eq(a, b): print a message if a != b (scalars, vectors, matrices)."""
    a, b = _two_args(ctx, "expect_eq", args, kwargs)
    if not isinstance(a, Value) and not isinstance(b, Value):
        _report(ctx, "expect_eq", not _py_eq(a, b), a, b, "!=")
        return
    _report(ctx, "expect_eq", arith.compare(ctx, "ne", a, b), *arith.unify(ctx, a, b), "!=")


@builtin("expect_neq", py_impl=_py_expect("expect_neq", "==", _py_eq))
def expect_neq(ctx, args, kwargs):
    """expect_neq(a, b): print a message if a == b."""
    a, b = _two_args(ctx, "expect_neq", args, kwargs)
    if not isinstance(a, Value) and not isinstance(b, Value):
        _report(ctx, "expect_neq", _py_eq(a, b), a, b, "==")
        return
    _report(ctx, "expect_neq", arith.compare(ctx, "eq", a, b), *arith.unify(ctx, a, b), "==")


def _py_far(a, b, tolerance=1.0e-6):
    x, y = _py_values(a, b)
    return bool(np.any(np.abs(x - y) > tolerance))


@builtin("expect_near", py_impl=_py_expect("expect_near", "is not near", _py_far))
def expect_near(ctx, args, kwargs):
    """expect_near(a, b, tolerance=1e-6): print a message if a component of a and b differ
    by more than the tolerance (floats and vectors of floats)."""
    names = ("a", "b", "tolerance")
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in given:
            ctx.error(f"expect_near: unexpected or repeated argument '{k}'")
        given[k] = v
    if "a" not in given or "b" not in given:
        ctx.error("expect_near(a, b, tolerance=1e-6) needs a and b")
    a, b = given["a"], given["b"]
    tolerance = given.get("tolerance", 1.0e-6)
    if not isinstance(a, Value) and not isinstance(b, Value) and not isinstance(tolerance, Value):
        _report(ctx, "expect_near", _py_far(a, b, tolerance), a, b, "is not near")
        return
    a, b = arith.unify(ctx, a, b)
    if isinstance(a.type, Composite):
        parts = list(zip(ctx.b.components(a), ctx.b.components(b)))
    elif isinstance(a.type, Scalar) and a.type.is_float:
        parts = [(a, b)]
    else:
        ctx.error(f"expect_near compares floats or vectors of floats, got {a.type!r}")
    failed = None
    for x, y in parts:
        tol = ctx.coerce(tolerance, x.type) if not isinstance(tolerance, Value) else tolerance
        far = ctx.b.cmp("gt", BUILTINS["abs"].expand(ctx, [arith.binary(ctx, "sub", x, y)], {}), tol)
        failed = far if failed is None else ctx.b.select(failed, failed, far)
    _report(ctx, "expect_near", failed if failed is not None else ctx.b.const(False, bool_),
            a, b, "is not near")
