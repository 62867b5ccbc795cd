"""The parallel part of a HashGrid build: each point's cell, by a kernel on all cores.

The kernel uses the same cell arithmetic as the queries (builtins/hash_grid_funcs.py),
so a point is always found in the cell its query visits. Imported on the first build
(kernel-language code needs the frontend).
"""

from __future__ import annotations

from typing import Any

import weft as wp

from ..builtins.hash_grid_funcs import _cell_coord, _wrap


@wp.kernel
def point_cells(points: wp.array(dtype=Any), inv: Any, dx: int, dy: int, dz: int, cells: wp.array(dtype=int)):
    i = wp.tid()
    p = points[i]
    cx = _wrap(_cell_coord(p[0] * inv), dx)
    cy = _wrap(_cell_coord(p[1] * inv), dy)
    cz = _wrap(_cell_coord(p[2] * inv), dz)
    cells[i] = cz * (dx * dy) + cy * dx + cx
