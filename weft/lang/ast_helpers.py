"""Module-level helpers of the frontend: operator tables, constant folding, AST queries."""

from __future__ import annotations

import ast
import builtins as py_builtins
import math
import operator

import numpy as np

from ..ir.core import Value
from ..types import bool_, tile
from . import promotion

_BIN_OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div",
            ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul",
            ast.BitAnd: "bitand", ast.BitOr: "bitor", ast.BitXor: "bitxor",
            ast.LShift: "shl", ast.RShift: "shr"}


_CMP_OPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt",
            ast.GtE: "ge"}
_CMP_SYMBOLS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
                ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


_PY_FOLD = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
            "div": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
            "pow": operator.pow, "bitand": operator.and_, "bitor": operator.or_,
            "bitxor": operator.xor, "shl": operator.lshift, "shr": operator.rshift,
            "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
            "gt": operator.gt, "ge": operator.ge}


# Python builtins that mean a weft builtin inside kernels.
_PY_ALIASES = {py_builtins.abs: "abs", py_builtins.min: "min", py_builtins.max: "max",
               py_builtins.round: "round", py_builtins.len: "len", py_builtins.print: "print",
               py_builtins.pow: "pow", tile: "tile"}  # wp.tile: an annotation type, and tile(x) in kernels


_RET, _RETVAL = "__return", "__retval"


class Undefined:
    """A name that exists on some paths only (a branch, a loop body). Using it is an error,
    except for a name first assigned in a loop body (`declare`: (loop key, name, type)):
    reading it after the loop recompiles the function with the name declared as zero before
    the loop and carried through it, which gives Python's (and Warp's) value after a loop
    that ran, and zero after one that did not."""

    def __init__(self, why: str, declare=None):
        self.why = why
        self.declare = declare


class NeedLoopCarry(Exception):
    """A loop must carry variable `name` although no assignment in it names it (a tile view
    written through to its source, a tile a func updates): compile again, carrying it."""

    def __init__(self, loop_key, name):
        self.loop_key, self.name = loop_key, name


class NeedLoopDeclaration(Exception):
    """Raised where a name first assigned in a loop body is read after the loop."""

    def __init__(self, loop_key, name, type_):
        self.loop_key, self.name, self.type = loop_key, name, type_


class NeedReturnType(Exception):
    """Raised on the first `return` of a func with early returns and no annotation."""

    def __init__(self, type_):
        self.type = type_


def fold_constants(op: str, a, b, wrap: bool = True):
    """`a op b` for two compile-time numbers, with the kernel's run-time semantics (C's and
    Warp's, not Python's): int `/` truncates, `%` keeps the dividend's sign (fmod for floats),
    and arithmetic on Python float literals is float32 arithmetic, as Warp's literals are
    float32 (`0.1 + 0.2 == 0.3` holds, `(1.0 + 1e-8) - 1.0` is 0)."""
    if any(type(x) is float for x in (a, b)) and all(type(x) in (int, float, bool) for x in (a, b)):
        with np.errstate(all="ignore"):
            result = fold_constants(op, np.float32(a), np.float32(b))
        return result.item() if isinstance(result, np.generic) else result
    if wrap and op in _INT32_OPS and all(isinstance(x, int) and not isinstance(x, bool) for x in (a, b)):
        # Python ints are Warp's int32 literals: their arithmetic wraps as it does at run time
        # (`100000 * 100000 // 100000` is 14100 there, and so here)
        return _int32(fold_constants(op, _int32(a), b if op in ("shl", "shr") else _int32(b), wrap=False))
    ints = all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in (a, b))
    if op in ("div", "mod", "floordiv") and b == 0:
        if ints:
            raise ZeroDivisionError("integer division by zero")
        return type(a)(_float_div_by_zero(op, float(a), float(b))) if isinstance(a, np.floating) \
            else _float_div_by_zero(op, float(a), float(b))
    if ints and op == "div":
        q = abs(int(a)) // abs(int(b))
        return q if (a < 0) == (b < 0) else -q
    if op == "mod":
        if ints:
            return int(a) - int(b) * fold_constants("div", a, b)
        return np.fmod(a, b) if isinstance(a, np.floating) else math.fmod(a, b)
    if op == "floordiv" and isinstance(a, np.floating):
        return np.floor(a / b)
    return _PY_FOLD[op](a, b)


#: the integer operations whose folding wraps to int32 (`**`, which Warp has no int form
#: of, stays exact; comparisons compare the values they are given)
_INT32_OPS = ("add", "sub", "mul", "div", "floordiv", "mod", "bitand", "bitor", "bitxor", "shl", "shr")


def _int32(x):
    """The int32 value with the low 32 bits of a Python int (an IntEnum member stays one
    while it fits, as it is then the same number)."""
    if -(1 << 31) <= x < (1 << 31):
        return x
    return (int(x) + (1 << 31)) % (1 << 32) - (1 << 31)


def _float_div_by_zero(op: str, a: float, b: float) -> float:
    """IEEE 754 results of a float division by (signed) zero: +-inf, or nan for 0/0, nan for
    fmod; `//` is floor(a / b), so it gives the same infinities."""
    if op == "mod" or a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


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


def _assigned_names(stmts, calls: bool = True) -> set[str]:
    """Names a block may rebind: assignment targets, components assigned, and (if `calls`)
    in-place state (a name passed first to a call)."""
    names = set()
    for n in _walk_stmts(stmts):
        targets = []
        if isinstance(n, ast.Assign):
            targets = n.targets
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            targets = [n.target]
        elif isinstance(n, ast.For):
            targets = [n.target]
        elif calls and isinstance(n, ast.Call) and n.args:
            for pos in _inout_positions(n.func):  # possibly in-place arguments (random state)
                if pos < len(n.args) and isinstance(n.args[pos], ast.Name):
                    names.add(n.args[pos].id)
        for t in targets:
            names |= _target_names(t)
    return names


def _inout_positions(func_node) -> tuple[int, ...]:
    """Argument positions a call may update in place: a builtin's declared `inout`
    positions where the callee is spelled with a builtin's name, else the first."""
    from ..builtins.registry import BUILTINS
    name = func_node.attr if isinstance(func_node, ast.Attribute) else getattr(func_node, "id", None)
    b = BUILTINS.get(name)
    return b.inout if b is not None and b.inout else (0,)


def calls_inout_builtin(node) -> bool:
    """Whether expression `node` calls (by name) a builtin that updates arguments in place."""
    from ..builtins.registry import BUILTINS
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if (b := BUILTINS.get(name)) is not None and b.inout:
                return True
    return False


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


def _static_expression_names(stmts, evaluate):
    """For each `static(...)` call in the statements, the set of names its argument reads.
    `evaluate(func_node)` resolves a call's function (the compiler's Python evaluation)."""
    from ..builtins.arith import STATIC
    for n in _walk_stmts(stmts):
        if isinstance(n, ast.Call) and n.args and isinstance(n.func, (ast.Name, ast.Attribute)) \
                and (n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id) == "static" \
                and evaluate(n.func) is STATIC:
            yield {m.id for m in ast.walk(n.args[0]) if isinstance(m, ast.Name)}


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
    if t is None or e is None:  # a constant on one path only
        return promotion.default_type(e if t is None else t)
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
