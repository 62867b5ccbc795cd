"""Reductions of tiles: `tile_sum` (whole tile or one axis), `tile_dot`, `tile_min/max`,
`tile_argmin/argmax`, `tile_reduce` with a user func (whole tile or one axis).

Whole-tile results are tiles of shape (1,), as in Warp. A sum over the whole tile is a
`tile_map` sum (its gradient is the seed broadcast back); the others are loops over the
elements in row-major order, inside a `tile_map` over the result, so their gradients follow
the elements each one picked (min/max: the first extreme element).

Under Warp's cooperative CPU blocks (`compile_lanes()` > 1), element k of a tile belongs to
lane k % block_dim, and a reduction skips the elements of lanes that do not run (past the
launch's threads in its last block, or skipping the branch): Warp's CPU blocks do, so that
`tile_max(tile(x))` is the maximum over the threads that exist. A slice with no element
left gives the identity of add/mul/min/max (Warp's); under another operator it is an error
after the launch (Warp asserts).
"""

from __future__ import annotations

import math

import numpy as np

from ...ir.core import Block, Value
from ...types import Matrix, Scalar, StructType, TileType, bool_, int32
from .. import arith
from ..registry import BUILTINS, builtin
from .args import tile_arg
from .construct import lanes_active as _lanes_active
from .construct import owner_runs as _owner_runs
from .construct import row_major as _linear
from .construct import when_owner_runs
from .core import TILE_GET, map_tiles, unravel, zero_of


def _or(b, p, q):
    return b.select(p, b.const(True, bool_), q)


def _masked_fold(ctx, active, n, at, combine, identity):
    """combine(...) over elements at(0..n-1) (a (linear index, value) pair), skipping those of
    lanes that do not run; `identity` (a Value) when none is left."""
    b = ctx.b
    first_index, first = at(b.const(0, int32))
    if active is None:
        (r,) = loop(ctx, n - 1, [first], lambda k, acc: [combine(acc[0], at(b.add(k, b.const(1, int32)))[1])])
        return r

    def step(k, carried):
        acc, got = carried
        j, x = at(b.add(k, b.const(1, int32)))
        runs = _owner_runs(b, active, j)
        new = b.select(got, combine(acc, x), x)
        return [b.select(runs, new, acc), _or(b, got, runs)]
    got0 = _owner_runs(b, active, first_index)
    acc, got = loop(ctx, n - 1, [first, got0], step)
    if identity is None:  # (Warp asserts: an operator without identity has no value for it)
        lanes = active.type.shape[0]
        (any_runs,) = loop(ctx, lanes, [b.const(False, bool_)],
                           lambda k, acc: [_or(b, acc[0], b.call(TILE_GET, [active, k]))])
        b.op("assert", [_or(b, got, b.unary("not", any_runs))], [],
             {"message": "tile_reduce: a slice has no element of a thread that runs, and the reduction operator "
                         "has no declared identity"})
        identity = zero_of(b, acc.type)
    return b.select(got, acc, identity)


def reduction_identity(ctx, op_name, t):
    """Warp's identity of add/mul/min/max for element type t (None for other ops)."""
    if not isinstance(t, Scalar) or op_name not in ("add", "mul", "min", "max"):
        return None
    if op_name in ("add", "mul"):
        return ctx.b.const(0 if op_name == "add" else 1, t)
    if t.is_float:
        return ctx.b.const(math.inf if op_name == "min" else -math.inf, t)
    info = np.iinfo(t.np_dtype)
    return ctx.b.const(int(info.max if op_name == "min" else info.min), t)


def _one(ctx, value: Value) -> Value:
    """A tile of shape (1,) holding `value`."""
    (t,) = map_tiles(ctx.b, (1,), [], lambda coords, elems, states: ([value], [], []))
    return t


def _sum_all(ctx, a: Value) -> Value:
    b, active = ctx.b, _lanes_active(ctx)

    def body(coords, elems, states):
        x = elems[0]
        if active is not None:
            x = b.select(when_owner_runs(b, active, coords, a.type.shape), x, zero_of(b, x.type))
        return [], [x], []
    (s,) = map_tiles(b, a.type.shape, [a], body)
    return s


def _axis(ctx, a: Value, axis) -> int:
    if isinstance(axis, Value) or not isinstance(axis, int):
        ctx.error("a tile reduction's axis must be a compile-time integer", kind=TypeError)
    n = a.type.ndim
    if not -n <= axis < n:
        ctx.error(f"axis {axis} is out of range for a tile of {n} dimension(s)", kind=ValueError)
    return axis % n


def loop(ctx, n: int, inits, step):
    """An IR `for k in range(n)` carrying `inits`; `step(k, carried) -> new carried`."""
    b = ctx.b
    body = Block([int32] + [v.type for v in inits], ["__k"])
    with b.at(body):
        b.op("yield", step(body.args[0], list(body.args[1:])))
    return b.op("for", [b.const(0, int32), b.const(n, int32), b.const(1, int32), *inits],
                [v.type for v in inits], {}, [body]).results


def _fold_all(ctx, a: Value, combine, identity=None):
    """Combine the elements of `a` in row-major order, from the first."""
    t: TileType = a.type
    b, active = ctx.b, _lanes_active(ctx)

    def element(k):
        return k, b.call(TILE_GET, [a, *unravel(b, k, t.shape)])

    def body(coords, elems, states):
        return [_masked_fold(ctx, active, t.num_elements, element, combine, identity)], [], []
    (r,) = map_tiles(b, (1,), [], body)
    return r


@builtin("tile_sum")
def tile_sum(ctx, args, kwargs):
    """tile_sum(a, axis=None): the sum of all elements (shape (1,)), or along one axis."""
    a = tile_arg(ctx, args[0] if args else kwargs.get("a"), "tile_sum's tile")
    axis = args[1] if len(args) > 1 else kwargs.get("axis")
    if axis is None and isinstance(a.type.dtype, StructType):
        # from the first element: a struct's fields without arithmetic (bools, small ints)
        # carry an element's value, as Warp's struct sums do, not a zero's
        return _fold_all(ctx, a, lambda x, y: arith.binary(ctx, "add", x, y))
    if axis is None:
        return _one(ctx, _sum_all(ctx, a))
    return _reduce_axis(ctx, a, _axis(ctx, a, axis), lambda x, y: arith.binary(ctx, "add", x, y),
                        reduction_identity(ctx, "add", a.type.dtype))


def _reduce_axis(ctx, a: Value, axis: int, combine, identity=None):
    t: TileType = a.type
    out_shape = t.shape[:axis] + t.shape[axis + 1:] or (1,)
    b, active = ctx.b, _lanes_active(ctx)

    def body(coords, elems, states):
        def at(k):
            idx = list(coords[:axis]) + [k] + list(coords[axis:]) if t.ndim > 1 else [k]
            return (_linear(b, idx, t.shape) if active is not None else None), b.call(TILE_GET, [a, *idx])
        return [_masked_fold(ctx, active, t.shape[axis], at, combine, identity)], [], []
    (r,) = map_tiles(b, out_shape, [], body)
    return r


@builtin("tile_dot")
def tile_dot(ctx, args, kwargs):
    """tile_dot(a, b): the sum of the products of corresponding elements (shape (1,))."""
    a, c = (tile_arg(ctx, x, "tile_dot's operands") for x in args[:2])
    if a.type.shape != c.type.shape:
        ctx.error(f"tile_dot: shapes differ ({a.type.shape} and {c.type.shape})", kind=ValueError)

    b, active = ctx.b, _lanes_active(ctx)

    def body(coords, elems, states):
        x, y = elems
        if isinstance(x.type, Scalar):
            prod = arith.binary(ctx, "mul", x, y)
        else:  # vectors: dot; matrices: the sum of the products of their entries
            prod = ctx.call(BUILTINS["ddot" if isinstance(x.type, Matrix) else "dot"], [x, y], {}, None)
        if active is not None:
            prod = b.select(when_owner_runs(b, active, coords, a.type.shape), prod, zero_of(b, prod.type))
        return [], [prod], []
    (s,) = map_tiles(ctx.b, a.type.shape, [a, c], body)
    return _one(ctx, s)


def _scalar_elements(ctx, a, name):
    if not isinstance(a.type.dtype, Scalar):
        kind = "Warp struct" if isinstance(a.type.dtype, StructType) else repr(a.type.dtype)
        ctx.error(f"{name} needs a tile of scalars; it does not support {kind} elements", kind=TypeError)


def _extreme(name, pick):
    @builtin(name)
    def reduce_extreme(ctx, args, kwargs):
        a = tile_arg(ctx, args[0] if args else kwargs.get("a"), f"{name}'s tile")
        _scalar_elements(ctx, a, name)
        return _fold_all(ctx, a, lambda acc, x: ctx.call(BUILTINS[pick], [acc, x], {}, None),
                         reduction_identity(ctx, pick, a.type.dtype))
    reduce_extreme.doc = f"{name}(a): the {pick}imum element (shape (1,))"
    return reduce_extreme


tile_min = _extreme("tile_min", "min")
tile_max = _extreme("tile_max", "max")


def _arg_extreme(name, pred):
    @builtin(name)
    def arg_extreme(ctx, args, kwargs):
        a = tile_arg(ctx, args[0] if args else kwargs.get("a"), f"{name}'s tile")
        _scalar_elements(ctx, a, name)
        t: TileType = a.type
        b, active = ctx.b, _lanes_active(ctx)

        def body(coords, elems, states):
            zero = b.const(0, int32)
            best = b.call(TILE_GET, [a, *unravel(b, zero, t.shape)])
            got = _owner_runs(b, active, zero) if active is not None else b.const(True, bool_)

            def step(k, acc):
                value, index, got = acc
                j = b.add(k, b.const(1, int32))
                x = b.call(TILE_GET, [a, *unravel(b, j, t.shape)])
                better = b.cmp(pred, x, value)
                # the running extreme skips NaNs (Warp's fmin/fmax), so a NaN first gives way to
                # the next element and the index then follows the others, as in Warp
                running = b.select(_or(b, better, b.cmp("ne", value, value)), x, value)
                if active is not None:  # (the first element of a lane that runs, then better ones)
                    runs = _owner_runs(b, active, j)
                    better = b.select(runs, b.select(got, better, b.const(True, bool_)), b.const(False, bool_))
                    running = b.select(runs, b.select(got, running, x), value)
                    got = _or(b, got, runs)
                return [running, b.select(better, j, index), got]
            _, index, _ = loop(ctx, t.num_elements - 1, [best, zero, got], step)
            return [index], [], []
        (r,) = map_tiles(b, (1,), [], body)
        return r
    return arg_extreme


tile_argmin = _arg_extreme("tile_argmin", "lt")
tile_argmax = _arg_extreme("tile_argmax", "gt")


@builtin("tile_reduce")
def tile_reduce(ctx, args, kwargs):
    """tile_reduce(op, a, axis=None): elements combined with op (a builtin or user func)."""
    op, a = args[0], tile_arg(ctx, args[1] if len(args) > 1 else kwargs.get("a"), "tile_reduce's tile")
    from ..registry import Builtin
    if isinstance(a.type.dtype, StructType) and isinstance(op, Builtin):
        ctx.error(f"tile_reduce: the builtin {op.name} has no overload for Warp struct elements "
                  f"({a.type.dtype!r}); pass a @wp.func that combines two of them", kind=TypeError)
    axis = args[2] if len(args) > 2 else kwargs.get("axis")

    def combine(x, y):
        r = ctx.call(op, [x, y], {}, None)
        if not isinstance(r, Value) or r.type is not x.type:
            got = r.type if isinstance(r, Value) else type(r).__name__
            ctx.error(f"tile_reduce: the function must return the tile element type {x.type!r}, got {got!r}",
                      kind=TypeError)
        return r
    identity = reduction_identity(ctx, op.name, a.type.dtype) if isinstance(op, Builtin) else None
    if axis is None:
        return _fold_all(ctx, a, combine, identity)
    return _reduce_axis(ctx, a, _axis(ctx, a, axis), combine, identity)
