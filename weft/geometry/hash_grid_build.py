"""The kernels of a HashGrid build, on all cores: a counting sort of the points by cell.

1. `point_cells`: each point's cell (the queries' own cell arithmetic, so a point is
   always found in the cell its query visits) and its slot in that cell (an atomic count).
2. An exclusive prefix sum of the counts gives each cell's start (host, one pass).
3. `scatter`: each point's index lands at its cell's start plus its slot.
4. `sort_runs`: one thread per occupied cell puts its run in index order (by group, then index,
   for a grouped build): the order Warp's stable radix sort leaves.
The atomic slots make step 3's order arbitrary; step 4 makes the result deterministic.
Imported on the first build (kernel-language code needs the frontend).
"""

from __future__ import annotations

from typing import Any

import weft as wp

from ..builtins.hash_grid_funcs import _cell_coord, _wrap


@wp.kernel
def point_cells(points: wp.array(dtype=Any), inv: Any, dx: int, dy: int, dz: int, cells: wp.array(dtype=int),
                slots: wp.array(dtype=int), counts: wp.array(dtype=int)):
    i = wp.tid()
    p = points[i]
    cx = _wrap(_cell_coord(p[0] * inv), dx)
    cy = _wrap(_cell_coord(p[1] * inv), dy)
    cz = _wrap(_cell_coord(p[2] * inv), dz)
    c = cz * (dx * dy) + cy * dx + cx
    cells[i] = c
    slots[i] = wp.atomic_add(counts, c, 1)


@wp.kernel
def scatter(cells: wp.array(dtype=int), slots: wp.array(dtype=int), starts: wp.array(dtype=int),
            ids: wp.array(dtype=int)):
    i = wp.tid()
    ids[starts[cells[i]] + slots[i]] = i


@wp.func
def _key(groups: wp.array(dtype=wp.uint32), grouped: int, i: int):
    if grouped != 0:
        return groups[i]
    return wp.uint32(0)


@wp.kernel
def sort_runs(cells: wp.array(dtype=int), slots: wp.array(dtype=int), starts: wp.array(dtype=int),
              counts: wp.array(dtype=int), ids: wp.array(dtype=int), groups: wp.array(dtype=wp.uint32),
              grouped: int):
    i = wp.tid()
    if slots[i] != 0 or counts[cells[i]] < 2:
        return  # one thread per occupied cell: its first point's
    c = cells[i]
    lo = starts[c]
    hi = lo + counts[c]
    for k in range(lo + 1, hi):  # insertion sort: runs are short (the caller checks)
        v = ids[k]
        kv = _key(groups, grouped, v)
        j = k - 1
        moving = True
        while moving and j >= lo:
            u = ids[j]
            ku = _key(groups, grouped, u)
            if ku > kv or (ku == kv and u > v):
                ids[j + 1] = u
                j -= 1
            else:
                moving = False
        ids[j + 1] = v
