"""A checked variant of a kernel that finds where a non-finite value was born.

`weft.autograd.detect_anomaly()` compiles this variant only after a launch left NaN or Inf
in an array it wrote, and runs it on copies of that launch's arguments, on one thread, in
thread order. The variant is the kernel's own code plus these checks:

- births: after each floating-point operation (arithmetic, builtin calls, casts, atomic
  add/sub), if its inputs were all finite and a result is not, the op's operand values
  and result are kept in its site's event record (a global array, one record per site);
  the thread's first birth is also kept as its `first_event`;
- origins: each float value carries the id of the site where it (or the non-finite value
  it was computed from) was born, 0 if it is finite: an op's results inherit the first
  origin among its operands, a `select` picks the origin of the value it picks. Values
  that pass through an `if` result or a loop-carried value lose theirs (0: not tracked);
- writes (store, atomic): if the value written (for an atomic add, the new element, when
  the old one was finite) is not finite, report its origin, else the thread's first
  event, else the write itself (the value came in non-finite: see `check_loads`), through
  the error record that bounds checks use (`weft_record_error`: the first report wins).

So a non-finite value computed and then discarded (`where(x > 0, sqrt(x), 0.0)`) is not
blamed: only what reaches memory is.

The error record of a report: index = (thread, operand 0, 1, 2), extent = (result, leaf,
number of operands, 0), values as the bits of float64 numbers. `FPSite.decode` reads it.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import llvmlite.ir as ir

from ..ir.core import Op, walk
from ..types import Matrix, Scalar, StructType, TupleType, Vector
from .llvm import KernelCodegen
from .llvm_types import I1, I32, I64, MAX_DIMS

# ops whose float results are checked, and what a report calls them
_ARITH = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "mod": "mod", "pow": "pow",
          "floordiv": "floordiv"}
_MASKS = {16: 0x7C00, 32: 0x7F800000, 64: 0x7FF0000000000000}


@dataclass
class FPSite:
    """A checked op (`kind` "op": a float op; "write": a store or atomic that wrote a
    non-finite value nothing in the thread produced; "load": a non-finite value read)."""

    id: int
    op: Op
    what: str   # the builtin or operation: "sqrt", "div", "atomic_add", "store", ...
    kind: str

    @staticmethod
    def decode(ctx) -> dict:
        """The thread, operand values, result and component index of a report."""
        def f64(bits):
            return struct.unpack("<d", struct.pack("<q", bits))[0]
        n = int(ctx.error_extent[2])
        return {"thread": int(ctx.error_index[0]),
                "operands": [f64(ctx.error_index[1 + k]) for k in range(min(n, 3))],
                "result": f64(ctx.error_extent[0]), "component": int(ctx.error_extent[1])}


def op_name(op: Op) -> str | None:
    """What a report calls `op`, or None if its results are not checked."""
    if op.name == "binary":
        return _ARITH.get(op.attrs["op"])
    if op.name == "call":
        return op.attrs["fn"].name
    if op.name == "cast":
        return f"cast to {op.result.type!r}"
    if op.name == "atomic" and op.attrs["op"] in ("add", "sub"):
        return f"atomic_{op.attrs['op']}"
    return None


def float_leaves(rep, t) -> list:
    """(LLVM value, weft scalar type) of each float component of a value of type `t`."""
    if isinstance(t, Scalar):
        return [(rep, t)] if t.is_float else []
    if isinstance(t, (Vector, Matrix)):
        return [(x, t.dtype) for x in rep] if t.dtype.is_float else []
    if isinstance(t, (StructType, TupleType)):
        types = t.fields.values() if isinstance(t, StructType) else t.elements
        return [leaf for part, ft in zip(rep, types) for leaf in float_leaves(part, ft)]
    return []


class FPCheckCodegen(KernelCodegen):
    """KernelCodegen plus the checks described in the module's docstring. With
    `check_loads`, a non-finite value loaded from an array is an event too (used when no
    op was found: the kernel's inputs were not finite)."""

    vectorize_threads = False  # (its reports name one thread)

    accumulate_uniform_adds = False  # (each atomic is checked where it happens)

    def __init__(self, fn, contiguous, check_loads=False, **options):
        self.check_loads = check_loads
        super().__init__(fn, contiguous, **options)
        # (after the bounds-check sites, whose ids come first; kept apart from them so
        # that the bounds-check guards do not see these)
        self.fp_sites: list[FPSite] = []
        self.fp_site_of: dict[tuple, FPSite] = {}
        for op in walk(fn.body):
            name = op_name(op)
            if name is not None and self._has_float_result(op):
                self._add_fp_site(op, name, "op")
            if op.name in ("store", "atomic"):
                self._add_fp_site(op, "store" if op.name == "store" else f"atomic_{op.attrs['op']}", "write")
            if op.name == "load" and check_loads:
                self._add_fp_site(op, "load", "load")
        self.first_event = None
        self.shadow: dict[int, ir.Value] = {}  # value id -> i32 origin (see `_origin`)

    def _has_float_result(self, op) -> bool:
        if op.name == "atomic":
            t = op.operands[0].type.dtype
            return isinstance(t, (Scalar, Vector, Matrix)) and self._scalar(t).is_float
        return any(_has_float(r.type) for r in op.results)

    @staticmethod
    def _scalar(t):
        return t if isinstance(t, Scalar) else t.dtype

    def _add_fp_site(self, op, what, kind):
        site = FPSite(len(self.sites) + len(self.fp_site_of) + 1, op, what, kind)
        self.fp_sites.append(site)
        self.fp_site_of[(id(op), kind)] = site

    @property
    def all_sites(self) -> list:
        return [*self.sites, *self.fp_sites]

    # Where values were born -------------------------------------------------------------
    # Each float value gets an origin: the id of the site whose op made it non-finite from
    # finite inputs (0 if the value is finite, or if its origin is not tracked: values that
    # pass through an `if` or a loop). A write of a non-finite value names its origin, or
    # else the thread's first event (`first_event`), or else the write itself.
    def generate(self):
        n = len(self.sites) + len(self.fp_sites) + 1
        slots = ir.ArrayType(ir.ArrayType(I64, 2 * MAX_DIMS), n)
        self.event_data = ir.GlobalVariable(self.module, slots, "weft_fp_events")
        self.event_data.linkage = "internal"
        self.event_data.initializer = ir.Constant(slots, None)
        return super().generate()

    def _emit_body(self, block):
        if block is self.fn.body:  # a new thread: no event yet
            if self.first_event is None:
                entry = self.func.entry_basic_block
                ib = ir.IRBuilder(entry)
                ib.position_at_start(entry)
                self.first_event = ib.alloca(I32, name="fp.first")
            self.builder.store(I32(0), self.first_event)
        super()._emit_body(block)

    def _slot(self, site_id, k):
        """Field k of the event record of the site `site_id` (an i32 value)."""
        return self.builder.gep(self.event_data, [I32(0), site_id, I32(k)], inbounds=True)

    def _origin_of(self, x):
        return self.shadow.get(x.id, I32(0))

    def emit(self, op):
        fp = self.fp_site_of
        if (id(op), "write") in fp:
            self._check_write(op, fp[(id(op), "write")])  # (before the write: atomics read the old value)
        super().emit(op)
        if op.name == "atomic" or not any(_has_float(r.type) for r in op.results):
            return
        if op.name == "select":
            c, a, d = op.operands
            self.shadow[op.result.id] = self.builder.select(self.v(c), self._origin_of(a), self._origin_of(d))
        elif op.name == "func_region":  # an inlined function: its results are what it yields
            for r, y in zip(op.results, op.regions[0].ops[-1].operands):
                self.shadow[r.id] = self._origin_of(y)
        elif op.name in ("if", "for", "while", "pop", "call_func"):
            return  # (not tracked: origin 0)
        elif (id(op), "op") in fp:
            self._check_op(op, fp[(id(op), "op")])
        elif (id(op), "load") in fp:
            self._birth(fp[(id(op), "load")], I1(1), [], self._result_leaves(op), op)
        else:  # extract, insert, construct, load, ...: an origin passes through
            self._birth(None, I1(0), [], self._result_leaves(op), op)

    def _result_leaves(self, op):
        return [leaf for r in op.results for leaf in float_leaves(self.v(r), r.type)]

    def _check_op(self, op, site):
        operands = [leaf for x in op.operands for leaf in float_leaves(self.v(x), x.type)]
        b = self.builder
        inputs_ok = I1(1)
        for value, t in operands:
            inputs_ok = b.and_(inputs_ok, b.not_(self._nonfinite(value, t)))
        self._birth(site, inputs_ok, operands, self._result_leaves(op), op)

    def _birth(self, site, inputs_ok, operands, results, op):
        """The origin of `op`'s results: an operand's if they are not finite and one has an
        origin, else `site` if `inputs_ok` (it is born here: record the event), else 0."""
        b = self.builder
        bad, first, value = self._first_bad(results)
        inherited = I32(0)
        for x in reversed(op.operands):
            if x.id in self.shadow:
                s = self.shadow[x.id]
                inherited = b.select(b.icmp_unsigned("!=", s, I32(0)), s, inherited)
        origin = b.select(bad, inherited, I32(0))
        if site is not None:
            born = b.and_(inputs_ok, bad)
            with b.if_then(born, likely=False):
                self._record_event(site, operands, first, value)
            origin = b.select(born, I32(site.id), origin)
        for r in op.results:
            if _has_float(r.type):
                self.shadow[r.id] = origin

    def _record_event(self, site, operands, first, value):
        """Keep the operands and result of this birth at `site`; the first of the thread is
        also its `first_event`."""
        b = self.builder
        shown = [self._as_f64_bits(v, t) for v, t in operands[:3]] if len(operands) <= 3 else []
        shown = shown if all(s is not None for s in shown) else []
        fields = [b.sext(self.thread_index, I64), *shown, *[I64(0)] * (3 - len(shown)),
                  value, b.zext(first, I64), I64(len(shown)), I64(0)]
        for k, x in enumerate(fields):
            b.store(x, self._slot(I32(site.id), k))
        none_yet = b.icmp_unsigned("==", b.load(self.first_event, typ=I32), I32(0))
        with b.if_then(none_yet):
            b.store(I32(site.id), self.first_event)

    def _check_write(self, op, site):
        """Report the origin of a non-finite value this write stores."""
        arr, *_, value = op.operands
        b = self.builder
        origin = self._origin_of(value)
        if op.name == "atomic" and op.attrs["op"] in ("add", "sub") and \
                isinstance(arr.type.dtype, (Scalar, Vector, Matrix)):
            # the new element is old + value: read the old one (this run is serial)
            old = self.load_value(self._address(op, arr, op.operands[1:-1]), arr.type.dtype)
            operands, written = self._atomic_update(op, old)
            was_finite = operands[:len(written)]  # (an element already non-finite before this
            # write is not this thread's doing)
            value_bad, _, _ = self._first_bad(operands[len(written):])
            all_finite = I1(1)
            for v, t in operands:
                all_finite = b.and_(all_finite, b.not_(self._nonfinite(v, t)))
            bad, first, result = self._first_bad(written, was_finite)
            born = b.and_(all_finite, bad)
            with b.if_then(born, likely=False):
                self._record_event(self.fp_site_of[(id(op), "op")], operands, first, result)
            origin = b.select(born, I32(self.fp_site_of[(id(op), "op")].id),
                              b.select(value_bad, origin, I32(0)))
        else:
            written = float_leaves(self.v(value), value.type)
            if not written:
                return
            bad, first, result = self._first_bad(written)
        with b.if_then(bad, likely=False):
            ev = b.select(b.icmp_unsigned("!=", origin, I32(0)), origin, b.load(self.first_event, typ=I32))
            with b.if_else(b.icmp_unsigned("==", ev, I32(0))) as (untraced, traced):
                with untraced:
                    fields = [b.sext(self.thread_index, I64), I64(0), I64(0), I64(0),
                              result, b.zext(first, I64), I64(0), I64(0)]
                    b.call(self.record_error, [self.ctx_ptr, I32(site.id), *fields])
                with traced:
                    fields = [b.load(self._slot(ev, k), typ=I64) for k in range(2 * MAX_DIMS)]
                    b.call(self.record_error, [self.ctx_ptr, ev, *fields])

    def _atomic_update(self, op, old):
        """(operands: old element and value, new element) of an atomic add/sub, as float
        leaves."""
        arr, *_, value = op.operands
        t = arr.type.dtype
        scalar = self._scalar(t)
        olds = float_leaves(old, t)
        values = float_leaves(self.v(value), value.type)
        b = self.builder
        combine = b.fadd if op.attrs["op"] == "add" else b.fsub
        new = []
        for (o, _), (x, _) in zip(olds, values):
            if scalar.bits == 16:
                r = combine(b.fpext(o, self.f32), b.fpext(x, self.f32))
                new.append((b.fptrunc(r, self.f16), scalar))
            else:
                new.append((combine(o, x), scalar))
        return olds + values, new

    # Helpers -----------------------------------------------------------------------------
    def _first_bad(self, leaves, before=None):
        """(any leaf not finite, index of the first such leaf, its value as float64 bits);
        with `before`, only leaves whose counterpart there is finite count."""
        b = self.builder
        bad, first, value = I1(0), I32(0), I64(0)
        for k in reversed(range(len(leaves))):
            v, t = leaves[k]
            nf = self._nonfinite(v, t)
            if before is not None:
                nf = b.and_(nf, b.not_(self._nonfinite(*before[k])))
            bits = self._as_f64_bits(v, t)
            first = b.select(nf, I32(k), first)
            value = b.select(nf, bits if bits is not None else I64(_nan_bits()), value)
            bad = b.or_(bad, nf)
        return bad, first, value

    def _nonfinite(self, value, t: Scalar):
        """Whether `value` (a float of weft type `t`) is NaN or infinite: its exponent bits
        are all ones."""
        b = self.builder
        width = t.bits
        mask = 0x7F80 if t.name == "bfloat16" else _MASKS[width]
        ity = ir.IntType(width)
        bits = value if isinstance(value.type, ir.IntType) else b.bitcast(value, ity)
        return b.icmp_unsigned("==", b.and_(bits, ity(mask)), ity(mask))

    def _as_f64_bits(self, value, t: Scalar):
        b = self.builder
        if isinstance(value.type, ir.HalfType):
            value = b.fpext(value, self.f32)  # (half -> double goes through float: see convert)
        if isinstance(value.type, ir.FloatType):
            value = b.fpext(value, self.f64)
        if not isinstance(value.type, ir.DoubleType):
            return None  # (a half type kept as integer bits: not shown)
        return b.bitcast(value, I64)


def _has_float(t) -> bool:
    if isinstance(t, Scalar):
        return t.is_float
    if isinstance(t, (Vector, Matrix)):
        return t.dtype.is_float
    if isinstance(t, (StructType, TupleType)):
        types = t.fields.values() if isinstance(t, StructType) else t.elements
        return any(_has_float(ft) for ft in types)
    return False


def _nan_bits() -> int:
    return struct.unpack("<q", struct.pack("<d", math.nan))[0]
