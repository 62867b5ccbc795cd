"""Tile stacks: `tile_stack(capacity, dtype)`, `tile_stack_push/pop/clear/count`.

A stack is a reference (types/tile_stack.py): a buffer on the kernel's stack holding the
element count and `capacity` elements, which the ops below read and write in place. So a
func given a stack pushes onto its caller's, as in Warp; the ops that write it are
primitives with `effects` (never removed as dead code).

On the CPU a block is one thread, so each push or pop moves at most one element: a push
takes the next free slot (or is dropped when the stack is full: slot -1), a pop takes the
top one (slot -1 and a zero value when empty). Warp's cooperative CPU blocks
(`enable_cpu_blocks`) share one stack among the block's threads: weft refuses such launches
(`per_lane`, runtime/launch.py) rather than give each block one thread's count.

Values popped are not differentiable (Warp's stack ops have no adjoint, so its gradients
through a stack are zero): a gradient that reaches a popped value is refused when the
adjoint is compiled.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ...ir.core import Value
from ...types import Scalar, TileStackType, bool_, int32
from ...types.tile_stack import HEADER_BYTES
from .. import arith
from ..registry import builtin, primitive
from .args import dtype_arg, no_more, option
from .construct import _per_lane

I8, I32, I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)


def _stack_rule(name):
    def rule(arg_types):
        if not arg_types or not isinstance(arg_types[0], TileStackType):
            raise TypeError(f"{name} needs a tile stack (from tile_stack) as its first argument")
        return None
    return rule


def _item_ptr(cg, buf, t: TileStackType, slot):
    bld = cg.builder
    offset = bld.add(I64(HEADER_BYTES), bld.mul(bld.sext(slot, I64), I64(t.dtype.size)))
    return bld.gep(buf, [offset], source_etype=I8, inbounds=True)


def _lower_new(cg, args, op):
    buf = cg.tile_buffer(op.result.type, "stack")
    cg.builder.store(I32(0), buf)
    return buf


def _lower_push(cg, args, op):
    buf, value, has = args
    t: TileStackType = op.operands[0].type
    bld = cg.builder
    count = bld.load(buf, typ=I32)
    ok = bld.and_(has, bld.icmp_signed("<", count, I32(t.capacity)))
    with bld.if_then(ok):
        cg.store_value(_item_ptr(cg, buf, t, count), value, t.dtype)
        bld.store(bld.add(count, I32(1)), buf)
    return bld.select(ok, count, I32(-1))


def _lower_pop(cg, args, op):
    buf, empty = args
    t: TileStackType = op.operands[0].type
    bld = cg.builder
    count = bld.load(buf, typ=I32)
    ok = bld.icmp_signed(">", count, I32(0))
    top = bld.select(ok, bld.sub(count, I32(1)), I32(0))
    value = cg.load_value(_item_ptr(cg, buf, t, top), t.dtype)  # (slot 0 may be unwritten: not used then)
    leaves = [bld.select(ok, leaf, e) for leaf, e in zip(cg.leaves(value, t.dtype), cg.leaves(empty, t.dtype))]
    bld.store(top, buf)
    return [cg.from_leaves(t.dtype, iter(leaves)), bld.select(ok, top, I32(-1))]


def _lower_clear(cg, args, op):
    cg.builder.store(I32(0), args[0])
    return []


def _lower_count(cg, args, op):
    return cg.builder.load(args[0], typ=I32)


def _rule(name, results):
    check = _stack_rule(name)

    def rule(arg_types):
        check(arg_types)
        return results(arg_types[0])
    return rule


NEW = primitive("tile_stack_new", lambda ts: None, _lower_new, doc="an empty tile stack")
PUSH = primitive("tile_stack_push", _rule("tile_stack_push", lambda t: [int32]), _lower_push,
                 doc="push a value when has_value and there is room; its slot or -1")
PUSH.effects = True
# (its second operand, the value an empty stack gives, makes a gradient that reaches a popped
# value an error: "builtin 'tile_stack_pop' has no derivative rule", not a silent zero)
POP = primitive("tile_stack_pop", _rule("tile_stack_pop", lambda t: [t.dtype, int32]), _lower_pop,
                doc="pop the top value and its slot, or (empty, -1) when empty")
POP.effects = True
CLEAR = primitive("tile_stack_clear", _rule("tile_stack_clear", lambda t: []), _lower_clear, doc="empty a stack")
CLEAR.effects = True
COUNT = primitive("tile_stack_count", _rule("tile_stack_count", lambda t: [int32]), _lower_count,
                  doc="the number of elements in a stack")


def _capacity(capacity, fail):
    if isinstance(capacity, Value) or isinstance(capacity, bool) or not isinstance(capacity, int):
        fail(f"tile_stack: capacity must be a compile-time integer constant, got {capacity!r}", TypeError)
    if capacity <= 0:
        fail(f"tile_stack: capacity must be a positive integer, got {capacity}", ValueError)
    return int(capacity)


def _python_tile_stack(capacity=None, dtype=None):
    """wp.tile_stack(capacity, dtype) in Python scope: the stack type, for annotations."""
    def fail(message, kind):
        raise kind(message)
    if dtype is None:
        raise TypeError("tile_stack(capacity, dtype) needs a dtype")
    return TileStackType(dtype, _capacity(capacity, fail))


@builtin("tile_stack", py_impl=_python_tile_stack)
def tile_stack(ctx, args, kwargs):
    """tile_stack(capacity, dtype): an empty stack for up to `capacity` elements."""
    kwargs = dict(kwargs)
    args = list(args)
    capacity = option(kwargs, "capacity", args.pop(0) if args else None)
    dtype = option(kwargs, "dtype", args.pop(0) if args else None)
    no_more(ctx, "tile_stack", kwargs)
    if args or capacity is None or dtype is None:
        ctx.error("tile_stack(capacity, dtype) takes a capacity and a dtype", kind=TypeError)
    t = TileStackType(dtype_arg(ctx, dtype), _capacity(capacity, lambda m, k: ctx.error(m, kind=k)))
    return _per_lane(ctx.b.call(NEW, [], [t]))


def _stack_arg(ctx, name, s) -> Value:
    if not (isinstance(s, Value) and isinstance(s.type, TileStackType)):
        got = s.type if isinstance(s, Value) else s
        ctx.error(f"{name}: the first argument must be a tile stack (from tile_stack), got {got!r}", kind=TypeError)
    return s


def _push_value(ctx, value, dtype):
    if isinstance(value, Value):
        if value.type is not dtype:
            ctx.error(f"tile_stack_push: the value's type {value.type!r} does not match the stack's dtype "
                      f"{dtype!r}", kind=TypeError)
        return value
    if isinstance(dtype, Scalar) and dtype.is_int and isinstance(value, float):
        ctx.error(f"tile_stack_push: the value {value!r} does not match the stack's dtype {dtype!r}", kind=TypeError)
    return ctx.coerce(value, dtype, what="tile_stack_push's value")


@builtin("tile_stack_push")
def tile_stack_push(ctx, args, kwargs):
    """tile_stack_push(s, value, has_value): the slot written, or -1 (no value, or full)."""
    kwargs = dict(kwargs)
    args = list(args)
    s = _stack_arg(ctx, "tile_stack_push", option(kwargs, "s", args.pop(0) if args else None))
    value = option(kwargs, "value", args.pop(0) if args else None)
    has = option(kwargs, "has_value", args.pop(0) if args else None)
    no_more(ctx, "tile_stack_push", kwargs)
    if args or value is None or has is None:
        ctx.error("tile_stack_push(s, value, has_value) takes a stack, a value and a bool", kind=TypeError)
    value = _push_value(ctx, value, s.type.dtype)
    if isinstance(has, Value):
        if has.type is not bool_:
            ctx.error(f"tile_stack_push: has_value must be a bool, got {has.type!r}", kind=TypeError)
    else:
        has = ctx.b.const(bool(has), bool_)
    return ctx.b.call(PUSH, [s, value, has])


@builtin("tile_stack_pop")
def tile_stack_pop(ctx, args, kwargs):
    """tile_stack_pop(s) -> (value, slot): slot -1 (and a zero value) when empty."""
    s = _stack_arg(ctx, "tile_stack_pop", args[0] if args else kwargs.get("s"))
    value, slot = ctx.b.call(POP, [s, arith.zero(ctx, s.type.dtype)])
    return value, slot


@builtin("tile_stack_clear")
def tile_stack_clear(ctx, args, kwargs):
    """tile_stack_clear(s): empty the stack."""
    ctx.b.call(CLEAR, [_stack_arg(ctx, "tile_stack_clear", args[0] if args else kwargs.get("s"))])


@builtin("tile_stack_count")
def tile_stack_count(ctx, args, kwargs):
    """tile_stack_count(s): the number of elements."""
    return ctx.b.call(COUNT, [_stack_arg(ctx, "tile_stack_count", args[0] if args else kwargs.get("s"))])
