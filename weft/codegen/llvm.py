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

import llvmlite.ir as ir

from .. import config
from ..ir.core import Block, Function, Op, Value, constant_value, walk
from ..ir.outline import kept_bodies
from ..transforms.composite_memory import composites_in_memory
from ..transforms.scatter import scatter_params
from ..types import ArrayType, StructType, float32
from ..types.layout import ctype_of
from .call_ops import CallOps
from .composite_ops import CompositeOps
from .control_ops import ControlOps
from .llvm_types import (
    CTX_TYPE,
    I1,
    I8,
    I32,
    I64,
    MAX_DIMS,
    PTR,
    STACK_TYPE,
    Site,
    _all_of,
    _indices,
    _slot_offsets,
    llvm_type,
)
from .memory_ops import MemoryOps
from .scalar_ops import ScalarOps, has_bfloat16
from .spmd import FLAT_ROWS_BELOW, WIDTH, SpmdOps, spmd_plan
from .tile_ops import TileOps
from .uniform_acc import UniformAccumulation, uniform_accumulations

# ops that compute new float values: a bfloat16 result is rounded after them (casts round
# in `convert`; the other ops move values that are bfloat16 already)
_ROUNDING_OPS = ("binary", "call")


#: arrays of larger elements keep a kernel's threads off SIMD lanes (KernelCodegen.wide_elements)
WIDE_ELEMENT_BYTES = 64
#: ... and stores into arrays of structs larger than this: LLVM's vectoriser turns them into
#: masked scatters (`ps[i].v = ps[i].v + g * dt` over a 32-byte struct: 3.5 ms a million on
#: one thread vectorised, 1.8 ms not; Warp 1.8 ms). Reading such structs vectorises well.
WIDE_STRUCT_BYTES = 16


def _stores_struct_fields(op) -> bool:
    """Whether `op` stores (a field of) an element of an array of structs of that size."""
    if op.name != "store":
        return False
    dtype = op.operands[0].type.dtype
    return isinstance(dtype, StructType) and ctypes.sizeof(ctype_of(dtype)) > WIDE_STRUCT_BYTES


class KernelCodegen(ScalarOps, CompositeOps, MemoryOps, ControlOps, TileOps, UniformAccumulation, SpmdOps,
                    CallOps):
    """Lowers one kernel IR function with one specialisation to an LLVM module."""

    #: run a kernel's threads on SIMD lanes where that pays (spmd.py)
    vectorize_threads = True

    #: add into one element that every thread adds to through a local sum (uniform_acc.py)
    accumulate_uniform_adds = True

    #: keep vectors and matrices indexed at run time in loops in memory (composite_memory.py)
    keep_indexed_composites_in_memory = True

    def __init__(self, fn: Function, contiguous: tuple[bool, ...], bounds_checks=True,
                 fast_math=False, triple="", data_layout="", short_rows=False):
        """`short_rows`: the variant for launches of several dimensions whose rows are shorter
        than FLAT_ROWS_BELOW (lanes along the linear thread index: spmd.py)."""
        self.fn = composites_in_memory(fn) if self.keep_indexed_composites_in_memory else fn
        # the bodies of kept calls (ir/outline.py), each lowered once (call_ops.py)
        self.kept = {id(body): composites_in_memory(body) if self.keep_indexed_composites_in_memory else body
                     for body in kept_bodies(fn)}
        self.short_rows = short_rows
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
        # a straight-line kernel reading or writing elements wider than a cache line would run
        # on lanes (or LLVM's vectorised thread loop) through gathers at that stride, several
        # times slower than one thread after another (a 6x6 matrix times a vector: 9.7 ms
        # against 1.4); with loops, the work per element pays for the gathers (an 8x8
        # elimination is 4x faster on lanes)
        self.wide_elements = not any(op.name in ("for", "while") for op in walk(fn.body)) and (
            any(isinstance(p.type, ArrayType) and ctypes.sizeof(ctype_of(p.type.dtype)) > WIDE_ELEMENT_BYTES
                for p in fn.params) or any(_stores_struct_fields(op) for op in walk(fn.body)))
        if self.wide_elements:
            self.vectorize_threads = False

    @property
    def short_rows_below(self) -> int:
        """Launches of several dimensions whose last one is shorter are worth a variant of
        their own, with a flat vector body (CompiledKernel.for_dims); 0: none."""
        worth = not self.short_rows and self.vectorize_threads and config.vectorize_threads and \
            spmd_plan(self.fn, flat=True) is not None
        return FLAT_ROWS_BELOW if worth else 0

    #: appended to the entry's name: the compiled variant's cache key, so that every kernel's
    #: entry has a name of its own (kernels share one JIT engine: cpu.load_object)
    entry_suffix = ""

    @property
    def entry_name(self) -> str:
        name = "weft_kernel_" + "".join(c if c.isalnum() else "_" for c in self.fn.name)
        return f"{name}_{self.entry_suffix}" if self.entry_suffix else name

    # Sites ---------------------------------------------------------------------------------
    def _collect_sites(self):
        self.scratch_size = 16
        for op in (op for f in (self.fn, *self.kept.values()) for op in walk(f.body)):
            if op.name in ("load", "store", "atomic", "view", "slice"):
                arr = op.operands[0]
                what = f"array '{arr.hint}'" if arr.hint else "array"
            elif op.name in ("extract_dyn", "insert_dyn"):
                what = f"{op.operands[0].type!r} component"
            elif op.name == "component" and op.attrs["of"] is not None:
                what = f"{op.attrs['of']!r} component"
            elif op.name == "binary" and op.attrs["op"] in ("div", "floordiv", "mod") \
                    and op.operands[0].type.is_int:
                what = "integer division"
            elif op.name == "assert":
                what = "assert"
            elif op.name == "call" and getattr(op.attrs["fn"], "checks", None):
                what = op.attrs["fn"].checks
            elif op.name == "push":
                what = "AD stack"
                _, frame = _slot_offsets([lt for v in op.operands for lt in self.stack_leaf_types(v.type)])
                self.scratch_size = max(self.scratch_size, frame * WIDTH)  # (a vector body's frame)
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
        # (here, not in __init__: a cached kernel builds a codegen for its sites only)
        vectorize = self.vectorize_threads and config.vectorize_threads
        self.plan = spmd_plan(self.fn) if vectorize and not self.short_rows else None
        self.flat_plan = spmd_plan(self.fn, flat=True) if vectorize and self.short_rows else None
        self.carried_tiles: set[int] = set()  # ids of tile values that own a loop's buffer
        self.tile_stack_bytes = 0  # of tile buffers on the stack (lang/kernel.py bounds it)
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
        # where checked accesses out of bounds go: loaded once (a load per access, after a
        # store that might alias the context, kept loops from keeping it in a register)
        self.scratch = b.load(b.gep(ctx, [I32(0), I32(5)], source_etype=CTX_TYPE), typ=PTR)
        serial = b.load(b.gep(ctx, [I32(0), I32(7)], source_etype=CTX_TYPE), typ=I32)
        self.serial = b.icmp_unsigned("!=", serial, I32(0))
        # adds into an array this call owns a private copy of need not be atomic
        # (transforms/scatter.py): bit k of the context's private mask for parameter k
        private = b.load(b.gep(ctx, [I32(0), I32(8)], source_etype=CTX_TYPE), typ=I64)
        self.plain_adds = {params[k].id: b.or_(self.serial, b.icmp_unsigned("!=", b.and_(private, I64(1 << k)), I64(0)))
                           for k in scatter_params(self.fn)}
        self.uniform_adds = uniform_accumulations(self.fn) if self.accumulate_uniform_adds else set()
        self.setup_accumulators()
        guard = self._thread_guard()
        self.vector_loop_in_checked = guard is None
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
        self.flush_accumulators()
        if self.stack is not None:
            free = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [PTR]), "free")
            b.call(free, [b.load(self._stack_field(0), typ=PTR)])
        b.ret_void()
        return self.module

    def _emit_thread_loop(self, begin, end, active):
        """Run the body for linear thread indices [begin, end). For `i, j, ... = tid()` the
        range is walked row by row: the coordinates are computed once per row and the last
        one is the counter of an inner loop, which LLVM can vectorise. Rows shorter than
        FLAT_ROWS_BELOW run, in the `short_rows` variant, the flat vector body (lanes along
        the linear index) first."""
        self.active = active
        n = max((op.attrs["of"] for op in walk(self.fn.body) if op.name == "tid"), default=1)
        b = self.builder
        # (where a guard proves the thread-indexed accesses in bounds, only the guarded
        # version, the one launches take unless an array is shorter than the launch, gets
        # a vector loop: half the code to compile)
        vectorize = self.vector_loop_in_checked or "tid" in active
        if n == 1 and self.plan is not None and vectorize:
            begin = self._emit_vector_loop(begin, end)
        if n > 1 and self.flat_plan is not None and vectorize:
            begin = self._emit_vector_loop(begin, end, flat=n)
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
        row_start = first
        if self.plan is not None and vectorize:
            row_start = self._emit_vector_loop(first, last_end, row=(k, first, coords[:-1]))
        j, inner_exit = self._loop_header(row_start, last_end, "row")
        self.thread_index = b.add(k, b.sub(j, first), flags=("nsw",))
        self.tids = {n: coords[:-1] + [j]}
        self._emit_body(self.fn.body)
        self._loop_latch(j, b.add(j, I32(1), flags=("nsw",)))
        b.position_at_end(inner_exit)
        self._loop_latch(k, row_end)
        b.position_at_end(row_exit)

    def _emit_vector_loop(self, begin, end, row=None, flat=None):
        """The vector body over the groups of WIDTH threads in [begin, end) (spmd.py);
        returns where the scalar loop takes over (the last end - begin mod WIDTH threads).
        With several launch dimensions, either [begin, end) are last coordinates along one
        row and `row` is (the row's first linear thread index, its first last coordinate,
        the other coordinates: the same in every lane), or `flat` is the number of
        dimensions, [begin, end) are linear indices and every coordinate varies."""
        b = self.builder
        vend = b.sub(end, b.srem(b.sub(end, begin), I32(WIDTH)))
        if flat:
            # (each coordinate's divisor as a double, once: a quotient of 32-bit integers
            # rounded to double never reaches the next integer, so truncating it is exact)
            extents = [b.sitofp(self.launch_dims[d], ir.DoubleType()) for d in range(flat)]
        k, exit_ = self._loop_header(begin, vend, "lanes")
        saved, row_plan = dict(self.values), self.plan
        self.vector_mode = True
        lanes = ir.Constant(ir.VectorType(I32, WIDTH), list(range(WIDTH)))
        coordinate = b.add(self.splat(k), lanes, flags=("nsw",))
        if flat:
            self.plan = self.flat_plan
            self.thread_index, coords, rest = coordinate, [None] * flat, coordinate
            wide = ir.VectorType(ir.DoubleType(), WIDTH)
            for d in reversed(range(1, flat)):
                q = b.fptosi(b.fdiv(b.sitofp(rest, wide), self.splat(extents[d])), rest.type)
                coords[d] = b.sub(rest, b.mul(q, self.splat(self.launch_dims[d]), flags=("nsw",)), flags=("nsw",))
                rest = q
            coords[0] = rest
            self.tids = {flat: coords}
        elif row is None:
            self.thread_index, self.tids = coordinate, {}
        else:
            linear, first, others = row
            self.thread_index = b.add(self.splat(b.add(linear, b.sub(k, first))), lanes, flags=("nsw",))
            self.tids = {len(others) + 1: [*others, coordinate]}
        try:
            self._emit_body(self.fn.body)
        finally:
            self.vector_mode, self.plan = False, row_plan
        self._loop_latch(k, b.add(k, I32(WIDTH), flags=("nsw",)))
        b.position_at_end(exit_)
        self.values = saved
        return vend

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
            if op.name not in ("load", "store", "atomic", "view") or op.operands[0].id not in self.param_ids \
                    or op.operands[0].type.fabric:  # (Fabric arrays check each access themselves)
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
        """0 <= start and stop <= extent, compared without overflow for any int type (a
        constant bound need not have been emitted yet: `_nested_ranges`)."""
        b = self.builder
        t = start.type
        lo, hi = (llvm_type(t)(constant_value(v)) if constant_value(v) is not None else self.v(v)
                  for v in (start, stop))
        if t.is_signed:
            lo_ok = b.icmp_signed(">=", lo, lo.type(0))
            hi = b.sext(hi, I64) if t.bits < 64 else hi
            return b.and_(lo_ok, b.icmp_signed("<=", hi, extent))
        hi = b.zext(hi, I64) if t.bits < 64 else hi
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
        if not self.bounds_checks or op.attrs.get("in_bounds"):  # (a builtin's own data)
            return True
        requires = getattr(self.site_of.get(id(op)), "requires", None)
        return requires is not None and requires <= self.active

    # Ops -----------------------------------------------------------------------------------
    def emit(self, op: Op):
        if self.vector_mode:
            self.emit_vector(op)  # (spmd.py)
        else:
            self.emit_scalar(op)

    def emit_scalar(self, op: Op):
        """Lower `op` by its handler `op_<name>` (in the vector body: on the values the
        caller widened, see spmd.py)."""
        if self.lane is not None and id(op) in self.plan.buffer_ops:  # (in the vector body: spmd_buffers.py)
            return self.emit_buffer_op(op)
        handler = getattr(self, "op_" + op.name)
        result = handler(op)
        if op.name in _ROUNDING_OPS and len(op.results) == 1 and has_bfloat16(op.results[0].type):
            result = self.round_bf16_leaves(result, op.results[0].type)
        if op.name in ("if", "for", "while", "func_region", "call_func", "pop", "tile_map") or len(op.results) > 1:
            for r, v in zip(op.results, result):  # handlers of these return one value per result
                self.values[r.id] = v
        elif op.results:
            self.values[op.results[0].id] = result

    def v(self, value: Value):
        if self.lane is not None:  # (one lane of the vector body's values: spmd.py)
            return self.lane_of(self.values[value.id], self.lane)
        return self.values[value.id]


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
            args = [self._printf_arg(x, raw=True)[1] for x in op.operands]
        else:
            parts, args = [], []
            values = iter(op.operands)
            as_float32 = op.attrs.get("as_float32", False)
            for piece in op.attrs["fmt"]:
                if piece is None:
                    spec, arg = self._printf_arg(next(values), as_float32)
                    parts.append(spec)
                    args.append(arg)
                else:
                    parts.append(piece.replace("%", "%%"))
            fmt = "".join(parts)
        b.call(printf, [self._cstring(fmt), *args])

    def _printf_arg(self, x: Value, as_float32: bool = False, raw: bool = False):
        """(printf conversion, argument) for scalar `x`; `as_float32`: a float32 for %g, as
        Warp prints the components of vectors and matrices; `raw`: for the user's own format
        (wp.printf), where a bool is the int C promotes it to."""
        b = self.builder
        v = self.v(x)
        t = x.type
        if as_float32 and not t.is_bool:
            return "%g", b.fpext(self.convert(v, t, float32), self.f64)
        if t.is_bool and raw:
            return "%d", b.zext(v, I32)
        if t.is_bool:
            text = [b.bitcast(self._cstring(s), I8.as_pointer()) for s in ("True", "False")]
            return "%s", b.select(v, *text)  # (the two strings' array types differ)
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
        return self.builder.call(self.intrinsic(name, args[0].type, len(args)), args)

    def intrinsic(self, name, ty, nargs=1):
        """The overloaded LLVM intrinsic `name` on type `ty` (a scalar or a vector of them:
        llvmlite names only scalar overloads) taking `nargs` arguments of that type."""
        if not isinstance(ty, ir.VectorType):
            return self.module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty] * nargs))
        full = f"{name}.v{ty.count}{ty.element.intrinsic_name}"
        return self.module.globals.get(full) or ir.Function(self.module, ir.FunctionType(ty, [ty] * nargs), full)

    def i1(self, value):
        return I1(value)


