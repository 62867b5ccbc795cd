"""An IR builder: appends ops to the current block and stamps them with the current location."""

from __future__ import annotations

from contextlib import contextmanager

from ..types import Scalar, bool_
from .core import Block, Op, Value
from .ops import component_type


class Builder:
    def __init__(self, block: Block, loc=None):
        self.block = block
        self.loc = loc

    @contextmanager
    def at(self, block: Block):
        """Build into `block` for the duration of the `with`."""
        saved = self.block
        self.block = block
        try:
            yield block
        finally:
            self.block = saved

    def op(self, name, operands=(), result_types=(), attrs=None, regions=()) -> Op:
        op = Op(name, operands, result_types, attrs, regions, self.loc)
        self.block.ops.append(op)
        return op

    # Scalars -------------------------------------------------------------------------------
    def const(self, value, type_: Scalar) -> Value:
        if type_.is_float:
            value = float(value)
        elif type_.is_bool:
            value = bool(value)
        else:
            value = int(value)
        return self.op("const", (), (type_,), {"value": value}).result

    def binary(self, kind: str, a: Value, b: Value) -> Value:
        return self.op("binary", (a, b), (a.type,), {"op": kind}).result

    def add(self, a, b):
        return self.binary("add", a, b)

    def sub(self, a, b):
        return self.binary("sub", a, b)

    def mul(self, a, b):
        return self.binary("mul", a, b)

    def div(self, a, b):
        return self.binary("div", a, b)

    def unary(self, kind: str, a: Value) -> Value:
        return self.op("unary", (a,), (a.type,), {"op": kind}).result

    def neg(self, a):
        return self.unary("neg", a)

    def cmp(self, pred: str, a: Value, b: Value) -> Value:
        return self.op("cmp", (a, b), (bool_,), {"pred": pred}).result

    def cast(self, a: Value, type_: Scalar) -> Value:
        if a.type is type_:
            return a
        return self.op("cast", (a,), (type_,)).result

    def select(self, cond: Value, a: Value, b: Value) -> Value:
        return self.op("select", (cond, a, b), (a.type,)).result

    def call(self, builtin, args, result_types=None) -> Value | list[Value]:
        """Call a primitive builtin; returns its one result, or the list of its results."""
        if result_types is None:
            result_types = builtin.result_types([a.type for a in args])
        op = self.op("call", args, result_types, {"fn": builtin})
        return op.results[0] if len(op.results) == 1 else op.results

    # Composites ----------------------------------------------------------------------------
    def construct(self, type_, components) -> Value:
        return self.op("construct", components, (type_,)).result

    def extract(self, agg: Value, index: int) -> Value:
        return self.op("extract", (agg,), (component_type(agg.type, index),),
                       {"index": index}).result

    def insert(self, agg: Value, index: int, value: Value) -> Value:
        return self.op("insert", (agg, value), (agg.type,), {"index": index}).result

    def components(self, agg: Value) -> list[Value]:
        return [self.extract(agg, i) for i in range(agg.type.num_components)]
