"""HashGrid builtins: `hash_grid_query`, `hash_grid_query_next`, `hash_grid_point_id`.

A query is a value of the struct type `HashGridQuery` (the grid id, the box of cells to
visit, the cell being visited and the run of points left in it). `hash_grid_query_next`
advances it and the index variable in place (both arguments are `inout`), and
`for index in query:` iterates it (lang/statements.py lowers the loop to
`while True: if not hash_grid_query_next(q, i): break ...` through ITERATORS below).
The work is done by kernel-language funcs in hash_grid_funcs.py.
"""

from __future__ import annotations

from ..ir.core import Value
from ..types import StructType, Vector, float16, float32, float64, int32, uint64
from .arguments import as_int32, as_object_id, kernel_funcs
from .registry import BUILTINS, builtin


class _QueryFields:
    id: uint64
    x_start: int32
    y_start: int32
    z_start: int32
    x_end: int32
    y_end: int32
    z_end: int32
    x: int32
    y: int32
    z: int32
    wx_start: int32  # x_start and y_start wrapped into the grid
    wy_start: int32
    wx: int32  # x, y and z wrapped into the grid (kept as they advance: no division per cell)
    wy: int32
    wz: int32
    row_span: int32  # > 0: each row of cells x_start .. x_end is one run (see hash_grid_funcs)
    cell_index: int32
    cell_end: int32
    group: int32
    filter_by_group: int32


_QueryFields.__name__ = _QueryFields.__qualname__ = "HashGridQuery"


class _HashGridQueryType(StructType):
    """The query struct; `HashGridQuery[wp.float16]` (Warp's per-precision spelling) is
    the same type: a query holds no coordinates."""

    def __getitem__(self, dtype):
        if dtype not in (float16, float32, float64, float):
            raise TypeError(f"HashGridQuery[{dtype!r}]: the precision must be float16, float32 or float64")
        return self


HashGridQuery = _HashGridQueryType(_QueryFields)

# Types a kernel can iterate with `for x in value:` -> the name of the builtin that
# advances it (called as next(value, index), both updated in place), and the index type.
ITERATORS: dict = {HashGridQuery: ("hash_grid_query_next", int32)}

_funcs = kernel_funcs(".hash_grid_funcs")


def _grid_id(ctx, x, name):
    return as_object_id(ctx, x, name, "grid id", "HashGrid.id")


@builtin("hash_grid_query")
def hash_grid_query(ctx, args, kwargs):
    """hash_grid_query(id, point, max_dist[, group]): a query over the points in the cells
    that the box of half-width max_dist around `point` touches (vec3 of float16, float32
    or float64, as the grid); with `group`, only the points built with that group id."""
    names = ("id", "point", "max_dist", "group")
    if len(args) > 4 or any(k not in names[len(args):] for k in kwargs):
        ctx.error("hash_grid_query(id, point, max_dist[, group])")
    given = dict(zip(names, args), **kwargs)
    if any(n not in given for n in names[:3]):
        ctx.error("hash_grid_query() needs id, point and max_dist")
    grid = _grid_id(ctx, given["id"], "hash_grid_query")
    p = given["point"]
    if not (isinstance(p, Value) and isinstance(p.type, Vector) and p.type.length == 3
            and p.type.flavor == "vec" and p.type.dtype in (float16, float32, float64)):
        ctx.error("hash_grid_query(): the point must be a vec3 of float16, float32 or float64, got "
                  f"{p.type!r}" if isinstance(p, Value) else f"{p!r}")
    radius = ctx.coerce(given["max_dist"], p.type.dtype, what="hash_grid_query() max_dist")
    if "group" in given:
        group, filtered = as_int32(ctx, given["group"], "hash_grid_query() group"), ctx.b.const(1, int32)
    else:
        group, filtered = ctx.b.const(0, int32), ctx.b.const(0, int32)
    return _funcs().query.emit_call(ctx, [grid, p, radius, group, filtered], {}, None)


@builtin("hash_grid_query_next", inout=(0, 1))
def hash_grid_query_next(ctx, args, kwargs):
    """hash_grid_query_next(query, index): advance the query; True and the next point's
    index in `index`, or False once every candidate was visited."""
    if kwargs or len(args) != 2:
        ctx.error("hash_grid_query_next(query, index) takes a query and an int variable")
    q, index = args
    if not (isinstance(q, Value) and q.type is HashGridQuery):
        ctx.error("hash_grid_query_next(): the first argument must be a query from hash_grid_query()")
    if not (isinstance(index, Value) and index.type is int32):
        ctx.error("hash_grid_query_next(): the index must be an int32 variable")
    result = _funcs().query_next.emit_call(ctx, [q, index], {}, None)
    b = ctx.b
    return [b.extract(result, 1), b.extract(result, 2)], b.extract(result, 0)


@builtin("hash_grid_point_id")
def hash_grid_point_id(ctx, args, kwargs):
    """hash_grid_point_id(id, index): the original index of the point at position `index`
    of the grid's cell-sorted order (threads launched in this order visit memory in
    spatial order); -1 before a build or out of range."""
    if kwargs or len(args) != 2:
        ctx.error("hash_grid_point_id(id, index)")
    grid = _grid_id(ctx, args[0], "hash_grid_point_id")
    index = as_int32(ctx, args[1], "hash_grid_point_id() index")
    return _funcs().point_id.emit_call(ctx, [grid, index], {}, None)


def iterator_next(t):
    """(the builtin that advances a value of type `t`, its index type), or None."""
    spec = ITERATORS.get(t)
    return None if spec is None else (BUILTINS[spec[0]], spec[1])
