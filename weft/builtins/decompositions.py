"""Matrix decompositions: `eig3`, `qr3`, `svd3`, `svd2`, in Warp's two forms: returning the
factors (`U, sigma, V = wp.svd3(A)`) or writing them into local variables given as further
arguments (`wp.svd3(A, U, sigma, V)`). Their bodies are funcs in weft/linalg.py, so they are
differentiable through their arithmetic and need no derivative rule here."""

from __future__ import annotations

from ..ir.core import Value
from ..types import Matrix
from .registry import builtin


def _decomposition(name: str, body: str, outputs: int, size: int):
    def expand(ctx, args, kwargs):
        if kwargs or len(args) not in (1, 1 + outputs):
            ctx.error(f"{name}(A) returns {outputs} factors; {name}(A, <{outputs} outputs>) writes "
                      f"them into local variables")
        a = args[0]
        if not (isinstance(a, Value) and isinstance(a.type, Matrix) and a.type.shape == (size, size)
                and a.type.dtype.is_float):
            ctx.error(f"{name}() needs a float {size}x{size} matrix, got {getattr(a, 'type', a)!r}")
        from .. import linalg  # (funcs: compiled by the frontend that calls this builtin)
        result = getattr(linalg, body).emit_call(ctx, [a], {}, None)
        factors = tuple(ctx.b.extract(result, k) for k in range(outputs))
        if len(args) == 1:
            return (), factors
        for k, (given, factor) in enumerate(zip(args[1:], factors)):
            if not (isinstance(given, Value) and given.type is factor.type):
                ctx.error(f"{name}(): output {k + 1} must be a local {factor.type!r}, got "
                          f"{getattr(given, 'type', given)!r}")
        return factors, None
    expand.__doc__ = f"{name}: see weft/linalg.py ({body})."
    builtin(name, inout=tuple(range(1, 1 + outputs)))(expand)


_decomposition("eig3", "eig3_jacobi", 2, 3)
_decomposition("qr3", "qr3_givens", 2, 3)
_decomposition("svd3", "svd3_jacobi", 3, 3)
_decomposition("svd2", "svd2_eig", 3, 2)
