"""Reverse-mode rules for tiles (a mixin of reverse.py's `_Reverse`).

A tile's adjoint is one leaf: a tile of the same type (not one leaf per element, which
would make every adjoint op a loop of the tile's size in the IR).

- `tile_map`: its adjoint is another `tile_map` whose body is the reverse of the forward
  body, element by element: inputs are the primal tiles and the adjoints of the outputs;
  it yields the adjoints of the input elements, sums the adjoints of the outer scalars the
  body read (a broadcast scalar's gradient is a sum over the tile), and carries the
  adjoints of outer tiles the body indexes as states.
- A read `t[i, j]` adds its adjoint into t's adjoint at [i, j] (`tile_add_at`, in place
  when nothing else holds that adjoint), never a whole one-hot tile per read.
- Other tile primitives bring their own `vjp` (weft/builtins/tiles/), on whole values.
"""

from __future__ import annotations

import math

from ..ir.core import Op
from ..types import TileType, int32


class TileReverse:
    """Tile rules of `_Reverse`."""

    def zero(self, t):
        if isinstance(t, TileType):
            from ..builtins.tiles import core
            return core.zeros(self.b, t)
        return super().zero(t)

    def accum(self, v, leaves):
        if not isinstance(v.type, TileType):
            return super().accum(v, leaves)
        if not leaves:
            return  # a tile of integers (or bools) carries no adjoint
        (g,) = leaves
        if g is None:
            return
        (c,) = self.get(v)
        self.adj[v.id] = [g if c is None else self.tile_add(c, g)]

    def tile_add(self, x, y):
        from ..builtins.tiles import core
        return core.add(self.b, x, y)

    def leaves_of(self, v):
        if isinstance(v.type, TileType):
            return [v]
        return super().leaves_of(v)

    def value_from(self, t, leaves):
        if isinstance(t, TileType):
            return self.materialize(t, leaves)[0]
        return super().value_from(t, leaves)

    def replay_tile_map(self, op: Op):
        from ..ir.core import Block
        region = op.regions[0]
        new = Block([a.type for a in region.args], [a.hint for a in region.args])
        for a, na in zip(region.args, new.args):
            self.map[a.id] = na
        self.replay_region(region, new, push=False)
        replayed = self.b.op("tile_map", [self.m(v) for v in op.operands], [r.type for r in op.results],
                             op.attrs, [new])
        for r, nr in zip(op.results, replayed.results):
            self.map[r.id] = nr

    def rev_call(self, op):
        from ..builtins.tiles import core
        prim = op.attrs["fn"]
        tiled = any(isinstance(v.type, TileType) for v in [*op.operands, *op.results])
        if not tiled:
            return super().rev_call(op)
        gs = [self.get(r) for r in op.results]
        if not any(g is not None for leaves in gs for g in leaves):
            return
        if prim is core.TILE_GET:
            t = op.operands[0]
            if not self.active(t):
                return
            g = self.value_from(op.result.type, gs[0])
            cur = self.value_from(t.type, self.get(t))
            self.adj[t.id] = [self.b.call(core.TILE_ADD_AT, [cur, *[self.m(i) for i in op.operands[1:]], g])]
            return
        if prim.vjp is None:
            self.error(f"builtin '{prim.name}' has no derivative rule", op)
        args = [self.m(a) for a in op.operands]
        results = [self.m(r) for r in op.results]
        grads = [self.value_from(r.type, g) for r, g in zip(op.results, gs) if self.active(r)]
        g = grads[0] if len(grads) == 1 else grads
        for a, ga in zip(op.operands, prim.vjp(self.b, args, results, g)):
            if ga is not None and self.active(a):
                self.accum(a, self.float_leaves(ga))

    def active(self, v) -> bool:
        from .reverse import active_types
        return bool(active_types(v.type))

    def rev_tile_map(self, op: Op):
        from ..builtins.tiles import core
        from .reverse import active_types
        attrs = op.attrs
        n_in, n_out, nd = attrs["n_inputs"], attrs["n_out"], len(attrs["shape"])
        if len(op.operands) != n_in:
            return self.rev_tile_updates(op)
        inputs = op.operands[:n_in]
        region = op.regions[0]
        out_seeds, sum_seeds, free_tiles, free_other = self._map_seeds(op)
        present = [k for k, g in enumerate(out_seeds) if g is not None]
        new_inputs = [self.m(x) for x in inputs] + [out_seeds[k] for k in present]
        states = [self.value_from(t.type, self.get(t)) for t in free_tiles]
        wanted = [j for j, x in enumerate(inputs) if self.active(x)]
        outer = self.adj

        def body(coords, elems, state_args):
            for a, c in zip(region.args[:nd], coords):
                self.map[a.id] = c
            for a, e in zip(region.args[nd:], elems[:n_in]):
                self.map[a.id] = e
            self.adj = {t.id: [s] for t, s in zip(free_tiles, state_args)}
            self.replay(region.ops[:-1], push=True)
            yielded = region.ops[-1].operands
            for k, g in zip(present, elems[n_in:]):
                self.accum(yielded[k], self.float_leaves(g))
            for v, g in zip(yielded[n_out:], sum_seeds):
                if g is not None:
                    self.accum(v, self.float_leaves(g))
            self.reverse(region.ops[:-1])
            outs = [self.value_from(x.type.dtype, self.get(region.args[nd + j])) for j, x in enumerate(inputs)
                    if j in wanted]
            sums = self._flatten(free_other)
            new_states = [self.value_from(t.type, self.get(t)) for t in free_tiles]
            return outs, sums, new_states

        results = core.map_tiles(self.b, attrs["shape"], new_inputs, body, states)
        self.adj = outer
        it = iter(results)
        for j in wanted:
            self.accum(inputs[j], [next(it)])
        for v in free_other:  # (the sums over the elements, leaf by leaf)
            self.accum(v, [next(it) for _ in active_types(v.type)])
        for t, s in zip(free_tiles, it):
            self.adj[t.id] = [s]

    def _map_seeds(self, op: Op):
        """For the reverse of `tile_map` op: its output tiles' adjoints (None: none), its
        sums' adjoints (None: none), and the outer tiles and other values its body reads
        that carry adjoints."""
        from .reverse import _free_values, active_types
        n_out, n_sums = op.attrs["n_out"], op.attrs["n_sums"]
        out_seeds = [self.get(r)[0] if self.active(r) else None for r in op.results[:n_out]]
        sum_seeds = [self.value_from(r.type, self.get(r)) if self.active(r) and any(
            g is not None for g in self.get(r)) else None for r in op.results[n_out:n_out + n_sums]]
        free = [v for v in _free_values(op.regions) if active_types(v.type)]
        return (out_seeds, sum_seeds, [v for v in free if isinstance(v.type, TileType)],
                [v for v in free if not isinstance(v.type, TileType)])

    def rev_tile_updates(self, op: Op):
        """The reverse of a `tile_map` whose states are tiles it updates element by element
        (`tile_set`/`tile_add_at` on the state, as cooperative CPU blocks' lanes do in turn,
        transforms/lanes.py): its body reversed, element by element in reverse order, the
        states' adjoints carried from the last element to the first. The update rules need
        no primal state, so a state read any other way is refused."""
        from ..builtins.tiles import core
        from .reverse import active_types
        attrs = op.attrs
        shape, n_in, n_out, n_sums = tuple(attrs["shape"]), attrs["n_inputs"], attrs["n_out"], attrs["n_sums"]
        nd = len(shape)
        region = op.regions[0]
        inputs, inits = op.operands[:n_in], op.operands[n_in:]
        state_args = region.args[nd + n_in:]
        finals = op.results[n_out + n_sums:]
        reads = []  # the body's reads of a state: their values are recorded by a forward pass
        for s in state_args:
            if not self.active(s):
                continue
            ok = isinstance(s.type, TileType) and self._only_updated(region, s, reads)
            if not ok:
                self.error("a gradient through tile updates the block's threads make in turn is supported when "
                           "each thread writes, adds into or reads elements of the tile (t[i] = x, t[i] += x, "
                           "t[i][1] = x, scatters) outside loops, not when it reads the tile it updates in "
                           "another way", op)
        recorded = self._record_reads(op, reads) if reads else []
        out_seeds, sum_seeds, free_tiles, free_other = self._map_seeds(op)
        live = [k for k, s in enumerate(state_args) if self.active(s)]
        wanted = [j for j, x in enumerate(inputs) if self.active(x)]
        carried = [self.value_from(t.type, self.get(t)) for t in free_tiles]
        carried += [self.value_from(finals[k].type, self.get(finals[k])) for k in live]
        outer = self.adj
        count = self.b.const(math.prod(shape) - 1, int32)

        def body(coords, elems, state_args_in):
            b = self.b
            back = self._back(coords, shape, count)  # (last element first)
            for a, c in zip(region.args[:nd], back):
                self.map[a.id] = c
            for a, x in zip(region.args[nd:nd + n_in], inputs):
                self.map[a.id] = b.call(core.TILE_GET, [self.m(x), *back])
            for a, final in zip(state_args, finals):
                self.map[a.id] = self.m(final)  # (never read: the updates' rules need no primal state)
            self.adj = {t.id: [g] for t, g in zip(free_tiles, state_args_in)}
            # (a read of a state gives the value the state held then)
            self.substitutes = {r.result.id: (lambda k=k: b.call(core.TILE_GET, [recorded[k], *back]))
                                for k, r in enumerate(reads)}
            self.replay(region.ops[:-1], push=True)
            yielded = region.ops[-1].operands
            for k, seed in enumerate(out_seeds):
                if seed is not None:
                    self.accum(yielded[k], self.float_leaves(b.call(core.TILE_GET, [seed, *back])))
            for v, g in zip(yielded[n_out:n_out + n_sums], sum_seeds):
                if g is not None:
                    self.accum(v, self.float_leaves(g))
            for k, g in zip(live, state_args_in[len(free_tiles):]):
                self.accum(yielded[n_out + n_sums + k], [g])
            self.reverse(region.ops[:-1])  # (a branch's reverse replays it again: substitutes still on)
            self.substitutes = {}
            outs = [self.value_from(x.type.dtype, self.get(region.args[nd + j])) for j, x in enumerate(inputs)
                    if j in wanted]
            states = [self.value_from(t.type, self.get(t)) for t in free_tiles]
            states += [self.value_from(state_args[k].type, self.get(state_args[k])) for k in live]
            return outs, self._flatten(free_other), states

        results = core.map_tiles(self.b, shape, [], body, carried)
        self.adj = outer
        it = iter(results)
        for j in wanted:  # (made last element first: put back in order)
            self.accum(inputs[j], [self._reversed(next(it), shape, count)])
        for v in free_other:
            self.accum(v, [next(it) for _ in active_types(v.type)])
        for t in free_tiles:
            self.adj[t.id] = [next(it)]
        for k in live:
            self.accum(inits[k], [next(it)])

    def _back(self, coords, shape, count):
        """The coordinates of the element `count` - (row-major index of `coords`)."""
        from ..builtins.tiles import core
        return core.unravel(self.b, self.b.sub(count, core.ravel(self.b, coords, shape)), shape)

    def _reversed(self, tile, shape, count):
        """`tile` with its elements in reverse row-major order."""
        from ..builtins.tiles import core
        (out,) = core.map_tiles(self.b, shape, [], lambda c, e, s: (
            [self.b.call(core.TILE_GET, [tile, *self._back(c, shape, count)])], [], []))
        return out

    def _record_reads(self, op: Op, reads: list) -> list:
        """Tiles of the values the `reads` (tile_get ops of a state in `op`'s body, outside
        loops) give at each element (zero where a branch skips them): the forward map run
        again, in order, from the states' first values."""
        from ..builtins.tiles import core
        attrs = op.attrs
        shape, n_in, n_out, n_sums = tuple(attrs["shape"]), attrs["n_inputs"], attrs["n_out"], attrs["n_sums"]
        region = op.regions[0]
        nd = len(shape)

        def body(coords, elems, states):
            for a, v in zip(region.args, [*coords, *elems, *states]):
                self.map[a.id] = v
            self.replay(region.ops[:-1], push=False)
            yielded = region.ops[-1].operands[n_out + n_sums:]
            return [self._lift(self.m(r.result), self.b.block) for r in reads], [], [self.m(y) for y in yielded]
        results = core.map_tiles(self.b, shape, [self.m(x) for x in op.operands[:n_in]], body,
                                 [self.m(x) for x in op.operands[n_in:]])
        assert len(region.args) == nd + len(op.operands)
        return results[:len(reads)]

    def _lift(self, value, block):
        """`value`, defined in `block` or inside the `if`s among its ops, as a value of
        `block` (each `if` on the way gets a result: `value` from the branch that defines it,
        zero from the others)."""
        from ..builtins.tiles.core import zero_of
        from ..ir.core import Value, walk
        for op in block.ops:
            if op is value.owner:
                return value
            if op.name != "if":
                continue
            for region in op.regions:
                if any(inner is value.owner for inner in walk(region)):
                    result = Value(value.type, op)
                    for other in op.regions:
                        term = other.ops.pop()
                        with self.b.at(other):
                            term.operands.append(self._lift(value, other) if other is region
                                                 else zero_of(self.b, value.type))
                        other.ops.append(term)
                    op.results.append(result)
                    return result
        raise AssertionError("value not found")

    def _only_updated(self, region, state, reads: list) -> bool:
        """Whether `state` (a block argument of `region`) is used only as the tile that
        `tile_set`/`tile_add_at` update, their results likewise, up to the yield, or read
        element by element outside loops (those reads are added to `reads`)."""
        from ..builtins.tiles import core
        from ..ir.core import walk
        chain = {state.id}
        top = {id(o) for o in walk(region)} - {id(inner) for o in walk(region) if o.name != "if"
                                               for r in o.regions for inner in walk(r)}
        for o in walk(region):
            for k, v in enumerate(o.operands):
                if v.id not in chain:
                    continue
                fn = o.attrs.get("fn") if o.name == "call" else None
                if fn in (core.TILE_SET, core.TILE_ADD_AT) and k == 0:
                    chain.add(o.result.id)
                elif fn is core.TILE_GET and k == 0 and id(o) in top:
                    reads.append(o)
                elif o.name == "yield":
                    continue
                else:
                    return False
            if o.name == "if":  # an if yielding an updated tile continues the chain
                for r_k, r in enumerate(o.results):
                    if any(reg.ops[-1].operands[r_k].id in chain for reg in o.regions):
                        chain.add(r.id)
        return True
