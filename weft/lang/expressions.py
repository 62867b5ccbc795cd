"""Frontend expressions: names, constants, operators, comparisons, subscripts."""

from __future__ import annotations

import ast
import enum
import numbers
import operator

import numpy as np

from ..builtins import arith, array_ops
from ..ir.core import Value, constant_value
from ..types import (
    ArrayType,
    CompositeValue,
    Scalar,
    StructType,
    bool_,
    int32,
    int64,
)
from . import promotion
from .ast_helpers import (
    _BIN_OPS,
    _CMP_OPS,
    _CMP_SYMBOLS,
    NeedLoopDeclaration,
    Undefined,
    _describe,
    fold_constants,
)

# the builtin whose name a user @func takes to redefine an operator (Warp's names)
_OPERATOR_BUILTINS = {"bitand": "bit_and", "bitor": "bit_or", "bitxor": "bit_xor", "shl": "lshift", "shr": "rshift"}


class ExpressionsMixin:
    """Expression visitors of `FunctionCompiler`."""

    # Expressions ---------------------------------------------------------------------------
    def expr(self, node):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            self.error(f"Construct `ast.{type(node).__name__}` not supported in kernels.", node)
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
                if v.declare is not None:
                    raise NeedLoopDeclaration(*v.declare)
                self.error(v.why, node)
            return v
        found, value = self.src.lookup(name)
        if not found:
            self.error(f"Referencing undefined symbol: {name}", node, kind=KeyError)
        from ..runtime.array import array
        if isinstance(value, array):  # its contents would be frozen into the code
            self.error(f"'{name}' is an array from outside the kernel; pass it as a parameter: "
                       f"Invalid external reference type: {type(value)}", node, kind=TypeError)
        return value

    def expr_Attribute(self, node):
        base = self.expr(node.value)
        if isinstance(base, Value):
            t = base.type
            if isinstance(t, StructType) and node.attr not in t.fields:
                self.error(f"`{node.attr}` is not an attribute of '{ast.unparse(node.value)}' "
                           f"({t.key})", node, kind=AttributeError)
            return arith.get_attr(self, base, node.attr)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            self.error(f"`{node.attr}` is not an attribute of '{_describe(base)}'", node, kind=AttributeError)

    def expr_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    def expr_List(self, node):
        return self.expr_Tuple(node)

    def expr_BinOp(self, node):
        op = _BIN_OPS.get(type(node.op))
        if op is None:
            self.error(f"unsupported operator {type(node.op).__name__}", node)
        return self.binop(op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op, a, b, node, user=True):
        if not isinstance(a, Value) and not isinstance(b, Value):
            try:
                if op == "matmul":  # (Warp's `@` is its `mul`: numbers multiply)
                    if not (isinstance(a, numbers.Number) and isinstance(b, numbers.Number)):
                        raise TypeError("@ needs a matrix")
                    op = "mul"
                return fold_constants(op, a, b)
            except Exception as e:  # noqa: BLE001 - reported as a compile error
                self.error(f"cannot evaluate constant expression: {e}", node)
        redefined = self.user_operator(op, a, b) if user else None
        if redefined is not None:
            return redefined.emit_call(self, [a, b], {}, node)
        return arith.binary(self, op, a, b)

    def operator_func(self, op):
        """The @func named like operator `op`'s builtin that the kernel's module defines, or None."""
        from .function import Func
        found, f = self.src.lookup(_OPERATOR_BUILTINS.get(op, op))
        return f if found and isinstance(f, Func) else None

    def user_operator(self, op, a, b):
        """As in Warp, an operator calls a @func named like the operator's builtin (`add`,
        `mul`, `bit_and`, ...) that the kernel's module defines, when an overload of it takes
        exactly the operands' types (a struct `a + b`, or float32 `+` redefined); else None."""
        from .function import GENERIC, is_generic
        f = self.operator_func(op)
        if f is None:
            return None

        def takes(want, x):
            if isinstance(x, Value):
                return x.type is want
            return isinstance(want, Scalar) and promotion.is_weak(x) and (want.is_float or isinstance(x, int))

        for overload in f.overloads:
            if overload.pyfunc.__name__ == self.src.tree.name and overload.pyfunc.__globals__ is self.src.globals:
                continue  # inside the operator's own definition, `+` is the builtin one
            params = list(overload.params.values())
            if len(params) == 2 and not any(t is GENERIC or is_generic(t) for t in params) \
                    and all(takes(want, x) for want, x in zip(params, (a, b))):
                return f
        return None

    def expr_UnaryOp(self, node):
        v = self.expr(node.operand)
        kind = {ast.USub: "neg", ast.UAdd: "pos", ast.Not: "not", ast.Invert: "invert"}[type(node.op)]
        if not isinstance(v, Value):
            if kind == "neg" and isinstance(v, float) and not isinstance(node.operand, ast.Constant):
                return 0.0 - v  # (Warp negates a computed value as 0 - x: -(0.0 * 1.0) is +0.0)
            fold = {"neg": operator.neg, "pos": operator.pos, "not": operator.not_,
                    "invert": operator.invert}[kind]
            return fold(_plain_int(v))
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
            # one comparison converts two types as C++ does (arith.compare); a chain, as in Warp, may not
            if len(node.ops) > 1 and isinstance(left, Value) and isinstance(right, Value) \
                    and left.type is not right.type:
                self.error(f"Cannot chain comparisons of unequal types: {left.type!r} "
                           f"{_CMP_SYMBOLS[type(op_node)]} {right.type!r}", node, kind=TypeError)
            if not isinstance(left, Value) and not isinstance(right, Value):
                c = fold_constants(pred, left, right)
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
        if isinstance(base, tuple) and not isinstance(node.slice, ast.Slice):  # a tuple literal's item
            key = self.expr(node.slice)
            if isinstance(key, Value) and constant_value(key) is None:  # t[i], i known at run time
                return arith.get_item(self, self.materialize(base), (key,))
            key = constant_value(key) if isinstance(key, Value) else key
            try:
                return base[key]
            except Exception as e:  # noqa: BLE001
                self.error(f"cannot index {_describe(base)}: {e}", node)
        if not isinstance(base, Value):
            if isinstance(base, (list, dict)) and self._indexed_at_run_time(node.slice):
                self.error(f"Invalid external reference type: {type(base).__name__} (a Python "
                           f"{type(base).__name__} cannot be indexed by a run-time value; pass a wp.array, "
                           f"or make it a wp.constant vector)", node, kind=TypeError)
            key = self.py_eval(node.slice)
            try:
                return base[key]
            except Exception as e:  # noqa: BLE001
                self.error(f"cannot index {_describe(base)}: {e}", node)
        if isinstance(base.type, ArrayType):
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(isinstance(p, ast.Slice) for p in parts):  # a view: a[1:], a[::-1, 2]
                return array_ops.slice_array(self, base, [self.slice_part(p) for p in parts])
            indices = self.indices(node.slice, base.type.ndim, node)
            return arith.load(self, base, indices)
        return arith.get_item(self, base, self.subscript_key(node.slice))

    def _indexed_at_run_time(self, slice_node) -> bool:
        """Whether a subscript's key is a run-time value (a name bound to one, say)."""
        names = {n.id for n in ast.walk(slice_node) if isinstance(n, ast.Name)}
        return any(isinstance(self.scope.get(name), Value) for name in names)

    def slice_part(self, node):
        """One key of an array slice expression: a Python `slice` of values, or an index."""
        if isinstance(node, ast.Slice):
            return slice(*(None if n is None else self.expr(n) for n in (node.lower, node.upper, node.step)))
        return self.expr(node)

    def subscript_key(self, slice_node):
        """The key of `v[...]` as a tuple: Values, ints, and Python slices of constant
        bounds (`v[1:]`, `m[0, :2]`: slices of vectors and matrices have static sizes)."""
        parts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
        if not any(isinstance(p, ast.Slice) for p in parts):
            key = self.expr(slice_node)
            return key if isinstance(key, tuple) else (key,)
        return tuple(self.constant_slice(p) if isinstance(p, ast.Slice) else self.expr(p) for p in parts)

    def constant_slice(self, node: ast.Slice) -> slice:
        bounds = []
        for n in (node.lower, node.upper, node.step):
            v = None if n is None else self.expr(n)
            if isinstance(v, Value) and constant_value(v) is not None:  # a local holding a constant
                v = constant_value(v)
            if isinstance(v, Value) or not (v is None or isinstance(v, (int, np.integer))) or isinstance(v, bool):
                self.error("slice bounds of vectors and matrices must be compile-time integer constants "
                           "(the result's size is part of its type)", n)
            bounds.append(None if v is None else int(v))
        if bounds[2] == 0:
            self.error("slice step cannot be zero", node, kind=ValueError)
        return slice(*bounds)

    def indices(self, slice_node, ndim, node, write=False):
        """The integer index Values of `node`'s subscript of an array with `ndim` dimensions.
        A non-integer index is a TypeError pointing at it, in Warp's words for a write when
        this is an assignment target or its root (see `read_target_root`)."""
        write = write or self.__dict__.pop("_target_root", False)  # (before the key's own indices)
        key = self.subscript_key(slice_node)
        if len(key) > ndim:
            self.error(f"Incorrect number of indices specified for array indexing: too many "
                       f"indices ({len(key)}) for an array of {ndim} dimension(s)", node,
                       kind=IndexError)
        parts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
        if len(parts) != len(key):  # (a tuple-valued name: point at the subscript)
            parts = [node] * len(key)
        out = []
        for k, part in zip(key, parts):
            if isinstance(k, Value) and isinstance(k.type, Scalar) and k.type.is_int:
                out.append(k)
            elif isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
                wide = promotion.fits(int(k), int32)
                if not wide and not promotion.fits(int(k), int64):
                    self.error(f"array index {k} does not fit a 64-bit integer", part)
                out.append(self.b.const(int(k), int32 if wide else int64))
            else:
                got = repr(k.type) if isinstance(k, Value) else repr(k)
                rule = "Array slot write indices must be integers" if write else "Array indices must be integers"
                self.error(f"{rule}, got {got}", part, kind=TypeError)
        return out


def _plain_int(value):
    """An IntEnum or IntFlag member as the int it is: in kernels, as in Warp, `~Flags.A` is
    the integer's complement, not Python's masked combination of the other flags."""
    return int(value) if isinstance(value, enum.Enum) and isinstance(value, int) else value
