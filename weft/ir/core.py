"""The IR: typed SSA values, ops with regions (structured control flow), functions.

An `Op` has operands (Values), results (Values it defines), attributes, regions (Blocks)
and a source location. A `Block` has arguments (Values) and a list of ops ending in a
terminator (`yield` or `return`). Control flow is structured: `if`, `for` and `while` ops
own their regions and pass values in and out explicitly, so every loop-carried value is a
block argument of the loop body. The op kinds are declared in `ops.py`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass


@dataclass(frozen=True)
class Loc:
    """A source location: file, 1-based line, 0-based column."""

    file: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"


_ids = itertools.count()


class Value:
    """An SSA value. `owner` is the Op (result) or Block (argument) that defines it."""

    __slots__ = ("type", "owner", "hint", "id")

    def __init__(self, type_, owner=None, hint: str = ""):
        self.type = type_
        self.owner = owner
        self.hint = hint
        self.id = next(_ids)

    def __repr__(self) -> str:
        return f"%{self.hint or 'v'}{self.id}: {self.type!r}"


class Op:
    __slots__ = ("name", "operands", "results", "attrs", "regions", "loc")

    def __init__(self, name: str, operands, result_types=(), attrs=None, regions=(), loc=None):
        self.name = name
        self.operands = list(operands)
        self.results = [Value(t, self) for t in result_types]
        self.attrs = dict(attrs or {})
        self.regions = list(regions)
        self.loc = loc

    @property
    def result(self) -> Value:
        (r,) = self.results
        return r

    def __repr__(self) -> str:
        return f"<Op {self.name} at {self.loc}>"


class Block:
    __slots__ = ("args", "ops")

    def __init__(self, arg_types=(), hints=()):
        hints = list(hints) + [""] * (len(arg_types) - len(hints))
        self.args = [Value(t, self, h) for t, h in zip(arg_types, hints)]
        self.ops: list[Op] = []

    @property
    def terminator(self) -> Op | None:
        return self.ops[-1] if self.ops and self.ops[-1].name in ("yield", "return") else None


class Function:
    """A kernel or func body. `params` are the body's block arguments."""

    def __init__(self, name: str, kind: str, param_names, param_types, ret_type=None, loc=None):
        self.name = name
        self.kind = kind  # "kernel" or "func"
        self.param_names = list(param_names)
        self.body = Block(param_types, self.param_names)
        self.ret_type = ret_type
        self.loc = loc

    @property
    def params(self) -> list[Value]:
        return self.body.args


def constant_value(v: Value):
    """The value of a `const` op's result, or None (a block argument or computed value)."""
    owner = v.owner
    return owner.attrs["value"] if isinstance(owner, Op) and owner.name == "const" else None


def rename_uses(op: Op, mapping: dict):
    """Make `op` (and the ops of its nested regions) use `mapping[v.id]` where it used
    value v."""
    if not mapping:
        return
    op.operands = [mapping.get(v.id, v) for v in op.operands]
    for region in op.regions:
        for inner in region.ops:
            rename_uses(inner, mapping)


def walk(block: Block):
    """Every op in `block` and its nested regions, in program order (pre-order)."""
    # (a stack of iterators, not nested generators: an op nested n deep would pass through
    # n generators on its way out, and kernels of inlined funcs nest deep)
    stack = [iter(block.ops)]
    while stack:
        for op in stack[-1]:
            yield op
            if op.regions:
                stack.extend(iter(region.ops) for region in reversed(op.regions))
                break
        else:
            stack.pop()


def operand_uses(block: Block) -> dict[int, list]:
    """value id -> the (op, operand position) pairs that use it, in `block` and its regions."""
    uses: dict[int, list] = {}
    for op in walk(block):
        for pos, v in enumerate(op.operands):
            uses.setdefault(v.id, []).append((op, pos))
    return uses


def free_values(ops, bound=()) -> list[Value]:
    """Values that `ops` (and their regions) use but do not define, in first-use order;
    values in `bound` (a block's arguments) count as defined."""
    defined, seen, out = {v.id for v in bound}, set(), []
    for top in ops:
        for op in (top, *(o for region in top.regions for o in walk(region))):
            defined.update(r.id for r in op.results)
            for region in op.regions:
                defined.update(a.id for a in region.args)
    for top in ops:
        for op in (top, *(o for region in top.regions for o in walk(region))):
            for v in op.operands:
                if v.id not in defined and v.id not in seen:
                    seen.add(v.id)
                    out.append(v)
    return out
