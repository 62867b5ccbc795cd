"""IR -> LLVM IR (llvmlite.ir) for a kernel.

The kernel entry is `void entry(ptr args, i32 begin, i32 end, ptr ctx)`: `args` points at the
packed parameter block (layout: `runtime.launch` builds it with ctypes), `[begin, end)` is
the range of linear thread indices to run, and `ctx` is the launch context (launch shape,
error record, scratch memory).

Composite values (vectors, matrices, structs) are kept as Python lists of scalar LLVM
values, not LLVM aggregates: construct/extract/insert cost nothing, and every loop-carried
component is its own scalar phi, which LLVM's vectoriser needs (it cannot vectorise a
reduction carried in an aggregate phi). Aggregates exist only at memory boundaries.

Bounds checks. Every array access is checked (unless `bounds_checks` is off): a bad index
records the access site, the index and the extent in the error record (first error wins),
and the access goes to scratch memory instead, so nothing is corrupted and nothing
crashes; the launcher raises IndexError afterwards. Checks in a loop body stop LLVM from
vectorising it, so loops are versioned: accesses indexed by a thread index, a constant or
a `for` loop's variable are proven in bounds once, before the loop (the launch shape or the
loop range against the array's shape), and a copy of the loop without their checks runs
when that proof holds.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import llvmlite.ir as ir

from ..builtins.registry import Primitive
from ..ir.core import Block, Function, Op, Value, constant_value, walk
from ..types import ArrayType, Matrix, Scalar, StructType, TupleType, Vector, bool_
from ..types.layout import ctype_of

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
MAX_DIMS = 4


@dataclass
class Site:
    """An access that is bounds-checked at run time; reported by id in the error record."""

    id: int
    op: Op
    what: str  # "array 'x'" or "vector index"


def _all_of(b, conditions):
    """The conjunction of one or more i1 values."""
    result = conditions[0]
    for c in conditions[1:]:
        result = b.and_(result, c)
    return result


def _indices(op: Op) -> list[Value]:
    """The index operands of a load, store, atomic or view."""
    end = len(op.operands) - (op.name in ("store", "atomic"))
    return op.operands[1:end]


def _members(t) -> list:
    """Member types of a composite, in memory order."""
    if isinstance(t, (Vector, Matrix)):
        return [t.dtype] * t.num_components
    if isinstance(t, StructType):
        return list(t.fields.values())
    if isinstance(t, TupleType):
        return list(t.elements)
    raise TypeError(f"{t!r} has no members")


def _member_offsets(t) -> list[int]:
    """Byte offsets of the members of `t` in memory (C layout, as types.layout)."""
    if isinstance(t, (Vector, Matrix)):
        return [k * t.dtype.size for k in range(t.num_components)]
    if isinstance(t, StructType):
        ct = ctype_of(t)
        return [getattr(ct, name).offset for name in t.field_names]
    raise TypeError(f"{t!r} is not stored in memory")


def llvm_type(t, in_memory: bool = False):
    """The LLVM type of a weft value; bools are i1 in registers and i8 in memory/aggregates."""
    if isinstance(t, Scalar):
        if t.is_bool:
            return I8 if in_memory else I1
        if t.is_float:
            return {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}[t.bits]
        return ir.IntType(t.bits)
    if isinstance(t, (Vector, Matrix)):
        return ir.ArrayType(llvm_type(t.dtype, True), t.num_components)
    if isinstance(t, StructType):
        return ir.LiteralStructType([llvm_type(f, True) for f in t.fields.values()])
    if isinstance(t, TupleType):
        return ir.LiteralStructType([llvm_type(e, True) for e in t.elements])
    if isinstance(t, ArrayType):
        return ir.LiteralStructType([PTR, ir.ArrayType(I64, t.ndim), ir.ArrayType(I64, t.ndim)])
    raise TypeError(f"no LLVM type for {t!r}")


# The launch context, mirrored by runtime.launch.LaunchContext.
CTX_TYPE = ir.LiteralStructType([
    ir.ArrayType(I32, MAX_DIMS),  # 0 launch shape
    I32,                          # 1 launch ndim
    I32,                          # 2 error site (0: none)
    ir.ArrayType(I64, MAX_DIMS),  # 3 error index
    ir.ArrayType(I64, MAX_DIMS),  # 4 error extent
    PTR,                          # 5 scratch for redirected accesses (scratch_size bytes)
    I64,                          # 6 AD stack limit in bytes (adjoint kernels)
])

# A thread's AD stack (adjoint kernels with dynamic loops): malloc'd bytes, used, capacity.
STACK_TYPE = ir.LiteralStructType([PTR, I64, I64])
STACK_SLOT = 8  # bytes per pushed scalar; an array descriptor (in a struct) takes its size


def _slot_offsets(leaf_types) -> tuple[list[int], int]:
    """Byte offsets of pushed leaves in a stack frame, and the frame size."""
    offsets, at = [], 0
    for lt in leaf_types:
        offsets.append(at)
        # an array descriptor {ptr, [n x i64] shape, [n x i64] strides}: 8 + 16 n bytes
        at += 8 + 16 * lt.elements[1].count if isinstance(lt, ir.LiteralStructType) else STACK_SLOT
    return offsets, at


class KernelCodegen:
    """Lowers one kernel IR function with one specialisation to an LLVM module."""

    def __init__(self, fn: Function, contiguous: tuple[bool, ...], bounds_checks=True,
                 fast_math=False, triple="", data_layout=""):
        self.fn = fn
        self.contiguous_params = contiguous
        self.bounds_checks = bounds_checks
        self.fmf = ("fast",) if fast_math else ()
        self.module = ir.Module(name=fn.name)
        self.module.triple = triple
        self.module.data_layout = data_layout
        self.f16, self.f32, self.f64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
        self.sites: list[Site] = []
        self.site_of: dict[int, Site] = {}
        self._strings: dict[str, ir.GlobalVariable] = {}
        self._collect_sites()

    @property
    def entry_name(self) -> str:
        return "weft_kernel_" + "".join(c if c.isalnum() else "_" for c in self.fn.name)

    # Sites ---------------------------------------------------------------------------------
    def _collect_sites(self):
        self.scratch_size = 16
        for op in walk(self.fn.body):
            if op.name in ("load", "store", "atomic", "view"):
                arr = op.operands[0]
                what = f"array '{arr.hint}'" if arr.hint else "array"
            elif op.name in ("extract_dyn", "insert_dyn"):
                what = f"{op.operands[0].type!r} component"
            elif op.name == "binary" and op.attrs["op"] in ("div", "floordiv", "mod") \
                    and op.operands[0].type.is_int:
                what = "integer division"
            elif op.name == "assert":
                what = "assert"
            elif op.name == "push":
                what = "AD stack"
                _, frame = _slot_offsets([lt for v in op.operands for lt in self.leaf_types(v.type)])
                self.scratch_size = max(self.scratch_size, frame)
            else:
                continue
            if op.name in ("load", "store", "atomic"):
                self.scratch_size = max(self.scratch_size, self._elem_size(op.operands[0].type.dtype))
            site = Site(len(self.sites) + 1, op, what)
            self.sites.append(site)
            self.site_of[id(op)] = site

    # Entry ---------------------------------------------------------------------------------
    def generate(self) -> ir.Module:
        self._declare_error_recorder()
        params = self.fn.params
        self.args_type = ir.LiteralStructType([llvm_type(p.type, True) for p in params])
        fnty = ir.FunctionType(ir.VoidType(), [PTR, I32, I32, PTR])
        entry = ir.Function(self.module, fnty, self.entry_name)
        for a in entry.args[:1] + entry.args[3:]:
            a.add_attribute("noalias")
        args_ptr, begin, end, ctx = entry.args
        self.ctx_ptr = ctx
        self.func = entry
        self.builder = b = ir.IRBuilder(entry.append_basic_block("entry"))
        self.values: dict[int, object] = {}
        self.contiguous: set[int] = set()
        self.param_ids = {p.id for p in params}
        for k, p in enumerate(params):
            slot = b.gep(args_ptr, [I32(0), I32(k)], source_etype=self.args_type)
            self.values[p.id] = self.load_value(slot, p.type)
            if isinstance(p.type, ArrayType) and self.contiguous_params[k]:
                self.contiguous.add(p.id)
        self.stack = None
        if any(op.name == "push" for op in walk(self.fn.body)):
            self.stack = b.alloca(STACK_TYPE, name="adstack")
            b.store(ir.Constant(STACK_TYPE, [None, I64(0), I64(0)]), self.stack)
        self.launch_dims = [b.load(b.gep(ctx, [I32(0), I32(0), I32(d)], source_etype=CTX_TYPE), typ=I32)
                            for d in range(MAX_DIMS)]
        guard = self._thread_guard()
        if guard is None:
            self._emit_thread_loop(begin, end, frozenset())
        else:
            fast_bb, slow_bb = entry.append_basic_block("fast"), entry.append_basic_block("checked")
            done = entry.append_basic_block("done")
            b.cbranch(guard, fast_bb, slow_bb)
            for bb, active in ((fast_bb, frozenset({"tid"})), (slow_bb, frozenset())):
                b.position_at_end(bb)
                saved = dict(self.values)
                self._emit_thread_loop(begin, end, active)
                b.branch(done)
                self.values = saved
            b.position_at_end(done)
        if self.stack is not None:
            free = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [PTR]), "free")
            b.call(free, [b.load(self._stack_field(0), typ=PTR)])
        b.ret_void()
        return self.module

    def _emit_thread_loop(self, begin, end, active):
        """Run the body for linear thread indices [begin, end). For `i, j, ... = tid()` the
        range is walked row by row: the coordinates are computed once per row and the last
        one is the counter of an inner loop, which LLVM can vectorise."""
        self.active = active
        n = max((op.attrs["of"] for op in walk(self.fn.body) if op.name == "tid"), default=1)
        b = self.builder
        k, row_exit = self._loop_header(begin, end, "thread")
        if n == 1:
            self.thread_index, self.tids = k, {}
            self._emit_body(self.fn.body)
            self._loop_latch(k, b.add(k, I32(1), flags=("nsw",)))
            b.position_at_end(row_exit)
            return
        coords, rest = [None] * n, k
        for d in reversed(range(1, n)):
            coords[d] = b.srem(rest, self.launch_dims[d])
            rest = b.sdiv(rest, self.launch_dims[d])
        coords[0] = rest
        first = coords[n - 1]
        row_end = b.add(k, b.sub(self.launch_dims[n - 1], first), flags=("nsw",))
        row_end = b.select(b.icmp_signed("<", row_end, end), row_end, end)
        last_end = b.add(first, b.sub(row_end, k), flags=("nsw",))
        j, inner_exit = self._loop_header(first, last_end, "row")
        self.thread_index = b.add(k, b.sub(j, first), flags=("nsw",))
        self.tids = {n: coords[:-1] + [j]}
        self._emit_body(self.fn.body)
        self._loop_latch(j, b.add(j, I32(1), flags=("nsw",)))
        b.position_at_end(inner_exit)
        self._loop_latch(k, row_end)
        b.position_at_end(row_exit)

    def _loop_header(self, start, stop, name):
        """Open a counted loop `for i in [start, stop)`; returns (i, exit block). The body
        is built at the current position; close it with _loop_latch."""
        b = self.builder
        pre = b.block
        header = self.func.append_basic_block(f"{name}.header")
        body = self.func.append_basic_block(f"{name}.body")
        exit_ = self.func.append_basic_block(f"{name}.exit")
        b.branch(header)
        b.position_at_end(header)
        i = b.phi(I32, name)
        i.add_incoming(start, pre)
        b.cbranch(b.icmp_signed("<", i, stop), body, exit_)
        b.position_at_end(body)
        i.header = header
        return i, exit_

    def _loop_latch(self, i, next_value):
        i.add_incoming(next_value, self.builder.block)
        self.builder.branch(i.header)

    def _emit_body(self, block: Block):
        for op in block.ops:
            if op.name == "return":
                return
            self.emit(op)

    # Guards: proofs that accesses are in bounds --------------------------------------------
    def _index_kind(self, v: Value):
        owner = v.owner
        if isinstance(owner, Op) and owner.name == "tid":
            return ("tid", owner.attrs["dim"], owner.attrs["of"])
        if constant_value(v) is not None:
            return ("const", constant_value(v))
        return None

    def _thread_guard(self):
        """The condition under which every access indexed by thread indices and constants is
        in bounds (the launch shape against the arrays' shapes). Accesses that also use `for`
        loop variables get their thread dimensions proven here and the rest by the loop."""
        if not self.bounds_checks:
            return None
        b = self.builder
        loop_vars = {op.regions[0].args[0].id for op in walk(self.fn.body) if op.name == "for"}
        conds = []
        for site in self.sites:
            op = site.op
            if op.name not in ("load", "store", "atomic", "view") or op.operands[0].id not in self.param_ids:
                continue
            arr = op.operands[0]
            indices = _indices(op)
            kinds = [self._index_kind(i) for i in indices]
            if not all(k is not None or i.id in loop_vars for k, i in zip(kinds, indices)):
                continue
            site.tid_proven = True
            if all(k is not None for k in kinds):
                site.requires = frozenset({"tid"})
            for d, kind in enumerate(kinds):
                if kind is None:
                    continue  # a loop variable: proven by that loop's guard
                extent = self._shape(self.values[arr.id], d)
                if kind[0] == "const":
                    conds.append(self._constant_in_bounds(kind[1], extent))
                    continue
                _, dim, of = kind
                size = self._launch_extent(dim, of)
                conds.append(b.icmp_signed("<=", b.sext(size, I64), extent))
        return _all_of(b, conds) if conds else None

    def _constant_in_bounds(self, c: int, extent):
        if not 0 <= c < 2**63:
            return I1(0)  # never provable: keep the check
        return self.builder.icmp_signed("<", I64(c), extent)

    def _range_in_bounds(self, start: Value, stop: Value, extent):
        """0 <= start and stop <= extent, compared without overflow for any int type."""
        b = self.builder
        t = start.type
        if t.is_signed:
            lo_ok = b.icmp_signed(">=", self.v(start), self.v(start).type(0))
            hi = b.sext(self.v(stop), I64) if t.bits < 64 else self.v(stop)
            return b.and_(lo_ok, b.icmp_signed("<=", hi, extent))
        hi = b.zext(self.v(stop), I64) if t.bits < 64 else self.v(stop)
        return b.icmp_unsigned("<=", hi, extent)  # extents are never negative

    def _launch_extent(self, dim, of):
        b = self.builder
        if dim >= 0:
            return self.launch_dims[dim]
        total = self.launch_dims[0]
        for d in range(1, MAX_DIMS):
            total = b.mul(total, self.launch_dims[d])  # unused dims are 1
        return total

    def _elided(self, op) -> bool:
        """Whether `op`'s bounds check is proven by the guards of the code being emitted."""
        if not self.bounds_checks:
            return True
        requires = getattr(self.site_of.get(id(op)), "requires", None)
        return requires is not None and requires <= self.active

    # Ops -----------------------------------------------------------------------------------
    def emit(self, op: Op):
        handler = getattr(self, "op_" + op.name)
        result = handler(op)
        if op.name in ("if", "for", "while", "func_region") or len(op.results) > 1:
            for r, v in zip(op.results, result):  # handlers of these return one value per result
                self.values[r.id] = v
        elif op.results:
            self.values[op.results[0].id] = result

    def v(self, value: Value):
        return self.values[value.id]

    def op_const(self, op):
        t = op.result.type
        return llvm_type(t)(op.attrs["value"])

    def op_binary(self, op):
        a, c = (self.v(x) for x in op.operands)
        t = op.operands[0].type
        kind = op.attrs["op"]
        b = self.builder
        if t.is_float:
            if t.bits == 16:
                a, c = b.fpext(a, self.f32), b.fpext(c, self.f32)
            r = self._float_binary(kind, a, c)
            return b.fptrunc(r, self.f16) if t.bits == 16 else r
        if t.is_bool:
            return {"bitand": b.and_, "bitor": b.or_, "bitxor": b.xor}[kind](a, c)
        signed = t.is_signed
        flags = ("nsw",) if signed else ()
        if kind == "add":
            return b.add(a, c, flags=flags)
        if kind == "sub":
            return b.sub(a, c, flags=flags)
        if kind == "mul":
            return b.mul(a, c, flags=flags)
        if kind in ("div", "floordiv", "mod"):
            return self._int_division(op, kind, a, c, signed)
        if kind == "bitand":
            return b.and_(a, c)
        if kind == "bitor":
            return b.or_(a, c)
        if kind == "bitxor":
            return b.xor(a, c)
        if kind in ("shl", "shr"):
            # shifting by the width or more is poison in LLVM: define it (0, or the sign)
            too_far = b.icmp_unsigned(">=", c, c.type(t.bits))
            if kind == "shl":
                return b.select(too_far, a.type(0), b.shl(a, c))
            if not signed:
                return b.select(too_far, a.type(0), b.lshr(a, c))
            return b.ashr(a, b.select(too_far, c.type(t.bits - 1), c))
        raise NotImplementedError(kind)

    def _float_binary(self, kind, a, c):
        b = self.builder
        if kind == "add":
            return b.fadd(a, c, flags=self.fmf)
        if kind == "sub":
            return b.fsub(a, c, flags=self.fmf)
        if kind == "mul":
            return b.fmul(a, c, flags=self.fmf)
        if kind == "div":
            return b.fdiv(a, c, flags=self.fmf)
        if kind == "mod":  # C fmod: the sign of the dividend, as Warp
            return b.frem(a, c)
        if kind == "floordiv":
            return self.call_intrinsic("llvm.floor", [b.fdiv(a, c, flags=self.fmf)])
        raise NotImplementedError(kind)

    def _int_division(self, op, kind, a, c, signed):
        """Integer /, // and %, as C (/ truncates, % keeps the dividend's sign) and // floors.
        A zero divisor records an error instead of trapping (which would kill the process)."""
        b = self.builder
        zero = c.type(0)
        bad = b.icmp_unsigned("==", c, zero)
        if signed:  # INT_MIN / -1 also traps on x86
            int_min = c.type(-(1 << (c.type.width - 1)))
            bad_overflow = b.and_(b.icmp_signed("==", a, int_min), b.icmp_signed("==", c, c.type(-1)))
            safe = b.select(b.or_(bad, bad_overflow), c.type(1), c)
        else:
            safe = b.select(bad, c.type(1), c)
        self._check(op, b.not_(bad), [b.zext(c, I64) if not signed else b.sext(c, I64)], [I64(0)])
        if kind == "div":
            return b.sdiv(a, safe) if signed else b.udiv(a, safe)
        if kind == "mod":
            return b.srem(a, safe) if signed else b.urem(a, safe)
        if not signed:
            return b.udiv(a, safe)
        q = b.sdiv(a, safe)
        r = b.srem(a, safe)
        # floor: subtract one where the remainder is nonzero and has the other sign
        adjust = b.and_(b.icmp_signed("!=", r, r.type(0)),
                        b.icmp_signed("<", b.xor(r, safe), r.type(0)))
        return b.sub(q, b.zext(adjust, q.type))

    def op_unary(self, op):
        (a,) = (self.v(x) for x in op.operands)
        t = op.operands[0].type
        b = self.builder
        kind = op.attrs["op"]
        if kind == "not":
            return b.not_(a) if t.is_bool else b.icmp_unsigned("==", a, a.type(0))
        if kind == "invert":
            return b.not_(a)
        return b.fneg(a) if t.is_float else b.neg(a)

    def op_cmp(self, op):
        a, c = (self.v(x) for x in op.operands)
        t = op.operands[0].type
        pred = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op.attrs["pred"]]
        b = self.builder
        if t.is_float:
            if pred == "!=":
                return b.fcmp_unordered(pred, a, c)  # NaN != NaN is true, as in Python
            return b.fcmp_ordered(pred, a, c)
        if t.is_signed and not t.is_bool:
            return b.icmp_signed(pred, a, c)
        return b.icmp_unsigned(pred, a, c)

    def op_cast(self, op):
        return self.convert(self.v(op.operands[0]), op.operands[0].type, op.result.type)

    def convert(self, x, src: Scalar, dst: Scalar):
        b = self.builder
        to = llvm_type(dst)
        if src is dst:
            return x
        if dst.is_bool:
            return b.fcmp_unordered("!=", x, x.type(0)) if src.is_float else b.icmp_unsigned("!=", x, x.type(0))
        if src.is_float and dst.is_float:
            return b.fpext(x, to) if dst.bits > src.bits else b.fptrunc(x, to)
        if src.is_float:
            # saturating: an out-of-range float (or NaN) gives the nearest int (0), never poison
            kind = "fptosi" if dst.is_signed else "fptoui"
            name = f"llvm.{kind}.sat.i{dst.bits}.f{src.bits}"
            fn = self.module.globals.get(name) or ir.Function(self.module, ir.FunctionType(to, [x.type]), name)
            return b.call(fn, [x])
        if dst.is_float:
            return b.sitofp(x, to) if src.is_signed and not src.is_bool else b.uitofp(x, to)
        if dst.bits == src.bits:
            return x
        if dst.bits < src.bits:
            return b.trunc(x, to)
        return b.sext(x, to) if src.is_signed and not src.is_bool else b.zext(x, to)

    def op_select(self, op):
        c, a, d = op.operands
        t = a.type
        cond = self.v(c)
        picked = [self.builder.select(cond, x, y) for x, y in zip(self.leaves(self.v(a), t), self.leaves(self.v(d), t))]
        return self.from_leaves(t, iter(picked))

    def op_call(self, op):
        prim: Primitive = op.attrs["fn"]
        args = [self.v(x) for x in op.operands]
        return prim.lower(self, args, op)

    # Composites: lists of scalar values ------------------------------------------------
    def op_construct(self, op):
        return [self.v(x) for x in op.operands]

    def op_extract(self, op):
        return self.v(op.operands[0])[op.attrs["index"]]

    def op_insert(self, op):
        agg, x = op.operands
        parts = list(self.v(agg))
        parts[op.attrs["index"]] = self.v(x)
        return parts

    def _component_index(self, op, agg_type, indices):
        """The flat component index for dynamic (row[, column]) indices, each checked against
        its own extent; an out-of-range index records the error and reads component 0."""
        b = self.builder
        shape = agg_type.shape
        flat, oks, wide = None, [], []
        for index, extent in zip(indices, shape):
            i = self.v(index)
            i64 = b.sext(i, I64) if index.type.is_signed else b.zext(i, I64)
            oks.append(b.icmp_unsigned("<", i64, I64(extent)))
            wide.append(i64)
            flat = i64 if flat is None else b.add(b.mul(flat, I64(extent)), i64)
        ok = _all_of(b, oks)
        self._check(op, ok, wide, [I64(e) for e in shape])
        return b.select(ok, flat, I64(0))

    def op_extract_dyn(self, op):
        agg, *indices = op.operands
        i = self._component_index(op, agg.type, indices)
        b = self.builder
        parts = self.v(agg)
        result = parts[0]
        for k in range(1, len(parts)):  # a select chain vectorises; memory does not
            result = b.select(b.icmp_unsigned("==", i, I64(k)), parts[k], result)
        return result

    def op_insert_dyn(self, op):
        agg, *indices, x = op.operands
        i = self._component_index(op, agg.type, indices)
        b = self.builder
        xv = self.v(x)
        return [b.select(b.icmp_unsigned("==", i, I64(k)), xv, cur) for k, cur in enumerate(self.v(agg))]

    def leaves(self, rep, t) -> list:
        """The scalar LLVM values (and array descriptors) of a value, in order."""
        if isinstance(t, (Vector, Matrix)):
            return list(rep)
        if isinstance(t, (StructType, TupleType)):
            types = t.fields.values() if isinstance(t, StructType) else t.elements
            return [leaf for part, ft in zip(rep, types) for leaf in self.leaves(part, ft)]
        return [rep]

    def leaf_types(self, t) -> list:
        if isinstance(t, (Vector, Matrix)):
            return [llvm_type(t.dtype)] * t.num_components
        if isinstance(t, (StructType, TupleType)):
            types = t.fields.values() if isinstance(t, StructType) else t.elements
            return [lt for ft in types for lt in self.leaf_types(ft)]
        return [llvm_type(t)]

    def from_leaves(self, t, leaves):
        """Inverse of `leaves` (consumes an iterator)."""
        if isinstance(t, (Vector, Matrix)):
            return [next(leaves) for _ in range(t.num_components)]
        if isinstance(t, (StructType, TupleType)):
            types = t.fields.values() if isinstance(t, StructType) else t.elements
            return [self.from_leaves(ft, leaves) for ft in types]
        return next(leaves)

    def load_value(self, ptr, t):
        """Load a value of type `t` from memory, component by component."""
        b = self.builder
        if isinstance(t, ArrayType):
            return b.load(ptr, typ=llvm_type(t))
        if isinstance(t, Scalar):
            v = b.load(ptr, typ=llvm_type(t, True))
            return b.icmp_unsigned("!=", v, I8(0)) if t is bool_ else v
        return [self.load_value(self._member_ptr(ptr, t, k), ct) for k, ct in enumerate(_members(t))]

    def store_value(self, ptr, rep, t):
        b = self.builder
        if isinstance(t, Scalar):
            b.store(b.zext(rep, I8) if t is bool_ else rep, ptr)
            return
        if isinstance(t, ArrayType):
            b.store(rep, ptr)
            return
        for k, (part, ct) in enumerate(zip(rep, _members(t))):
            self.store_value(self._member_ptr(ptr, t, k), part, ct)

    def _member_ptr(self, ptr, t, k):
        offset = _member_offsets(t)[k]
        return self.builder.gep(ptr, [I64(offset)], source_etype=I8, inbounds=True) if offset else ptr

    # Thread index and arrays ---------------------------------------------------------------
    def op_tid(self, op):
        dim, of = op.attrs["dim"], op.attrs["of"]
        if dim < 0 or of == 1:
            return self.thread_index
        return self.tids[of][dim]

    def _shape(self, arr, d):
        return self.builder.extract_value(arr, [1, d])

    def op_null_array(self, op):
        return ir.Constant(llvm_type(op.result.type), None)  # null pointer, shape 0

    def op_array_shape(self, op):
        return self.builder.trunc(self._shape(self.v(op.operands[0]), op.attrs["dim"]), I32)

    def _address(self, op, arr_value: Value, indices):
        """Address of an element (or sub-array), bounds-checked unless proven in bounds."""
        b = self.builder
        arr = self.v(arr_value)
        t = arr_value.type
        elem_size = self._elem_size(t.dtype)
        offset = None
        oks, idx64, extents = [], [], []
        check = not self._elided(op)
        for d, index in enumerate(indices):
            i = self.v(index)
            i = b.sext(i, I64) if index.type.is_signed else b.zext(i, I64)
            if check:
                extent = self._shape(arr, d)
                oks.append(b.icmp_unsigned("<", i, extent))
                idx64.append(i)
                extents.append(extent)
            if d == t.ndim - 1 and arr_value.id in self.contiguous:
                stride = I64(elem_size)
            else:
                stride = b.extract_value(arr, [2, d])
            term = b.mul(i, stride, flags=("nsw",))
            offset = term if offset is None else b.add(offset, term, flags=("nsw",))
        data = b.extract_value(arr, 0)
        ptr = b.gep(data, [offset], source_etype=I8, inbounds=True)
        if check:
            ok = _all_of(b, oks)
            self._check(op, ok, idx64, extents)
            scratch = b.load(b.gep(self.ctx_ptr, [I32(0), I32(5)], source_etype=CTX_TYPE), typ=PTR)
            ptr = b.select(ok, ptr, scratch)
            self.last_ok = ok
        else:
            self.last_ok = None
        return ptr

    def _elem_size(self, t) -> int:
        return ctypes.sizeof(ctype_of(t))

    def op_load(self, op):
        arr, *idx = op.operands
        return self.load_value(self._address(op, arr, idx), op.result.type)

    def op_store(self, op):
        arr, *idx, value = op.operands
        self.store_value(self._address(op, arr, idx), self.v(value), value.type)

    def op_atomic(self, op):
        arr, *idx, value = op.operands
        ptr = self._address(op, arr, idx)
        t = value.type
        b = self.builder
        kind = op.attrs["op"]
        if op.attrs.get("private"):
            # an adjoint accumulating into elements only this thread touches: a plain
            # read-add-write, which vectorises
            old = self.load_value(ptr, t)
            new = [b.fadd(o, x, flags=self.fmf) for o, x in zip(self.leaves(old, t), self.leaves(self.v(value), t))]
            self.store_value(ptr, new[0] if isinstance(t, Scalar) else new, t)
            return old
        if isinstance(t, Scalar):
            return self._atomic_scalar(kind, t, ptr, self.v(value))
        comp_size = t.dtype.size
        old = []
        for k, x in enumerate(self.v(value)):
            p = b.gep(ptr, [I64(k * comp_size)], source_etype=I8, inbounds=True)
            old.append(self._atomic_scalar(kind, t.dtype, p, x))
        return old

    def _atomic_scalar(self, kind, t, ptr, x):
        if t.is_float:
            rmw = {"add": "fadd", "sub": "fsub", "min": "fmin", "max": "fmax"}[kind]
        elif t.is_signed:
            rmw = {"add": "add", "sub": "sub", "min": "min", "max": "max"}[kind]
        else:
            rmw = {"add": "add", "sub": "sub", "min": "umin", "max": "umax"}[kind]
        return self.builder.atomic_rmw(rmw, ptr, x, "monotonic")

    def op_view(self, op):
        arr, *idx = op.operands
        ptr = self._address(op, arr, idx)
        b = self.builder
        src = self.v(arr)
        k = len(idx)
        out_t = op.result.type
        out = ir.Constant(llvm_type(out_t), ir.Undefined)
        out = b.insert_value(out, ptr, 0)
        ok = self.last_ok
        for d in range(out_t.ndim):
            extent = b.extract_value(src, [1, d + k])
            if ok is not None:  # a view at a bad index has no elements: later accesses fail too
                extent = b.select(ok, extent, I64(0))
            out = b.insert_value(out, extent, [1, d])
            out = b.insert_value(out, b.extract_value(src, [2, d + k]), [2, d])
        if arr.id in self.contiguous:
            self.contiguous.add(op.result.id)
        return out

    # Control flow --------------------------------------------------------------------------
    def _region(self, block: Block, args=()):
        """Emit a region's ops; return the LLVM values it yields."""
        for a, v in zip(block.args, args):
            self.values[a.id] = v
        for op in block.ops[:-1]:
            self.emit(op)
        return [self.v(x) for x in block.ops[-1].operands]

    def op_func_region(self, op):
        return self._region(op.regions[0], [self.v(x) for x in op.operands])

    def op_if(self, op):
        b = self.builder
        then_bb = self.func.append_basic_block("if.then")
        else_bb = self.func.append_basic_block("if.else")
        merge = self.func.append_basic_block("if.end")
        b.cbranch(self.v(op.operands[0]), then_bb, else_bb)
        incoming = []
        for bb, region in ((then_bb, op.regions[0]), (else_bb, op.regions[1])):
            b.position_at_end(bb)
            vals = self._region(region)
            incoming.append((vals, b.block))
            b.branch(merge)
        b.position_at_end(merge)
        return self._merge([r.type for r in op.results], incoming)

    def _merge(self, types, incoming):
        """Phis joining the values each (values, block) pair brings, leaf by leaf."""
        results = []
        for k, t in enumerate(types):
            phis = [self.builder.phi(lt) for lt in self.leaf_types(t)]
            for vals, bb in incoming:
                for phi, leaf in zip(phis, self.leaves(vals[k], t)):
                    phi.add_incoming(leaf, bb)
            results.append(self.from_leaves(t, iter(phis)))
        return results

    def _loop_phis(self, values, pre):
        """Header phis for loop-carried values entering from block `pre`: (reps, phi lists)."""
        reps, all_phis = [], []
        for x in values:
            phis = [self.builder.phi(lt) for lt in self.leaf_types(x.type)]
            for phi, leaf in zip(phis, self.leaves(self.v(x), x.type)):
                phi.add_incoming(leaf, pre)
            reps.append(self.from_leaves(x.type, iter(phis)))
            all_phis.append((phis, x.type))
        return reps, all_phis

    def _close_loop(self, all_phis, new_values):
        for (phis, t), rep in zip(all_phis, new_values):
            for phi, leaf in zip(phis, self.leaves(rep, t)):
                phi.add_incoming(leaf, self.builder.block)

    def op_for(self, op):
        start, stop, step, *inits = op.operands
        guard = self._loop_guard(op) if self.bounds_checks else None
        if guard is None:
            return self._emit_for(op, self.active)
        b = self.builder
        fast_bb = self.func.append_basic_block("for.fast")
        slow_bb = self.func.append_basic_block("for.checked")
        merge = self.func.append_basic_block("for.done")
        b.cbranch(guard, fast_bb, slow_bb)
        incoming = []
        for bb, active in ((fast_bb, self.active | {("loop", id(op))}), (slow_bb, self.active)):
            b.position_at_end(bb)
            incoming.append((self._emit_for(op, active), b.block))
            b.branch(merge)
        b.position_at_end(merge)
        return self._merge([r.type for r in op.results], incoming)

    def _loop_guard(self, op):
        """For a loop with a positive constant step: the condition under which every access in
        its body indexed by the loop variable (and otherwise by proven indices) is in bounds."""
        start, stop, step = op.operands[:3]
        step_value = constant_value(step)
        if step_value is None or step_value <= 0:
            return None
        iv = op.regions[0].args[0]
        b = self.builder
        conds = []
        for inner in walk(op.regions[0]):
            site = self.site_of.get(id(inner))
            if site is None or inner.name not in ("load", "store", "atomic", "view"):
                continue
            arr = inner.operands[0]
            idx = _indices(inner)
            if arr.id not in self.param_ids or not any(i is iv for i in idx):
                continue
            conds_here, requires = [], {("loop", id(op))}
            for d, i in enumerate(idx):
                extent = self._shape(self.values[arr.id], d)
                kind = self._index_kind(i)
                if i is iv:
                    conds_here.append(self._range_in_bounds(start, stop, extent))
                elif kind is not None and kind[0] == "const":
                    conds_here.append(self._constant_in_bounds(kind[1], extent))
                elif kind is not None and getattr(site, "tid_proven", False):
                    requires.add("tid")  # proven by the thread guard, in the fast copy only
                else:
                    conds_here = None
                    break
            if conds_here is None:
                continue
            conds.extend(conds_here)
            site.requires = frozenset(requires)
        if not conds:
            return None
        ok = _all_of(b, conds)
        cmp = b.icmp_signed if start.type.is_signed else b.icmp_unsigned
        empty = cmp(">=", self.v(start), self.v(stop))
        return b.or_(empty, ok)

    def _emit_for(self, op, active):
        saved_active = self.active
        self.active = active
        start, stop, step, *inits = op.operands
        b = self.builder
        t = start.type
        step_value = constant_value(step)
        # A unit step cannot overflow the counter (it stops at `stop`); any other step can
        # jump past the type's range, so such counters run in 64 bits.
        wide = step_value not in (1, -1) and t.bits < 64
        ext = (b.sext if t.is_signed else b.zext) if wide else (lambda v, _ty: v)
        ctype = I64 if wide else llvm_type(t)
        signed = t.is_signed or wide
        lo, hi, st = (ext(self.v(x), I64) for x in (start, stop, step))
        pre = b.block
        header = self.func.append_basic_block("for.header")
        body = self.func.append_basic_block("for.body")
        exit_ = self.func.append_basic_block("for.exit")
        b.branch(header)
        b.position_at_end(header)
        iv = b.phi(ctype, "i")
        iv.add_incoming(lo, pre)
        carried, phis = self._loop_phis(inits, pre)
        cmp = b.icmp_signed if signed else b.icmp_unsigned
        if step_value is not None:
            go = cmp("<" if step_value > 0 else ">", iv, hi)
        elif not t.is_signed:
            go = cmp("<", iv, hi)
        else:
            up = b.icmp_signed(">", st, st.type(0))
            go = b.select(up, cmp("<", iv, hi), cmp(">", iv, hi))
        b.cbranch(go, body, exit_)
        b.position_at_end(body)
        iv_value = b.trunc(iv, llvm_type(t)) if wide else iv
        vals = self._region(op.regions[0], [iv_value] + carried)
        iv.add_incoming(b.add(iv, st, flags=("nsw",) if signed else ()), b.block)
        self._close_loop(phis, vals)
        b.branch(header)
        b.position_at_end(exit_)
        self.active = saved_active
        return carried

    def op_while(self, op):
        b = self.builder
        pre = b.block
        header = self.func.append_basic_block("while.header")
        body = self.func.append_basic_block("while.body")
        exit_ = self.func.append_basic_block("while.exit")
        b.branch(header)
        b.position_at_end(header)
        carried, phis = self._loop_phis(op.operands, pre)
        (go,) = self._region(op.regions[0], carried)
        b.cbranch(go, body, exit_)
        b.position_at_end(body)
        vals = self._region(op.regions[1], carried)
        self._close_loop(phis, vals)
        b.branch(header)
        b.position_at_end(exit_)
        return carried

    # AD stack -----------------------------------------------------------------------------
    def _stack_field(self, k):
        return self.builder.gep(self.stack, [I32(0), I32(k)])  # a typed pointer (alloca)

    def _scratch(self):
        return self.builder.load(self.builder.gep(self.ctx_ptr, [I32(0), I32(5)], source_etype=CTX_TYPE), typ=PTR)

    def op_push(self, op):
        """Append the operands' scalars to the stack, growing it (realloc) when full. If it
        cannot grow (the limit in the launch context, or no memory) the error is recorded
        and the values go to scratch memory, so the launch ends cleanly and reports it."""
        b = self.builder
        leaves = [leaf for v in op.operands for leaf in self.leaves(self.v(v), v.type)]
        offsets, frame = _slot_offsets([leaf.type for leaf in leaves])
        size_ptr, cap_ptr = self._stack_field(1), self._stack_field(2)
        size = b.load(size_ptr, typ=I64)
        need = b.add(size, I64(frame))
        fits = b.icmp_unsigned("<=", need, b.load(cap_ptr, typ=I64))
        before = b.block
        with b.if_then(b.not_(fits), likely=False):
            limit = b.load(b.gep(self.ctx_ptr, [I32(0), I32(6)], source_etype=CTX_TYPE), typ=I64)
            stack = b.bitcast(self.stack, PTR)
            grown = b.call(self._stack_grow(), [stack, need, limit])
            grow_block = b.block
        ok = b.phi(I1)
        ok.add_incoming(I1(1), before)
        ok.add_incoming(grown, grow_block)
        self._check(op, ok, [], [])
        top = b.gep(b.load(self._stack_field(0), typ=PTR), [size], source_etype=I8)
        ptr = b.select(ok, top, self._scratch())
        for offset, leaf in zip(offsets, leaves):
            slot = b.gep(ptr, [I64(offset)], source_etype=I8)
            b.store(b.zext(leaf, I8) if leaf.type == I1 else leaf, slot)
        b.store(b.select(ok, need, size), size_ptr)

    def op_pop(self, op):
        b = self.builder
        types = [lt for r in op.results for lt in self.leaf_types(r.type)]
        offsets, frame_bytes = _slot_offsets(types)
        size_ptr = self._stack_field(1)
        size = b.load(size_ptr, typ=I64)
        frame = I64(frame_bytes)
        ok = b.icmp_unsigned(">=", size, frame)  # false only after a failed push
        rest = b.sub(size, frame)
        top = b.gep(b.load(self._stack_field(0), typ=PTR), [rest], source_etype=I8)
        ptr = b.select(ok, top, self._scratch())
        leaves = []
        for offset, lt in zip(offsets, types):
            slot = b.gep(ptr, [I64(offset)], source_etype=I8)
            leaves.append(b.icmp_unsigned("!=", b.load(slot, typ=I8), I8(0)) if lt == I1 else b.load(slot, typ=lt))
        b.store(b.select(ok, rest, size), size_ptr)
        it = iter(leaves)
        return [self.from_leaves(r.type, it) for r in op.results]

    def _stack_grow(self):
        """`grow(stack, need, limit) -> ok`: realloc to max(need, 2 x capacity, 4 KiB), never
        beyond `limit` bytes."""
        f = self.module.globals.get("weft_stack_grow")
        if f is not None:
            return f
        f = ir.Function(self.module, ir.FunctionType(I1, [PTR, I64, I64]), "weft_stack_grow")
        f.linkage = "internal"
        f.attributes.add("noinline")
        f.attributes.add("cold")
        realloc = ir.Function(self.module, ir.FunctionType(PTR, [PTR, I64]), "realloc")
        st, need, limit = f.args
        b = ir.IRBuilder(f.append_basic_block())
        fail, attempt, done = (f.append_basic_block(n) for n in ("fail", "attempt", "done"))
        field = [b.gep(st, [I32(0), I32(k)], source_etype=STACK_TYPE) for k in range(3)]
        b.cbranch(b.icmp_unsigned(">", need, limit), fail, attempt)
        b.position_at_end(attempt)
        cap = b.mul(b.load(field[2], typ=I64), I64(2))
        cap = b.select(b.icmp_unsigned(">", cap, need), cap, need)
        cap = b.select(b.icmp_unsigned(">", cap, I64(4096)), cap, I64(4096))
        cap = b.select(b.icmp_unsigned(">", cap, limit), limit, cap)
        data = b.call(realloc, [b.load(field[0], typ=PTR), cap])
        b.cbranch(b.icmp_unsigned("==", data, ir.Constant(PTR, None)), fail, done)
        b.position_at_end(done)
        b.store(data, field[0])
        b.store(cap, field[2])
        b.ret(I1(1))
        b.position_at_end(fail)
        b.ret(I1(0))
        return f

    # Errors, asserts, print ----------------------------------------------------------------
    def _declare_error_recorder(self):
        """`record_error(ctx, site, index[4], extent[4])`: the first error of a launch wins."""
        fnty = ir.FunctionType(ir.VoidType(), [PTR, I32] + [I64] * (2 * MAX_DIMS))
        f = ir.Function(self.module, fnty, "weft_record_error")
        f.linkage = "internal"
        f.attributes.add("noinline")
        f.attributes.add("cold")
        b = ir.IRBuilder(f.append_basic_block())
        ctx, site, *rest = f.args
        site_ptr = b.gep(ctx, [I32(0), I32(2)], source_etype=CTX_TYPE)
        pair = b.cmpxchg(site_ptr, I32(0), site, "monotonic", "monotonic")
        won = b.extract_value(pair, 1)
        with b.if_then(won):
            for d in range(MAX_DIMS):
                b.store(rest[d], b.gep(ctx, [I32(0), I32(3), I32(d)], source_etype=CTX_TYPE))
                b.store(rest[MAX_DIMS + d], b.gep(ctx, [I32(0), I32(4), I32(d)], source_etype=CTX_TYPE))
        b.ret_void()
        self.record_error = f

    def _check(self, op, ok, indices, extents):
        """If `ok` is false, record the error for `op`'s site (a cold branch)."""
        site = self.site_of[id(op)]
        b = self.builder
        with b.if_then(b.not_(ok), likely=False):
            pad = [I64(0)] * (MAX_DIMS - len(indices))
            b.call(self.record_error, [self.ctx_ptr, I32(site.id), *indices, *pad, *extents,
                                       *([I64(0)] * (MAX_DIMS - len(extents)))])

    def op_assert(self, op):
        self._check(op, self.v(op.operands[0]), [], [])

    def op_print(self, op):
        b = self.builder
        printf = self.module.globals.get("printf") or ir.Function(
            self.module, ir.FunctionType(I32, [PTR], var_arg=True), "printf")
        if op.attrs.get("raw"):
            fmt = op.attrs["fmt"][0]
            args = [self._printf_arg(x)[1] for x in op.operands]
        else:
            parts, args = [], []
            values = iter(op.operands)
            for piece in op.attrs["fmt"]:
                if piece is None:
                    spec, arg = self._printf_arg(next(values))
                    parts.append(spec)
                    args.append(arg)
                else:
                    parts.append(piece.replace("%", "%%"))
            fmt = "".join(parts)
        b.call(printf, [self._cstring(fmt), *args])

    def _printf_arg(self, x: Value):
        b = self.builder
        v = self.v(x)
        t = x.type
        if t.is_bool:
            return "%s", b.select(v, self._cstring("True"), self._cstring("False"))
        if t.is_float:
            return "%g", b.fpext(v, self.f64) if t.bits < 64 else v
        if t.bits == 64:
            return ("%lld" if t.is_signed else "%llu"), v
        ext = b.sext(v, I32) if t.is_signed else b.zext(v, I32)
        return ("%d" if t.is_signed else "%u"), ext if t.bits < 32 else v

    def _cstring(self, text: str):
        if text not in self._strings:
            data = bytearray(text.encode()) + b"\0"
            g = ir.GlobalVariable(self.module, ir.ArrayType(I8, len(data)), f".str{len(self._strings)}")
            g.linkage = "private"
            g.global_constant = True
            g.initializer = ir.Constant(ir.ArrayType(I8, len(data)), data)
            self._strings[text] = g
        return self._strings[text]

    # Helpers for builtins' lowerings -------------------------------------------------------
    def call_intrinsic(self, name, args):
        ty = args[0].type
        fn = self.module.declare_intrinsic(name, [ty])
        return self.builder.call(fn, args)

    def i1(self, value):
        return I1(value)


