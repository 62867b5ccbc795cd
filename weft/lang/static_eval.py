"""`weft.static(expr)`: an expression evaluated in Python, not compiled.

As in Warp, one that needs nothing of the kernel's own (no parameter, local or loop index)
is evaluated once, when the kernel is defined; the others when the kernel is compiled
(in each unrolled copy of a loop whose index they read). At compile time the expression
sees the kernel's globals and closure, the compile-time constants of its scope (an
unrolled loop's index, a constant local) and `len(v)` of a local vector, matrix or tuple
(its length is part of its type). Names bound to run-time values are hidden, so that a
global of the same name is never used in their place; but a name bound only as a loop
index is the kernel's own only inside its loops (outside them, as in Warp, a global of that
name is used if there is one). The value must be one a kernel can
hold: a number, string, vector, matrix, struct without arrays, type or function.
"""

from __future__ import annotations

import ast
import numbers
import sys

from ..ir.core import Value, constant_value
from ..types import CompositeValue, Matrix, StructValue, TileType, TupleType, Type, Vector
from ..types.scalars import SCALAR_VALUES
from .ast_helpers import Undefined, _assigned_names


def statics_at_definition(pyfunc, parsed) -> dict:
    """The `static(...)` values of a kernel or func that are evaluated when it is defined
    (Warp does so for both; see eager_static_values): {} where it has none, or where its
    source cannot be read (`parsed()` raises; reported when it is compiled)."""
    if not _mentions_static(pyfunc):
        return {}
    try:
        return eager_static_values(parsed())
    except TypeError:
        return {}


def _mentions_static(pyfunc) -> bool:
    """Whether `pyfunc` names `static` or a global or closure variable bound to it (an alias,
    `_alias = wp.static`, resolved when the kernel is defined, as in Warp)."""
    names = pyfunc.__code__.co_names
    if "static" in names:
        return True
    # (static lives in the builtins, which load with the compiler: a process that has not
    # loaded them has no alias of it, and a warm one must not load them here)
    STATIC = getattr(sys.modules.get("weft.builtins.arith"), "STATIC", None)  # noqa: N806
    if STATIC is None:
        return False
    return any(pyfunc.__globals__.get(n) is STATIC for n in names) or \
        any(_cell_value(c) is STATIC for c in pyfunc.__closure__ or ())


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # (not yet bound)
        return None


def eager_static_values(source) -> dict:
    """The `static(...)` expressions of a kernel evaluated when it is defined, as Warp does:
    each outermost one whose expression reads no local name (parameters, assigned names,
    loop indices), in source order. Keyed by the call's source span; one that fails is left
    for the compiler, which reports it at its line."""
    tree = source.tree
    loop_only = loop_only_names(tree)
    local = ({a.arg for a in tree.args.args} | _assigned_names(tree.body, calls=False)) - loop_only
    env = dict(source.globals)
    env.update(source.closure)
    calls = sorted(_outermost_static_calls(tree, env), key=lambda c: (c[0].lineno, c[0].col_offset))
    values = {}
    for call, enclosing in calls:
        if len(call.args) != 1 or call.keywords:
            continue
        if any(isinstance(n, ast.Name) and (n.id in local or n.id in enclosing)
               for n in ast.walk(call.args[0])):
            continue
        try:
            code = compile(ast.Expression(body=call.args[0]), source.file, "eval")
            values[static_key(call)] = eval(code, env)  # noqa: S307 - the user's own source
        except Exception:  # noqa: BLE001, S112 - evaluated (and reported) when compiling
            continue
    return values


def static_key(call) -> tuple:
    return (call.lineno, call.col_offset, call.end_lineno, call.end_col_offset)


def loop_only_names(tree) -> set[str]:
    """Names the function binds only as `for` loop indices (not parameters, not assigned).
    As in Warp, such a name is the kernel's own only inside its loops: a `static(...)`
    elsewhere that reads it sees the global (or closure) variable of that name, if any."""
    targets, bound = set(), {a.arg for a in tree.args.args}
    index_nodes = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.For):
            for t in ast.walk(n.target):
                if isinstance(t, ast.Name):
                    targets.add(t.id)
                    index_nodes.add(id(t))
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and id(n) not in index_nodes:
            bound.add(n.id)
    return targets - bound


def _outermost_static_calls(tree, env):
    """(call, index names of the loops enclosing it) for each outermost `static(...)` call."""
    from ..builtins.arith import STATIC
    stack = [(n, frozenset()) for n in tree.body]
    while stack:
        n, enclosing = stack.pop()
        if isinstance(n, ast.Call) and (isinstance(n.func, ast.Name) or
                                        isinstance(n.func, ast.Attribute) and n.func.attr == "static"):
            try:
                func = eval(compile(ast.Expression(body=n.func), "<static>", "eval"), env)  # noqa: S307
            except Exception:  # noqa: BLE001
                func = None
            if func is STATIC:
                yield n, enclosing
                continue  # (a static inside it runs when it is evaluated)
        if isinstance(n, ast.For):
            inner = enclosing | {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
            stack.append((n.iter, enclosing))
            stack.extend((c, inner) for c in (*n.body, *n.orelse))
        elif not isinstance(n, (ast.FunctionDef, ast.Lambda)):
            stack.extend((c, enclosing) for c in ast.iter_child_nodes(n))


def evaluate_static(compiler, node):
    """The value of `static(expr)` (`node` is the call), or a compile error."""
    eager = getattr(compiler.src, "eager_statics", None) or {}
    if static_key(node) in eager:  # evaluated when the kernel was defined
        value = eager[static_key(node)]
        why = unsupported_reason(value)
        if why is not None:
            compiler.error(f"Static expression returns an unsupported value: {why}", node)
        return value
    expr = _with_static_lengths(node.args[0], compiler.scope)
    env = dict(compiler.src.globals)
    env.update(compiler.src.closure)
    # A loop index read outside its loops: the global (or closure) variable of that name
    # when there is one, as Warp evaluates such an expression when the kernel is defined.
    loop_only = getattr(compiler.src, "loop_only_names", None)
    if loop_only is None:
        loop_only = compiler.src.loop_only_names = loop_only_names(compiler.src.tree)
    outside = (loop_only - set(getattr(compiler, "loop_targets", ()))) & env.keys()
    for name, value in compiler.scope.items():
        if name in outside:
            continue
        known = constant_value(value) if isinstance(value, Value) else None
        if known is not None:  # a local holding a constant here (`n = 3`) is that constant
            env[name] = known
        elif isinstance(value, (Value, Undefined)):
            env.pop(name, None)
        else:
            env[name] = value
    code = compile(ast.Expression(body=expr), compiler.src.file, "eval")
    try:
        value = eval(code, env)  # noqa: S307 - the user's own source, as Python would run it
    except NameError as e:
        compiler.error(f"Error evaluating static expression: {e}. Make sure all variables used "
                       f"in the static expression are constant.", node)
    except Exception as e:  # noqa: BLE001 - reported as a compile error at the expression
        compiler.error(f"Error evaluating static expression: {e}", node)
    why = unsupported_reason(value)
    if why is not None:
        compiler.error(f"Static expression returns an unsupported value: {why}", node)
    return value


def unsupported_reason(value) -> str | None:
    """Why a kernel cannot hold `value` (None if it can)."""
    if value is None:
        return "None is returned"
    if isinstance(value, (numbers.Number, *SCALAR_VALUES, str, CompositeValue, Type)):
        return None
    if _is_array(value):
        return "a Warp array cannot be created inside Warp kernels"
    if isinstance(value, StructValue):
        return _struct_reason(value, value._type.key, ())
    if isinstance(value, tuple):
        return next((w for w in map(unsupported_reason, value) if w is not None), None)
    if _is_callable_in_kernels(value):
        return None
    return f"value of type {type(value)} cannot be constructed inside Warp kernels"


def _struct_reason(s, key: str, path: tuple) -> str | None:
    for name, t in s._type.fields.items():
        field = getattr(s, name)
        if isinstance(field, StructValue):
            why = _struct_reason(field, key, (*path, name))
            if why is not None:
                return why
            continue
        why = ("a Warp array cannot be created inside Warp kernels"
               if getattr(t, "is_array", False) else unsupported_reason(field))
        if why is not None:
            return (f"the returned Warp struct contains a data type that cannot be constructed "
                    f"inside Warp kernels: {why} at {key}.{'.'.join((*path, name))}")
    return None


def _is_array(value) -> bool:
    return all(hasattr(value, a) for a in ("descriptor", "dtype", "shape", "ndim"))


def _is_callable_in_kernels(value) -> bool:
    from ..builtins.registry import Builtin
    from .function import Func
    return isinstance(value, (Func, Builtin))


def static_length(t):
    """The length `len()` gives a value of type `t`, when the type fixes it."""
    if isinstance(t, Vector):
        return t.length
    if isinstance(t, Matrix):
        return t.rows
    if isinstance(t, TupleType):
        return len(t.elements)
    if isinstance(t, TileType):
        return t.shape[0]
    return None


def _with_static_lengths(expr, scope):
    """`expr` with each `len(name)` of a local whose type fixes its length replaced by that
    length (a copy; the function's AST is shared)."""
    def length_of(call):
        if not (isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords):
            return None
        func = call.func
        if not ((isinstance(func, ast.Name) and func.id == "len")
                or (isinstance(func, ast.Attribute) and func.attr == "len")):
            return None
        arg = call.args[0]
        value = scope.get(arg.id) if isinstance(arg, ast.Name) else None
        return static_length(value.type) if isinstance(value, Value) else None

    class Substitute(ast.NodeTransformer):
        def visit_Call(self, call):
            n = length_of(call)
            if n is not None:
                return ast.copy_location(ast.Constant(n), call)
            return self.generic_visit(call)

    import copy
    return ast.fix_missing_locations(Substitute().visit(copy.deepcopy(expr)))
