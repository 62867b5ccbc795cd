"""Frontend statements: assignment, control flow (if, for, while, break/continue/return), assert."""

from __future__ import annotations

import ast
import types

import numpy as np

from ..builtins import arith
from ..builtins.atomic import SUPPORTED as ATOMIC_TYPES
from ..builtins.atomic import element_scalar
from ..builtins.tiles.core import views_after_branches, views_into_loop, views_out_of_loop, write_through
from ..ir.core import Block, Value, constant_value
from ..types import (
    ArrayType,
    Composite,
    Scalar,
    TileType,
    TupleType,
    Vector,
    bool_,
    int32,
)
from ..types.scalars import SCALAR_VALUES
from . import promotion
from .array_parts import array_part
from .ast_helpers import (
    _BIN_OPS,
    _RET,
    _RETVAL,
    NeedReturnType,
    Undefined,
    _as_load,
    _assigned_names,
    _hint,
    _merged_type,
    _ordered_union,
    _same_constant,
    _static_expression_names,
    _walk_stmts,
    calls_inout_builtin,
)
from .errors import KERNEL_RETURN_MESSAGE
from .returns import annotated_return


def _is_function(x) -> bool:
    from ..builtins.registry import Builtin
    from .function import Func
    from .grad import GradOf
    return isinstance(x, (Func, Builtin, GradOf, types.FunctionType))

# augmented assignments to an array element that are atomic updates (as in Warp)
_ATOMIC_AUGMENTED = {"add": "add", "sub": "sub", "bitand": "and", "bitor": "or", "bitxor": "xor"}
#: augmented operators that update a tile in place when both sides are tiles (as in Warp)
_TILE_IN_PLACE = {"add": "+", "sub": "-", "bitand": "&", "bitor": "|", "bitxor": "^"}


class StatementsMixin:
    """Statement visitors of `FunctionCompiler` and the structured control flow they emit."""

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
                # names the rest assigns first are zero on the path that jumped: nothing reads
                # them there (`if c: return a` or `if c: break` then `r = b` in one branch of
                # an if, `r` assigned in the other); a loop that carries one (a name read
                # after the loop) has it in scope already and keeps its value on that path
                one_sided = _assigned_names(rest)
                self.emit_if(self.not_jumped(), lambda rest=rest: self.visit_block(rest), None, one_sided)
                return

    def visit_stmt(self, node) -> bool:
        """Visit one statement; True if it unconditionally leaves the block."""
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            self.error(f"Construct `ast.{type(node).__name__}` not supported in kernels.", node)
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
        if isinstance(node.value, ast.List):
            self.error("List constructs are not supported in kernels. Use vectors like `wp.vec3()` for small "
                       "fixed-size collections, or `wp.zeros(shape=N, dtype=...)` for stack-allocated arrays.",
                       node.value)
        if isinstance(target, ast.Tuple):
            self.assign_tuple(target, node.value)
            return
        value = self.expr(node.value)
        if value is None and isinstance(node.value, ast.Call):
            # (wp.transform_set_translation(t, p) and the like update t in place)
            self.error(f"the call assigned to '{ast.unparse(target)}' returns nothing; a function "
                       "that updates its argument in place is called as a statement", node.value)
        self.assign(target, value)

    def stmt_AnnAssign(self, node):
        if node.value is None:
            self.error("a declaration needs a value: write `x: float = 0.0`", node)
        want = self.resolve_type(self.py_eval(node.annotation), node.annotation)
        self.assign(node.target, self.coerce(self.expr(node.value), want, node.value))

    def stmt_AugAssign(self, node):
        op = _BIN_OPS.get(type(node.op))
        if op is None:
            self.error(f"unsupported operator {type(node.op).__name__}=", node)
        target = self.target_evaluated_once(node.target)
        if isinstance(target, ast.Subscript):
            base = self.expr(target.value)
            if isinstance(base, Value) and isinstance(base.type, TileType):
                key = self.subscript_key(target.slice)
                if len(key) != base.type.ndim or any(isinstance(k, slice) for k in key):
                    self.error("Compound assignment to a tile view (a row or slice, t[i] += x) is not "
                               "supported, as in Warp: write t[i] = t[i] + x", target, kind=ValueError)
            kind = _ATOMIC_AUGMENTED.get(op)
            if isinstance(base, Value) and isinstance(base.type, ArrayType) and kind:
                # As in Warp: `a[i] += x` on an array element is an atomic add (and `-=`,
                # `&=`, `|=`, `^=` the matching atomic update).
                indices = self.indices(target.slice, base.type.ndim, target, write=True)
                value = self.expr(node.value)
                arith.atomic(self, kind, base, indices, value)
                return
        part = array_part(self, target) if not isinstance(target, ast.Name) else None
        if part is not None:  # a part of an array element: updated alone (lang/array_parts.py)
            value = self.expr(node.value)
            kind = _ATOMIC_AUGMENTED.get(op)
            scalar = element_scalar(part.type)
            atomic = kind and scalar is not None and scalar in ATOMIC_TYPES[kind] and not part.reads
            # (a user @func redefining the operator for the part's type runs instead, as in Warp)
            current = part.load(self) if not atomic or self.operator_func(op) is not None else None
            if atomic and (current is None or self.user_operator(op, current, value) is None):
                arith.atomic(self, kind, part.view(self), part.indices, value)
            else:
                new = self.binop(op, current, value, node)
                part.store(self, self.coerce(new, part.type, node, what="the updated component", bit_patterns=True))
            return
        if isinstance(target, ast.Name):
            self.check_rebind(target.id, self.scope.get(target.id), None, target)
        current = self.read_target_root(_as_load(target))
        rhs = self.expr(node.value)
        new = self.binop(op, current, rhs, node)
        if isinstance(target, ast.Name) and op in _TILE_IN_PLACE and all(
                isinstance(v, Value) and isinstance(v.type, TileType) for v in (current, rhs, new)):
            # `t += u` between tiles updates t in place in Warp: a view's source and the
            # views of t see it
            self.assign(target, write_through(self, current, new, f"'{target.id} {_TILE_IN_PLACE[op]}='"))
            return
        self.assign(target, new)

    def target_evaluated_once(self, target):
        """`target` with each index expression in it evaluated now, once, into a temporary
        name: `a[f(i)].x += v` reads and writes the same slot and calls f once, before v is
        evaluated (Python's order)."""
        if isinstance(target, ast.Attribute):
            inner = self.target_evaluated_once(target.value)
            return target if inner is target.value else ast.copy_location(
                ast.Attribute(value=inner, attr=target.attr, ctx=target.ctx), target)
        if not isinstance(target, ast.Subscript):
            return target
        inner = self.target_evaluated_once(target.value)
        index = target.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if all(isinstance(p, (ast.Name, ast.Constant)) for p in parts) and inner is target.value:
            return target
        names = []
        for part in parts:
            if isinstance(part, (ast.Name, ast.Constant, ast.Slice)):  # (slice bounds are constants)
                names.append(part)
                continue
            temp = self.fresh("index")
            self.scope[temp] = self.expr(part)
            names.append(ast.copy_location(ast.Name(id=temp, ctx=ast.Load()), part))
        index = ast.copy_location(ast.Tuple(elts=names, ctx=ast.Load()), index) if len(names) > 1 else names[0]
        return ast.copy_location(ast.Subscript(value=inner, slice=index, ctx=target.ctx), target)

    def check_rebind(self, name, old, new, node):
        """A local bound to a function keeps it: a kernel has no function pointers, and a
        function rebound in a loop or branch would be the wrong one on some paths."""
        from .grad import GradOf
        if not _is_function(old):
            return
        if isinstance(old, GradOf):
            self.error(f"Cannot reassign local '{name}': it holds wp.grad({old.target.name}); "
                       "use another name", node)
        what = "another function" if _is_function(new) else "a non-function value"
        self.error(f"Error rebinding function-valued local '{name}' to {what}; use another name", node)

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
            if isinstance(value, tuple):  # a tuple of run-time values is one (a TupleType)
                value = self.tuple_value(value, old)
            if old is not value:
                self.check_rebind(target.id, old, value, target)
            # a name may take another view (`sub = a[:2]; sub = a[:2, 1]`), and a tile name another
            # tile of its dtype (`m = wp.tile_reshape(m, ...)`), as in Warp
            rebound = isinstance(old, Value) and isinstance(value, Value) and (
                isinstance(old.type, ArrayType) and isinstance(value.type, ArrayType)
                or isinstance(old.type, TileType) and isinstance(value.type, TileType)
                and old.type.dtype is value.type.dtype)
            if rebound:
                pass
            elif isinstance(old, Value) and isinstance(value, (Value, *promotion.WEAK_TYPES, *SCALAR_VALUES)):
                value = self.coerce(value, old.type, target, what=f"'{target.id}'", bit_patterns=True)
            elif promotion.is_weak(value):
                value = self.materialize(value)
            if isinstance(value, Value) and isinstance(value.type, ArrayType) and not value.hint:
                value.hint = target.id  # (an array made or viewed here: errors name it)
            self.scope[target.id] = value
            return
        part = array_part(self, target)
        if part is not None:  # a part of an array element: written alone (lang/array_parts.py)
            if part.container is not None:  # (a component takes exactly its type, as in Warp)
                value = arith.slot_value(self, value, part.type, part.container)
            part.store(self, self.coerce(value, part.type, target, what="the stored value", bit_patterns=True))
            return
        if isinstance(target, ast.Subscript):
            base = self.read_target_root(target.value)
            if isinstance(base, Value) and isinstance(base.type, ArrayType):
                indices = self.indices(target.slice, base.type.ndim, target, write=True)
                if len(indices) != base.type.ndim:
                    self.error("assignment to an array needs one index per dimension", target)
                arith.store(self, base, indices, value)
                return
            if isinstance(base, Value) and isinstance(base.type, (Composite, TileType)):
                updated = arith.set_item(self, base, self.subscript_key(target.slice), value)
                self.assign(target.value, updated)  # (a tile's views follow: set_item's write_through)
                return
            self.error("cannot assign to an element of this value", target)
        if isinstance(target, ast.Attribute):
            base = self.read_target_root(target.value)
            if isinstance(base, Value) and isinstance(base.type, Composite):
                updated = arith.set_attr(self, base, target.attr, value)
                self.assign(target.value, updated)
                return
            self.error(f"cannot assign to attribute '{target.attr}' of this value", target)
        self.error(f"unsupported assignment target: {type(target).__name__}", target)

    def read_target_root(self, node):
        """Read `node`, the base of an assignment target (`a[i]` in `a[i].x = v`, read to be
        written back); the first array subscript in it is the slot being written."""
        self._target_root = True
        try:
            return self.expr(node)
        finally:
            self.__dict__.pop("_target_root", None)

    def stmt_If(self, node):
        cond = self.condition(node.test)
        if not isinstance(cond, Value):  # a compile-time condition selects one branch
            self.visit_block(node.body if cond else node.orelse)
            return
        # A name assigned in one branch only and read elsewhere is zero on the other path
        # (Warp leaves it undefined; Python raises only if that path reads it, so a refusal
        # would reject `if hit: t = ...` followed by `if hit: use(t)`).
        one_sided = {n for n in _assigned_names(node.body) ^ _assigned_names(node.orelse)
                     if self.src.read_outside(n, node)}
        self.emit_if(cond, lambda: self.visit_block(node.body),
                     (lambda: self.visit_block(node.orelse)) if node.orelse else None, one_sided)

    def stmt_Return(self, node):
        if self.kind == "kernel" and node.value is not None:  # (`return None` included, as in Warp)
            self.error(KERNEL_RETURN_MESSAGE, node, kind=TypeError)
        value = self.expr(node.value) if node.value is not None else None
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
        if self.ret_annotated:
            return annotated_return(self, value, node)
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
        from .module import compile_mode
        if compile_mode() != "debug":
            return
        cond = self.condition(node.test)
        if not isinstance(cond, Value):
            if not cond:
                self.error("assertion is always false", node)
            return
        message = ast.unparse(node.test)  # (node line numbers are the file's, not the text's)
        self.b.op("assert", [cond], [], {"message": message})

    def stmt_For(self, node):
        targets = [n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)]
        self.loop_targets.extend(targets)
        try:
            return self._stmt_for(node)
        finally:
            del self.loop_targets[len(self.loop_targets) - len(targets):]

    def _stmt_for(self, node):
        if node.orelse:
            self.error("for/else is not supported", node)
        self._declare_before_loop(node)
        it = node.iter
        backwards = isinstance(it, ast.Call) and self.py_eval_or_none(it.func) is reversed
        if backwards:
            if len(it.args) != 1 or it.keywords:
                self.error("reversed() takes one range(...)", it)
            it = it.args[0]
        if not (isinstance(it, ast.Call) and self.py_eval_or_none(it.func) in (range, arith.RANGE)):
            if not backwards:
                return self.emit_for_iterator(node)
            self.error("for loops must iterate over range(...) or reversed(range(...))", it)
        if not isinstance(node.target, ast.Name):
            self.error("the loop variable must be a plain name", node.target)
        bounds = [self.expr(a) for a in it.args]
        if not 1 <= len(bounds) <= 3 or it.keywords:
            self.error("range takes 1 to 3 positional arguments", it)
        if len(bounds) == 1:
            bounds = [0, bounds[0]]
        start, stop, step = (bounds + [1])[:3]
        start, stop, step = self.range_bounds(start, stop, step, it)
        if backwards:
            start, stop, step = self.reversed_range(start, stop, step, it)
        values = self._static_unroll_values(node, start, stop, step)
        if values is not None:
            self.emit_unrolled(node, values)
        elif self._loop_needs_while(node):
            self.emit_while_range(node, start, stop, step)
        else:
            self.emit_for(node, start, stop, step)

    def stmt_While(self, node):
        if node.orelse:
            self.error("while/else is not supported", node)
        if calls_inout_builtin(node.test):
            # the test updates variables (`while hash_grid_query_next(q, i):`, a random
            # draw): evaluate it in the body, whose updates the loop carries
            return self.stmt_While(_test_in_body(node, node.test, []))
        self._declare_before_loop(node)
        self.emit_while(node, node.test, prologue=None)

    def emit_for_iterator(self, node):
        """`for x in query:` over a value with an advancing builtin (builtins/hash_grid.py
        ITERATORS): `while True: if not next(q, i): break; x = i; body`."""
        from ..builtins.hash_grid import iterator_next
        value = self.expr(node.iter)
        spec = iterator_next(value.type) if isinstance(value, Value) else None
        if spec is None:
            self.error("for loops must iterate over range(...), reversed(range(...)) or a query "
                       "(hash_grid_query(...))", node.iter)
        if not isinstance(node.target, ast.Name):
            self.error("the loop variable must be a plain name", node.target)
        advance, index_type = spec
        q, i = self.fresh("query"), self.fresh("index")
        self.scope[q], self.scope[i] = value, arith.zero(self, index_type)
        self.scope[advance.name] = advance  # the test below calls it by its name
        test = ast.Call(func=ast.Name(id=advance.name, ctx=ast.Load()),
                        args=[ast.Name(id=q, ctx=ast.Load()), ast.Name(id=i, ctx=ast.Load())], keywords=[])
        bind = ast.Assign(targets=[node.target], value=ast.Name(id=i, ctx=ast.Load()))
        loop = ast.While(test=ast.Constant(value=True), body=node.body, orelse=[])
        self.stmt_While(_test_in_body(ast.copy_location(loop, node), test, [bind]))

    def stmt_FunctionDef(self, node):
        self.error("nested function definitions are not supported; use @weft.func", node)

    # Control flow --------------------------------------------------------------------------
    def emit_if(self, cond: Value, then_fn, else_fn, one_sided=frozenset()):
        """Build an `if` op; names rebound in either branch become its results. A name in
        `one_sided` that only one branch defines is zero on the other."""
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
            elif (name == _RETVAL or name in one_sided) and (t is None or e is None) \
                    and any(isinstance(v, Value) and arith.has_zero(v.type) or promotion.is_weak(v) for v in (t, e)):
                names.append(name)  # defined on one path only: zero on the other
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
        views_after_branches(self, names, scopes, merged)
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

    def _static_unroll_values(self, node, start, stop, step):
        """The index values of a loop to unroll at compile time, or None. As in Warp, a
        constant-range loop whose index a `static(...)` expression in its body reads is
        unrolled, so that the index is a constant in each copy of the body."""
        bounds = [constant_value(v) for v in (start, stop, step)]
        if any(b is None for b in bounds):
            return None
        if not any(node.target.id in names
                   for names in _static_expression_names(node.body, self.py_eval_or_none)):
            return None
        return range(*bounds)

    def emit_unrolled(self, node, values):
        """The body once per index value, the index a compile-time constant in each copy.
        `continue` skips the rest of its copy; `break` and `return` skip the later copies."""
        brk, cont = self.fresh("break"), self.fresh("continue")
        can_break = any(isinstance(n, ast.Break) for n in _walk_stmts(node.body, own_loop=True))
        if can_break:
            self.scope[brk] = self.b.const(False, bool_)
        self.loops.append({"break": brk if can_break else None, "continue": cont})
        for k, value in enumerate(values):
            def iteration(value=value):
                self.scope[cont] = self.b.const(False, bool_)
                self.scope[node.target.id] = value
                self.visit_block(node.body)
            stopped = [self.scope[n] for n in (brk, _RET) if isinstance(self.scope.get(n), Value)]
            if k > 0 and stopped:
                self.b.loc = self.loc(node)
                flag = stopped[0] if len(stopped) == 1 else self.b.select(stopped[0], stopped[0], stopped[1])
                self.emit_if(self.b.unary("not", flag), iteration, None)
            else:
                iteration()
        self.loops.pop()
        for name in (brk, cont):
            self.scope.pop(name, None)

    def _keep_index_after_loop(self, node, start, stop=None, step=None):
        """Python keeps a loop's index after the loop (its last value). When the function
        reads the name outside the loop, the index becomes a loop-carried value; or, for a
        constant range whose body does not rebind it, the constant last value (set by
        `_index_after_loop`)."""
        name = node.target.id
        if not self.src.read_outside(name, node):
            return False
        if self._constant_last_index(node, start, stop, step) is not None:
            return False
        old = self.scope.get(name)
        if not (isinstance(old, Value) and old.type is start.type):
            self.scope[name] = start  # (an empty loop leaves the start value)
        return True

    def _constant_last_index(self, node, start, stop, step):
        """(last index value,) of a constant, non-empty range whose body does not rebind the
        index; () for an empty constant range; None otherwise."""
        bounds = [constant_value(v) if isinstance(v, Value) else None for v in (start, stop, step)]
        if any(b is None for b in bounds) or node.target.id in _assigned_names(node.body):
            return None
        r = range(*bounds)
        return (r[-1],) if len(r) else ()

    def _index_after_loop(self, node, start, stop, step, before):
        last = self._constant_last_index(node, start, stop, step)
        name = node.target.id
        if last is None:
            return
        if last:
            # a variable like any other (a later loop may rebind it: it must be carried there)
            self.scope[name] = self.b.const(last[0], start.type)
        elif name in before:
            self.scope[name] = before[name]

    def emit_for(self, node, start, stop, step):
        keep_index = self._keep_index_after_loop(node, start, stop, step)
        carried = self._carried_names(node)
        if keep_index and node.target.id not in carried:
            carried.append(node.target.id)
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
        views_into_loop(self, carried, inits, body.args[1:])
        self.loops.append({"break": None, "continue": self.fresh("continue"), "carried": set(carried),
                           "outer": set(before), "key": (node.lineno, node.col_offset)})
        with self.b.at(body):
            self.scope[self.loops[-1]["continue"]] = self.b.const(False, bool_)
            self.visit_block(node.body)
            yielded = self._yield_carried(carried, body, node)
        self.loops.pop()
        attrs = {"trip_count": trip} if trip is not None else {}
        self.b.loc = self.loc(node)
        op = self.b.op("for", [start, stop, step] + inits, [v.type for v in inits], attrs, [body])
        views_out_of_loop(self, carried, body.args[1:], yielded, op.results, "a loop")
        self._after_loop(before, node, carried, op.results)
        self._index_after_loop(node, start, stop, step, before)

    def emit_while_range(self, node, start, stop, step):
        """A range loop that can break or return, lowered to a while over a counter."""
        counter = self.fresh("counter")
        self.scope[counter] = start
        self._keep_index_after_loop(node, start)  # (a break may end it early: carried)
        cont = (node.target.id, counter, step)
        test = ("range", counter, stop, step)
        self.emit_while(node, test, prologue=cont)

    def emit_while(self, node, test, prologue):
        brk, cont = self.fresh("break"), self.fresh("continue")
        self.scope[brk] = self.b.const(False, bool_)
        extra = [brk] + ([prologue[1]] if prologue else [])
        if prologue and isinstance(self.scope.get(prologue[0]), Value):
            extra.append(prologue[0])  # the index, kept after the loop
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
        views_into_loop(self, carried, inits, cond_block.args)
        with self.b.at(cond_block):
            stop_now = self.jump_flag([brk])
            self.b.loc = self.loc(node)

            go = self.emit_if_value(stop_now, lambda: self.b.const(False, bool_),
                                    lambda: self._while_test(test, node), "__c")
            self.b.op("yield", [go])
        self.scope = dict(before)
        self.scope.update(zip(carried, body.args))
        views_into_loop(self, carried, inits, body.args)
        self.loops.append({"break": brk, "continue": cont, "carried": set(carried), "outer": set(before),
                           "key": (node.lineno, node.col_offset)})
        with self.b.at(body):
            self.scope[cont] = self.b.const(False, bool_)
            if prologue is not None:
                target, counter, step = prologue
                self.scope[target] = self.scope[counter]
                self.scope[counter] = self.b.add(self.scope[counter], step)
            self.visit_block(node.body)
            yielded = self._yield_carried(carried, body, node)
        self.loops.pop()
        self.b.loc = self.loc(node)
        op = self.b.op("while", inits, types, regions=[cond_block, body])
        views_out_of_loop(self, carried, body.args, yielded, op.results, "a loop")
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

    def _declare_before_loop(self, node):
        """Names first assigned in this loop's body and read after it (found on an earlier
        attempt, see NeedLoopDeclaration) start as zero here, so the loop carries them."""
        for name, t in self.loop_declarations.get((node.lineno, node.col_offset), {}).items():
            if not isinstance(self.scope.get(name), Value):
                self.scope[name] = arith.zero(self, t)

    def _yield_carried(self, carried, body, node):
        # the types of names first assigned in the body, should they be read after the loop
        self._body_types = {n: v.type for n in _assigned_names(node.body, calls=False)
                            if n not in carried and isinstance(v := self.scope.get(n), Value)
                            and not isinstance(v.type, ArrayType)}
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
        return vals

    def _after_loop(self, before, node, carried, results):
        after = dict(before)
        for name, r in zip(carried, results):
            r.hint = _hint(name)
            after[name] = r
        body_types = getattr(self, "_body_types", {})
        for name in _assigned_names(node.body, calls=False) | ({node.target.id} if hasattr(node, "target") else set()):
            if name not in after:
                t = body_types.get(name)
                after[name] = Undefined(f"'{name}' is assigned inside the loop at line "
                                        f"{node.lineno} and is not available after it; "
                                        f"assign it before the loop",
                                        declare=((node.lineno, node.col_offset), name, t) if t is not None else None)
        self.scope = after

    def _carried_names(self, node) -> list[str]:
        implicit = self.loop_carries.get((node.lineno, node.col_offset), set())  # (frontend.py)
        names = [n for n in sorted(_assigned_names(node.body) | implicit)
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

    def reversed_range(self, start, stop, step, node):
        """Bounds of the range that runs `range(start, stop, step)` backwards."""
        t = start.type
        consts = [constant_value(v) for v in (start, stop, step)]
        if all(c is not None for c in consts):
            r = range(*consts)[::-1]
            return [self.b.const(x, t) for x in (r.start, r.stop, r.step)]
        if not t.is_signed:
            self.error(f"reversed(range(...)) needs signed bounds, got {t!r}", node)

        def op(name, a, b):
            return arith.binary(self, name, a, b)
        zero, one = self.b.const(0, t), self.b.const(1, t)
        up = self.b.cmp("gt", step, zero)
        span = self.b.select(up, op("sub", stop, start), op("sub", start, stop))  # along the step
        size = self.b.select(up, step, arith.unary(self, "neg", step))
        count = op("div", op("add", span, op("sub", size, one)), size)  # ceil(span / size)
        count = self.b.select(self.b.cmp("gt", span, zero), count, zero)
        first = op("add", start, op("mul", op("sub", count, one), step))
        return first, op("sub", start, step), arith.unary(self, "neg", step)

    def range_bounds(self, start, stop, step, node):
        vals = [start, stop, step]
        typed = [v.type for v in vals if isinstance(v, Value)]
        t = typed[0] if typed else int32
        if isinstance(step, (int, np.integer)) and step == 0:
            self.error("range() step must not be zero", node, kind=ValueError)
        out = []
        for v in vals:
            if isinstance(v, Value) and not (isinstance(v.type, Scalar) and v.type.is_int):
                self.error(f"range() bounds must be integers, got {v.type!r}", node, kind=TypeError)
            out.append(self.coerce(v, t, node, "range bound"))
        return out


def _test_in_body(loop, test, prefix):
    """`while True: if not (test): break; *prefix; *body`, at `loop`'s place."""
    stop = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=test), body=[ast.Break()], orelse=[])
    out = ast.While(test=ast.Constant(value=True), body=[stop, *prefix, *loop.body], orelse=[])
    for n in (out, stop, stop.test, stop.body[0], out.test, *prefix):
        ast.copy_location(n, loop)
    for n in prefix:
        for m in ast.walk(n):
            ast.copy_location(m, loop)
    for m in ast.walk(test):
        if not hasattr(m, "lineno"):
            ast.copy_location(m, loop)
    return out
