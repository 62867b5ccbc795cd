"""Sparse marching cubes (Warp's `warp.geometry.sparse_marching_cubes`, `lipschitz_octree`,
`sparse_marching_cubes_from_cells`): an iso-surface of an implicit function found without a
dense grid.

`lipschitz_octree` refines an octree from one root box: a cell of size h whose centre value c
satisfies |c - threshold| > L * |h| / 2 (L a bound on the field's Lipschitz constant) cannot
contain the level set and is dropped; the others split into 8 children, down to `max_depth`.
`sparse_marching_cubes_from_cells` runs marching cubes on a given set of cells with values at
their corners: corners and edges shared by cells are found once, so the mesh is connected and
watertight where the cells are, with the vertices, triangles and winding of dense marching
cubes (geometry/marching_cubes.py) on the same grid. `sparse_marching_cubes` combines both
on the grid of `nx * ny * nz` nodes that dense extraction would sample.

The field is a batched callable `evaluate(points: array of vec3) -> array of float32`. Vertex
positions are differentiable in the corner values (a Tape records the gather of corner values
and the vertex kernel); cell selection and triangles are discrete.
"""

from __future__ import annotations

import math

import numpy as np

from . import mc_tables

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def _edge_ends():
    """(lower corner, upper corner, axis) of each cube edge, its lower corner being the one
    with the smaller coordinate along the edge: (lower corner's node, axis) names the edge
    in every cell that has it."""
    lower, upper, axis = [], [], []
    for a, b in mc_tables.EDGE_TO_CORNERS:
        pa, pb = mc_tables.CUBE_CORNER_OFFSETS[a], mc_tables.CUBE_CORNER_OFFSETS[b]
        ax = next(d for d in range(3) if pa[d] != pb[d])
        lo, hi = (a, b) if pa[ax] < pb[ax] else (b, a)
        lower.append(lo)
        upper.append(hi)
        axis.append(ax)
    return np.array(lower), np.array(upper), np.array(axis)


def _kernels():
    from . import sparse_mc_kernels
    return sparse_mc_kernels


def _resolve_device(device):
    from ..runtime.device import get_device
    return get_device(device)


def _evaluator(field, where: str):
    """`field` checked to be a batched callable; the returned wrapper checks each result."""
    from ..lang.function import Func
    from ..runtime.array import array
    from ..types import float32
    if isinstance(field, Func):
        raise TypeError(f"{where}: 'field' must be a batched callable evaluate(points: wp.array(dtype=wp.vec3)) -> "
                        "wp.array(dtype=wp.float32), not a single-point @wp.func; evaluate the function over the "
                        "points in a kernel and return the values array.")
    if not callable(field):
        raise TypeError(f"{where}: 'field' must be a callable mapping a wp.array of vec3 points to a wp.array of "
                        f"float32 values, got {type(field).__name__}.")

    def evaluate(points):
        values = field(points)
        if not isinstance(values, array):
            raise TypeError(f"{where}: the field callable must return a wp.array of float32 values, "
                            f"got {type(values).__name__}.")
        if values.shape[0] != points.shape[0]:
            raise ValueError(f"{where}: the field callable returned {values.shape[0]} values for "
                             f"{points.shape[0]} points.")
        if str(values.device) != str(points.device):
            raise ValueError(f"{where}: the field callable returned values on device '{values.device}' for points "
                             f"on device '{points.device}'.")
        if values.dtype != float32:
            raise TypeError(f"{where}: the field callable must return float32 values, got {values.dtype}.")
        return values
    return evaluate


def _octree(evaluate, origin, root_width, max_depth, threshold, lipschitz_bound, device):
    """int32 (n, 3) array of the leaf cells at depth `max_depth` that may hold the level set
    (none: an empty array). `root_width`: the root box's three side lengths."""
    from ..runtime.array import array
    from ..runtime.array_create import empty
    from ..runtime.launch import launch
    from ..types import vec3, vec3i
    k = _kernels()
    cells = np.zeros((1, 3), dtype=np.int32)
    children = np.array([[c & 1, (c >> 1) & 1, (c >> 2) & 1] for c in range(8)], dtype=np.int32)
    for depth in range(max_depth + 1):
        width = np.float32(root_width) / np.float32(1 << depth)
        # the field changes by at most L times the distance from the centre to a corner
        band = np.float32(lipschitz_bound) * np.float32(0.5) * np.float32(
            math.sqrt(float(np.dot(width.astype(np.float64), width.astype(np.float64)))))
        cells_wp = array(cells, dtype=vec3i, device=device)
        centers = empty(cells.shape[0], dtype=vec3, device=device)
        launch(k.cell_centers, cells.shape[0], inputs=[cells_wp, vec3(*origin), vec3(*width.tolist())],
               outputs=[centers], device=device, record_tape=False)
        values = evaluate(centers).numpy()
        keep = np.abs(values - np.float32(threshold)) <= band
        cells = cells[keep]
        if cells.shape[0] == 0 or depth == max_depth:
            return cells
        cells = (2 * cells[:, None, :] + children[None, :, :]).reshape(-1, 3)
    return cells


def lipschitz_octree(field, origin, root_width: float, max_depth: int, threshold: float = 0.0,
                     lipschitz_bound: float = 1.0, device=None):
    """(cells, cell_width): the vec3i subscripts of the depth-`max_depth` cells of the cubic
    box [origin, origin + root_width] that may contain the `threshold` level set of `field`
    (cell (i, j, k) spans origin + cell_width * [(i, j, k), (i + 1, j + 1, k + 1)]), and
    cell_width = root_width / 2**max_depth. Not differentiable (a discrete search)."""
    from ..runtime.array import array
    from ..types import vec3i
    if max_depth < 0:
        raise ValueError(f"lipschitz_octree: max_depth must be non-negative, got {max_depth}.")
    if not root_width > 0.0:
        raise ValueError(f"lipschitz_octree: root_width must be positive, got {root_width}.")
    if lipschitz_bound < 0.0:
        raise ValueError(f"lipschitz_octree: lipschitz_bound must be non-negative, got {lipschitz_bound}.")
    device = _resolve_device(device)
    evaluate = _evaluator(field, "lipschitz_octree")
    origin = tuple(float(c) for c in origin)
    root = np.full(3, root_width, dtype=np.float32)
    cells = _octree(evaluate, origin, root, int(max_depth), float(threshold), float(lipschitz_bound), device)
    return array(np.ascontiguousarray(cells), dtype=vec3i, device=device), float(root_width) / float(1 << max_depth)


class _Corners:
    """The unique corners of a set of cells: `of_cell` (n, 8) unique index of each cell
    corner (CUBE_CORNER_OFFSETS order), `nodes` (u, 3) int64 subscripts relative to `lo`, and
    `source` the first flat cell * 8 + corner entry naming each."""

    def __init__(self, cells: np.ndarray):
        offsets = np.asarray(mc_tables.CUBE_CORNER_OFFSETS, dtype=np.int64)
        cells = cells.astype(np.int64)
        self.lo = cells.min(axis=0)
        stride = int((cells.max(axis=0) - self.lo).max()) + 2
        if stride ** 3 >= 2 ** 63:
            raise ValueError(f"sparse marching cubes: the cell subscripts span {stride} nodes on an axis, too many "
                             "to number the corners with 64-bit integers.")
        rel = (cells - self.lo)[:, None, :] + offsets[None, :, :]
        codes = ((rel[..., 0] * stride + rel[..., 1]) * stride + rel[..., 2]).reshape(-1)
        unique, self.source, inverse = np.unique(codes, return_index=True, return_inverse=True)
        self.of_cell = inverse.reshape(-1, 8)
        self.nodes = np.stack([unique // (stride * stride), (unique // stride) % stride, unique % stride], axis=1)

    def positions(self, origin, width):
        """float32 (u, 3) positions: node n at (origin + width * lo) + width * n (the offset
        folded into the base in double precision, so large subscripts keep their spacing)."""
        base = (np.asarray(origin, dtype=np.float64) + np.asarray(width, dtype=np.float64) * self.lo)
        return base.astype(np.float32) + self.nodes.astype(np.float32) * np.asarray(width, dtype=np.float32)


def _empty(device, requires_grad=False):
    from ..runtime.array_create import empty
    from ..types import int32, vec3
    return empty(0, dtype=vec3, device=device, requires_grad=requires_grad), empty(0, dtype=int32, device=device)


def _extract(corners: _Corners, positions_np, values, threshold, device):
    """Marching cubes on the cells of `corners`, with `values` (float32 array, one per unique
    corner) the field at the corners: (verts, flat int32 triangle indices)."""
    from ..runtime.array import array
    from ..runtime.array_create import empty
    from ..runtime.launch import launch
    from ..types import int32, vec3
    threshold = np.float32(threshold)
    v = values.numpy()
    above = v[corners.of_cell] >= threshold  # (n, 8)
    lower, upper, axis = _edge_ends()
    lo_u = corners.of_cell[:, lower]  # (n, 12) unique corner at each edge's lower end
    hi_u = corners.of_cell[:, upper]
    crossed = above[:, lower] != above[:, upper]
    keys = lo_u * 3 + axis[None, :]  # an edge: its lower corner and its axis
    edge_keys, first = np.unique(keys[crossed], return_index=True)
    if edge_keys.shape[0] == 0:
        return _empty(device, values.requires_grad)
    ends_lo = lo_u[crossed][first].astype(np.int32)
    ends_hi = hi_u[crossed][first].astype(np.int32)
    verts = empty(edge_keys.shape[0], dtype=vec3, device=device, requires_grad=values.requires_grad)
    launch(_kernels().edge_vertices, edge_keys.shape[0],
           inputs=[array(positions_np, dtype=vec3, device=device), values, array(ends_lo, dtype=int32, device=device),
                   array(ends_hi, dtype=int32, device=device), float(threshold)],
           outputs=[verts], device=device)

    # triangles: each cell's case (bit c: corner c >= threshold) picks edges from the tables
    case = (above.astype(np.int64) << np.arange(8)[None, :]).sum(axis=1)
    ranges = np.asarray(mc_tables.CASE_TO_TRI_RANGE, dtype=np.int64)
    tri_edges = np.asarray(mc_tables.TRI_LOCAL_INDICES, dtype=np.int64)
    begin, count = ranges[case], ranges[case + 1] - ranges[case]
    cell_of = np.repeat(np.arange(case.shape[0]), count)
    within = np.arange(cell_of.shape[0]) - np.repeat(np.cumsum(count) - count, count)
    edge = tri_edges[begin[cell_of] + within]
    indices = np.searchsorted(edge_keys, keys[cell_of, edge]).astype(np.int32)
    return verts, array(indices, dtype=int32, device=device)


def _as_cells(cells) -> np.ndarray:
    from ..runtime.array import array
    if isinstance(cells, array):
        cells = cells.numpy()
    cells = np.asarray(cells)
    if cells.size % 3 or (cells.ndim > 1 and cells.shape[-1] != 3):
        raise ValueError(f"sparse_marching_cubes_from_cells: 'cells' must be (N, 3) integer subscripts, got shape "
                         f"{cells.shape}.")
    if cells.size and (cells.min() < _INT32_MIN or cells.max() > _INT32_MAX):
        raise ValueError("sparse_marching_cubes_from_cells: 'cells' subscripts must fit in int32.")
    return np.ascontiguousarray(cells, dtype=np.int32).reshape(-1, 3)


def sparse_marching_cubes_from_cells(cells, corner_values, origin=(0.0, 0.0, 0.0), cell_width: float = 1.0,
                                     threshold: float = 0.0, device=None):
    """(verts, indices): marching cubes on the cells `cells` ((N, 3) subscripts: cell (i, j, k)
    spans origin + cell_width * [(i, j, k), (i + 1, j + 1, k + 1)]), with `corner_values`
    ((N, 8) or N * 8 float32, corners in CUBE_CORNER_OFFSETS order; shared corners should
    agree) the field at their corners. Differentiable in `corner_values`: each shared corner
    reads (and passes its gradient to) the entry of the first cell that has it."""
    from ..runtime.array import array
    from ..runtime.array_create import empty
    from ..runtime.launch import launch
    from ..types import float32, int32
    if not cell_width > 0.0:
        raise ValueError(f"sparse_marching_cubes_from_cells: 'cell_width' must be positive, got {cell_width}.")
    device = _resolve_device(device)
    cells_np = _as_cells(cells)
    n = cells_np.shape[0]
    if isinstance(corner_values, array):
        values = corner_values if str(corner_values.device) == str(device) else corner_values.to(device)
        if values.dtype != float32:
            raise ValueError(f"sparse_marching_cubes_from_cells: 'corner_values' must be float32, got {values.dtype}.")
    else:
        values = array(np.ascontiguousarray(corner_values, dtype=np.float32), dtype=float32, device=device)
    if values.size != 8 * n:
        raise ValueError(f"sparse_marching_cubes_from_cells: 'corner_values' must have {8 * n} entries for {n} "
                         f"cells, got {values.size}.")
    if n == 0:
        return _empty(device)
    corners = _Corners(cells_np)
    unique = empty(corners.source.shape[0], dtype=float32, device=device, requires_grad=values.requires_grad)
    source = array(corners.source.astype(np.int32), dtype=int32, device=device)
    k = _kernels()
    if values.ndim == 2 and values.shape[1] == 8:
        launch(k.gather_rows, unique.shape[0], inputs=[values, source], outputs=[unique], device=device)
    else:
        if values.ndim != 1:
            values = values.contiguous().reshape((8 * n,)) if not values.is_contiguous else values.reshape((8 * n,))
        launch(k.gather_flat, unique.shape[0], inputs=[values, source], outputs=[unique], device=device)
    width = np.full(3, cell_width, dtype=np.float64)
    return _extract(corners, corners.positions(tuple(float(c) for c in origin), width), unique, threshold, device)


def sparse_marching_cubes(field, nx: int, ny: int, nz: int, *, lower=None, upper=None, threshold: float = 0.0,
                          lipschitz_bound: float = 1.0, device=None, return_stats: bool = False):
    """(verts, indices[, stats]): the `threshold` surface of the batched field `field` on the grid
    of nx * ny * nz nodes from `lower` to `upper` (as IsoSurfaceMarchingCubes.extract samples
    it, and with the same triangles), sampling it only near the surface: a Lipschitz octree
    over a power-of-two box of cells covering the grid picks the cells, then the field is
    evaluated at their unique corners. `stats`: leaf_cells, unique_corners,
    field_evaluations, resolution, requested_ncells, culled_cells."""
    from ..runtime.array import array
    from ..types import vec3
    from .iso_surface import resolve_domain_bounds
    if nx < 2 or ny < 2 or nz < 2:
        raise ValueError(f"sparse_marching_cubes: nx, ny, nz must each be at least 2, got ({nx}, {ny}, {nz}).")
    if lipschitz_bound < 0.0:
        raise ValueError(f"sparse_marching_cubes: lipschitz_bound must be non-negative, got {lipschitz_bound}.")
    device = _resolve_device(device)
    evaluate = _evaluator(field, "sparse_marching_cubes")
    origin, delta = resolve_domain_bounds((nx, ny, nz), lower, upper)
    ncells = (nx - 1, ny - 1, nz - 1)
    max_depth = (max(ncells) - 1).bit_length()
    resolution = 1 << max_depth
    delta = np.array([delta[0], delta[1], delta[2]], dtype=np.float32)
    stats = {"leaf_cells": 0, "unique_corners": 0, "field_evaluations": 0, "resolution": resolution,
             "requested_ncells": ncells, "culled_cells": 0}
    evaluations = [0]

    def counted(points):
        evaluations[0] += points.shape[0]
        return evaluate(points)

    def finish(result):
        stats["field_evaluations"] = evaluations[0]
        return (*result, stats) if return_stats else result

    origin = tuple(float(c) for c in origin)
    cells = _octree(counted, origin, delta * np.float32(resolution), max_depth, float(threshold),
                    float(lipschitz_bound), device)
    inside = np.all(cells < np.array(ncells, dtype=np.int32)[None, :], axis=1)
    stats["culled_cells"] = int(cells.shape[0] - inside.sum())
    cells = cells[inside]
    if cells.shape[0] == 0:
        return finish(_empty(device))
    stats["leaf_cells"] = int(cells.shape[0])
    corners = _Corners(cells)
    stats["unique_corners"] = int(corners.nodes.shape[0])
    positions = corners.positions(origin, delta.astype(np.float64))
    values = counted(array(positions, dtype=vec3, device=device))
    return finish(_extract(corners, positions, values, threshold, device))
