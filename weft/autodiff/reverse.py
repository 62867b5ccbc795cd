"""Reverse mode: the adjoint of a kernel, built as an IR -> IR transform.

The adjoint kernel takes the primal parameters and then one adjoint array per array
parameter (`adj_<name>`). Its body has two parts:

1. the *replay*: the primal body again, without stores, atomics or prints, so every
   intermediate value exists again (loads read the arrays as they are now; the Tape
   snapshots arrays a launch overwrites so that they read as they were);
2. the *reverse sweep*: the ops walked backwards, each adding its contribution to the
   adjoints of its operands (`_rev_*` rules below; builtins bring their own `vjp`).

Adjoints of local values are SSA values too: `self.adj` maps a primal value to the list
of adjoints of its float leaves (a vector has one per component, a struct the leaves of
its fields in order; `None` is a zero not yet materialised). They cross region
boundaries explicitly, like the primal's loop-carried values: an adjoint `if` yields the
new adjoints of the outer values its branches read, and an adjoint loop carries them.

Structured control flow. A region's intermediate values are not visible after it, so the
reverse of an `if` recomputes its branch and then reverses it, and the reverse of a loop
runs the iterations backwards, each recomputing its body from the carried values the
replay pushed on the thread's AD stack. The rule that keeps the stack balanced: a block
replayed with `push=True` is reversed right after, in the same scope; only its own loops
push (one frame per iteration, iteration count carried alongside); loops nested deeper
push when their enclosing region is recomputed inside the reverse sweep. Nested loops
are therefore recomputed once per enclosing level, and nothing is ever approximated.
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import Block, Function, Op, Value, constant_value, free_values, walk
from ..ir.parts import extract_path, insert_path
from ..ir.passes import dead_code
from ..lang.errors import NotDifferentiableError
from ..types import ArrayType, Matrix, Scalar, StructType, TupleType, Vector, bool_, int32
from .active import active_types, has_adjoint_array  # noqa: F401 - (imported from here by others)
from .arrays import (
    LoadPlan,
    array_effects,
    array_key,
    array_origin,
    array_root,
    field_source,
    is_local_array,
    private_arrays,
    unkept_read,
    unrecoverable_local_read,
)
from .func_regions import FuncRegionReverse
from .half import to_type, widened_array, widened_params
from .tiles import TileReverse

__all__ = ["active_types", "adjoint_function", "array_effects", "component_range", "has_adjoint_array"]


# Float leaves of a type -------------------------------------------------------------------
def component_range(t, index: int) -> tuple[int, int]:
    """The slice of `active_types(t)` that component `index` of `t` occupies."""
    if isinstance(t, (Vector, Matrix)):
        return (index, index + 1) if t.dtype.is_float else (0, 0)
    parts = list(t.fields.values()) if isinstance(t, StructType) else list(t.elements)
    start = sum(len(active_types(p)) for p in parts[:index])
    return start, start + len(active_types(parts[index]))


def _uses(block: Block) -> set:
    return {v.id for op in walk(block) for v in op.operands}


def _free_values(inner_blocks) -> list[Value]:
    """Values used inside `inner_blocks` but defined outside them, in first-use order."""
    return free_values([op for blk in inner_blocks for op in blk.ops], [a for blk in inner_blocks for a in blk.args])


# The transform ------------------------------------------------------------------------------
def adjoint_function(fn: Function, kernel_name: str, absent=frozenset(), keep=frozenset(),
                     retain=frozenset()) -> Function:
    """The adjoint kernel of kernel IR `fn` (inlined; see the module docstring). The array
    parameters at positions `absent` get no adjoint: nothing flows in or out through them.
    Those in `keep` (arrays the kernel writes and never reads: a parameter index, or
    (index, field path) for an array in a struct) have their adjoint array read but not
    consumed: stores leave it as it was instead of zeroing it."""
    return _Reverse(fn, kernel_name, absent, keep).build()


class _ScalarReverse:
    def __init__(self, fn: Function, kernel_name: str, absent=frozenset(), keep=frozenset(),
                 retain=frozenset()):
        self.fn = fn
        self.kernel_name = kernel_name
        self.absent = {fn.params[k].id for k in absent}
        self.keep = {(fn.params[k].id, ()) if isinstance(k, int) else (fn.params[k[0]].id, k[1]) for k in keep}
        self.nullable: set = set()  # ids of adjoint arrays that may be null (struct fields)
        self._unkept_checked = False
        self.used = _uses(fn.body)
        self.private = private_arrays(fn)
        self._free: dict[int, list] = {}
        plan = LoadPlan(fn)
        if plan.unrecoverable is not None:
            op = plan.unrecoverable
            self.error(f"array '{array_origin(op.operands[0])[0].hint}' is read here after this thread may "
                       "have written it, and written again later (or in a later loop iteration); the adjoint "
                       "replay cannot recover the value read. Keep the running value in a local variable and "
                       "store it once", op)
        local = unrecoverable_local_read(fn)
        if local is not None:
            self.error(f"the kernel-local array '{array_root(local.operands[0]).hint or '?'}' is read here inside a "
                       "loop or branch that writes it, or that it is written after: the adjoint recomputes that loop "
                       "or branch after the later writes and cannot recover the value read. Copy what the loop needs "
                       "into a local variable, or fill the array before the loop that reads it", local)
        if plan.mixed is not None:
            op = plan.mixed
            self.error(f"array '{array_origin(op.operands[0])[0].hint}' is read here after this thread wrote it, "
                       "and read before that write too: the adjoint replay sees the array either as it was "
                       "before the launch or as the launch left it, not both. Keep the value read first in a "
                       "local variable, or the value written", op)
        self.forwarded = plan.forwarded
        self.checked = plan.checked
        self.substitutes: dict = {}  # result id -> makes the value a replay uses instead (tiles.py)

    def error(self, message: str, op: Op):
        raise NotDifferentiableError(f"cannot differentiate kernel '{self.kernel_name}': {message}",
                                     op.loc)

    def active_free(self, op: Op) -> list[Value]:
        """The float values that the regions `op`'s reverse walks (a loop's body, a branch's
        both sides) read from outside them. Asked for every replay and reverse of `op`, so
        computed once."""
        free = self._free.get(id(op))
        if free is None:
            regions = op.regions[-1:] if op.name in ("for", "while") else op.regions
            free = self._free[id(op)] = [v for v in _free_values(regions) if active_types(v.type)]
        return free

    def needs_reverse(self, op: Op) -> bool:
        """Whether a region op can contribute to any gradient: it yields or reads float
        values, or touches arrays."""
        if any(active_types(r.type) for r in op.results) or self.active_free(op):
            return True
        return any(inner.name in ("load", "store", "atomic") or inner.name == "call" and inner.attrs["fn"].effects
                   for region in op.regions for inner in walk(region))  # (effects: a C++ snippet's writes)

    # Set-up --------------------------------------------------------------------------------
    def build(self) -> Function:
        fn = self.fn
        array_params = [p for p in fn.params if has_adjoint_array(p.type)]
        names = fn.param_names + [f"adj_{fn.param_names[fn.params.index(p)]}" for p in array_params]
        wide = widened_params(fn)  # half arrays: their adjoints accumulate in float32 (half.py)
        types = [p.type for p in fn.params] + [widened_array(p.type) if p.id in wide else p.type
                                               for p in array_params]
        out = Function(f"{fn.name}_adjoint", "kernel", names, types, None, fn.loc)
        self.out = out
        n = len(fn.params)
        self.map: dict[int, Value] = {p.id: q for p, q in zip(fn.params, out.params[:n])}
        self.adj_arrays = {p.id: q for p, q in zip(array_params, out.params[n:])}
        self.adj: dict[int, list] = {}
        self.counts: dict[int, Value] = {}
        self.replayed: dict[int, Value] = {}  # body result id -> what a custom replay gave
        self.b = Builder(out.body, fn.loc)
        body_ops = fn.body.ops[:-1]  # the final `return`
        self.replay(body_ops, push=True)
        self.reverse(body_ops)
        self.b.loc = fn.loc
        self.b.op("return")
        self._check_available(dead_code(out).body)
        return out

    def _check_available(self, block):
        """Refuse the adjoint if it still uses a value the replay could not recompute."""
        for op in block.ops:
            if op.name == "unavailable":
                self.error(op.attrs["message"], op)
            for region in op.regions:
                self._check_available(region)

    # Helpers ---------------------------------------------------------------------------------
    def m(self, v: Value) -> Value:
        return self.map[v.id]

    def get(self, v: Value) -> list:
        n = len(active_types(v.type))
        return self.adj.get(v.id) or [None] * n

    def accum(self, v: Value, leaves: list):
        """adj(v) += leaves (None entries add nothing)."""
        if not any(g is not None for g in leaves):
            return
        cur = self.get(v)
        self.adj[v.id] = [g if c is None else c if g is None else self.b.add(c, g)
                          for c, g in zip(cur, leaves)]

    def zero(self, t: Scalar) -> Value:
        return self.b.const(0.0, t)

    def materialize(self, t, leaves) -> list[Value]:
        return [self.zero(lt) if g is None else g for lt, g in zip(active_types(t), leaves)]

    def value_from(self, t, leaves) -> Value:
        """A value of type `t` (scalar, vector/matrix of floats, or struct) whose float leaves
        are `leaves` (a struct's other fields are zero)."""
        leaves = self.materialize(t, leaves)
        if isinstance(t, Scalar):
            return leaves[0]
        if isinstance(t, StructType):
            it = iter(leaves)
            return self.b.construct(t, [self.value_from(ft, [next(it) for _ in active_types(ft)])
                                        if active_types(ft) else self.zero_value(ft) for ft in t.fields.values()])
        return self.b.construct(t, leaves)

    def zero_value(self, t) -> Value:
        """A zero of any type a struct field may have (a null array for an array)."""
        if isinstance(t, ArrayType):
            return self.b.op("null_array", [], [t]).result
        if isinstance(t, Scalar):
            return self.b.const(False if t.is_bool else 0, t)
        if isinstance(t, (Vector, Matrix)):
            return self.b.construct(t, [self.zero_value(t.dtype)] * t.num_components)
        return self.b.construct(t, [self.zero_value(ft) for ft in t.fields.values()])

    def leaves_of(self, v: Value) -> list[Value]:
        if isinstance(v.type, Scalar):
            return [v]
        return self.b.components(v)

    # Replay ----------------------------------------------------------------------------------
    def replay(self, ops, push: bool):
        """Re-emit `ops` without side effects. With `push`, loops among `ops` save what their
        reverse needs (see the module docstring)."""
        for op in ops:
            self.b.loc = op.loc
            if op.results and op.results[0].id in self.replayed:
                self.map[op.results[0].id] = self.replayed[op.results[0].id]
                continue
            if op.name in ("store", "atomic") and is_local_array(op.operands[0]):
                pass  # the thread's own local array: the replay needs what the kernel wrote there
            elif op.name in ("store", "atomic"):
                if op.name == "atomic" and op.result.id in self.used:
                    # fine while the adjoint does not need it (_check_available): a slot only
                    # integer stores use, old values stored where no gradient comes from
                    # (rev_atomic checks that none does)
                    message = (f"the value returned by atomic_{op.attrs['op']}() is used where the adjoint "
                               "needs it; the adjoint kernel cannot run the atomic again to recover it. "
                               "Give the @func that calls it a @weft.func_replay that returns it, or "
                               "compute the value another way")
                    self.map[op.result.id] = self.b.op("unavailable", [], [op.result.type],
                                                       {"message": message}).result
                continue
            if op.name == "assert":
                continue  # (checked by the forward pass; a print prints again, as in Warp)
            if op.results and op.results[0].id in self.substitutes:
                self.map[op.results[0].id] = self.substitutes[op.results[0].id]()
            elif op.name == "load" and op.result.id in self.forwarded:
                self.map[op.result.id] = self.m(self.forwarded[op.result.id])
            elif op.name == "if":
                self.replay_if(op)
            elif op.name in ("for", "while"):
                self.replay_loop(op, push and self.needs_reverse(op))
            elif op.name == "func_region":
                self.replay_func_region(op, push and self.needs_reverse(op))
            elif op.name == "tile_map":
                self.replay_tile_map(op)
            else:
                if id(op) in self.checked:
                    self._check_written_earlier(op, self.checked[id(op)])
                new = self.b.op(op.name, [self.m(v) for v in op.operands], [r.type for r in op.results],
                                op.attrs)
                for r, nr in zip(op.results, new.results):
                    nr.hint = r.hint
                    self.map[r.id] = nr

    def _check_written_earlier(self, load: Op, once):
        """Before the replay of `load`, which reads at a run-time index an array that a loop
        writes one element per iteration (arrays.LoadPlan.checked): an assert that the
        element read is not one this or a later iteration writes (the replay reads the
        launch's final memory, which then differs from what the forward read)."""
        loop, _store, at, offset, _, through = once
        b = self.b
        stop, iv = self.m(loop.operands[1]), self.m(loop.regions[0].args[0])
        ascending = constant_value(loop.operands[2]) == 1
        element = b.cast(self.m(load.operands[1 + at]), iv.type)
        if through is None:  # iteration k writes element k + offset
            element = b.sub(element, b.const(offset, iv.type))
            ahead, inside = ("ge", "lt") if ascending else ("le", "gt")
            later = b.select(b.cmp(ahead, element, iv), b.cmp(inside, element, stop), b.const(False, bool_))
        else:  # iteration k writes element index_array[k + c]: look at this and the later ones
            later = self._written_from_here(through, element, iv, stop, ascending)
        name = array_origin(load.operands[0])[0].hint or "an array"
        b.op("assert", [b.unary("not", later)], [], {
            "message": f"'{name}' is read at an index that this or a later iteration of the loop at line "
                       f"{loop.loc.line} writes; the adjoint reads the array as the launch left it, so "
                       "this read's gradient is not known (read elements that earlier iterations wrote)",
            "not_differentiable": True})

    def _written_from_here(self, through, element, iv, stop, ascending: bool) -> Value:
        """Whether this iteration or a later one of a loop writing element `arr[k + c]` in
        iteration k (`through` = (arr, c)) writes `element`: a scan of those iterations."""
        arr, c = through
        arr = self.m(arr)
        b = self.b
        one = b.const(1, iv.type)
        lo, hi = (iv, stop) if ascending else (b.add(stop, one), b.add(iv, one))
        scan = Block([iv.type, bool_], ["__k", "__found"])
        with b.at(scan):
            k, found = scan.args
            written = b.op("load", [arr, b.add(k, b.const(c, iv.type)) if c else k], [arr.type.dtype]).result
            hit = b.cmp("eq", b.cast(written, iv.type), element)
            b.op("yield", [b.select(hit, b.const(True, bool_), found)])
        return b.op("for", [lo, hi, one, b.const(False, bool_)], [bool_], {}, [scan]).results[0]

    def replay_region(self, region: Block, new: Block, push: bool, extra=()):
        with self.b.at(new):
            self.replay(region.ops[:-1], push)
            self.b.loc = region.ops[-1].loc
            self.b.op("yield", [self.m(v) for v in region.ops[-1].operands] + list(extra))

    def replay_if(self, op: Op):
        regions = [Block() for _ in op.regions]
        for region, new in zip(op.regions, regions):
            self.replay_region(region, new, push=False)
        self.b.loc = op.loc
        new = self.b.op("if", [self.m(op.operands[0])], [r.type for r in op.results], op.attrs, regions)
        for r, nr in zip(op.results, new.results):
            self.map[r.id] = nr

    def _check_carried(self, op, values):
        for v in values:
            if isinstance(v.type, ArrayType):
                self.error("a loop that carries an array variable from one iteration to the next "
                           "cannot be reversed", op)

    def replay_loop(self, op: Op, push: bool):
        """Replay a loop; with `push`, each iteration first pushes its inputs and an extra
        carried counter gives the iteration count for the reverse loop."""
        is_for = op.name == "for"
        carried = op.operands[3:] if is_for else op.operands
        if push:
            self._check_carried(op, carried)
        extra_t = [int32] if push else []
        b = self.b
        count0 = [b.const(0, int32)] if push else []
        body = op.regions[-1]
        arg_types = [a.type for a in body.args] + extra_t
        new_body = Block(arg_types, [a.hint for a in body.args] + ["__trips"] * push)
        for a, na in zip(body.args, new_body.args):
            self.map[a.id] = na
        regions = []
        if not is_for:
            cond = op.regions[0]
            new_cond = Block(arg_types, [a.hint for a in cond.args] + ["__trips"] * push)
            for a, na in zip(cond.args, new_cond.args):
                self.map[a.id] = na
            self.replay_region(cond, new_cond, push=False)
            regions.append(new_cond)
        extra = []
        with b.at(new_body):
            if push:
                b.loc = op.loc
                b.op("push", new_body.args[:len(body.args)])
                extra = [b.add(new_body.args[-1], b.const(1, int32))]
        self.replay_region(body, new_body, push=False, extra=extra)
        regions.append(new_body)
        b.loc = op.loc
        operands = [self.m(v) for v in op.operands] + count0
        new = b.op(op.name, operands, [r.type for r in op.results] + extra_t, op.attrs, regions)
        for r, nr in zip(op.results, new.results):
            self.map[r.id] = nr
        if push:
            self.counts[id(op)] = new.results[-1]

    # Reverse sweep --------------------------------------------------------------------------
    def reverse(self, ops):
        for op in reversed(ops):
            self.b.loc = op.loc
            rule = getattr(self, "rev_" + op.name, None)
            if rule is None or (op.regions and not self.needs_reverse(op)):
                continue  # no gradient flows through this op (consts, tid, cmp, print...)
            rule(op)

    def rev_print(self, op):
        """Warp's adjoint of print(x): "adj: " and x's adjoint as the reverse pass has it
        here (what the code after the print added to it)."""
        fmt = op.attrs.get("adj_fmt")
        if fmt is not None:
            as_float32 = {"as_float32": True} if op.attrs.get("as_float32") else {}
            self.b.op("print", [self._adjoint_now(v) for v in op.operands], [], {"fmt": fmt, **as_float32})

    def _adjoint_now(self, v: Value) -> Value:
        """The adjoint of printed scalar `v` now (of the component of a vector, matrix, ...
        it was extracted from; zero for integers and bools)."""
        owner = v.owner
        if isinstance(owner, Op) and owner.name == "extract":
            lo, hi = component_range(owner.operands[0].type, owner.attrs["index"])
            if hi > lo:
                g = self.get(owner.operands[0])[lo]
                return g if g is not None else self.zero(v.type)
        if active_types(v.type):
            return self.materialize(v.type, self.get(v))[0]
        return self.zero_value(v.type)

    def rev_binary(self, op):
        if not op.result.type.is_float:
            return
        (g,) = self.get(op.result)
        if g is None:
            return
        a, c = op.operands
        x, y, r = self.m(a), self.m(c), self.m(op.result)
        b = self.b
        kind = op.attrs["op"]
        if kind == "add":
            ga, gc = g, g
        elif kind == "sub":
            ga, gc = g, b.neg(g)
        elif kind == "mul":
            ga, gc = b.mul(g, y), b.mul(g, x)
        elif kind == "div":
            ga = b.div(g, y)
            if op.attrs.get("by_scalar"):  # a composite's component: Warp's -a g / s^2
                gc = b.neg(b.div(b.mul(g, x), b.mul(y, y)))
            else:
                gc = b.neg(b.mul(ga, r))
        elif kind == "pow":
            from ..builtins.math import PRIM
            ga, gc = PRIM["pow"].vjp(b, [x, y], [r], g)
        elif kind == "mod":  # fmod: a - trunc(a / c) * c
            from ..builtins.math import PRIM
            ga, gc = g, b.neg(b.mul(g, b.call(PRIM["trunc"], [b.div(x, y)])))
        else:  # floordiv: piecewise constant
            return
        self.accum(a, [ga])
        self.accum(c, [gc])

    def rev_unary(self, op):
        if op.attrs["op"] != "neg" or not op.result.type.is_float:
            return
        (g,) = self.get(op.result)
        if g is not None:
            self.accum(op.operands[0], [self.b.neg(g)])

    def rev_cast(self, op):
        (x,) = op.operands
        if not (x.type.is_float and op.result.type.is_float):
            return
        (g,) = self.get(op.result)
        if g is not None:
            self.accum(x, [self.b.cast(g, x.type)])

    def rev_select(self, op):
        c, a, alt = op.operands
        gs = self.get(op.result)
        if not any(g is not None for g in gs):
            return
        cond = self.m(c)
        b = self.b
        zeros = [None if g is None else self.zero(g.type) for g in gs]
        self.accum(a, [None if g is None else b.select(cond, g, z) for g, z in zip(gs, zeros)])
        self.accum(alt, [None if g is None else b.select(cond, z, g) for g, z in zip(gs, zeros)])

    def rev_call(self, op):
        prim = op.attrs["fn"]
        gs = [g for r in op.results for g in self.get(r)]
        if not any(g is not None for g in gs):
            return
        if not any(active_types(a.type) for a in op.operands):
            return
        if prim.vjp is None:
            self.error(f"builtin '{prim.name}' has no derivative rule", op)
        args = [self.m(a) for a in op.operands]
        results = [self.m(r) for r in op.results]
        g = gs[0] if len(gs) == 1 else gs
        for a, ga in zip(op.operands, prim.vjp(self.b, args, results, g)):
            if ga is not None and active_types(a.type):
                self.accum(a, [ga])

    def rev_construct(self, op):
        gs = self.get(op.result)
        t = op.result.type
        for k, comp in enumerate(op.operands):
            lo, hi = component_range(t, k)
            self.accum(comp, gs[lo:hi])

    def rev_extract(self, op):
        agg = op.operands[0]
        lo, hi = component_range(agg.type, op.attrs["index"])
        leaves = [None] * len(active_types(agg.type))
        leaves[lo:hi] = self.get(op.result)
        self.accum(agg, leaves)

    def rev_insert(self, op):
        agg, x = op.operands
        gs = list(self.get(op.result))
        lo, hi = component_range(agg.type, op.attrs["index"])
        self.accum(x, gs[lo:hi])
        gs[lo:hi] = [None] * (hi - lo)
        self.accum(agg, gs)

    def _flat_index(self, agg_type, indices):
        """The component number of a dynamic (row[, col]) index, and the component count."""
        b = self.b
        idx = [self.m(i) for i in indices]
        if isinstance(agg_type, Matrix):
            rows, cols = agg_type.shape
            flat = b.add(b.mul(idx[0], b.const(cols, idx[0].type)), b.cast(idx[1], idx[0].type))
            return flat, rows * cols
        return idx[0], agg_type.num_components

    def rev_extract_dyn(self, op):
        agg, *indices = op.operands
        if not active_types(op.result.type):
            return
        (g,) = self.get(op.result)
        if g is None:
            return
        flat, n = self._flat_index(agg.type, indices)
        b = self.b
        zero = self.zero(g.type)
        self.accum(agg, [b.select(b.cmp("eq", flat, b.const(k, flat.type)), g, zero) for k in range(n)])

    def rev_insert_dyn(self, op):
        agg, *indices, x = op.operands
        gs = self.get(op.result)
        if not any(g is not None for g in gs):
            return
        flat, n = self._flat_index(agg.type, indices)
        b = self.b
        zero = self.zero(x.type)
        gs = self.materialize(op.result.type, gs)
        hit = [b.cmp("eq", flat, b.const(k, flat.type)) for k in range(n)]
        gx = zero
        for k in range(n):
            gx = b.add(gx, b.select(hit[k], gs[k], zero))
        self.accum(x, [gx])
        self.accum(agg, [b.select(hit[k], zero, gs[k]) for k in range(n)])

    # Memory ---------------------------------------------------------------------------------
    def adj_array(self, arr: Value, op: Op) -> Value | None:
        """The adjoint array of primal array value `arr` (a parameter, a field of a struct
        parameter, or a view of one); None when the launch gives none. Adjoint arrays read
        from an adjoint struct may be null (a field without gradient): `self.nullable`."""
        if array_origin(arr)[0].id in self.absent or array_root(arr).type.fabric:
            return None  # (no adjoint given; Fabric arrays and their rows carry none, as in Warp)
        if arr.id in self.adj_arrays:
            return self.adj_arrays[arr.id]
        owner = arr.owner
        if isinstance(owner, Op) and owner.name in ("view", "slice", "component"):
            base, *idx = owner.operands
            adj_base = self.adj_array(base, op)
            # (float32 for a half array; a component view is never of one: lang/array_parts.py)
            view_type = arr.type if owner.name == "component" else type(arr.type)(adj_base.type.dtype, arr.type.ndim)
            view = self.b.op(owner.name, [adj_base] + [self.m(i) for i in idx], [view_type],
                             dict(owner.attrs)).result
            if adj_base.id in self.nullable:
                self.nullable.add(view.id)
            return view
        if isinstance(owner, Op) and owner.name == "make_array" and owner.attrs.get("grad"):
            return self._carried_adjoint(arr, op)
        source = field_source(arr)
        if source is not None:  # a field of a struct built in the kernel: the array it was built from
            return self.adj_array(source, op)
        if isinstance(owner, Op) and owner.name == "extract":
            adj_struct = self.adj_struct(owner.operands[0], op, required=arr.type.indexed)
            if adj_struct is None:  # a struct from memory: its array's descriptor has the gradient
                return self._carried_adjoint(arr, op)
            field = self.b.extract(adj_struct, owner.attrs["index"])
            self.nullable.add(field.id)
            return field
        if is_local_array(arr):
            self.error(f"gradients through the kernel-local array '{arr.hint or '?'}' (zeros() in a kernel) are "
                       "not supported; keep differentiable values in vectors, matrices or array parameters", op)
        self.error(f"gradients through array '{arr.hint or '?'}' are not supported (only kernel "
                   "parameters, arrays in struct parameters and views of them have adjoint arrays)", op)

    def _carried_adjoint(self, arr: Value, op: Op) -> Value:
        """The adjoint of an array the Tape does not know (held in a struct read from memory,
        or made over raw memory): the array over the gradient its descriptor carries, with
        no elements where it has none."""
        if not self._unkept_checked:
            self._unkept_checked = True
            read = unkept_read(self.fn)
            if read is not None:
                self.error(f"array '{array_origin(read.operands[0])[0].hint or '?'}' (held in a struct read from "
                           "memory, or a mesh's) is read here and the adjoint needs the value, while the kernel "
                           "writes such an array: the adjoint replay would read what the launch left there. Read "
                           "and write such arrays in separate kernels", read)
        adj = self.b.op("array_grad", [self.m(arr)], [arr.type]).result
        self.nullable.add(adj.id)
        return adj

    def adj_struct(self, value: Value, op: Op, required: bool = True) -> Value | None:
        """The adjoint struct of struct value `value` (a parameter or a field of one); if
        not `required`, None where there is none (a struct read from memory)."""
        if value.id in self.adj_arrays:
            return self.adj_arrays[value.id]
        source = field_source(value)
        if source is not None:
            return self.adj_struct(source, op, required)
        owner = value.owner
        if isinstance(owner, Op) and owner.name == "extract" and isinstance(owner.operands[0].type, StructType):
            parent = self.adj_struct(owner.operands[0], op, required)
            return None if parent is None else self.b.extract(parent, owner.attrs["index"])
        if not required:
            return None
        where = "read from an array of structs" if isinstance(owner, Op) and owner.name == "load" else \
            "made inside the kernel"
        self.error(f"gradients through an array held in a struct {where} are not supported: only structs "
                   "passed as kernel parameters have adjoint structs (pass the struct itself, or the array)", op)

    def when_present(self, adj_arr: Value, emit, result_type=None):
        """`emit()` (returning a value of `result_type`, or nothing), guarded where `adj_arr`
        may be null (an array field without gradient: its shape is 0) so that a missing
        adjoint takes no gradient, as in Warp; a zero value stands in then."""
        if adj_arr.id not in self.nullable:
            return emit()
        b = self.b
        size = b.op("array_shape", [adj_arr], [int32], {"dim": 0}).result
        present = b.cmp("ne", size, b.const(0, int32))
        then, other = Block(), Block()
        types = [result_type] if result_type is not None else []
        with b.at(then):
            result = emit()
            b.op("yield", [result] if types else [])
        with b.at(other):
            b.op("yield", [self.value_from(result_type, [None] * len(active_types(result_type)))] if types else [])
        guarded = b.op("if", [present], types, {}, [then, other])
        return guarded.results[0] if types else None

    def _check_dtype(self, arr: Value, op: Op):
        if op.name == "atomic" and isinstance(arr.type.dtype, (StructType, TupleType)):
            self.error(f"gradients of atomics on arrays of structs ('{arr.hint}') are not supported", op)

    def rev_load(self, op):
        arr, *idx = op.operands
        gs = self.get(op.result)
        if not any(g is not None for g in gs) or op.attrs.get("constant"):
            return  # "constant": a read of a structure's own data (a volume's tree), not differentiated
        self._check_dtype(arr, op)
        adj_arr = self.adj_array(arr, op)
        if adj_arr is None:
            return
        dtype = adj_arr.type.dtype
        value = to_type(self.b, self.value_from(op.result.type, gs), dtype)
        attrs = {"op": "add", "private": True} if arr.id in self.private else {"op": "add"}
        self.when_present(adj_arr, lambda: self.b.op("atomic", [adj_arr] + [self.m(i) for i in idx] + [value],
                                                      [dtype], attrs))

    def rev_store(self, op):
        arr, *idx, x = op.operands
        if not active_types(x.type):
            return
        self._check_dtype(arr, op)
        adj_arr = self.adj_array(arr, op)
        if adj_arr is None:
            return
        index = [self.m(i) for i in idx]
        consume = array_key(arr) not in self.keep
        part = op.attrs.get("part")  # (only this part of the element was written)

        def read_and_consume():
            dtype = adj_arr.type.dtype  # (float32 for a half array)
            g = self.b.op("load", [adj_arr] + index, [dtype]).result
            zero = self.value_from(dtype, [None] * len(active_types(dtype)))
            if consume:  # the overwritten element (or part) no longer influences anything
                self.b.op("store", [adj_arr] + index + [zero], [], {"part": part} if part else {})
            if part:  # the rest of the element was not written: its gradient stays where it is
                path, part_type = part
                g = insert_path(self.b, zero, list(path), part_type, extract_path(self.b, g, list(path), part_type))
            return to_type(self.b, g, x.type)

        self.accum(x, self.float_leaves(self.when_present(adj_arr, read_and_consume, x.type)))

    def rev_atomic(self, op):
        arr, *idx, x = op.operands
        returned = [g for g in self.get(op.result) if g is not None]
        if returned:  # (the element before the update: which one depends on the threads' order)
            b = self.b
            untouched = b.const(True, bool_)
            for g in returned:
                untouched = b.select(b.cmp("eq", g, self.zero(g.type)), untouched, b.const(False, bool_))
            b.op("assert", [untouched], [], {
                "message": f"a gradient reaches the value returned by atomic_{op.attrs['op']}() (the element "
                           "before the update), which depends on the order the threads ran in, so it has no "
                           "derivative; weft refuses it rather than drop it (Warp drops it)",
                "not_differentiable": True})
        if not active_types(x.type):
            return
        kind = op.attrs["op"]
        if kind not in ("add", "sub", "min", "max"):
            self.error(f"atomic_{kind}() on float values has no derivative rule", op)
        if kind in ("min", "max"):  # (an add's adjoint is the destination's, field by field)
            self._check_dtype(arr, op)
        adj_arr = self.adj_array(arr, op)
        if adj_arr is None:
            return
        if kind in ("min", "max"):
            self.accum(x, self.leaves_of(self.when_present(adj_arr, lambda: self._claim(arr, idx, x, adj_arr),
                                                           x.type)))
            return
        g = self.when_present(adj_arr, lambda: to_type(self.b, self.b.op(
            "load", [adj_arr] + [self.m(i) for i in idx], [adj_arr.type.dtype]).result, x.type), x.type)
        leaves = self.float_leaves(g)
        self.accum(x, leaves if kind == "add" else [self.b.neg(v) for v in leaves])

    def _claim(self, arr: Value, idx, x: Value, adj_arr: Value) -> Value:
        """The adjoint an atomic_min/max value gets. The final element is the winning value:
        the first thread whose value equals it claims the element's whole adjoint (leaving 0,
        so the element's earlier value gets none); if the earlier value won, no thread
        matches and it keeps it. (The tape keeps the array as this launch left it.)"""
        b = self.b
        index = [self.m(i) for i in idx]
        final = self.leaves_of(b.op("load", [self.m(arr)] + index, [x.type]).result)
        won = [b.select(b.cmp("eq", v, f), b.const(1.0, v.type), self.zero(v.type))
               for v, f in zip(self.leaves_of(self.m(x)), final)]
        flag = to_type(b, won[0] if isinstance(x.type, Scalar) else b.construct(x.type, won), adj_arr.type.dtype)
        return to_type(b, b.op("atomic", [adj_arr] + index + [flag], [flag.type], {"op": "claim"}).result, x.type)

    # Control flow ---------------------------------------------------------------------------
    def _flatten(self, values) -> list[Value]:
        return [leaf for v in values for leaf in self.materialize(v.type, self.get(v))]

    def _unflatten(self, values, leaves) -> dict:
        out, it = {}, iter(leaves)
        for v in values:
            out[v.id] = [next(it) for _ in active_types(v.type)]
        return out

    def _reverse_region(self, region: Block, seeds: list, free: list, before=None):
        """In the current block: recompute `region` (replay with push), seed the adjoints of
        its yielded values, reverse it, and yield the adjoints of `before` + `free`."""
        self.replay(region.ops[:-1], push=True)
        for v, gs in zip(region.ops[-1].operands, seeds):
            self.accum(v, gs)
        self.reverse(region.ops[:-1])
        self.b.loc = region.ops[-1].loc
        self.b.op("yield", self._flatten(list(before or []) + free))

    def rev_if(self, op):
        free = self.active_free(op)
        seeds = [self.get(r) for r in op.results]
        outer = self.adj
        regions = []
        for region in op.regions:
            self.adj = {v.id: outer[v.id] for v in free if v.id in outer}
            new = Block()
            with self.b.at(new):
                self._reverse_region(region, seeds, free)
            regions.append(new)
        self.adj = outer
        self.b.loc = op.loc
        types = [t for v in free for t in active_types(v.type)]
        new = self.b.op("if", [self.m(op.operands[0])], types, {}, regions)
        self.adj.update(self._unflatten(free, new.results))

    def float_leaves(self, v: Value) -> list[Value]:
        """The float leaves of `v` (as `active_types` orders them): a struct's fields' leaves."""
        if isinstance(v.type, (StructType, TupleType)):
            parts = v.type.fields.values() if isinstance(v.type, StructType) else v.type.elements
            return [leaf for k, t in enumerate(parts) if active_types(t)
                    for leaf in self.float_leaves(self.b.extract(v, k))]
        return self.leaves_of(v) if active_types(v.type) else []

    def rev_for(self, op):
        self._rev_loop(op, op.operands[3:], op.regions[0].args[1:])

    def rev_while(self, op):
        self._rev_loop(op, op.operands, op.regions[1].args)

    def _rev_loop(self, op, inits, carried_args):
        """Run the iterations backwards: each pops its inputs, recomputes the body, and
        carries the adjoints of the carried values and of the outer values the body reads."""
        body = op.regions[-1]
        free = self.active_free(op)
        count = self.counts[id(op)]
        b = self.b
        init = [leaf for r in op.results for leaf in self.materialize(r.type, self.get(r))] + self._flatten(free)
        types = [leaf.type for leaf in init]
        new_body = Block([int32] + types, ["__k"])
        outer = self.adj
        with b.at(new_body):
            b.loc = op.loc
            popped = b.op("pop", [], [a.type for a in body.args]).results
            for a, v in zip(body.args, popped):
                self.map[a.id] = v
            n_carried = sum(len(active_types(a.type)) for a in carried_args)
            carried_leaves = new_body.args[1:1 + n_carried]
            self.adj = self._unflatten(free, new_body.args[1 + n_carried:])
            it = iter(carried_leaves)
            seeds = [[next(it) for _ in active_types(a.type)] for a in carried_args]
            self._reverse_region(body, seeds, free, before=carried_args)
        self.adj = outer
        b.loc = op.loc
        zero = b.const(0, int32)
        new = b.op("for", [zero, count, b.const(1, int32)] + init, types, {}, [new_body])
        results = new.results
        # the free values' adjoints first (the loop carried their earlier adjoints through),
        # then the initial values': an initial value may itself be a free value of the body
        self.adj.update(self._unflatten(free, results[n_carried:]))
        it = iter(results[:n_carried])
        for v in inits:
            self.accum(v, [next(it) for _ in active_types(v.type)])


class _Reverse(FuncRegionReverse, TileReverse, _ScalarReverse):
    """The reverse pass: `_ScalarReverse`'s rules, with tiles' (tiles.py) where values are tiles."""
