"""Warp's undocumented dense linear algebra builtins on flat float32 arrays: `dense_gemm`
(C = op(A) op(B), m x p times p x n), `dense_chol` (the Cholesky factor L of A + reg I),
`dense_subs` (solve L L^T x = b) and `dense_solve` (the same, given A and its factor L).
They run in the calling thread, as in Warp; written in the kernel language (dense_funcs.py),
so their reverse mode is that of their loops."""

from __future__ import annotations

from ..ir.core import Value
from ..types import ArrayType, float32
from .arguments import as_int32, kernel_funcs
from .registry import builtin

_funcs = kernel_funcs(".dense_funcs")


def _arguments(ctx, name: str, args, kwargs, kinds: str, names: tuple):
    """`args` checked against `kinds` (i: int, f: float, a: array of float32)."""
    if kwargs or len(args) != len(kinds):
        ctx.error(f"{name}({', '.join(names)}) takes {len(kinds)} arguments")
    out = []
    for kind, value, label in zip(kinds, args, names):
        if kind == "i":
            out.append(as_int32(ctx, value, f"{name}() {label}"))
        elif kind == "f":
            out.append(ctx.b.cast(ctx.materialize(value), float32) if isinstance(value, Value)
                       else ctx.b.const(float(value), float32))
        elif not (isinstance(value, Value) and isinstance(value.type, ArrayType)
                  and value.type.dtype is float32 and value.type.ndim == 1):
            ctx.error(f"{name}(): {label} must be a 1-D array of float32, got {getattr(value, 'type', value)!r}")
        else:
            out.append(value)
    return out


@builtin("dense_gemm")
def dense_gemm(ctx, args, kwargs):
    """dense_gemm(m, n, p, t1, t2, A, B, C): C[m x n] = op(A)[m x p] op(B)[p x n], op
    transposing when t1 (t2) is 1."""
    values = _arguments(ctx, "dense_gemm", args, kwargs, "iiiiiaaa", ("m", "n", "p", "t1", "t2", "A", "B", "C"))
    _funcs().dense_gemm.emit_call(ctx, values, {}, None)


@builtin("dense_chol")
def dense_chol(ctx, args, kwargs):
    """dense_chol(n, A, regularization, L): L, lower triangle, with L L^T = A + regularization I."""
    values = _arguments(ctx, "dense_chol", args, kwargs, "iafa", ("n", "A", "regularization", "L"))
    _funcs().dense_chol.emit_call(ctx, values, {}, None)


@builtin("dense_subs")
def dense_subs(ctx, args, kwargs):
    """dense_subs(n, L, b, x): x with L L^T x = b (forward, then backward substitution)."""
    values = _arguments(ctx, "dense_subs", args, kwargs, "iaaa", ("n", "L", "b", "x"))
    _funcs().dense_subs.emit_call(ctx, values, {}, None)


@builtin("dense_solve")
def dense_solve(ctx, args, kwargs):
    """dense_solve(n, A, L, b, x): x with A x = b, given L = dense_chol(A)."""
    n, _a, L, b, x = _arguments(ctx, "dense_solve", args, kwargs, "iaaaa", ("n", "A", "L", "b", "x"))
    _funcs().dense_subs.emit_call(ctx, [n, L, b, x], {}, None)
