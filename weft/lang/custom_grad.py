"""Custom derivatives of funcs: `@weft.func_grad(f)` and `@weft.func_replay(f)` (as Warp).

    @wp.func_grad(safe_sqrt)
    def adj_safe_sqrt(x: float, adj_ret: float):
        if x > 0.0:
            wp.adjoint[x] += adj_ret / (2.0 * wp.sqrt(x))

A grad function takes f's parameters and then the adjoint of each value f returns, and adds
to `wp.adjoint[p]` for the parameters p it gives a gradient (the others get none):
`wp.adjoint[s.field]`, `wp.adjoint[v][0]` for parts of a struct or vector, and
`wp.adjoint[a][i]` for the adjoint array of an array parameter. A replay function has f's
signature and returns what f returned; the adjoint kernel runs it instead of f (for example
to read a slot recorded in the forward pass instead of redoing an atomic). Where f has
overloads, each grad or replay function belongs to the overload its parameters match.

Calls of such funcs stay visible in the IR as `func_region` ops (the inliner keeps the
body inside one), so the reverse pass can swap in these functions.
"""

from __future__ import annotations

import ast
import copy

from ..ir.passes import inline_calls
from ..ir.verify import verify
from ..types import TupleType
from .errors import CompileError
from .function import Func, note_redefinition, signature_types
from .source import ParsedSource

_ZERO_LIKE = "__weft_zero_like"


def _zero_like(ctx, args, kwargs):
    from ..builtins.arith import zero
    return zero(ctx, ctx.materialize(args[0]).type)


def func_grad(func: Func):
    """Decorator: the function below replaces the adjoint of @func `func`."""
    return _replacing(func, "func_grad", "custom_grad")


def func_replay(func: Func):
    """Decorator: the function below replaces the replay of @func `func` in adjoint kernels."""
    return _replacing(func, "func_replay", "custom_replay")


def _replacing(func: Func, decorator: str, attribute: str):
    """A decorator storing the function below as `<attribute>` of the overload of `func`
    whose parameter types begin its own."""
    _require_func(func, decorator)

    def register(pyfunc):
        types = list(signature_types(pyfunc, "func").values())
        for overload in func.overloads:
            wanted = list(overload.params.values())
            if len(types) >= len(wanted) and all(_matches(w, t) for w, t in zip(wanted, types)):
                setattr(overload, attribute, pyfunc)
                # (kernels compiled before inlined the automatic adjoint: as after a redefinition,
                # they compile again, as Warp rebuilds the module)
                note_redefinition()
                return pyfunc
        raise TypeError(f"@weft.{decorator}({func.name}): {pyfunc.__qualname__} takes parameters "
                        f"({', '.join(map(repr, types))}), which begin with those of no overload of "
                        f"{func.name}")
    return register


def _matches(wanted, given) -> bool:
    from .function import GENERIC
    return wanted is GENERIC or given is GENERIC or wanted is given or repr(wanted) == repr(given)


def _require_func(func, what):
    if not isinstance(func, Func):
        raise TypeError(f"@weft.{what}(f) needs a @weft.func, got {type(func).__name__}")


class _AdjointNames(ast.NodeTransformer):
    """`wp.adjoint[x]` -> the local `__adj_x` (and `wp.adjoint[x.f]` -> `__adj_x.f`); a bare
    `return` returns the adjoints."""

    def __init__(self, params, result):
        self.params = params
        self.result = result

    def visit_Subscript(self, node):
        self.generic_visit(node)
        base = node.value
        if isinstance(base, ast.Attribute) and base.attr == "adjoint":
            target = copy.deepcopy(node.slice)
            root = target
            while isinstance(root, ast.Attribute):
                root = root.value
            if not isinstance(root, ast.Name) or root.id not in self.params:
                raise CompileError(f"adjoint[{ast.unparse(node.slice)}]: not a parameter (or a field of one) "
                                   "of the function whose gradient this is")
            if target is root:
                return ast.copy_location(ast.Name(f"__adj_{root.id}", node.ctx), node)
            root.id = f"__adj_{root.id}"
            ast.fix_missing_locations(ast.copy_location(target, node))
            return target
        return node

    def visit_Return(self, node):
        if node.value is not None:
            raise CompileError("a func_grad function gives gradients through wp.adjoint[...], it returns nothing")
        return ast.copy_location(copy.deepcopy(self.result), node)


def result_types(ret_type) -> list:
    """The types of the values a func returns (one per element of a returned tuple)."""
    if ret_type is None:
        return []
    return list(ret_type.elements) if isinstance(ret_type, TupleType) else [ret_type]


def grad_ir(instance, active: list[str], arrays: list[str] = ()):
    """The IR of `instance`'s custom grad for its parameter types: it takes the parameters,
    the adjoint of each returned value and the adjoint arrays of the array parameters
    `arrays`, and returns a tuple of the adjoints of the parameters `active`."""
    pyfunc = instance.custom_grad
    source = ParsedSource(pyfunc)
    names = list(signature_types(pyfunc, "func"))
    params = list(instance.param_types)
    results = result_types(instance.ir().ret_type)
    if len(names) != len(params) + len(results):
        raise CompileError(f"func_grad {pyfunc.__qualname__} must take the {len(params)} parameters of "
                           f"{instance.func.name} and then the adjoints of its {len(results)} result(s), "
                           f"it takes {len(names)}")
    renamed = dict(zip(params, names))
    tree = source.tree
    result = ast.Return(ast.Tuple([ast.Name(f"__adj_{renamed[p]}", ast.Load()) for p in active], ast.Load()))
    body = _AdjointNames(set(names), result).visit(copy.deepcopy(tree)).body
    line = tree.lineno
    prologue = [ast.parse(f"__adj_{renamed[p]} = {_ZERO_LIKE}({renamed[p]})").body[0] for p in active]
    for stmt in prologue + [result]:
        ast.increment_lineno(stmt, line)
        ast.fix_missing_locations(stmt)
    tree.body = prologue + body + [copy.deepcopy(result)]
    ast.fix_missing_locations(tree)
    source.tree = tree
    from ..builtins.registry import Builtin  # (here: `import weft` does not import the builtins)
    source.closure = {**source.closure, _ZERO_LIKE: Builtin("zero_like", _zero_like)}
    types = dict(zip(names, [*instance.param_types.values(), *results]))
    types.update({f"__adj_{renamed[p]}": instance.param_types[p] for p in arrays})
    return _compile(source, f"{pyfunc.__name__}", types)


def replay_ir(instance):
    """The IR of `instance`'s custom replay (same parameters and result as the func)."""
    pyfunc = instance.custom_replay
    names = list(signature_types(pyfunc, "func"))
    if len(names) != len(instance.param_types):
        raise CompileError(f"func_replay {pyfunc.__qualname__} must take the parameters of "
                           f"{instance.func.name} ({len(instance.param_types)}), it takes {len(names)}")
    types = dict(zip(names, instance.param_types.values()))
    return _compile(ParsedSource(pyfunc), pyfunc.__name__, types, instance.ir().ret_type)


def _compile(source, name, types, ret_type=None):
    from .frontend import FunctionCompiler
    return inline_calls(verify(FunctionCompiler(source, "func", name, types, ret_type).compile()))
