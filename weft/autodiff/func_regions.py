"""Reverse-mode rules for the calls of funcs with a custom grad or replay (a mixin of
reverse.py's `_Reverse`). The inliner keeps such a call whole, as a `func_region` op whose
body is the func's (lang/custom_grad.py):

- with a `@func_replay`, the backward pass runs the replay as written, effects included (as
  Warp calls it there instead of the func), and later code reads its results; the body is
  still replayed without effects for what its reverse needs;
- with a `@func_grad`, the custom grad's body gives the adjoints of the arguments; otherwise
  the body is reversed as inlined code would be.
"""

from __future__ import annotations

from ..ir.core import Op
from ..ir.passes import clone_op
from ..types import ArrayType, Matrix, Scalar, Vector
from .active import active_types, has_adjoint_array


def _cached(instance, key, build):
    """The IR `build()` makes for a func instance, kept on the instance under `key`."""
    cache = instance.__dict__.setdefault("_custom_ir", {})
    if key not in cache:
        cache[key] = build()
    return cache[key]


class FuncRegionReverse:
    """`func_region` rules of `_Reverse`."""

    def replay_func_region(self, op: Op, push: bool):
        """Splice in the func's body, replayed without effects. A custom replay
        (`@func_replay`) runs as written in the body's place, effects included (Warp calls it
        in the backward pass instead of the func), and gives the results; the body is still
        replayed for what its reverse needs, reading the replay's results where the body
        returns them (a slot an atomic handed out). With a custom grad the body is not
        reversed: a custom replay alone is enough, and the body's loops need not push."""
        instance = op.attrs["func"]
        body = op.regions[0]
        reversed_body = instance.custom_grad is None
        if instance.custom_replay is not None:
            fn = _cached(instance, "replay", instance.replay_ir)
            mapping = {p.id: self.m(v) for p, v in zip(fn.params, op.operands)}
            for inner in fn.body.ops[:-1]:
                self.b.block.ops.append(clone_op(inner, mapping))
            results = [mapping.get(v.id, v) for v in fn.body.ops[-1].operands]
            for r, v in zip(op.results, results):
                self.map[r.id] = v
            if not reversed_body:
                return
            for v, r in zip(body.ops[-1].operands, results):
                if v.owner in body.ops:
                    self.replayed[v.id] = r
        for a, v in zip(body.args, op.operands):
            self.map[a.id] = self.m(v)
        self.replay(body.ops[:-1], push and reversed_body)
        if instance.custom_replay is None:
            for r, v in zip(op.results, body.ops[-1].operands):
                self.map[r.id] = self.m(v)

    def rev_func_region(self, op):
        instance = op.attrs["func"]
        if instance.custom_grad is None:
            body = op.regions[0]
            for v, r in zip(body.ops[-1].operands, op.results):
                self.accum(v, self.get(r))
            self.reverse(body.ops[:-1])
            for a, v in zip(body.args, op.operands):
                self.accum(v, self.get(a))
            return
        from ..lang.custom_grad import result_types
        active = [k for k, v in enumerate(op.operands) if active_types(v.type)]
        arrays = [k for k, v in enumerate(op.operands) if has_adjoint_array(v.type) and isinstance(v.type, ArrayType)]
        names = list(instance.param_types)
        fn = _cached(instance, ("grad", tuple(active), tuple(arrays)),
                     lambda: instance.grad_ir([names[k] for k in active], [names[k] for k in arrays]))
        inputs = [self.m(v) for v in op.operands]
        for r in op.results:
            leaves = iter(self.get(r))
            for t in result_types(r.type):
                if not isinstance(t, (Scalar, Vector, Matrix)):
                    self.error(f"a func_grad for a func returning {t!r} is not supported", op)
                inputs.append(self.value_from(t, [next(leaves) for _ in active_types(t)]) if active_types(t)
                              else self.zero_value(t))  # (an integer result: its adjoint is 0)
        for k in arrays:
            adj_arr = self.adj_array(op.operands[k], op)
            inputs.append(adj_arr if adj_arr is not None else self.b.op("null_array", [], [op.operands[k].type]).result)
        mapping = {p.id: v for p, v in zip(fn.params, inputs)}
        for inner in fn.body.ops[:-1]:
            self.b.block.ops.append(clone_op(inner, mapping))
        (grads,) = [mapping.get(v.id, v) for v in fn.body.ops[-1].operands]
        for j, k in enumerate(active):
            self.accum(op.operands[k], self.float_leaves(self.b.extract(grads, j)))
