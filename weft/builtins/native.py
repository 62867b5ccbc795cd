"""The primitives a `@weft.func_native` C++ snippet becomes (see lang/native.py).

A native func compiled for its argument types is one `call` of a primitive whose lowering
calls the snippet's C++ entry point (codegen/native_cxx.py): every argument is stored to a
stack slot and passed by address, and the values the snippet leaves in its `wp.ref[T]`
(and `wp.address_of`) arguments are loaded back as extra results. Its adjoint snippet is
a second primitive, called by the func's gradient (lang/native.py), which receives the
adjoints of the results and returns those of the arguments.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ..types import ArrayType
from .registry import Primitive

I8 = ir.IntType(8)
PTR = ir.PointerType()

VALUE, REF, ADDRESS, ARRAY = "value", "ref", "address", "array"


def parameter_kind(name: str, t, refs, addressed) -> str:
    """How the snippet sees parameter `name`: by value, as a C++ reference, as the
    `wp::uint64` address of the caller's storage, or as an array descriptor."""
    if name in addressed:
        return ADDRESS
    if name in refs:
        return REF
    return ARRAY if isinstance(t, ArrayType) else VALUE


def forward_primitive(name: str, symbol: str, result_types: list, readback: list[int]) -> Primitive:
    """A primitive calling the C++ entry point `symbol`, which takes a pointer to each
    argument and, last, a pointer to the slot of the snippet's result (null if it returns
    nothing). Its results: the snippet's result (if any), then the arguments at positions
    `readback` (references the snippet assigned) read back after the call."""
    returned = result_types[: len(result_types) - len(readback)]

    def lower(cg, args, op):
        slots = [_slot(cg, v.type, rep) for v, rep in zip(op.operands, args)]
        out = _slot(cg, returned[0]) if returned else ir.Constant(PTR, None)
        _call(cg, symbol, [*slots, out])
        values = [cg.load_value(out, returned[0])] if returned else []
        values += [cg.load_value(slots[k], op.operands[k].type) for k in readback]
        return values[0] if len(values) == 1 else values

    return _primitive(name, symbol, result_types, lower)


def adjoint_primitive(name: str, symbol: str, kinds: list[str], param_types: list, ret_type,
                      active: list[int]) -> Primitive:
    """The primitive calling an adjoint snippet's entry point `symbol`: its operands are
    the parameters, the adjoints of the references' new values (REF and ADDRESS
    parameters, in order), the adjoint of the result (if any) and the adjoint arrays of the
    ARRAY parameters; it returns the adjoints of the parameters at positions `active`.
    The entry point takes the parameters' slots, one adjoint slot per parameter (zero for
    a value, the incoming adjoint for a reference, the adjoint array for an array), and
    the result's adjoint."""

    def lower(cg, args, op):
        n = len(param_types)
        params, rest = list(zip(op.operands, args))[:n], iter(zip(op.operands[n:], args[n:]))
        slots = [_slot(cg, v.type, rep) for v, rep in params]
        incoming = {k: next(rest) for k, kind in enumerate(kinds) if kind in (REF, ADDRESS)}
        ret_adj = next(rest) if ret_type is not None else None
        incoming.update({k: next(rest) for k, kind in enumerate(kinds) if kind == ARRAY})
        adj_slots = [_slot(cg, incoming[k][0].type, incoming[k][1]) if k in incoming else _slot(cg, t)
                     for k, t in enumerate(param_types)]
        out = ir.Constant(PTR, None) if ret_adj is None else _slot(cg, ret_type, ret_adj[1])
        _call(cg, symbol, [*slots, *adj_slots, out])
        values = [cg.load_value(adj_slots[k], param_types[k]) for k in active]
        return values[0] if len(values) == 1 else values

    return _primitive(name, symbol, [param_types[k] for k in active], lower)


def _primitive(name, symbol, result_types, lower) -> Primitive:
    # (effects: a snippet may write memory the IR does not see, adjoint arrays included)
    return Primitive(f"{name}.{symbol}", lambda types: list(result_types), lower, effects=True, native=True)


def _call(cg, symbol: str, pointers: list):
    fnty = ir.FunctionType(ir.VoidType(), [PTR] * len(pointers))
    fn = cg.module.globals.get(symbol) or ir.Function(cg.module, fnty, symbol)
    cg.builder.call(fn, pointers)


def _slot(cg, t, rep=None):
    """An aligned stack slot for a value of type `t` holding `rep` (the value's codegen
    representation), or zeros (a snippet's adjoint slots start at zero)."""
    from ..codegen.native_cxx import value_size
    size, align = value_size(t)
    size = max(size, 8)  # (an address parameter's adjoint is a wp::uint64 whatever it points to)
    slot = cg._entry_alloca(ir.ArrayType(I8, size), "native.arg")
    slot.align = max(align, 8)
    if rep is None:
        cg.builder.store(ir.Constant(ir.ArrayType(I8, size), None), slot)
    slot.type = PTR  # an opaque pointer, as the other addresses in a kernel
    if rep is not None:
        cg.store_value(slot, rep, t)
    return slot
