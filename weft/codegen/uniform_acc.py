"""Contention-free accumulation into one element that every thread adds to.

An adjoint kernel adds the gradient of a shared parameter (`k[0]`, read by every thread)
into the same element from every thread: one float atomic per thread, all cores fighting
over one cache line through compare-and-swap loops. When the element's address is the same
for every thread (its array and indices are constants, kernel parameters, or computed from
those only), nothing reads the add's result and the kernel does not read the array, each
call of the kernel's entry (a range of threads on one core) adds into a local accumulator
instead, and adds that into memory once, atomically, after its last thread. The sum is the
same up to float rounding order, which float atomics do not fix either. Forward kernels
benefit too (`wp.atomic_add(loss, 0, x)`).
"""

from __future__ import annotations

import llvmlite.ir as ir

from ..autodiff.arrays import array_key
from ..ir.core import Function, Op, walk
from ..types import ArrayType, Matrix, StructType, Vector, float32, float64
from .llvm_types import PTR, llvm_type

_PURE = ("const", "binary", "unary", "cmp", "select", "convert", "extract", "construct", "insert", "view", "slice",
         "component")


def uniform_accumulations(fn: Function) -> set[int]:
    """Ids of the atomic adds in `fn` that every thread makes to one same element, whose
    result is unused: see the module docstring."""
    params = {p.id for p in fn.params}
    used = {v.id for op in walk(fn.body) for v in op.operands}
    uniform: dict[int, bool] = {}

    def is_uniform(v) -> bool:
        if v.id in params:
            return True
        if v.id in uniform:
            return uniform[v.id]
        owner = v.owner
        ok = isinstance(owner, Op) and owner.name in _PURE and not owner.regions and \
            all(is_uniform(x) for x in owner.operands)
        uniform[v.id] = ok
        return ok

    # an array this kernel reads, or reads an atomic's result of, sees every add at once
    observed = {array_key(op.operands[0]) for op in walk(fn.body)
                if op.name == "load" or (op.name == "atomic" and op.result.id in used)}
    out = set()
    for op in walk(fn.body):
        if op.name != "atomic" or op.attrs.get("op") != "add" or op.attrs.get("private"):
            continue
        if array_key(op.operands[0]) in observed:
            continue
        arr, *indices, _ = op.operands
        t = arr.type.dtype if isinstance(arr.type, ArrayType) else None
        scalar = t.dtype if isinstance(t, (Vector, Matrix)) else t
        if isinstance(t, StructType) or scalar not in (float32, float64):
            continue
        if op.result.id in used or not all(is_uniform(x) for x in (arr, *indices)):
            continue
        out.add(id(op))
    return out


class UniformAccumulation:
    """The `KernelCodegen` part that lowers the adds `uniform_accumulations` finds."""

    def setup_accumulators(self):
        """In the entry block: a zeroed accumulator and a null address per such add."""
        b = self.builder
        self.accumulators: dict[int, tuple] = {}
        for op in walk(self.fn.body):
            if id(op) not in self.uniform_adds:
                continue
            t = op.operands[0].type.dtype
            leaf = llvm_type(t.dtype if isinstance(t, (Vector, Matrix)) else t)
            n = t.num_components if isinstance(t, (Vector, Matrix)) else 1
            acc = []
            for _ in range(n):  # (one slot per component)
                acc.append(b.alloca(leaf, name="uniform.acc"))
                b.store(leaf(0.0), acc[-1])
            where = b.alloca(PTR, name="uniform.ptr")
            b.store(ir.Constant(PTR, None), where)
            self.accumulators[id(op)] = (acc, where, leaf, n, t)

    def accumulate(self, op, ptr, value):
        """This thread's add: into the accumulator; remember the element's address."""
        acc, where, leaf, n, t = self.accumulators[id(op)]
        b = self.builder
        parts = self.leaves(value, t) if n > 1 else [value]
        for slot, x in zip(acc, parts):
            b.store(b.fadd(b.load(slot, typ=leaf), x, flags=self.fmf), slot)
        b.store(ptr, where)
        return [leaf(0.0)] * n if n > 1 else leaf(0.0)  # (the result is unused)

    def flush_accumulators(self):
        """After the threads: add each accumulator into its element, once, atomically."""
        b = self.builder
        for acc, where, leaf, _, t in self.accumulators.values():
            ptr = b.load(where, typ=PTR)
            with b.if_then(b.icmp_unsigned("!=", ptr, ir.Constant(PTR, None))):
                scalar = t.dtype if isinstance(t, (Vector, Matrix)) else t
                for k, slot in enumerate(acc):
                    p = b.gep(ptr, [ir.Constant(ir.IntType(64), k * scalar.size)], source_etype=ir.IntType(8),
                              inbounds=True) if k else ptr
                    self._atomic_scalar("add", scalar, p, b.load(slot, typ=leaf))
