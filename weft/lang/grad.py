"""`weft.grad(f)`: the gradient of a func or builtin, called in forward code.

`weft.grad(f)(x, y)` returns the adjoints of f's float parameters for an adjoint of 1 on
f's (scalar) result: the derivative if there is one such parameter, else a tuple, as in
Warp (`b, a = wp.grad(wp.atan2)(y, x)`). It is computed by the reverse-mode transform
applied to f's IR (autodiff/vjp.py), so it is exact and agrees with adjoint kernels.
"""

from __future__ import annotations

import itertools
import linecache
from typing import TYPE_CHECKING

from ..types import Scalar
from .function import Func

if TYPE_CHECKING:
    from ..builtins.registry import Builtin


class GradOf:
    """What `weft.grad(f)` returns: callable in kernels and funcs."""

    def __init__(self, target):
        from ..builtins.registry import Builtin  # (here: `import weft` does not import the builtins)
        if not isinstance(target, (Func, Builtin)):
            raise TypeError(f"weft.grad() takes a @weft.func or a weft builtin, got {type(target).__name__}")
        self.target = target
        self.name = f"grad({target.name})"

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"weft.{self.name} can only be called inside a kernel or func")

    def emit_call(self, ctx, args, kwargs, node):
        func = self.target if isinstance(self.target, Func) else _builtin_as_func(self.target, len(args))
        instance, values = func.instance_for(ctx, args, kwargs, node)
        ret = instance.ir().ret_type
        if not (isinstance(ret, Scalar) and ret.is_float):
            ctx.error(f"weft.{self.name}: the function must return a float scalar, not {ret!r}", node)
        vjp = _VJPInstance(instance)
        fn = vjp.ir()
        op = ctx.b.op("call_func", [*values, ctx.b.const(1.0, ret)], [fn.ret_type], {"func": vjp})
        return op.results[0]


class _VJPInstance:
    """A call target (like FuncInstance) whose IR is the VJP of a func instance."""

    func = None  # no custom gradient of its own

    def __init__(self, instance):
        self.instance = instance
        self.name = f"grad({instance.name})"

    def ir(self):
        cached = getattr(self.instance, "_vjp_ir", None)
        if cached is None:
            from ..autodiff.vjp import vjp_function
            from ..ir.verify import verify
            cached = self.instance._vjp_ir = verify(vjp_function(self.instance.ir()))
        return cached


_BUILTIN_FUNCS: dict = {}
_ids = itertools.count()


def _builtin_as_func(builtin: Builtin, nargs: int) -> Func:
    """A generic func `f(a0, ..., an) -> builtin(a0, ..., an)`, to differentiate a builtin."""
    key = (builtin.name, nargs)
    func = _BUILTIN_FUNCS.get(key)
    if func is None:
        params = ", ".join(f"a{k}" for k in range(nargs))
        filename = f"<weft.grad of {builtin.name} #{next(_ids)}>"
        text = f"def {builtin.name}({params}):\n    return BUILTIN({params})\n"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        scope = {"BUILTIN": builtin}
        exec(compile(text, filename, "exec"), scope)  # noqa: S102 - our own two lines
        func = _BUILTIN_FUNCS[key] = Func(scope[builtin.name])
    return func


def grad(f) -> GradOf:
    """The gradient of func or builtin `f`, to call inside kernels: `weft.grad(f)(x)`."""
    return GradOf(f)
