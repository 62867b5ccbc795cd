"""Threads on SIMD lanes: a kernel's thread loop stepping WIDTH threads at a time.

LLVM vectorises a kernel's thread loop by itself when the body is straight-line code that
reads and writes arrays at the thread's index. A body with a loop (n-body's `for j in
range(n)`) defeats it: LLVM only vectorises innermost loops, and the inner loop is a float
reduction it may not reorder without fast math. So does a gather or a scatter (a spring
kernel's `x[springs[2 * s]]`, `atomic_add(f, i, ...)`): their bounds checks branch to an
error call. So a kernel whose body holds a loop or such an access is compiled, as ISPC
and GPU compilers do, with one program instance per lane: the thread loop runs WIDTH
consecutive threads together, and every value that differs between them (`varying`: it
depends on `tid()`) is an LLVM vector with one lane per thread, while values that do not
(`uniform`: parameters, constants, loop counters of uniform loops) stay scalars. No
arithmetic is reordered: each lane computes exactly what the scalar code computes for its
thread, so results are bit-identical (up to the order in which several lanes' float adds
land in one shared element: see spmd_memory.py).

How each op runs in the vector body (`SpmdPlan` decides, `SpmdOps` emits):
- uniform ops: the scalar lowering, once for all lanes;
- varying arithmetic, comparisons, selects, casts, composites and the pure builtins that
  have vector forms: the same lowering on vectors (uniform operands broadcast);
- `for` loops with uniform bounds and `while` loops with a uniform condition: one loop,
  carrying vectors where the carried values vary; with varying bounds or a varying
  condition: one loop run while any lane loops, masked (spmd_masked.py; a `while` hands
  its last few lanes to the scalar code);
- integer division and modulo by a constant that cannot trap, and shifts: on vectors (a
  divisor that may be 0 records its error lane by lane);
- `if` on a uniform condition: a branch; on a varying one, both sides when they are pure
  arithmetic (then a select per result), else the whole `if` lane by lane;
- loads, stores and atomic adds at varying indices: all lanes checked at once, then one
  vector access where the lanes' elements lie side by side, else one access per lane
  (spmd_memory.py);
- everything else that touches lanes (other atomics, prints, varying asserts, loops that
  push or pop the AD stack with varying trip counts, other builtins): lane by lane, the
  scalar lowering run once per lane on that lane's values (`emit_lanes`), so every
  construct works, in thread order within the group.
The threads left over (fewer than WIDTH) run through the scalar body. A launch of several
dimensions runs its rows (the last dimension) so: the other coordinates are uniform in a
group, and each row's rest runs scalar. Rows shorter than FLAT_ROWS_BELOW (an image's three
channels, a (particle, axis) grid) would leave most threads to that rest, so such launches
run a variant of the kernel (`flat` plan) whose lanes run along the linear thread index:
every coordinate varies, computed per group by a division in doubles (exact for 32-bit
integers), and an access whose lanes' elements turn out consecutive at run time (an array
shaped like the launch) is one vector access, any other one lane by lane. That variant also
serves straight-line kernels, whose rows LLVM's vectoriser handles only when they are long.

Adjoint kernels too: the AD stack holds one vector per pushed number (all lanes' values)
where the pushes and pops run in the vector body. Straight-line kernels without gathers or
scatters (LLVM's vectoriser handles them), kernels whose AD stack would be used lane by
lane, tiles, half-precision values, or atomic exchanges and compare-and-swaps (locks)
keep the scalar body (`spmd_plan` returns None).
"""

from __future__ import annotations

import llvmlite.ir as ir

from ..builtins.registry import Primitive
from ..ir.core import Block, Function, Op, constant_value, walk
from ..types import ArrayType, Matrix, Scalar, StructType, TupleType, Vector, bfloat16, float16
from .scalar_ops import safe_divisor
from .spmd_buffers import SpmdBuffers, lane_buffer_ops
from .spmd_masked import SpmdMasked, maskable
from .spmd_memory import SpmdMemory, vector_access_type

WIDTH = 8
#: launches of several dimensions whose last one is shorter run the flat vector body
FLAT_ROWS_BELOW = 2 * WIDTH
#: the largest lane step (`SpmdPlan.lane_step`) a load reads as one wide vector
MAX_LANE_STEP = 4

# ops a vector body lowers (anything else keeps the kernel scalar)
_KNOWN = frozenset((
    "const", "binary", "unary", "cmp", "cast", "select", "call", "construct", "extract", "insert",
    "extract_dyn", "insert_dyn", "load", "store", "atomic", "tid", "if", "for", "while",
    "func_region", "yield", "return", "array_shape", "assert", "print", "push", "pop",
))
# ops that compute from their operands alone (both sides of a varying `if` may run them)
_PURE = frozenset(("const", "unary", "cmp", "select", "construct", "extract", "insert", "yield"))
# builtins whose lowering is the same instructions on vectors (codegen/vecmath.py emits its
# functions for vectors too)
_VECTOR_PRIMITIVES = frozenset(("sqrt", "abs", "floor", "ceil", "trunc", "min", "max", "isnan",
                                "isinf", "isfinite", "sin", "cos", "tan", "asin", "acos", "atan",
                                "sinh", "cosh", "tanh", "exp", "exp2", "log", "log2", "log10",
                                "cbrt", "erf", "pow", "atan2", "round", "rint", "sign",
                                "degrees", "radians", "frac", "signbit", "bit_count", "fma"))


def _scalar_types_ok(t) -> bool:
    if isinstance(t, Scalar):
        return t not in (float16, bfloat16)
    if isinstance(t, (Vector, Matrix)):
        return t.dtype not in (float16, bfloat16)
    if isinstance(t, StructType):
        return all(_scalar_types_ok(f) for f in t.fields.values())
    if isinstance(t, TupleType):
        return all(_scalar_types_ok(e) for e in t.elements)
    return isinstance(t, ArrayType)


class SpmdPlan:
    """Which values of a kernel vary between the lanes, and how each op runs."""

    def __init__(self, fn: Function, buffer_ops: frozenset = frozenset(), flat: bool = False):
        self.buffer_ops = buffer_ops  # ids of the ops on lane buffers (spmd_buffers.py)
        # lanes along the last launch dimension (a row), or, `flat`, along the linear
        # thread index: every coordinate of `tid()` varies (launches with short rows)
        self.flat = flat
        self.varying: set[int] = set()
        self.lanewise: set[int] = set()  # ids of ops run lane by lane
        self.selected: set[int] = set()  # ids of varying `if`s run as selects
        # integers equal to tid() * step + a uniform value: id -> step (lane k holds lane 0's
        # value + k * step); `unit_stride`: those of step 1
        self.lane_step: dict[int, int] = {}
        self.masked: set[int] = set()  # ids of loops whose trip count varies, run masked
        self._block(fn.body)

    def is_varying(self, v) -> bool:
        return v.id in self.varying

    def _mark(self, values, flag=True) -> bool:
        """Mark `values` varying if `flag`; whether that changed anything."""
        new = [v.id for v in values if flag and v.id not in self.varying]
        self.varying.update(new)
        return bool(new)

    def _block(self, block: Block):
        for op in block.ops:
            self._op(op)

    def _op(self, op: Op):
        vary = any(self.is_varying(x) for x in op.operands)
        name = op.name
        if id(op) in self.buffer_ops:  # (a buffer holds each lane's value: what it loads varies)
            self._mark([r for r in op.results if name == "load"])
        elif name == "tid":
            dim, of = op.attrs["dim"], op.attrs["of"]
            if dim < 0 or of == 1:
                self._mark(op.results)
                self.lane_step[op.result.id] = 1
            elif self.flat or dim == of - 1:  # (in a row, lanes run along the last dimension)
                self._mark(op.results)
                if not self.flat:
                    self.lane_step[op.result.id] = 1
        elif name == "if":
            if vary:
                if all(_speculatable(r) for r in op.regions):
                    self.selected.add(id(op))
                    for r in op.regions:
                        self._block(r)
                else:
                    self.lanewise.add(id(op))
                self._mark(op.results)
            else:
                for r in op.regions:
                    self._block(r)
                for k, res in enumerate(op.results):
                    self._mark([res], any(self.is_varying(r.ops[-1].operands[k]) for r in op.regions))
        elif name == "for":
            if any(self.is_varying(x) for x in op.operands[:3]):
                if maskable(op):  # (the counter and the carried values differ per lane)
                    self.masked.add(id(op))
                    self._mark(op.regions[0].args)
                    self._block(op.regions[0])
                else:
                    self.lanewise.add(id(op))
                self._mark(op.results)
                return
            body = op.regions[0]
            self._carry(op, op.operands[3:], [body.args[1:]], body, [body])
        elif name == "while":
            cond, body = op.regions
            self._carry(op, op.operands, [cond.args, body.args], body, [cond, body])
            if self.is_varying(cond.ops[-1].operands[0]):
                if maskable(op):  # (lanes leave at different iterations: every carried value varies)
                    self.masked.add(id(op))
                    self._mark([*cond.args, *body.args])
                    self._block(cond)
                    self._block(body)
                else:
                    self.lanewise.add(id(op))
                self._mark(op.results)
        elif name == "func_region":
            region = op.regions[0]
            for x, a in zip(op.operands, region.args):
                self._mark([a], self.is_varying(x))
            self._block(region)
            for k, res in enumerate(op.results):
                self._mark([res], self.is_varying(region.ops[-1].operands[k]))
        elif name == "pop":  # (the vector body pushes numbers as vectors: see ControlOps.op_push)
            self._mark([r for r in op.results if not isinstance(r.type, ArrayType)])
        elif name in ("atomic", "print"):
            self.lanewise.add(id(op))  # (each lane's, even with uniform operands)
            self._mark(op.results)
        elif name == "call" and op.attrs["fn"].effects:
            self.lanewise.add(id(op))
            self._mark(op.results)
        else:
            if vary and name in ("store", "assert", "load", "extract_dyn", "insert_dyn") or \
                    vary and name == "call" and op.attrs["fn"].name not in _VECTOR_PRIMITIVES:
                self.lanewise.add(id(op))
            if name == "binary" and vary and not _vector_binary(op) or \
                    name == "cast" and vary and not _vector_cast(op.operands[0].type, op.result.type):
                self.lanewise.add(id(op))
            self._mark(op.results, vary)
            step = self._step(op)
            if step:
                self.lane_step[op.result.id] = step

    @property
    def unit_stride(self) -> set[int]:
        return {k for k, step in self.lane_step.items() if step == 1}

    def _step(self, op) -> int | None:
        """The lane step of `op`'s result if it is tid() * step + a uniform value (a small
        positive constant step), else None."""
        steps = self.lane_step
        if op.name == "binary" and not op.result.type.is_float:
            a, c = op.operands
            kind = op.attrs["op"]
            if kind == "add":
                if a.id in steps and not self.is_varying(c):
                    return steps[a.id]
                return steps[c.id] if c.id in steps and not self.is_varying(a) else None
            if kind == "sub":
                return steps[a.id] if a.id in steps and not self.is_varying(c) else None
            if kind == "mul":
                x, factor = (a, constant_value(c)) if a.id in steps else (c, constant_value(a))
            elif kind == "shl":
                x, bits = a, constant_value(c)
                factor = 1 << bits if isinstance(bits, int) and 0 <= bits < 8 else None
            else:
                return None
            if x.id not in steps or not isinstance(factor, int) or isinstance(factor, bool) or factor <= 0:
                return None
            step = steps[x.id] * factor
            return step if step <= MAX_LANE_STEP else None
        if op.name == "cast":
            src, dst = op.operands[0].type, op.result.type
            if op.operands[0].id in steps and isinstance(dst, Scalar) and not dst.is_float and \
                    not dst.is_bool and dst.bits >= src.bits:
                return steps[op.operands[0].id]
        return None

    def _carry(self, op, inits, arg_lists, body, regions):
        """Loop-carried values: varying where the initial or the yielded value varies (to a
        fixed point: a value can become varying only once)."""
        for args in arg_lists:
            for x, a in zip(inits, args):
                self._mark([a], self.is_varying(x))
        while True:
            for r in regions:
                self._block(r)
            yields = body.ops[-1].operands
            changed = [self._mark([a], self.is_varying(y)) for args in arg_lists for y, a in zip(yields, args)]
            if not any(changed):
                break
        for res, a in zip(op.results, arg_lists[-1]):
            self._mark([res], self.is_varying(a))


def _vector_binary(op) -> bool:
    """Whether a binary op has a vector lowering here: all but an integer division by a
    divisor that may be 0 (or -1: INT_MIN / -1 traps), whose error is recorded lane by lane."""
    t = op.operands[0].type
    if t.is_float or op.attrs["op"] in ("add", "sub", "mul", "bitand", "bitor", "bitxor", "shl", "shr"):
        return True
    return safe_divisor(op) is not None


def _speculatable(block: Block) -> bool:
    for op in walk(block):
        if op.name in _PURE:
            continue
        if op.name == "binary" and _vector_binary(op):
            continue
        if op.name == "cast" and _vector_cast(op.operands[0].type, op.result.type):
            continue
        if op.name == "call" and op.attrs["fn"].name in _VECTOR_PRIMITIVES:
            continue
        if op.name == "if" and all(_speculatable(r) for r in op.regions):
            continue
        return False
    return True


def _vector_cast(src, dst) -> bool:
    return src is dst or not (src.is_float and not dst.is_float and not dst.is_bool)


def spmd_plan(fn: Function, flat: bool = False) -> SpmdPlan | None:
    """The plan for running `fn`'s threads on SIMD lanes, or None to keep it scalar. `flat`:
    the plan for lanes along the linear thread index of a launch of several dimensions (the
    body for launches whose rows are shorter than FLAT_ROWS_BELOW); None for a kernel of
    one dimension."""
    if flat and max((op.attrs["of"] for op in walk(fn.body) if op.name == "tid"), default=1) == 1:
        return None
    ops = list(walk(fn.body))
    if any(op.name == "return" for top in fn.body.ops for region in top.regions for op in walk(region)):
        return None  # (an early return inside a branch or loop)
    buffer_ops = frozenset(lane_buffer_ops(fn))
    for op in ops:
        if id(op) in buffer_ops:
            continue
        if op.name not in _KNOWN or op.name == "store" and "part" in op.attrs:
            return None  # (a store of one part of an element: scalar code writes just that part)
        if not all(_scalar_types_ok(v.type) for v in (*op.operands, *op.results)):
            return None
        if op.name == "call" and (not isinstance(op.attrs["fn"], Primitive) or op.attrs["fn"].native):
            return None  # (a C++ snippet runs one thread at a time)
        if op.name == "atomic" and op.attrs["op"] in ("cas", "exch"):
            # (locks: run lane by lane, a lane spinning for a lock that an earlier lane
            # holds until a later op would wait forever, as in a GPU warp before Volta)
            return None
    plan = SpmdPlan(fn, buffer_ops, flat)
    if any(isinstance(v.type, ArrayType) and plan.is_varying(v) for op in ops for v in op.results):
        return None  # (an array chosen per thread: never seen in practice)
    if any(id(op) in plan.lanewise and any(o.name in ("push", "pop") for r in op.regions for o in walk(r))
           for op in ops):
        # (an AD stack used lane by lane: lane 0's pushes would be popped by the last lane's
        # pops; the vector body pushes and pops whole vectors only)
        return None
    if not flat and not any(op.name in ("for", "while") for op in ops) and not any(_scatters(plan, op) for op in ops):
        # (straight-line code that LLVM's loop vectoriser handles by itself: along the rows of
        # a launch of several dimensions too, but not across short rows)
        return None
    lanewise, total = _lanewise_count(plan, fn.body)
    if lanewise > MAX_LANEWISE_SHARE * total:
        return None  # (mostly lane by lane: WIDTH copies of the scalar code, no faster)
    if total - lanewise + WIDTH * lanewise > MAX_VECTOR_BODY_OPS:
        return None  # (a vector body that LLVM would take long to compile: see below)
    return plan


#: the largest share of a kernel's ops that may run lane by lane in a vector body; above it
#: the kernel stays scalar. A BVH build (a stack per thread, branches that store) has 95%:
#: its vector body was 38,000 lines of LLVM IR, 19 s to compile, and gained nothing; n-body,
#: spring forces and their adjoints have 3-12%.
MAX_LANEWISE_SHARE = 0.5
#: the largest vector body, in ops of the scalar body (an op run lane by lane counts WIDTH
#: times), that a kernel gets; above it the kernel stays scalar. LLVM's time grows faster
#: than the code: mujoco_warp's collision kernel (14,000 ops, 41% lane by lane, a vector
#: body of 55,000) compiled in 55 s instead of 5.5 s and ran 18% slower than scalar, its
#: branches masked. The kernels that gain from lanes (n-body, springs, attention, SVDs of
#: MPM codes) have vector bodies of 60 to 2,000.
MAX_VECTOR_BODY_OPS = 10_000


def _lanewise_count(plan: SpmdPlan, body: Block) -> tuple[int, int]:
    """How many of the ops under `body` run lane by lane (those in `plan.lanewise` and
    everything nested in them, except accesses to elements side by side in the lanes, which
    are one vector access), and how many ops there are."""
    counts = [0, 0]  # lane by lane, all

    def visit(block: Block, in_lanes: bool):
        for op in block.ops:
            side_by_side = op.name in ("load", "store", "atomic") and not _scatters(plan, op)
            lanes = in_lanes or (id(op) in plan.lanewise and not side_by_side)
            counts[0] += lanes
            counts[1] += 1
            for region in op.regions:
                visit(region, lanes)
    visit(body, False)
    return counts[0], counts[1]


def _scatters(plan: SpmdPlan, op: Op) -> bool:
    """Whether `op` reads or writes memory at indices that are not side by side in the lanes
    (a gather, a scatter, an atomic into shared elements): LLVM's loop vectoriser leaves a
    thread loop holding one scalar, the vector body does the rest of the work in lanes."""
    if op.name not in ("load", "store", "atomic") or id(op) not in plan.lanewise:
        return False
    arr = op.operands[0]
    if vector_access_type(arr.type) is None:
        return False
    *outer, last = op.operands[1:1 + arr.type.ndim]
    return any(plan.is_varying(x) for x in outer) or last.id not in plan.unit_stride


class SpmdOps(SpmdMemory, SpmdMasked, SpmdBuffers):
    """The vector body of `KernelCodegen` (see the module docstring). State: `plan` (None:
    scalar kernel), `vector_mode` (emitting the vector body), `lane` (emitting an op for
    one lane: `v` reads a vector value's element of that lane)."""

    plan = None
    vector_mode = False
    lane = None

    def splat(self, x):
        """`x` in every lane (a scalar LLVM value)."""
        b = self.builder
        vt = ir.VectorType(x.type, WIDTH)
        one = b.insert_element(ir.Constant(vt, ir.Undefined), x, ir.Constant(ir.IntType(32), 0))
        return b.shuffle_vector(one, ir.Constant(vt, ir.Undefined),
                                ir.Constant(ir.VectorType(ir.IntType(32), WIDTH), [0] * WIDTH))

    def widen(self, rep):
        """A value's representation with every scalar leaf broadcast (nested lists kept)."""
        if isinstance(rep, list):
            return [self.widen(x) for x in rep]
        return rep if isinstance(rep.type, ir.VectorType) else self.splat(rep)

    def lane_of(self, rep, lane):
        """Lane `lane` (an int, or an i32 LLVM value in a run-time loop over the lanes) of a
        value's representation."""
        if isinstance(rep, list):
            return [self.lane_of(x, lane) for x in rep]
        if not isinstance(rep.type, ir.VectorType):
            return rep
        index = lane if isinstance(lane, ir.Value) else ir.Constant(ir.IntType(32), lane)
        return self.builder.extract_element(rep, index)

    def conform(self, values, reps):
        """`reps` of IR `values`, widened where the value varies (before a phi joins them)."""
        if not self.vector_mode:
            return reps
        return [self.widen(r) if self.plan.is_varying(v) else r for v, r in zip(values, reps)]

    # The vector body ---------------------------------------------------------------------------
    def emit_vector(self, op: Op):
        plan = self.plan
        if id(op) in plan.buffer_ops:
            return self.emit_buffer_op(op)
        if id(op) in plan.masked:
            return self.emit_masked_loop(op)
        if id(op) in plan.lanewise:
            if op.name in ("load", "store", "atomic") and self.vector_memory(op):
                return None
            return self.emit_lanes(op)
        name = op.name
        if name == "if" and id(op) in plan.selected:
            return self._emit_selected_if(op)
        if name in ("if", "for", "while", "func_region"):
            return self.emit_scalar(op)  # (their handlers conform what they join)
        if not any(plan.is_varying(r) for r in op.results):
            return self.emit_scalar(op)
        # arithmetic, comparisons, casts, composites, vector builtins: the scalar lowering on vectors,
        # its uniform operands broadcast (but a select's uniform condition, which picks whole
        # vectors, and the uniform component indices of extract_dyn / insert_dyn)
        widened = op.operands
        if name == "select" and not plan.is_varying(op.operands[0]):
            widened = op.operands[1:]
        elif name in ("extract_dyn", "insert_dyn"):
            widened = [op.operands[0]] + ([op.operands[-1]] if name == "insert_dyn" else [])
        saved = {x.id: self.values[x.id] for x in op.operands}
        for x in widened:
            if not isinstance(x.type, ArrayType):
                self.values[x.id] = self.widen(self.values[x.id])
        try:
            self.emit_scalar(op)
        finally:
            self.values.update(saved)

    def _emit_selected_if(self, op):
        """Both sides of a varying `if` (pure arithmetic), then a select per result leaf."""
        cond = self.v(op.operands[0])  # (varying: a vector)
        sides = []
        for region in op.regions:
            vals = self._region(region)
            sides.append(self.conform(op.results, vals))
        b = self.builder
        for k, r in enumerate(op.results):
            t = r.type
            picked = [b.select(cond, x, y) for x, y in zip(self.leaves(sides[0][k], t), self.leaves(sides[1][k], t))]
            self.values[r.id] = self.from_leaves(t, iter(picked))

    def emit_lanes(self, op):
        """`op` once per lane, by the scalar lowering on that lane's values; its results
        gathered into vectors."""
        b = self.builder
        per_lane = []
        self.vector_mode = False
        try:
            for lane in range(WIDTH):
                self.lane = lane

                def one_lane():
                    self.emit_scalar(op)
                    return [leaf for r in op.results for leaf in self.leaves(self.values[r.id], r.type)]
                leaves = iter(self.lanes_guarded(lane, one_lane))  # (in a masked loop: live lanes only)
                per_lane.append([self.from_leaves(r.type, leaves) for r in op.results])
        finally:
            self.lane = None
            self.vector_mode = True
        for k, r in enumerate(op.results):
            self.values[r.id] = self._gather_lanes([reps[k] for reps in per_lane], b)

    def _gather_lanes(self, reps, b):
        first = reps[0]
        if isinstance(first, list):
            return [self._gather_lanes([r[k] for r in reps], b) for k in range(len(first))]
        vec = ir.Constant(ir.VectorType(first.type, WIDTH), ir.Undefined)
        for lane, x in enumerate(reps):
            vec = b.insert_element(vec, x, ir.Constant(ir.IntType(32), lane))
        return vec
