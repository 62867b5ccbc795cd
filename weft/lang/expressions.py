"""Frontend expressions: names, constants, operators, comparisons, subscripts."""

from __future__ import annotations

import ast
import operator

import numpy as np

from ..builtins import arith, array_ops
from ..ir.core import Value
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
    _PY_FOLD,
    NeedLoopDeclaration,
    Undefined,
    _describe,
    fold_constants,
)


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
            self.error(f"Invalid external reference type: {type(value)}: '{name}' is an array from "
                       "outside the kernel; pass it as a parameter", node, kind=TypeError)
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
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(isinstance(p, ast.Slice) for p in parts):  # a view: a[1:], a[::-1, 2]
                return array_ops.slice_array(self, base, [self.slice_part(p) for p in parts])
            indices = self.indices(node.slice, base.type.ndim, node)
            return arith.load(self, base, indices)
        return arith.get_item(self, base, self.subscript_key(node.slice))

    def slice_part(self, node):
        """One key of an array slice expression: a Python `slice` of values, or an index."""
        if isinstance(node, ast.Slice):
            return slice(*(None if n is None else self.expr(n) for n in (node.lower, node.upper, node.step)))
        return self.expr(node)

    def subscript_key(self, slice_node):
        if isinstance(slice_node, ast.Slice):
            self.error("slices are not supported inside kernels", slice_node)
        key = self.expr(slice_node)
        return key if isinstance(key, tuple) else (key,)

    def indices(self, slice_node, ndim, node):
        key = self.subscript_key(slice_node)
        if len(key) > ndim:
            self.error(f"Incorrect number of indices specified for array indexing: too many "
                       f"indices ({len(key)}) for an array of {ndim} dimension(s)", node,
                       kind=IndexError)
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

