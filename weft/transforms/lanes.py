"""Cooperative CPU blocks: one program per block of `block_dim` threads.

Warp's `config.enable_cpu_blocks` runs a block's threads together on the CPU, so that tile
ops see all of them (`tile(x)` gathers one value per thread, stacks and scatters take one
per thread). weft compiles such a kernel once more, per thread as usual but with
`compile_lanes() = block_dim` (so `tile(x)` has shape (block_dim,)), and this pass turns it
into a *block program*, run by one CPU thread per block:

- tile ops (ops on tiles and tile stacks) run once, as the block's;
- the threads' own code runs in `tile_map`s over the lanes, between tile ops (the
  work-item loops of CPU OpenCL): a value a thread computes is, in the block program, a tile
  of shape (block_dim,) with one element per lane;
- `tile(x)` is that tile; a lane's index (`untile`, `tid()`'s last index) is the map's
  coordinate; stack pushes and pops, and element writes a lane makes with its own index or
  value, run lane by lane in order, in a map of their own (the block's threads meet there);
- a tile op given a thread's value (a loop bound, an offset, a scale) takes lane 0's: Warp
  requires it to be the same in every thread of the block.

Gradients need nothing more: the reverse pass of the block program sums the lanes' reads
of a tile into its adjoint, and gives a tile op's adjoint for a thread's value to lane 0
only, so each operation of the block is counted once and each thread's once per thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..builtins.tiles.construct import LANE_INDEX, LANES_ACTIVE, LANES_TILE
from ..builtins.tiles.core import TILE_ADD_AT, TILE_GET, TILE_SET, map_tiles, unravel, zero_of
from ..builtins.tiles.stack import POP, PUSH
from ..ir.builder import Builder
from ..ir.core import Block, Function, Op, Value, free_values, walk
from ..ir.ops import SPECS
from ..types import ArrayType, TileStackType, TileType, bool_, int32


@dataclass(frozen=True)
class LaneSpec:
    """How a block program is launched. `block_dim` threads per block; for `launch_tiled`,
    `grid_ndim` (the block program runs over the grid, the lane is tid()'s last index); for
    `launch`, the threads' `dims` (the program runs over ceil(threads / block_dim) blocks,
    the last one partial when they do not divide)."""

    block_dim: int
    grid_ndim: int | None = None
    dims: tuple | None = None

    @property
    def blocks(self) -> int:
        return -(-math.prod(self.dims) // self.block_dim)


class LaneError(NotImplementedError):
    pass


# Element updates of a tile, and stack pushes and pops: with a thread's own operands they
# run lane by lane, in a map of their own.
_LANEWISE_TILE_OPS = (TILE_SET, TILE_ADD_AT, PUSH, POP)
_PURE = {"const", "binary", "unary", "cmp", "cast", "select", "construct", "extract", "insert",
         "extract_dyn", "insert_dyn", "array_shape", "array_ptr", "view", "slice", "component", "null_array"}


def _fn(op):
    return op.attrs.get("fn") if op.name == "call" else None


def _tileish(t) -> bool:
    return isinstance(t, (TileType, TileStackType))


def _is_tile_op(op: Op) -> bool:
    """An op of the block itself (it makes, reads or changes a tile as a whole)."""
    fn = _fn(op)
    if fn in _LANEWISE_TILE_OPS or fn is TILE_GET or fn is LANE_INDEX:
        return False
    if (op.regions and op.name != "tile_map") or SPECS[op.name].terminator:  # (judged by what they hold)
        return False
    return op.name == "tile_map" or any(_tileish(v.type) for v in (*op.operands, *op.results))


def _contains(op: Op, pred) -> bool:
    return pred(op) or any(pred(inner) for region in op.regions for inner in walk(region))


def lower_lanes(fn: Function, spec: LaneSpec) -> Function:
    """The block program of kernel `fn` (compiled with `compile_lanes() == spec.block_dim`)."""
    program = Function(fn.name, fn.kind, fn.param_names, [p.type for p in fn.params], fn.ret_type, fn.loc)
    return _BlockProgram(fn, spec, program).run()


class _BlockProgram:
    def __init__(self, fn: Function, spec: LaneSpec, program: Function):
        self.fn, self.spec, self.program = fn, spec, program
        self.lanes = spec.block_dim
        # the launch's threads (launch(): None under launch_tiled), and whether its last block
        # has lanes past them
        self.threads = math.prod(spec.dims) if spec.dims is not None else None
        self.partial = self.threads is not None and self.threads % self.lanes != 0
        self.b = Builder(program.body, fn.loc)
        self.env: dict[int, tuple[str, Value]] = {}  # old value id -> ("u", value) or ("l", lane tile)
        self.active: Value | None = None  # under a branch some threads do not take: a bool per lane
        self._first: dict[int, Value] = {}
        self.remade: dict[int, Op] = {}  # a thread's array (a view): the pure op that makes it
        self.users: dict[int, set[int]] = {}
        for op in walk(fn.body):
            for v in op.operands:
                self.users.setdefault(v.id, set()).add(id(op))

    def run(self) -> Function:
        for old, new in zip(self.fn.params, self.program.params):
            self.env[old.id] = ("u", new)
        self.block_index = None
        if self.spec.dims is not None:  # launch(): the program runs over the blocks
            self.block_index = self.b.op("tid", [], [int32], {"dim": -1, "of": 1}).result
        term = self.region(self.fn.body)
        self.b.op(term.name, [self.uniform(v) for v in term.operands])
        return self.program

    # Values ---------------------------------------------------------------------------------
    def kind(self, v: Value) -> str:
        """"u" (a block value) or "l" (a thread's: also every value of the pending run)."""
        return self.env[v.id][0] if v.id in self.env else "l"

    def uniform(self, v: Value) -> Value:
        """`v` at block level: the first active lane's value of a thread's value."""
        if v.id in self.remade:  # made again from the lane's operands
            op = self.remade[v.id]
            return self._copy_here(op).results[op.results.index(v)]
        kind, value = self.env[v.id]
        if kind == "u":
            return value
        return self.b.call(TILE_GET, [value, self.first_lane()])

    def first_lane(self) -> Value:
        """The lowest lane that runs here (0 outside branches some threads skip)."""
        if self.active is None:
            return self.b.const(0, int32)
        first = self._first.get(self.active.id)
        if first is None:
            active, b = self.active, self.b

            def body(coords, elems, states):
                (lane,), (taken,), (best,) = coords, elems, states
                return [], [], [b.select(self._and(taken, b.cmp("lt", lane, best)), lane, best)]
            (first,) = map_tiles(b, (self.lanes,), [active], body, [b.const(self.lanes - 1, int32)])
            first = self._first[self.active.id] = first
        return first

    def lanes_active(self) -> Value:
        """Which lanes run here, a bool tile: not those past the launch's threads (in the
        last block) nor, in a branch some threads skip, those that skip it."""
        b, lanes = self.b, self.lanes

        def body(coords, elems, states):
            (lane,) = coords
            runs = b.const(True, bool_)
            if self.partial:
                linear = b.add(b.mul(self.block_index, b.const(lanes, int32)), lane)
                runs = b.cmp("lt", linear, b.const(self.threads, int32))
            if self.active is not None:
                runs = self._and(runs, elems[0])
            return [runs], [], []
        (t,) = map_tiles(b, (lanes,), [self.active] if self.active is not None else [], body)
        return t

    def _and(self, p: Value, q: Value) -> Value:
        b = self.b
        return b.select(p, q, b.const(False, p.type))

    def lane_tile(self, v: Value) -> Value:
        """`v` as a tile of the lanes' values (a block value broadcast to every lane)."""
        kind, value = self.env[v.id]
        if kind == "l":
            return value
        (t,) = map_tiles(self.b, (self.lanes,), [], lambda c, e, s: ([value], [], []))
        return t

    # Regions --------------------------------------------------------------------------------
    def region(self, block: Block) -> Op:
        """Emit `block`'s ops (its arguments already in env) into the current block; returns
        its terminator (not emitted)."""
        run: list[Op] = []
        for op in block.ops:
            if SPECS[op.name].terminator:
                self.flush(run)
                return op
            what = self.classify(op)
            if what == "lane":
                run.append(op)
                continue
            if what == "uniform":  # (needs no lane value: may go before the pending run)
                self.emit_uniform(op)
                continue
            if what == "lanewise":  # the threads take turns here: its map ends with it
                self.flush(run + [op])
                run = []
                continue
            self.flush(run)
            run = []
            if what == "lanes_active":  # (a block value: the pending run may stay open)
                self.env[op.result.id] = ("u", self.lanes_active())
                continue
            if what == "lanes_tile":
                (x,) = op.operands
                self.env[op.result.id] = ("u", self.lane_tile(x))
            else:
                self.emit_block_op(op)
        raise AssertionError("region without terminator")

    def classify(self, op: Op) -> str:
        fn = _fn(op)
        if fn is LANES_TILE:
            return "lanes_tile"
        if fn is LANES_ACTIVE:
            return "lanes_active"
        if _contains(op, _is_tile_op):
            return "block"
        if _contains(op, lambda o: _fn(o) in (PUSH, POP)):
            return "lanewise"
        if fn in (TILE_SET, TILE_ADD_AT) or (op.regions and _contains(op, lambda o: _fn(o) in _LANEWISE_TILE_OPS)):
            # (scatters: `per_lane`, each thread adds its value even when all add the same)
            per_lane = op.attrs.get("per_lane") or any(self.kind(v) == "l" for v in free_values([op]))
            return "lanewise" if per_lane or op.regions else "uniform"
        if op.regions and any(_tileish(v.type) for v in (*op.operands, *op.results)):
            return "block"  # (control flow choosing between tiles, or carrying one)
        if op.name == "tid":
            return "uniform" if self._tid_is_block_index(op) else "lane"
        # (a thread's read of a tile element stays in its map: a later update of the tile by
        # each thread in turn, `s[0] &= x`, must read the value the threads before it left)
        pure = op.name in _PURE or (fn is not None and not fn.effects and fn not in (LANE_INDEX, TILE_GET)
                                    and fn not in _LANEWISE_TILE_OPS)
        if pure and not op.regions and all(self.kind(v) == "u" for v in op.operands):
            return "uniform"
        return "lane"

    def _tid_is_block_index(self, op: Op) -> bool:
        """In a tiled launch tid() gives the block's coordinates (a linear index when not
        unpacked), the lane too when unpacked into one more index than the grid has."""
        g, of, dim = self.spec.grid_ndim, op.attrs["of"], op.attrs["dim"]
        return g is not None and (of == 1 or of == g or (of == g + 1 and dim < g))

    def emit_uniform(self, op: Op):
        if op.name == "tid":  # a block's coordinate in the grid
            g, of = self.spec.grid_ndim, op.attrs["of"]
            attrs = {"dim": -1, "of": 1} if g == 1 or of == 1 else {"dim": op.attrs["dim"], "of": g}
            self.env[op.result.id] = ("u", self.b.op("tid", [], [int32], attrs).result)
            return
        for old, fresh in zip(op.results, self._copy_here(op).results):
            self.env[old.id] = ("u", fresh)

    def _copy_here(self, op: Op) -> Op:
        """A copy of region-less `op` at block level, its operands the block's values."""
        new = Op(op.name, [self.uniform(v) for v in op.operands], [r.type for r in op.results], op.attrs, (), op.loc)
        self.b.block.ops.append(new)
        return new

    def emit_block_op(self, op: Op):
        if op.name in ("if", "for", "while"):
            return self.emit_control(op)
        if op.name == "func_region":
            raise LaneError(f"{op.loc}: a func with a custom gradient that uses tiles, under enable_cpu_blocks")
        mapping = {v.id: self.uniform(v) for v in free_values([op])}
        new = _clone(op, mapping, {})
        self.b.block.ops.append(new)
        for old, fresh in zip(op.results, new.results):
            self.env[old.id] = ("u", fresh)

    # Control flow holding tile ops: run by the block (its condition and bounds lane 0's) -------
    def emit_control(self, op: Op):
        if op.name == "if":
            return self._emit_if(op)
        n_bounds = 3 if op.name == "for" else 0
        bounds = [self.uniform(v) for v in op.operands[:n_bounds]]
        inits = op.operands[n_bounds:]
        kinds = [self.kind(v) for v in inits]
        while True:  # until the carried values' kinds are stable (a lane value stays one)
            regions, yielded = [], []
            for k, block in enumerate(op.regions):
                args = block.args[1:] if op.name == "for" else block.args
                iv = [block.args[0].type] if op.name == "for" else []
                new = Block(iv + [self._type(a, kd) for a, kd in zip(args, kinds)])
                if op.name == "for":
                    self.env[block.args[0].id] = ("u", new.args[0])
                for a, na, kd in zip(args, new.args[len(new.args) - len(args):], kinds):
                    self.env[a.id] = (kd, na)
                with self.b.at(new):
                    term = self.region(block)
                regions.append((new, term))
                is_cond = op.name == "while" and k == 0
                if not is_cond:
                    yielded = term.operands
            new_kinds = [("l" if kd == "l" or self.kind(y) == "l" else "u") for kd, y in zip(kinds, yielded)]
            if new_kinds == kinds:
                break
            kinds = new_kinds
        for k, (new, term) in enumerate(regions):
            with self.b.at(new):
                if op.name == "while" and k == 0:
                    self.b.op("yield", [self.uniform(term.operands[0])])
                else:
                    self.b.op("yield", [self._as(v, kd) for v, kd in zip(term.operands, kinds)])
        init_values = [self._as(v, kd) for v, kd in zip(inits, kinds)]
        new_op = self.b.op(op.name, [*bounds, *init_values], [self._type(r, kd) for r, kd in zip(op.results, kinds)],
                           op.attrs, [r for r, _ in regions])
        for old, fresh, kd in zip(op.results, new_op.results, kinds):
            self.env[old.id] = (kd, fresh)

    def _emit_if(self, op: Op):
        # a thread's own condition: masked, when only one branch meets the other threads
        # (`if not returned:` after an early return); else the block's (Warp requires tile
        # ops under a condition to see it the same in every thread)
        one_sided = sum(any(_contains(o, _is_tile_op) for o in region.ops) for region in op.regions) == 1
        if self.kind(op.operands[0]) == "l" and one_sided and not any(_tileish(r.type) for r in op.results):
            return self._emit_masked_if(op)
        cond = self.uniform(op.operands[0])
        branches = []
        for block in op.regions:
            new = Block()
            with self.b.at(new):
                term = self.region(block)
            branches.append((new, term))
        kinds = ["l" if any(self.kind(t.operands[k]) == "l" for _, t in branches) else "u"
                 for k in range(len(op.results))]
        for new, term in branches:
            with self.b.at(new):
                if term.name == "return":
                    self.b.op("return", [self.uniform(v) for v in term.operands])
                else:
                    self.b.op("yield", [self._as(v, kd) for v, kd in zip(term.operands, kinds)])
        new_op = self.b.op("if", [cond], [self._type(r, kd) for r, kd in zip(op.results, kinds)], op.attrs,
                           [n for n, _ in branches])
        for old, fresh, kd in zip(op.results, new_op.results, kinds):
            self.env[old.id] = (kd, fresh)

    def _emit_masked_if(self, op: Op):
        """An `if` holding tile ops whose condition differs between threads (the `if not
        returned:` that follows an early return): each branch runs with the lanes that take
        it, its tile ops once (as Warp's cooperative threads meet in them)."""
        cond = self.lane_tile(op.operands[0])
        outer, b = self.active, self.b

        def mask(negate: bool) -> Value:
            def body(coords, elems, states):
                taken = b.unary("not", elems[0]) if negate else elems[0]
                return [self._and(elems[1], taken) if outer is not None else taken], [], []
            (m,) = map_tiles(b, (self.lanes,), [cond] + ([outer] if outer is not None else []), body)
            return m
        yields = []
        for region, negate in zip(op.regions, (False, True)):
            self.active = mask(negate)
            term = self.region(region)
            if term.name != "yield":
                raise LaneError(f"{op.loc}: a thread returns inside a branch that holds tile ops, under "
                                "enable_cpu_blocks")
            yields.append([self.lane_tile(v) for v in term.operands])
        self.active = outer
        if not op.results:
            return

        def pick(coords, elems, states):
            c, *rest = elems
            n = len(op.results)
            return [b.select(c, x, y) for x, y in zip(rest[:n], rest[n:])], [], []
        picked = map_tiles(b, (self.lanes,), [cond, *yields[0], *yields[1]], pick)
        for old, tile in zip(op.results, picked):
            self.env[old.id] = ("l", tile)

    def _type(self, v: Value, kind: str):
        return TileType(v.type, (self.lanes,)) if kind == "l" else v.type

    def _as(self, v: Value, kind: str) -> Value:
        return self.lane_tile(v) if kind == "l" else self.uniform(v)

    # The threads' code: a tile_map over the lanes ------------------------------------------
    def flush(self, run: list[Op]):
        if not run:
            return
        for o in (o for op in run for o in walk_op(op)):
            if o.name == "return":
                raise LaneError(f"{o.loc}: a thread returns early (before the end of the kernel) in a kernel "
                                "launched with cooperative CPU blocks (config.enable_cpu_blocks); weft cannot run "
                                "that yet: guard the code that follows with an if instead")
        free = free_values(run)
        while any(v.id in self.remade for v in free):  # copy the ops that make the lanes' arrays
            run = [self.remade[v.id] for v in free if v.id in self.remade] + run
            free = free_values(run)
        inside = {id(o) for op in run for o in walk_op(op)}
        lane_inputs = [v for v in free if self.kind(v) == "l"]
        outputs, threaded = [], []  # (old result), (old tile result, its base tile)
        top = {r.id for op in run for r in op.results}

        def remake(op):
            """An array a thread makes (a view) is made again where used: the values it is made
            from leave the map too (as lane tiles), and the arrays it is made from are remade."""
            if op.regions or op.name not in _PURE:
                raise LaneError(f"{op.loc}: under enable_cpu_blocks, an array that differs between "
                                "threads must come from indexing or slicing another")
            for r in op.results:
                self.remade[r.id] = op
            for v in op.operands:
                if v.id not in top:
                    continue
                if isinstance(v.type, ArrayType):
                    remake(v.owner)
                elif not _tileish(v.type) and all(v is not o for o in outputs):
                    outputs.append(v)
        for op in run:
            for r in op.results:
                if not (self.users.get(r.id, set()) - inside):
                    continue
                if _tileish(r.type):
                    threaded.append((r, self._tile_base(r, inside)))
                elif isinstance(r.type, ArrayType):  # (no tile holds arrays: made again where used)
                    remake(op)
                elif all(r is not o for o in outputs):
                    outputs.append(r)
        states = [self.uniform(base) for _, base in threaded]
        partial, mask = self.partial, self.active

        def body(coords, elems, state_args):
            (lane,) = coords
            mapping = {v.id: self.env[v.id][1] for v in free if self.kind(v) == "u"}
            mapping.update({v.id: e for v, e in zip(lane_inputs, elems)})
            mapping.update({base.id: s for (_, base), s in zip(threaded, state_args)})
            specials = self._lane_values(run, lane)
            if not partial and mask is None:
                self.b.block.ops.extend(_clone_ops(run, mapping, specials))
                return ([mapping[r.id] for r in outputs], [], [mapping[r.id] for r, _ in threaded])
            # lanes past the launch's threads (the last block's), or not taking the branch, do
            # nothing (their values are zeros)
            active = None
            if partial:
                active = self.b.cmp("lt", specials["linear"], self.b.const(self.threads, int32))
            if mask is not None:
                taken = self.b.call(TILE_GET, [mask, lane])
                active = taken if active is None else self._and(active, taken)
            then, other = Block(), Block()
            then.ops = _clone_ops(run, mapping, specials)
            then.ops.append(Op("yield", [*(mapping[r.id] for r in outputs), *(mapping[r.id] for r, _ in threaded)]))
            with self.b.at(other):
                zeros = [zero_of(self.b, r.type) for r in outputs]
                self.b.op("yield", [*zeros, *state_args])
            result = self.b.op("if", [active], [r.type for r in outputs] + [s.type for s in state_args],
                               {}, [then, other]).results
            return result[:len(outputs)], [], result[len(outputs):]

        results = map_tiles(self.b, (self.lanes,), [self.env[v.id][1] for v in lane_inputs], body, states)
        for r, tile in zip(outputs, results[:len(outputs)]):
            self.env[r.id] = ("l", tile)
        for (r, _), final in zip(threaded, results[len(outputs):]):
            self.env[r.id] = ("u", final)

    def _tile_base(self, r: Value, inside: set) -> Value:
        """The tile from outside the run that lane-by-lane updates make `r` from."""
        owner = r.owner
        if not isinstance(owner, Op) or id(owner) not in inside:
            return r
        if _fn(owner) in (TILE_SET, TILE_ADD_AT):
            return self._tile_base(owner.operands[0], inside)
        if owner.name == "if":
            k = owner.results.index(r)
            bases = {self._tile_base(region.ops[-1].operands[k], inside).id: region.ops[-1].operands[k]
                     for region in owner.regions}
            if len(bases) == 1:
                return self._tile_base(next(iter(bases.values())), inside)
        if owner.name in ("for", "while"):  # a tile carried through a loop that updates it in place
            k = owner.results.index(r)
            body = owner.regions[-1]
            carried = body.args[1:] if owner.name == "for" else body.args
            inits = owner.operands[3:] if owner.name == "for" else owner.operands
            if self._tile_base(body.ops[-1].operands[k], inside) is carried[k]:
                return self._tile_base(inits[k], inside)
        raise LaneError(f"{owner.loc}: under enable_cpu_blocks, a tile updated by each thread must be updated "
                        "in place (t[i] = x, or a scatter), not made anew")

    def _lane_values(self, run, lane: Value) -> dict:
        """What a lane's `tid` and `lane_index` ops give, made at the top of the map's body
        (by result id), and the lane's linear thread index ("linear")."""
        b = self.b
        lanes = b.const(self.lanes, int32)
        if self.spec.dims is not None:
            block = self.block_index
        else:
            g = self.spec.grid_ndim
            block = b.op("tid", [], [int32], {"dim": -1, "of": 1}).result if g else b.const(0, int32)
        linear = b.add(b.mul(block, lanes), lane)
        out = {"linear": linear}
        coords = unravel(b, linear, self.spec.dims) if self.spec.dims is not None else None
        for op in (o for top in run for o in walk_op(top)):
            if _fn(op) is LANE_INDEX:
                out[op.result.id] = lane
            elif op.name == "tid":
                dim, of = op.attrs["dim"], op.attrs["of"]
                if of == 1:
                    out[op.result.id] = linear
                elif coords is not None and of == len(coords):
                    out[op.result.id] = coords[dim]
                elif coords is not None and of > len(coords):  # (as without blocks: the extra indices are 0)
                    out[op.result.id] = coords[dim] if dim < len(coords) else b.const(0, int32)
                elif self.spec.grid_ndim is not None and of == self.spec.grid_ndim + 1 and dim == self.spec.grid_ndim:
                    out[op.result.id] = lane
                else:
                    raise LaneError(f"{op.loc}: tid() unpacked into {of} indices does not match this launch")
        return out


def walk_op(op: Op):
    yield op
    for region in op.regions:
        yield from walk(region)


def _clone_ops(ops, mapping: dict, specials: dict) -> list[Op]:
    """Copies of `ops` with operands renamed through `mapping` (updated); `tid` and
    `lane_index` ops become the lane's values (`specials`, by result id) and are dropped."""
    out = []
    for op in ops:
        if op.results and op.results[0].id in specials:
            mapping[op.results[0].id] = specials[op.results[0].id]
            continue
        out.append(_clone(op, mapping, specials))
    return out


def _clone(op: Op, mapping: dict, specials: dict) -> Op:
    regions = []
    for region in op.regions:
        new = Block([a.type for a in region.args], [a.hint for a in region.args])
        for a, na in zip(region.args, new.args):
            mapping[a.id] = na
        new.ops = _clone_ops(region.ops, mapping, specials)
        regions.append(new)
    new = Op(op.name, [mapping.get(v.id, v) for v in op.operands], [r.type for r in op.results], op.attrs,
             regions, op.loc)
    for old, fresh in zip(op.results, new.results):
        fresh.hint = old.hint
        mapping[old.id] = fresh
    return new
