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
import builtins as py_builtins
import math
import operator

import numpy as np

from ..builtins import arith
from ..builtins.registry import BUILTINS, Builtin
from ..ir.builder import Builder
from ..ir.core import Block, Function, Loc, Value, constant_value
from ..types import (
    PYTHON_TYPES,
    ArrayType,
    Composite,
    CompositeValue,
    Matrix,
    Scalar,
    TupleType,
    Type,
    Vector,
    bool_,
    int32,
    int64,
)
from . import promotion
from .errors import CompileError
from .source import ParsedSource

_BIN_OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div",
            ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul",
            ast.BitAnd: "bitand", ast.BitOr: "bitor", ast.BitXor: "bitxor",
            ast.LShift: "shl", ast.RShift: "shr"}
_CMP_OPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt",
            ast.GtE: "ge"}
_PY_FOLD = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
            "div": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
            "pow": operator.pow, "bitand": operator.and_, "bitor": operator.or_,
            "bitxor": operator.xor, "shl": operator.lshift, "shr": operator.rshift,
            "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
            "gt": operator.gt, "ge": operator.ge}
# Python builtins that mean a weft builtin inside kernels.
_PY_ALIASES = {py_builtins.abs: "abs", py_builtins.min: "min", py_builtins.max: "max",
               py_builtins.round: "round", py_builtins.len: "len", py_builtins.print: "print",
               py_builtins.pow: "pow"}

_RET, _RETVAL = "__return", "__retval"


class Undefined:
    """A name that exists on some paths only (a branch, a loop body). Using it is an error."""

    def __init__(self, why: str):
        self.why = why


class NeedReturnType(Exception):
    """Raised on the first `return` of a func with early returns and no annotation."""

    def __init__(self, type_):
        self.type = type_


class FunctionCompiler:
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
        self.loops: list[dict] = []
        self._uid = 0

    # Entry ---------------------------------------------------------------------------------
    def compile(self) -> Function:
        while True:
            try:
                return self._compile_once()
            except NeedReturnType as need:
                self.ret_type = need.type

    def _compile_once(self) -> Function:
        node = self.src.tree
        fn = Function(self.name, self.kind, list(self.param_types),
                      list(self.param_types.values()), None,
                      Loc(self.src.file, node.lineno, node.col_offset))
        self.fn = fn
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
        return fn

    # Errors and locations ------------------------------------------------------------------
    def loc(self, node) -> Loc:
        return Loc(self.src.file, getattr(node, "lineno", self.src.tree.lineno),
                   getattr(node, "col_offset", 0) + self.src.col_offset)

    def error(self, message: str, node=None):
        loc = self.loc(node) if node is not None else self.b.loc
        raise CompileError(message, loc, self.name)

    def fresh(self, base: str) -> str:
        self._uid += 1
        return f"__{base}{self._uid}"

    # Statements ----------------------------------------------------------------------------
    def visit_block(self, stmts):
        """Visit statements; after one that may jump (break/continue/return), guard the rest."""
        for k, stmt in enumerate(stmts):
            self.b.loc = self.loc(stmt)
            ends = self.visit_stmt(stmt)
            rest = stmts[k + 1:]
            if ends or not rest:
                return
            if self._may_jump(stmt):
                self.b.loc = self.loc(rest[0])
                self.emit_if(self.not_jumped(), lambda rest=rest: self.visit_block(rest), None)
                return

    def visit_stmt(self, node) -> bool:
        """Visit one statement; True if it unconditionally leaves the block."""
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            self.error(f"unsupported construct: {type(node).__name__} statement", node)
        return bool(method(node))

    def stmt_Pass(self, node):
        pass

    def stmt_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a string used as a comment
        self.expr(node.value)

    def stmt_Assign(self, node):
        if len(node.targets) != 1:
            self.error("chained assignment (a = b = c) is not supported", node)
        target = node.targets[0]
        if isinstance(target, ast.Tuple):
            self.assign_tuple(target, node.value)
        else:
            self.assign(target, self.expr(node.value))

    def stmt_AnnAssign(self, node):
        if node.value is None:
            self.error("a declaration needs a value: write `x: float = 0.0`", node)
        want = self.resolve_type(self.py_eval(node.annotation), node.annotation)
        self.assign(node.target, self.coerce(self.expr(node.value), want, node.value))

    def stmt_AugAssign(self, node):
        op = _BIN_OPS.get(type(node.op))
        if op is None:
            self.error(f"unsupported operator {type(node.op).__name__}=", node)
        target = node.target
        if isinstance(target, ast.Subscript):
            base = self.expr(target.value)
            if isinstance(base, Value) and isinstance(base.type, ArrayType) and op in ("add", "sub"):
                # As in Warp: `a[i] += x` on an array element is an atomic add.
                indices = self.indices(target.slice, base.type.ndim, target)
                value = self.expr(node.value)
                arith.atomic(self, "add" if op == "add" else "sub", base, indices, value)
                return
        current = self.expr(_as_load(target))
        self.assign(target, self.binop(op, current, self.expr(node.value), node))

    def assign_tuple(self, target: ast.Tuple, value_node):
        if isinstance(value_node, ast.Call) and self._is_tid(value_node.func):
            if value_node.args or value_node.keywords:
                self.error("tid() takes no arguments", value_node)
            for dim, elt in enumerate(target.elts):
                v = self.b.op("tid", [], [int32], {"dim": dim, "of": len(target.elts)}).result
                self.assign(elt, v)
            return
        if isinstance(value_node, ast.Tuple):
            values = [self.expr(e) for e in value_node.elts]  # all evaluated before any store
        else:
            v = self.expr(value_node)
            if isinstance(v, tuple):
                values = list(v)
            elif isinstance(v, Value) and isinstance(v.type, (TupleType, Vector)):
                values = [self.b.extract(v, i) for i in range(v.type.num_components)]
            else:
                self.error("cannot unpack this value", value_node)
        if len(values) != len(target.elts):
            self.error(f"cannot unpack {len(values)} values into {len(target.elts)} names", target)
        for elt, v in zip(target.elts, values):
            self.assign(elt, v)

    def assign(self, target, value):
        """Bind or store `value` to an assignment target (name, array element, component)."""
        self.b.loc = self.loc(target)
        if isinstance(target, ast.Name):
            if target.id in self.param_types and isinstance(self.param_types[target.id], ArrayType):
                self.error(f"cannot rebind array parameter '{target.id}'", target)
            old = self.scope.get(target.id)
            if isinstance(old, Value) and isinstance(value, (Value, *promotion.WEAK_TYPES, np.generic)):
                value = self.coerce(value, old.type, target, what=f"'{target.id}'")
            elif promotion.is_weak(value):
                value = self.materialize(value)
            self.scope[target.id] = value
            return
        if isinstance(target, ast.Subscript):
            base = self.expr(target.value)
            if isinstance(base, Value) and isinstance(base.type, ArrayType):
                indices = self.indices(target.slice, base.type.ndim, target)
                if len(indices) != base.type.ndim:
                    self.error("assignment to an array needs one index per dimension", target)
                arith.store(self, base, indices, value)
                return
            if isinstance(base, Value) and isinstance(base.type, Composite):
                updated = arith.set_item(self, base, self.subscript_key(target.slice), value)
                self.assign(target.value, updated)
                return
            self.error("cannot assign to an element of this value", target)
        if isinstance(target, ast.Attribute):
            base = self.expr(target.value)
            if isinstance(base, Value) and isinstance(base.type, Composite):
                updated = arith.set_attr(self, base, target.attr, value)
                self.assign(target.value, updated)
                return
            self.error(f"cannot assign to attribute '{target.attr}' of this value", target)
        self.error(f"unsupported assignment target: {type(target).__name__}", target)

    def stmt_If(self, node):
        cond = self.condition(node.test)
        if not isinstance(cond, Value):  # a compile-time condition selects one branch
            self.visit_block(node.body if cond else node.orelse)
            return
        self.emit_if(cond, lambda: self.visit_block(node.body),
                     (lambda: self.visit_block(node.orelse)) if node.orelse else None)

    def stmt_Return(self, node):
        value = self.expr(node.value) if node.value is not None else None
        if self.kind == "kernel" and value is not None:
            self.error("kernels cannot return a value; write the result to an array", node)
        if value is not None:
            value = self.return_value(value, node)
        if not self.early_return:
            self.b.op("return", [value] if value is not None else [])
            return True
        if value is not None:
            self.scope[_RETVAL] = value
        self.scope[_RET] = self.b.const(True, bool_)
        return True

    def return_value(self, value, node):
        if isinstance(value, tuple):
            parts = [self.materialize(v) for v in value]
            value = self.b.construct(TupleType(tuple(p.type for p in parts)), parts)
        if self.ret_type is None:
            value = self.materialize(value)
            if self.early_return:
                raise NeedReturnType(value.type)
            self.ret_type = value.type
        return self.coerce(value, self.ret_type, node, what="the return value")

    def stmt_Break(self, node):
        if not self.loops:
            self.error("'break' outside a loop", node)
        self.scope[self.loops[-1]["break"]] = self.b.const(True, bool_)
        return True

    def stmt_Continue(self, node):
        if not self.loops:
            self.error("'continue' outside a loop", node)
        self.scope[self.loops[-1]["continue"]] = self.b.const(True, bool_)
        return True

    def stmt_Assert(self, node):
        from .. import config
        if not config.mode == "debug":
            return
        cond = self.condition(node.test)
        if not isinstance(cond, Value):
            if not cond:
                self.error("assertion is always false", node)
            return
        message = ast.unparse(node.test)  # (node line numbers are the file's, not the text's)
        self.b.op("assert", [cond], [], {"message": message})

    def stmt_For(self, node):
        if node.orelse:
            self.error("for/else is not supported", node)
        it = node.iter
        if not (isinstance(it, ast.Call) and self.py_eval_or_none(it.func) in (range, arith.RANGE)):
            self.error("for loops must iterate over range(...)", it)
        if not isinstance(node.target, ast.Name):
            self.error("the loop variable must be a plain name", node.target)
        bounds = [self.expr(a) for a in it.args]
        if not 1 <= len(bounds) <= 3 or it.keywords:
            self.error("range takes 1 to 3 positional arguments", it)
        if len(bounds) == 1:
            bounds = [0, bounds[0]]
        start, stop, step = (bounds + [1])[:3]
        start, stop, step = self.range_bounds(start, stop, step, it)
        if self._loop_needs_while(node):
            self.emit_while_range(node, start, stop, step)
        else:
            self.emit_for(node, start, stop, step)

    def stmt_While(self, node):
        if node.orelse:
            self.error("while/else is not supported", node)
        self.emit_while(node, node.test, prologue=None)

    def stmt_FunctionDef(self, node):
        self.error("nested function definitions are not supported; use @weft.func", node)

    # Control flow --------------------------------------------------------------------------
    def emit_if(self, cond: Value, then_fn, else_fn):
        """Build an `if` op; names rebound in either branch become its results."""
        before = self.scope
        loc = self.b.loc
        blocks, scopes = [], []
        for visit in (then_fn, else_fn):
            block = Block()
            self.scope = dict(before)
            with self.b.at(block):
                if visit is not None:
                    visit()
            blocks.append(block)
            scopes.append(self.scope)
        self.b.loc = loc  # the `if` itself, and errors about merging its branches
        names, merged = [], {}
        for name in _ordered_union(before, *scopes):
            t, e = scopes[0].get(name), scopes[1].get(name)
            if t is e:
                if t is not None:
                    merged[name] = t
                continue
            if isinstance(t, Value) and isinstance(e, Value):
                if t.type is not e.type:
                    what = "the conditional expression" if name == "__ifexp" else f"'{name}'"
                    self.error(f"{what} is {t.type!r} in one branch and {e.type!r} in the other")
                names.append(name)
            elif name == _RETVAL and (isinstance(t, Value) or isinstance(e, Value)):
                names.append(name)  # defined on the returning path only: fill with zero
            elif t is None or e is None or isinstance(t, Undefined) or isinstance(e, Undefined):
                merged[name] = Undefined(f"'{name}' is assigned in only one branch of the "
                                         f"if at line {self.b.loc.line}; assign it before the if")
            elif _same_constant(t, e):
                merged[name] = t
            elif all(isinstance(v, Value) or promotion.is_weak(v) for v in (t, e)):
                names.append(name)  # a weak constant on one side takes the other side's type
            else:
                merged[name] = Undefined(f"'{name}' holds different compile-time objects "
                                         f"after the if at line {self.b.loc.line}")
        types = [_merged_type(scopes[0].get(name), scopes[1].get(name)) for name in names]
        for block, scope in zip(blocks, scopes):
            with self.b.at(block):
                vals = []
                for name, ty in zip(names, types):
                    v = scope.get(name)
                    if promotion.is_weak(v):
                        v = self.coerce(v, ty, what="the conditional expression"
                                        if name == "__ifexp" else f"'{name}'")
                    vals.append(v if isinstance(v, Value) else arith.zero(self, ty))
                self.b.op("yield", vals)
        op = self.b.op("if", [cond], types, regions=blocks)
        for name, result in zip(names, op.results):
            result.hint = _hint(name)
            merged[name] = result
        self.scope = merged

    def emit_if_value(self, cond: Value, then_value, else_value, slot: str):
        """An `if` giving one value, made by `then_value()` or `else_value()` in its branch.
        The value travels through the scope under the internal name `slot`, so the branches
        merge it like any variable (names they rebind stay rebound; `slot` is removed)."""
        def branch(make):
            def visit():
                value = make()  # may replace self.scope (an `and` inside does)
                self.scope[slot] = value
            return visit
        self.emit_if(cond, branch(then_value), branch(else_value))
        return self.scope.pop(slot)

    def emit_for(self, node, start, stop, step):
        carried = self._carried_names(node)
        inits = [self.scope[n] for n in carried]
        trip = None
        if all(constant_value(o) is not None for o in (start, stop, step)):
            lo, hi, st = (constant_value(o) for o in (start, stop, step))
            trip = len(range(lo, hi, st))
        body = Block([start.type] + [v.type for v in inits], [node.target.id] + carried)
        before = self.scope
        self.scope = dict(before)
        self.scope.update(zip(carried, body.args[1:]))
        self.scope[node.target.id] = body.args[0]
        self.loops.append({"break": None, "continue": self.fresh("continue")})
        with self.b.at(body):
            self.scope[self.loops[-1]["continue"]] = self.b.const(False, bool_)
            self.visit_block(node.body)
            self._yield_carried(carried, body, node)
        self.loops.pop()
        attrs = {"trip_count": trip} if trip is not None else {}
        self.b.loc = self.loc(node)
        op = self.b.op("for", [start, stop, step] + inits, [v.type for v in inits], attrs, [body])
        self._after_loop(before, node, carried, op.results)

    def emit_while_range(self, node, start, stop, step):
        """A range loop that can break or return, lowered to a while over a counter."""
        counter = self.fresh("counter")
        self.scope[counter] = start
        cont = (node.target.id, counter, step)
        test = ("range", counter, stop, step)
        self.emit_while(node, test, prologue=cont)

    def emit_while(self, node, test, prologue):
        brk, cont = self.fresh("break"), self.fresh("continue")
        self.scope[brk] = self.b.const(False, bool_)
        extra = [brk] + ([prologue[1]] if prologue else [])
        carried = extra + [n for n in self._carried_names(node) if n not in extra]
        inits = [self.scope[n] for n in carried]
        types = [v.type for v in inits]
        before = self.scope
        cond_block = Block(types, carried)
        body = Block(types, carried)
        # The condition: false once broken or returned, else the user's test (not evaluated
        # after a break, as in Python).
        self.scope = dict(before)
        self.scope.update(zip(carried, cond_block.args))
        with self.b.at(cond_block):
            stop_now = self.jump_flag([brk])
            self.b.loc = self.loc(node)

            go = self.emit_if_value(stop_now, lambda: self.b.const(False, bool_),
                                    lambda: self._while_test(test, node), "__c")
            self.b.op("yield", [go])
        self.scope = dict(before)
        self.scope.update(zip(carried, body.args))
        self.loops.append({"break": brk, "continue": cont})
        with self.b.at(body):
            self.scope[cont] = self.b.const(False, bool_)
            if prologue is not None:
                target, counter, step = prologue
                self.scope[target] = self.scope[counter]
                self.scope[counter] = self.b.add(self.scope[counter], step)
            self.visit_block(node.body)
            self._yield_carried(carried, body, node)
        self.loops.pop()
        self.b.loc = self.loc(node)
        op = self.b.op("while", inits, types, regions=[cond_block, body])
        self._after_loop(before, node, carried, op.results)

    def _while_test(self, test, node):
        if isinstance(test, tuple):  # a range counter
            _, counter, stop, step = test
            i = self.scope[counter]
            if constant_value(step) is not None:
                return self.b.cmp("lt" if constant_value(step) > 0 else "gt", i, stop)
            up = self.b.cmp("gt", step, self.b.const(0, step.type))
            return self.b.select(up, self.b.cmp("lt", i, stop), self.b.cmp("gt", i, stop))
        cond = self.condition(test)
        return cond if isinstance(cond, Value) else self.b.const(bool(cond), bool_)

    def _yield_carried(self, carried, body, node):
        vals = []
        for name, arg in zip(carried, body.args[-len(carried):] if carried else []):
            v = self.scope.get(name)
            if isinstance(v, Undefined) or v is None:
                v = arg  # only assigned on a path that then left the iteration
            if v.type is not arg.type:
                self.error(f"'{name}' changes type in the loop body, from {arg.type!r} to "
                           f"{v.type!r}; give it the right type before the loop", node)
            vals.append(v)
        self.b.op("yield", vals)

    def _after_loop(self, before, node, carried, results):
        after = dict(before)
        for name, r in zip(carried, results):
            r.hint = _hint(name)
            after[name] = r
        for name in _assigned_names(node.body) | ({node.target.id} if hasattr(node, "target") else set()):
            if name not in after:
                after[name] = Undefined(f"'{name}' is assigned inside the loop at line "
                                        f"{node.lineno} and is not available after it; "
                                        f"assign it before the loop")
        self.scope = after

    def _carried_names(self, node) -> list[str]:
        names = [n for n in _assigned_names(node.body)
                 if isinstance(self.scope.get(n), Value)
                 and not isinstance(self.scope[n].type, ArrayType)]
        if any(isinstance(n, ast.Return) for n in _walk_stmts(node.body)):
            names += [n for n in (_RET, _RETVAL) if n in self.scope and n not in names]
        return names

    def _loop_needs_while(self, node) -> bool:
        return any(isinstance(n, (ast.Break, ast.Return)) for n in _walk_stmts(node.body, own_loop=True))

    def _may_jump(self, stmt) -> bool:
        if not (self.loops or self.early_return):
            return False
        return any(isinstance(n, (ast.Break, ast.Continue, ast.Return))
                   for n in _walk_stmts([stmt], own_loop=True))

    def jump_flag(self, extra=()) -> Value | None:
        """True once this iteration/function should stop (break, continue or return)."""
        flags = [self.scope[n] for n in extra if n in self.scope]
        if self.loops:
            for key in ("break", "continue"):
                n = self.loops[-1][key]
                if n and isinstance(self.scope.get(n), Value):
                    flags.append(self.scope[n])
        if isinstance(self.scope.get(_RET), Value):
            flags.append(self.scope[_RET])
        result = flags[0] if flags else self.b.const(False, bool_)
        for f in flags[1:]:
            result = self.b.select(result, result, f)  # result or f
        return result

    def not_jumped(self) -> Value:
        return self.b.unary("not", self.jump_flag())

    # Expressions ---------------------------------------------------------------------------
    def expr(self, node):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            self.error(f"unsupported construct: {type(node).__name__} expression", node)
        saved = self.b.loc
        self.b.loc = self.loc(node)
        try:
            result = method(node)
            if isinstance(result, CompositeValue):  # a global vector/matrix: a constant value
                result = self.materialize(result)
            return result
        finally:
            self.b.loc = saved

    def expr_Constant(self, node):
        if isinstance(node.value, (bool, int, float, str)) or node.value is None:
            return node.value
        self.error(f"unsupported constant {node.value!r}", node)

    def expr_Name(self, node):
        name = node.id
        if name in self.scope:
            v = self.scope[name]
            if isinstance(v, Undefined):
                self.error(v.why, node)
            return v
        found, value = self.src.lookup(name)
        if not found:
            self.error(f"undefined name '{name}'", node)
        return value

    def expr_Attribute(self, node):
        base = self.expr(node.value)
        if isinstance(base, Value):
            return arith.get_attr(self, base, node.attr)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            self.error(f"'{_describe(base)}' has no attribute '{node.attr}'", node)

    def expr_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    def expr_List(self, node):
        return self.expr_Tuple(node)

    def expr_BinOp(self, node):
        op = _BIN_OPS.get(type(node.op))
        if op is None:
            self.error(f"unsupported operator {type(node.op).__name__}", node)
        return self.binop(op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op, a, b, node):
        if not isinstance(a, Value) and not isinstance(b, Value):
            try:
                if op == "matmul":
                    raise TypeError("@ needs a matrix")
                return fold_constants(op, a, b)
            except Exception as e:  # noqa: BLE001 - reported as a compile error
                self.error(f"cannot evaluate constant expression: {e}", node)
        return arith.binary(self, op, a, b)

    def expr_UnaryOp(self, node):
        v = self.expr(node.operand)
        kind = {ast.USub: "neg", ast.UAdd: "pos", ast.Not: "not", ast.Invert: "invert"}[type(node.op)]
        if not isinstance(v, Value):
            fold = {"neg": operator.neg, "pos": operator.pos, "not": operator.not_,
                    "invert": operator.invert}[kind]
            return fold(v)
        if kind == "pos":
            return v
        if kind == "not":
            return self.b.unary("not", self.truth(v))
        return arith.unary(self, kind, v)

    def expr_BoolOp(self, node):
        is_and = isinstance(node.op, ast.And)
        result = self.condition(node.values[0])
        for value_node in node.values[1:]:
            if not isinstance(result, Value):
                if bool(result) != is_and:  # constant short-circuit
                    return result
                result = self.condition(value_node)
                continue
            scope_before = self.scope

            def rhs(n=value_node):
                c = self.condition(n)
                return c if isinstance(c, Value) else self.b.const(bool(c), bool_)

            def keep(r=result):
                return r
            result = self.emit_if_value(result, rhs if is_and else keep, keep if is_and else rhs, "__bool")
            self.scope = {**scope_before, **self.scope}
        return result

    def expr_Compare(self, node):
        left = self.expr(node.left)
        result = None
        for op_node, right_node in zip(node.ops, node.comparators):
            pred = _CMP_OPS.get(type(op_node))
            if pred is None:
                self.error(f"unsupported comparison {type(op_node).__name__}", node)
            right = self.expr(right_node)
            if not isinstance(left, Value) and not isinstance(right, Value):
                c = _PY_FOLD[pred](left, right)
            else:
                c = arith.compare(self, pred, left, right)
            result = c if result is None else self.logical_and(result, c)
            left = right
        return result

    def logical_and(self, a, b):
        if not isinstance(a, Value):
            return b if a else a
        if not isinstance(b, Value):
            return a if b else b
        return self.b.select(a, b, self.b.const(False, bool_))

    def expr_IfExp(self, node):
        cond = self.condition(node.test)
        if not isinstance(cond, Value):
            return self.expr(node.body if cond else node.orelse)
        before = self.scope

        def side(n):
            v = self.expr(n)  # a weak constant stays weak: it takes the other side's type
            return v if promotion.is_weak(v) else self.materialize(v)
        result = self.emit_if_value(cond, lambda: side(node.body), lambda: side(node.orelse), "__ifexp")
        if isinstance(result, Undefined):
            self.error("the two sides of the conditional expression have different types", node)
        if promotion.is_weak(result):  # the same constant on both sides
            result = self.materialize(result)
        self.scope = {**before, **{k: v for k, v in self.scope.items() if k in before}}
        return result

    def expr_Subscript(self, node):
        base = self.expr(node.value)
        if not isinstance(base, Value):
            key = self.py_eval(node.slice)
            try:
                return base[key]
            except Exception as e:  # noqa: BLE001
                self.error(f"cannot index {_describe(base)}: {e}", node)
        if isinstance(base.type, ArrayType):
            indices = self.indices(node.slice, base.type.ndim, node)
            return arith.load(self, base, indices)
        return arith.get_item(self, base, self.subscript_key(node.slice))

    def subscript_key(self, slice_node):
        if isinstance(slice_node, ast.Slice):
            self.error("slices are not supported inside kernels", slice_node)
        key = self.expr(slice_node)
        return key if isinstance(key, tuple) else (key,)

    def indices(self, slice_node, ndim, node):
        key = self.subscript_key(slice_node)
        if len(key) > ndim:
            self.error(f"too many indices for an array of {ndim} dimension(s)", node)
        out = []
        for k in key:
            if isinstance(k, Value):
                if not (isinstance(k.type, Scalar) and k.type.is_int):
                    self.error(f"array index must be an integer, got {k.type!r}", node)
                out.append(k)
            elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
                wide = promotion.fits(int(k), int32)
                if not wide and not promotion.fits(int(k), int64):
                    self.error(f"array index {k} does not fit a 64-bit integer", node)
                out.append(self.b.const(int(k), int32 if wide else int64))
            else:
                self.error(f"array index must be an integer, got {k!r}", node)
        return out

    def expr_Call(self, node):
        func = self.expr(node.func)
        if func is arith.STATIC:
            if len(node.args) != 1:
                self.error("static() takes one expression", node)
            return self.py_eval(node.args[0])
        args = [self.expr(a) for a in node.args]
        if any(isinstance(a, ast.Starred) for a in node.args):
            self.error("*args in calls is not supported", node)
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        if None in kwargs:
            self.error("**kwargs in calls is not supported", node)
        return self.call(func, args, kwargs, node)

    def call(self, func, args, kwargs, node):
        from .function import Func

        if isinstance(func, Builtin) or (callable(func) and func in _PY_ALIASES):
            builtin = func if isinstance(func, Builtin) else BUILTINS[_PY_ALIASES[func]]
            result = builtin.expand(self, args, kwargs)
            if builtin.inout:
                result = self._rebind_inout(builtin, node, result)
            return result
        if isinstance(func, Func):
            return func.emit_call(self, args, kwargs, node)
        if func in PYTHON_TYPES:
            func = PYTHON_TYPES[func]
        if isinstance(func, Type):
            return arith.construct(self, func, args, kwargs)
        if func in (range,):
            self.error("range(...) can only be used in a for loop", node)
        if callable(func) and all(not isinstance(a, Value) for a in [*args, *kwargs.values()]):
            try:
                return func(*args, **kwargs)  # a Python function of constants: fold it
            except Exception as e:  # noqa: BLE001
                self.error(f"calling {_describe(func)} at compile time failed: {e}", node)
        self.error(f"'{_describe(func)}' cannot be called inside a kernel (not a weft builtin, "
                   f"@weft.func or type)", node)

    def _rebind_inout(self, builtin, node, result):
        new_states, value = result
        for pos, new_state in zip(builtin.inout, new_states):
            arg = node.args[pos] if pos < len(node.args) else None
            if not isinstance(arg, ast.Name) or not isinstance(self.scope.get(arg.id), Value):
                self.error(f"{builtin.name}: argument {pos + 1} must be a local variable "
                           f"(it is updated in place)", node)
            self.scope[arg.id] = new_state
        return value

    def _is_tid(self, func_node) -> bool:
        f = self.py_eval_or_none(func_node)
        return isinstance(f, Builtin) and f.name == "tid"

    # Helpers used by builtins --------------------------------------------------------------
    def materialize(self, x) -> Value:
        """A Value for `x`: Values pass through; weak constants get their default type."""
        if isinstance(x, Value):
            return x
        if isinstance(x, tuple):
            parts = [self.materialize(p) for p in x]
            return self.b.construct(TupleType(tuple(p.type for p in parts)), parts)
        if promotion.is_weak(x):
            t = promotion.default_type(x)
            if not promotion.fits(x, t):
                self.error(f"the constant {x!r} does not fit {t!r}; give it a type, e.g. "
                           f"int64({x!r})")
            return self.b.const(x.item() if isinstance(x, np.generic) else x, t)
        if isinstance(x, CompositeValue):
            return self.b.construct(x.type, [self.b.const(c, x.type.dtype) for c in x._data])
        self.error(f"{_describe(x)} is not a value")

    def coerce(self, x, want, node=None, what="value"):
        """`x` as a Value of type `want`: weak constants convert if they fit; else an error."""
        if isinstance(x, Value):
            if x.type is want:
                return x
            self.error(f"{what} has type {x.type!r} but {want!r} is expected"
                       + (f"; convert it with {want!r}(...)" if isinstance(want, Scalar) else ""),
                       node)
        if promotion.is_weak(x):
            target = want if isinstance(want, Scalar) else None
            if target is not None:
                if not promotion.fits(x, target):
                    self.error(f"{what}: the constant {x!r} does not fit {want!r}", node)
                return self.b.const(x.item() if isinstance(x, np.generic) else x, target)
            if isinstance(want, (Vector, Matrix)):
                self.error(f"{what}: expected {want!r}, got the number {x!r}", node)
        v = self.materialize(x)
        return self.coerce(v, want, node, what)

    def condition(self, node):
        c = self.expr(node)
        return self.truth(c)

    def truth(self, c):
        if not isinstance(c, Value):
            return bool(c)
        if c.type is bool_:
            return c
        if isinstance(c.type, Scalar):
            return self.b.cmp("ne", c, self.b.const(0, c.type))
        self.error(f"a {c.type!r} cannot be used as a condition")

    def range_bounds(self, start, stop, step, node):
        vals = [start, stop, step]
        typed = [v.type for v in vals if isinstance(v, Value)]
        t = typed[0] if typed else int32
        if isinstance(step, (int, np.integer)) and step == 0:
            self.error("range() step must not be zero", node)
        out = []
        for v in vals:
            if isinstance(v, Value) and not (isinstance(v.type, Scalar) and v.type.is_int):
                self.error(f"range() bounds must be integers, got {v.type!r}", node)
            out.append(self.coerce(v, t, node, "range bound"))
        return out

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


def fold_constants(op: str, a, b):
    """`a op b` for two compile-time numbers, with the kernel's run-time semantics (C's and
    Warp's, not Python's): int `/` truncates, `%` keeps the dividend's sign (fmod for floats)."""
    ints = all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in (a, b))
    if op in ("div", "mod", "floordiv") and b == 0:
        raise ZeroDivisionError("division by zero")
    if ints and op == "div":
        q = abs(int(a)) // abs(int(b))
        return q if (a < 0) == (b < 0) else -q
    if op == "mod":
        if ints:
            return int(a) - int(b) * fold_constants("div", a, b)
        return math.fmod(a, b)
    return _PY_FOLD[op](a, b)


# AST helpers ---------------------------------------------------------------------------------
def _walk_stmts(stmts, own_loop=False):
    """Nodes of statements, not entering nested functions (nor nested loops if own_loop:
    their break/continue belong to them, though a return inside still counts)."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.Lambda)):
            continue
        if own_loop and isinstance(n, (ast.For, ast.While)):
            stack.extend(r for r in ast.walk(n) if isinstance(r, ast.Return))
            continue
        stack.extend(ast.iter_child_nodes(n))


def _has_early_return(body) -> bool:
    returns = [n for n in _walk_stmts(body) if isinstance(n, ast.Return)]
    return any(r is not body[-1] for r in returns)


def _assigned_names(stmts) -> set[str]:
    """Names a block may rebind: assignment targets, components assigned, in-place state."""
    names = set()
    for n in _walk_stmts(stmts):
        targets = []
        if isinstance(n, ast.Assign):
            targets = n.targets
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            targets = [n.target]
        elif isinstance(n, ast.For):
            targets = [n.target]
        elif isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Name):
            names.add(n.args[0].id)  # possibly an in-place argument (random state)
        for t in targets:
            names |= _target_names(t)
    return names


def _target_names(target) -> set[str]:
    """The local names an assignment target rebinds: `v[i] = x` rebinds v (a functional
    update of a local composite), not i."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_target_names(e) for e in target.elts))
    if isinstance(target, (ast.Subscript, ast.Attribute, ast.Starred)):
        return _target_names(target.value)
    return set()


def _as_load(target):
    return ast.fix_missing_locations(ast.copy_location(_to_load(target), target))


def _to_load(node):
    node = _copy(node)
    for sub in ast.walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = ast.Load()
    return node


def _copy(node):
    import copy
    return copy.deepcopy(node)


def _ordered_union(*dicts):
    seen = {}
    for d in dicts:
        for k in d:
            seen[k] = None
    return list(seen)


def _merged_type(t, e):
    """The type of an `if` result: that of its Value side, or for two weak constants the
    type their Python arithmetic gives (1 and 2.5: float32)."""
    for v in (t, e):
        if isinstance(v, Value):
            return v.type
    if isinstance(t, bool) and isinstance(e, bool):
        return bool_
    return promotion.default_type(t + e)


def _same_constant(a, b) -> bool:
    try:
        return a is b or (type(a) is type(b) and bool(a == b))
    except Exception:  # noqa: BLE001
        return False


def _hint(name: str) -> str:
    return name if name.isidentifier() and not name.startswith("__") else ""


def _describe(x) -> str:
    return getattr(x, "__name__", None) or getattr(x, "name", None) or type(x).__name__
