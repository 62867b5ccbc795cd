"""expect_eq, expect_neq, expect_near: checks that print a message when they fail and let
the kernel go on (Warp's behaviour; `assert` is the check that stops a kernel)."""

from __future__ import annotations

import numpy as np

from ..ir.core import Value
from ..types import Composite, Scalar
from . import arith
from .misc import emit_print
from .registry import BUILTINS, builtin


def _report(ctx, failed, header: str, lines):
    """Where `failed` (a bool Value or a constant) holds, print Warp's message: `header`, then
    each (label, value) of `lines` as the label followed by print(value)."""
    def emit():
        ctx.b.op("print", [], [], {"fmt": (header,)})
        for label, value in lines:
            ctx.b.op("print", [], [], {"fmt": (label,)})
            emit_print(ctx, [value], adjoint=False)
    if isinstance(failed, Value):
        ctx.emit_if(failed, emit, None)
    elif failed:
        emit()


def _equality_report(ctx, name, failed, actual, expected):
    _report(ctx, failed, f"Error, {name}() failed:\n", [("\t Expected: ", expected), ("\t Actual: ", actual)])


def _two_args(ctx, name, args, kwargs):
    if len(args) != 2 or kwargs:
        ctx.error(f"{name}(a, b) takes two arguments")
    a, b = args
    if isinstance(a, Value) and isinstance(b, Value) and isinstance(a.type, Composite) \
            and a.type is not b.type:
        ctx.error("Can't test equality for objects with different types")  # (Warp's words)
    return args


def _py_values(a, b):
    return np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)


def _py_eq(a, b):
    if np.shape(a) != np.shape(b):
        return False
    return bool(np.all(np.asarray(a) == np.asarray(b)))


def _py_text(x) -> str:
    """`x` as Warp's print prints it (components followed by a space, a matrix by rows)."""
    a = np.asarray(x)
    if a.ndim == 0:
        return f"{a.item():g}" if a.dtype.kind == "f" else str(a.item())
    return "\n".join("".join(f"{c:g} " for c in np.atleast_1d(row)) for row in (a if a.ndim == 2 else [a]))


def _py_expect(name, failed_rule):
    def check(actual, expected, *rest):
        if not failed_rule(actual, expected, *rest):
            return
        if name == "expect_near":
            tolerance = rest[0] if rest else 1.0e-6
            x, y = _py_values(actual, expected)
            label = "Max absolute difference" if x.ndim else "Absolute difference"
            print(f"Error, expect_near() failed with tolerance {_py_text(tolerance)}\n"
                  f"    Expected: {_py_text(expected)}\n    Actual: {_py_text(actual)}\n"
                  f"    {label}: {_py_text(np.max(np.abs(x - y)))}")
        else:
            print(f"Error, {name}() failed:\n\t Expected: {_py_text(expected)}\n\t Actual: {_py_text(actual)}")
    return check


@builtin("expect_eq", py_impl=_py_expect("expect_eq", lambda a, b: not _py_eq(a, b)))
def expect_eq(ctx, args, kwargs):
    """expect_eq(actual, expected): print Warp's message if they differ (scalars, vectors,
    matrices)."""
    a, b = _two_args(ctx, "expect_eq", args, kwargs)
    if not isinstance(a, Value) and not isinstance(b, Value):
        _equality_report(ctx, "expect_eq", not _py_eq(a, b), a, b)
        return
    _equality_report(ctx, "expect_eq", arith.compare(ctx, "ne", a, b), *arith.unify(ctx, a, b))


@builtin("expect_neq", py_impl=_py_expect("expect_neq", _py_eq))
def expect_neq(ctx, args, kwargs):
    """expect_neq(a, b): print a message if a == b."""
    a, b = _two_args(ctx, "expect_neq", args, kwargs)
    if not isinstance(a, Value) and not isinstance(b, Value):
        _equality_report(ctx, "expect_neq", _py_eq(a, b), a, b)
        return
    _equality_report(ctx, "expect_neq", arith.compare(ctx, "eq", a, b), *arith.unify(ctx, a, b))


def _py_far(a, b, tolerance=1.0e-6):
    x, y = _py_values(a, b)
    return bool(np.any(np.abs(x - y) > tolerance))


@builtin("expect_near", py_impl=_py_expect("expect_near", _py_far))
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
        if _py_far(a, b, tolerance):  # (constants: known now)
            x, y = _py_values(a, b)
            a, b = ctx.materialize(a), ctx.materialize(b)
            _near_report(ctx, True, a, b, tolerance, float(np.max(np.abs(x - y))))
        return
    a, b = arith.unify(ctx, a, b)
    if isinstance(a.type, Composite):
        parts = list(zip(ctx.b.components(a), ctx.b.components(b)))
    elif isinstance(a.type, Scalar) and a.type.is_float:
        parts = [(a, b)]
    else:
        ctx.error(f"expect_near compares floats or vectors of floats, got {a.type!r}")
    diff = None
    for x, y in parts:
        d = BUILTINS["abs"].expand(ctx, [arith.binary(ctx, "sub", x, y)], {})
        diff = d if diff is None else BUILTINS["max"].expand(ctx, [diff, d], {})
    tol = ctx.coerce(tolerance, diff.type) if not isinstance(tolerance, Value) else tolerance
    _near_report(ctx, ctx.b.cmp("gt", diff, tol), a, b, tol, diff)


def _near_report(ctx, failed, actual, expected, tolerance, diff):
    label = "    Max absolute difference: " if isinstance(actual.type, Composite) else "    Absolute difference: "
    _report(ctx, failed, "Error, expect_near() failed with tolerance ",
            [("", tolerance), ("    Expected: ", expected), ("    Actual: ", actual), (label, diff)])
