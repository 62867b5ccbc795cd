"""The vector-Jacobian product of a func, as a func: what `weft.grad(f)` calls.

`vjp_function(fn)` turns func IR `fn(p1, ..., pn) -> r` into `fn_vjp(p1, ..., pn, adj_r)`
returning the adjoints of the float parameters (a scalar if there is one, else a tuple):
the body is replayed and reversed exactly as in an adjoint kernel (reverse.py), seeded with
`adj_r`. The result is an ordinary func, so kernels call it in forward code.
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import Function
from ..ir.passes import dead_code
from ..types import TupleType
from .reverse import _Reverse, active_types


def vjp_function(fn: Function) -> Function:
    """The VJP of func IR `fn` (call-free; see the module docstring)."""
    return _FuncVJP(fn, fn.name).build()


def differentiable_params(fn: Function) -> list[int]:
    """Positions of the parameters that get an adjoint (those with float leaves)."""
    return [k for k, p in enumerate(fn.params) if active_types(p.type) and not getattr(p.type, "is_array", False)]


class _FuncVJP(_Reverse):
    def build(self) -> Function:
        fn = self.fn
        if fn.ret_type is None or not active_types(fn.ret_type):
            raise self._no_result()
        wanted = differentiable_params(fn)
        ret_types = [fn.params[k].type for k in wanted]
        result_type = ret_types[0] if len(ret_types) == 1 else TupleType(tuple(ret_types))
        out = Function(f"{fn.name}_vjp", "func", fn.param_names + ["adj_ret"],
                       [p.type for p in fn.params] + [fn.ret_type], result_type, fn.loc)
        self.out = out
        n = len(fn.params)
        self.map = {p.id: q for p, q in zip(fn.params, out.params[:n])}
        self.adj_arrays = {}
        self.adj, self.counts, self.replayed = {}, {}, {}
        self.b = Builder(out.body, fn.loc)
        ret = fn.body.ops[-1]
        body_ops = fn.body.ops[:-1]
        self.replay(body_ops, push=True)
        self.accum(ret.operands[0], self.leaves_of(out.params[n]))
        self.reverse(body_ops)
        self.b.loc = fn.loc
        grads = [self.value_from(fn.params[k].type, self.get(fn.params[k])) for k in wanted]
        result = grads[0] if len(grads) == 1 else self.b.construct(result_type, grads)
        self.b.op("return", [result])
        self._check_available(dead_code(out).body)
        return out

    def _no_result(self):
        from ..lang.errors import CompileError
        return CompileError(f"weft.grad({self.fn.name}): the function must return a float value "
                            "(or a vector or matrix of floats)", self.fn.loc)
