"""Elementwise tile operations: operators between tiles and with scalars (`a + b`, `2.0 * t`,
`-t`), `tile_map` with a builtin or a user func, `tile_astype`, `tile_axpy`.

Each is one `tile_map` whose body is the scalar code for one element, emitted by the same
frontend calls as outside tiles, so types, promotion and user funcs behave as they do on
scalars, and the gradient is the body's.
"""

from __future__ import annotations

from ...ir.core import Value
from ...types import Matrix, TileType, Vector
from .. import arith
from ..registry import builtin
from .args import dtype_arg, tile_arg
from .core import map_tiles


def _shape_of(ctx, tiles, what):
    shapes = {t.type.shape for t in tiles}
    if len(shapes) != 1:
        ctx.error(f"{what}: tile shapes differ ({', '.join(str(s) for s in sorted(shapes))}); use "
                  "tile_broadcast to match them", kind=ValueError)
    return shapes.pop()


def elementwise(ctx, fn, operands, what):
    """`fn(*elements)` per element; operands that are not tiles are the same for every
    element (a scalar broadcast). Returns the result tile."""
    tiles = [x for x in operands if isinstance(x, Value) and isinstance(x.type, TileType)]
    shape = _shape_of(ctx, tiles, what)

    def body(coords, elems, states):
        it = iter(elems)
        args = [next(it) if isinstance(x, Value) and isinstance(x.type, TileType) else x for x in operands]
        out = fn(*args)
        if not isinstance(out, Value):
            out = ctx.materialize(out)
        return [out], [], []

    (t,) = map_tiles(ctx.b, shape, tiles, body)
    return t


def _describe(x):
    if isinstance(x, Value) and isinstance(x.type, TileType):
        return f"tile<{x.type.dtype!r}>"
    return repr(x.type) if isinstance(x, Value) else type(x).__name__


def _element_type(x):
    if isinstance(x, Value):
        return x.type.dtype if isinstance(x.type, TileType) else x.type
    return None  # a Python number


def binary(ctx, op, a, b):
    """`a <op> b` where one or both are tiles."""
    if op in ("mul", "div"):
        ta, tb = _element_type(a), _element_type(b)
        composite = (Vector, Matrix)
        if isinstance(ta, composite) and isinstance(tb, composite) and not (op == "mul" and isinstance(ta, Matrix)):
            verb = "multiply" if op == "mul" else "divide"
            ctx.error(f"Cannot {verb} {_describe(a)} by {_describe(b)}: at least one operand must be a scalar "
                      "type (an element type must be scalar)", kind=TypeError)
    return elementwise(ctx, lambda x, y: arith.binary(ctx, op, x, y), [a, b], f"tile '{op}'")


def unary(ctx, kind, v):
    return elementwise(ctx, lambda x: arith.unary(ctx, kind, x), [v], f"tile '{kind}'")


@builtin("tile_map")
def tile_map(ctx, args, kwargs):
    """tile_map(op, a, b=None): op applied to each element (pair of elements)."""
    if not args:
        ctx.error("tile_map(op, a, ...) needs a function and a tile", kind=TypeError)
    op, *operands = args
    operands += [kwargs[k] for k in ("a", "b") if k in kwargs]
    if not any(isinstance(x, Value) and isinstance(x.type, TileType) for x in operands):
        ctx.error("tile_map needs at least one tile", kind=TypeError)
    # operands that are not tiles (a constant, a vector) are the same for every element
    return elementwise(ctx, lambda *xs: ctx.call(op, list(xs), {}, None), operands, "tile_map")


@builtin("tile_astype")
def tile_astype(ctx, args, kwargs):
    """tile_astype(t, dtype): each element converted to dtype."""
    t = tile_arg(ctx, args[0] if args else kwargs.get("t"), "tile_astype's tile")
    dtype = dtype_arg(ctx, args[1] if len(args) > 1 else kwargs.get("dtype"))
    return elementwise(ctx, lambda x: arith.construct(ctx, dtype, [x], {}), [t], "tile_astype")


@builtin("tile_axpy", inout=(2,))
def tile_axpy(ctx, args, kwargs):
    """tile_axpy(alpha, src, dest): dest += alpha * src (dest is updated in place)."""
    alpha, src, dest = args
    tile_arg(ctx, src, "tile_axpy's src")
    tile_arg(ctx, dest, "tile_axpy's dest")
    new = elementwise(ctx, lambda s, d: arith.binary(ctx, "add", d, arith.binary(ctx, "mul", alpha, s)),
                      [src, dest], "tile_axpy")
    return [new], None
