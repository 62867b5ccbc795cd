"""HashGrid queries in weft's kernel language (Warp's native/hashgrid.h, step for step).

A grid id is the address of the descriptor that geometry/hash_grid.py writes; these funcs
view its words and buffers as arrays (`wp.array(ptr=..., ...)`). A query visits the cells
of the box [p - r, p + r] (at most one wrap of the periodic grid per axis), x fastest,
and yields the original index of each point in them, in the build's sorted order; with a
group, only that group's run inside each cell. The caller checks distances itself.
For speed (same candidates, same order): a query keeps its cell coordinates wrapped into
the grid as it steps (no division per cell), and visits a row of cells that does not wrap
as the one run of points it is in the sorted order.

Imported on first use: kernel-language code needs the frontend, which imports the builtins.
"""

from __future__ import annotations

from typing import Any

import weft as wp

from ..geometry.hash_grid import (
    DIM_X,
    DIM_Y,
    DIM_Z,
    HAS_GROUPS,
    INV_F16,
    INV_F32,
    INV_F64,
    NUM_POINTS,
    PTR_CELL_ENDS,
    PTR_CELL_STARTS,
    PTR_GROUPS,
    PTR_POINT_IDS,
)
from .hash_grid import HashGridQuery
from .registry import Builtin
from .unchecked import expand_load

_WORDS = 12


# arr[i] without a bounds check, for the grid's own buffers: every index these funcs use is
# in range by construction (a descriptor word, a wrapped cell, a position inside a cell's
# run), and a checked load costs a fifth of a neighbour query.
_load = Builtin("hash_grid_load", expand_load, doc="an unchecked load of the grid's own data")


@wp.func
def _word(grid: wp.uint64, k: int):
    return _load(wp.array(ptr=grid, shape=_WORDS, dtype=wp.int64), k)


@wp.func
def _pointer(grid: wp.uint64, k: int):
    return wp.uint64(_load(wp.array(ptr=grid, shape=_WORDS, dtype=wp.int64), k))


@wp.func
def _inv_width(grid: wp.uint64, r: wp.float16):
    return wp.array(ptr=grid + wp.uint64(8 * INV_F16), shape=1, dtype=wp.float16)[0]


@wp.func
def _inv_width(grid: wp.uint64, r: wp.float32):  # noqa: F811 - an overload
    return wp.array(ptr=grid + wp.uint64(8 * INV_F32), shape=1, dtype=wp.float32)[0]


@wp.func
def _inv_width(grid: wp.uint64, r: wp.float64):  # noqa: F811 - an overload
    return wp.array(ptr=grid + wp.uint64(8 * INV_F64), shape=1, dtype=wp.float64)[0]


@wp.func
def _cell_coord(v: wp.float32):
    """floor(v) as an int32: past the top INT_MAX - 1, below the bottom INT_MIN, NaN 0."""
    c = wp.floor(v)
    if c >= 2147483648.0:
        return 2147483646
    if c >= -2147483648.0:
        return int(c)
    if c < -2147483648.0:
        return -2147483647 - 1
    return 0


@wp.func
def _cell_coord(v: wp.float16):  # noqa: F811 - an overload
    return _cell_coord(wp.float32(v))


@wp.func
def _cell_coord(v: wp.float64):  # noqa: F811 - an overload
    c = wp.floor(v)
    if c >= 2147483646.0:
        return 2147483646
    if c >= -2147483648.0:
        return int(c)
    if c < -2147483648.0:
        return -2147483647 - 1
    return 0


@wp.func
def _query_end(start: int, end: int, dim: int):
    """The last cell to visit: never more than `dim` cells (one period) from `start`."""
    if wp.int64(end) - wp.int64(start) >= wp.int64(dim):
        return start + (dim - 1)
    return end


@wp.func
def _wrap(c: int, dim: int):
    w = wp.mod(c, dim)
    if w < 0:
        w = w + dim
    return w


@wp.func
def _bound(keys: wp.array(dtype=wp.uint32), lo: int, hi: int, key: wp.uint32, strict: bool):
    """The first index in [lo, hi) whose key is >= key (> key if `strict`), or hi."""
    a = lo
    b = hi
    while a < b:
        mid = a + (b - a) // 2
        k = _load(keys, mid)
        if k < key or (strict and k == key):
            a = mid + 1
        else:
            b = mid
    return a


@wp.func
def _set_cell(q: HashGridQuery):
    """Point the query at the run of points of cell (q.x, q.y, q.z) (and of its group)."""
    start = 0
    end = 0
    grid = q.id
    if _word(grid, PTR_POINT_IDS) != 0:
        dx = int(_word(grid, DIM_X))
        dy = int(_word(grid, DIM_Y))
        dz = int(_word(grid, DIM_Z))
        cells = dx * dy * dz
        cell = q.wz * (dx * dy) + q.wy * dx + q.wx
        start = _load(wp.array(ptr=_pointer(grid, PTR_CELL_STARTS), shape=cells, dtype=wp.int32), cell)
        end = _load(wp.array(ptr=_pointer(grid, PTR_CELL_ENDS), shape=cells, dtype=wp.int32), cell + q.row_span)
        if q.row_span > 0:
            q.x = q.x_end
        if q.filter_by_group != 0 and _word(grid, HAS_GROUPS) != 0:
            groups = wp.array(ptr=_pointer(grid, PTR_GROUPS), shape=int(_word(grid, NUM_POINTS)), dtype=wp.uint32)
            g = wp.uint32(q.group)
            start = _bound(groups, start, end, g, False)
            end = _bound(groups, start, end, g, True)
    q.cell_index = start
    q.cell_end = end
    return q


@wp.func
def query(grid: wp.uint64, p: Any, radius: Any, group: int, filter_by_group: int):
    q = HashGridQuery()
    q.id = grid
    q.group = group
    q.filter_by_group = filter_by_group
    inv = _inv_width(grid, radius)
    dx = int(_word(grid, DIM_X))
    dy = int(_word(grid, DIM_Y))
    dz = int(_word(grid, DIM_Z))
    q.x_start = _cell_coord((p[0] - radius) * inv)
    q.y_start = _cell_coord((p[1] - radius) * inv)
    q.z_start = _cell_coord((p[2] - radius) * inv)
    q.x_end = _query_end(q.x_start, _cell_coord((p[0] + radius) * inv), dx)
    q.y_end = _query_end(q.y_start, _cell_coord((p[1] + radius) * inv), dy)
    q.z_end = _query_end(q.z_start, _cell_coord((p[2] + radius) * inv), dz)
    q.x = q.x_start
    q.y = q.y_start
    q.z = q.z_start
    if _word(grid, PTR_POINT_IDS) != 0:  # (a grid deleted or never built may have no dims)
        q.wx_start = _wrap(q.x_start, dx)
        q.wy_start = _wrap(q.y_start, dy)
        q.wx = q.wx_start
        q.wy = q.wy_start
        q.wz = _wrap(q.z_start, dz)
        # The build stores the cells' runs one after the other in cell order (each cell's
        # run ends where the next one's starts), so the cells of a row that does not wrap
        # around the grid are one run: a query without a group visits them in one go.
        span = q.x_end - q.x_start
        if span > 0 and q.wx_start + span < dx and (filter_by_group == 0 or _word(grid, HAS_GROUPS) == 0):
            q.row_span = span
    return _set_cell(q)


@wp.func
def _step(w: int, dim: int):
    """The wrapped coordinate after w (0 after the last cell of the axis)."""
    n = w + 1
    if n >= dim:
        n = 0
    return n


@wp.func
def query_next(q: HashGridQuery, index: int):
    """(found, the advanced query, the next point's index or `index` unchanged)."""
    found = False
    out = index
    grid = q.id
    if _word(grid, PTR_POINT_IDS) != 0:
        ids = wp.array(ptr=_pointer(grid, PTR_POINT_IDS), shape=int(_word(grid, NUM_POINTS)), dtype=wp.int32)
        searching = True
        while searching:
            if q.cell_index < q.cell_end:
                out = _load(ids, q.cell_index)
                q.cell_index = q.cell_index + 1
                found = True
                searching = False
            else:
                q.x = q.x + 1
                q.wx = _step(q.wx, int(_word(grid, DIM_X)))
                if q.x > q.x_end:
                    q.x = q.x_start
                    q.wx = q.wx_start
                    q.y = q.y + 1
                    q.wy = _step(q.wy, int(_word(grid, DIM_Y)))
                if q.y > q.y_end:
                    q.y = q.y_start
                    q.wy = q.wy_start
                    q.z = q.z + 1
                    q.wz = _step(q.wz, int(_word(grid, DIM_Z)))
                if q.z > q.z_end:
                    searching = False
                else:
                    q = _set_cell(q)
    return found, q, out


@wp.func
def point_id(grid: wp.uint64, index: int):
    """The original index of the point at `index` in the sorted order; -1 out of range
    or before a build."""
    n = int(_word(grid, NUM_POINTS))
    if _word(grid, PTR_POINT_IDS) == 0 or index < 0 or index >= n:
        return -1
    return _load(wp.array(ptr=_pointer(grid, PTR_POINT_IDS), shape=n, dtype=wp.int32), index)
