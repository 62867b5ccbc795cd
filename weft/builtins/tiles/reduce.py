"""Reductions of tiles: `tile_sum` (whole tile or one axis), `tile_dot`, `tile_min/max`,
`tile_argmin/argmax`, `tile_reduce` with a user func (whole tile or one axis).

Whole-tile results are tiles of shape (1,), as in Warp. A sum over the whole tile is a
`tile_map` sum (its gradient is the seed broadcast back); the others are loops over the
elements in row-major order, inside a `tile_map` over the result, so their gradients follow
the elements each one picked (min/max: the first extreme element).
"""

from __future__ import annotations

from ...ir.core import Block, Value
from ...types import Matrix, Scalar, StructType, TileType, int32
from .. import arith
from ..registry import BUILTINS, builtin
from .args import tile_arg
from .core import TILE_GET, map_tiles, unravel


def _one(ctx, value: Value) -> Value:
    """A tile of shape (1,) holding `value`."""
    (t,) = map_tiles(ctx.b, (1,), [], lambda coords, elems, states: ([value], [], []))
    return t


def _sum_all(ctx, a: Value, element=lambda x: x) -> Value:
    (s,) = map_tiles(ctx.b, a.type.shape, [a], lambda coords, elems, states: ([], [element(elems[0])], []))
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


def _fold_all(ctx, a: Value, combine):
    """Combine the elements of `a` in row-major order, from the first."""
    t: TileType = a.type
    b = ctx.b

    def element(k):
        return b.call(TILE_GET, [a, *unravel(b, k, t.shape)])

    def body(coords, elems, states):
        first = element(b.const(0, int32))
        (result,) = loop(ctx, t.num_elements - 1, [first],
                         lambda k, acc: [combine(acc[0], element(b.add(k, b.const(1, int32))))])
        return [result], [], []
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
    return _reduce_axis(ctx, a, _axis(ctx, a, axis), lambda x, y: arith.binary(ctx, "add", x, y))


def _reduce_axis(ctx, a: Value, axis: int, combine):
    t: TileType = a.type
    out_shape = t.shape[:axis] + t.shape[axis + 1:] or (1,)
    b = ctx.b

    def body(coords, elems, states):
        def at(k):
            idx = list(coords[:axis]) + [k] + list(coords[axis:]) if t.ndim > 1 else [k]
            return b.call(TILE_GET, [a, *idx])
        first = at(b.const(0, int32))
        (r,) = loop(ctx, t.shape[axis] - 1, [first], lambda k, acc: [combine(acc[0], at(b.add(k, b.const(1, int32))))])
        return [r], [], []
    (r,) = map_tiles(b, out_shape, [], body)
    return r


@builtin("tile_dot")
def tile_dot(ctx, args, kwargs):
    """tile_dot(a, b): the sum of the products of corresponding elements (shape (1,))."""
    a, c = (tile_arg(ctx, x, "tile_dot's operands") for x in args[:2])
    if a.type.shape != c.type.shape:
        ctx.error(f"tile_dot: shapes differ ({a.type.shape} and {c.type.shape})", kind=ValueError)

    def body(coords, elems, states):
        x, y = elems
        if isinstance(x.type, Scalar):
            prod = arith.binary(ctx, "mul", x, y)
        else:  # vectors: dot; matrices: the sum of the products of their entries
            prod = ctx.call(BUILTINS["ddot" if isinstance(x.type, Matrix) else "dot"], [x, y], {}, None)
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
        return _fold_all(ctx, a, lambda acc, x: ctx.call(BUILTINS[pick], [acc, x], {}, None))
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
        b = ctx.b

        def body(coords, elems, states):
            best = b.call(TILE_GET, [a, *unravel(b, b.const(0, int32), t.shape)])

            def step(k, acc):
                value, index = acc
                j = b.add(k, b.const(1, int32))
                x = b.call(TILE_GET, [a, *unravel(b, j, t.shape)])
                better = b.cmp(pred, x, value)
                return [b.select(better, x, value), b.select(better, j, index)]
            _, index = loop(ctx, t.num_elements - 1, [best, b.const(0, int32)], step)
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
    if axis is None:
        return _fold_all(ctx, a, combine)
    return _reduce_axis(ctx, a, _axis(ctx, a, axis), combine)
