"""Frontend: the Python AST of a kernel or func, to typed IR with structured control flow.

Every AST node kind is handled explicitly; anything else is an "unsupported construct"
error at its source line. SSA comes from diffing scopes: a variable rebound in a branch
becomes a result of the `if`, one rebound in a loop body a loop-carried value.
`break`, `continue` and `return` inside control flow become boolean flags: the rest of the
body runs under `if not flag`, and a loop that can break becomes a `while` whose condition
tests the flag. Expressions evaluate to IR `Value`s or to Python objects (modules,
builtins, types, and weak numeric constants, folded in Python).
"""

from __future__ import annotations

import ast

from ..builtins import arith
from ..ir.builder import Builder
from ..ir.core import Function, Loc, Value
from ..types import TileType, bool_
from .ast_helpers import (
    _RET,
    _RETVAL,
    NeedLoopCarry,
    NeedLoopDeclaration,
    NeedReturnType,
    Undefined,
    _describe,
    _has_early_return,
)
from .calls import CallsMixin
from .errors import ERROR_KINDS, CompileError
from .expressions import ExpressionsMixin
from .source import ParsedSource
from .statements import StatementsMixin


class FunctionCompiler(StatementsMixin, ExpressionsMixin, CallsMixin):
    """Compiles one kernel or func instance (one set of argument types) to an IR Function."""

    def __init__(self, source: ParsedSource, kind: str, name: str, param_types: dict,
                 ret_type=None, constants: dict | None = None):
        self.src = source
        self.kind = kind
        self.name = name
        self.param_types = param_types
        self.ret_type = ret_type
        self.ret_annotated = ret_type is not None
        self.constants = constants or {}  # compile-time parameters (generic constants)
        # whether the kernel being compiled has an adjoint (a kernel's option; a func's body
        # is compiled once for every kernel, so builtins see False there)
        self.enable_backward = False
        self.loops: list[dict] = []
        self._uid = 0
        self.loop_declarations: dict = {}  # loop key -> {name: type} declared before that loop
        self.loop_carries: dict = {}  # loop key -> names it carries beyond its assignments
        self.ref_params: frozenset = frozenset()  # a func's `wp.ref[T]` parameters (types/reference.py)

    # Entry ---------------------------------------------------------------------------------
    def compile(self) -> Function:
        while True:
            try:
                return self._compile_once()
            except NeedReturnType as need:
                self.ret_type = need.type
            except NeedLoopCarry as need:
                carried = self.loop_carries.setdefault(need.loop_key, set())
                if need.name in carried:  # (cannot happen: the retry carries it)
                    raise
                carried.add(need.name)
            except NeedLoopDeclaration as need:
                declared = self.loop_declarations.setdefault(need.loop_key, {})
                if need.name in declared:  # (cannot happen: the retry carries it)
                    raise
                declared[need.name] = need.type

    def _compile_once(self) -> Function:
        node = self.src.tree
        fn = Function(self.name, self.kind, list(self.param_types),
                      list(self.param_types.values()), None,
                      Loc(self.src.file, node.lineno, node.col_offset))
        self.fn = fn
        self.loops = []  # (an earlier attempt may have stopped inside loops)
        self.loop_targets = []  # the index names of the `for` loops being compiled, outermost first
        self.b = Builder(fn.body, fn.loc)
        self.scope: dict = dict(zip(self.param_types, fn.params))
        self.scope.update(self.constants)
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # docstring
        self.early_return = _has_early_return(body)
        if self.early_return:
            self.scope[_RET] = self.b.const(False, bool_)
            if self.kind == "func" and self.ret_type is not None:
                self.scope[_RETVAL] = arith.zero(self, self.ret_type)
        self.visit_block(body)
        if self.early_return and self.kind == "func" and self.ret_type is not None:
            self.b.loc = self.loc(node.body[-1])
            self.b.op("return", [self.scope[_RETVAL]])
        elif not (self.fn.body.terminator and self.fn.body.terminator.name == "return"):
            if self.kind == "func" and self.ret_type is not None:
                self.error("func must return a value on every path", node.body[-1])
            self.b.op("return", [])
        fn.ret_type = self.ret_type
        if self.kind == "func":
            self._write_back(fn)
        return fn

    def _write_back(self, fn: Function):
        """A func that updates a tile argument (`t += x`, `t[i] = x`, tile_assign(t, ...))
        updates the caller's tile, as in Warp, where tiles are passed by reference; so does
        one that assigns to a `wp.ref[T]` parameter. The final values of such parameters are
        returned after the result (`tile_writeback` names them; Func.emit_call stores them
        into the caller's arguments)."""
        rebound = [k for k, (name, t) in enumerate(self.param_types.items())
                   if (isinstance(t, TileType) or name in self.ref_params)
                   and self.scope.get(name) is not fn.params[k]]
        if rebound:
            names = list(self.param_types)
            fn.body.terminator.operands += [self.scope[names[k]] for k in rebound]
            fn.tile_writeback = rebound

    # Errors and locations ------------------------------------------------------------------
    def loc(self, node) -> Loc:
        return Loc(self.src.file, getattr(node, "lineno", self.src.tree.lineno),
                   getattr(node, "col_offset", 0) + self.src.col_offset)

    def error(self, message: str, node=None, kind=None):
        """Raise a compile error at `node`; `kind` (TypeError, KeyError, ...) picks the
        subclass that is also that Python exception (see errors.ERROR_KINDS)."""
        loc = self.loc(node) if node is not None else self.b.loc
        raise ERROR_KINDS[kind](message, loc, self.name)

    def fresh(self, base: str) -> str:
        self._uid += 1
        return f"__{base}{self._uid}"


    def py_eval(self, node):
        """Evaluate an expression at compile time (annotations, static(...))."""
        code = compile(ast.Expression(body=node), self.src.file, "eval")
        env = dict(self.src.globals)
        env.update(self.src.closure)
        env.update({k: v for k, v in self.scope.items() if not isinstance(v, (Value, Undefined))})
        try:
            return eval(code, env)  # noqa: S307 - user's own source, like Python would run it
        except Exception as e:  # noqa: BLE001
            self.error(f"cannot evaluate at compile time: {e}", node)

    def py_eval_or_none(self, node):
        try:
            return self.expr(node)
        except CompileError:
            return None

    def resolve_type(self, t, node):
        from ..types import resolve
        r = resolve(t)
        if r is None:
            self.error(f"{_describe(t)} is not a weft type", node)
        return r


