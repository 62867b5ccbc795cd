"""The kernels of marching-cubes extraction (geometry/marching_cubes.py): one vertex per grid
edge that the surface crosses, then the triangles of each cell, both in two passes (count,
then write at offsets from a prefix sum). Imported on first use: kernel code needs the
frontend."""

from __future__ import annotations

import weft as wp


@wp.func
def _crossed(a: float, b: float, threshold: float):
    return (a >= threshold) != (b >= threshold)


@wp.kernel(enable_backward=False)
def count_edge_vertices(field: wp.array3d(dtype=wp.float32), threshold: wp.float32,
                        counts: wp.array(dtype=wp.int32)):
    """counts[edge] = 1 where the grid edge (node i, j, k; axis) crosses the surface."""
    i, j, k, axis = wp.tid()
    nx, ny, nz = field.shape[0], field.shape[1], field.shape[2]
    i1 = i + wp.where(axis == 0, 1, 0)
    j1 = j + wp.where(axis == 1, 1, 0)
    k1 = k + wp.where(axis == 2, 1, 0)
    flag = 0
    if i1 < nx and j1 < ny and k1 < nz:
        if _crossed(field[i, j, k], field[i1, j1, k1], threshold):
            flag = 1
    counts[((i * ny + j) * nz + k) * 3 + axis] = flag


@wp.kernel
def write_edge_vertices(field: wp.array3d(dtype=wp.float32), threshold: wp.float32, lower: wp.vec3,
                        delta: wp.vec3, ends: wp.array(dtype=wp.int32), verts: wp.array(dtype=wp.vec3),
                        edge_vertex: wp.array4d(dtype=wp.int32)):
    """Each crossed edge's vertex, where the linear interpolation of the field along the edge
    meets the threshold; edge_vertex[i, j, k, axis] = its index (-1: none). `ends` is the
    inclusive prefix sum of count_edge_vertices. Differentiable in `field`."""
    i, j, k, axis = wp.tid()
    nx, ny, nz = field.shape[0], field.shape[1], field.shape[2]
    i1 = i + wp.where(axis == 0, 1, 0)
    j1 = j + wp.where(axis == 1, 1, 0)
    k1 = k + wp.where(axis == 2, 1, 0)
    index = -1
    if i1 < nx and j1 < ny and k1 < nz:
        a = field[i, j, k]
        b = field[i1, j1, k1]
        if _crossed(a, b, threshold):
            index = ends[((i * ny + j) * nz + k) * 3 + axis] - 1
            t = wp.clamp((threshold - a) / (b - a), 0.0, 1.0)
            p0 = lower + wp.cw_mul(wp.vec3(float(i), float(j), float(k)), delta)
            p1 = lower + wp.cw_mul(wp.vec3(float(i1), float(j1), float(k1)), delta)
            verts[index] = wp.lerp(p0, p1, t)
    edge_vertex[i, j, k, axis] = index


@wp.func
def _case_code(field: wp.array3d(dtype=wp.float32), i: int, j: int, k: int, threshold: float):
    # corner bit c: the corner at CUBE_CORNER_OFFSETS[c] is >= threshold
    code = 0
    if field[i, j, k] >= threshold:
        code = code | 1
    if field[i + 1, j, k] >= threshold:
        code = code | 2
    if field[i + 1, j + 1, k] >= threshold:
        code = code | 4
    if field[i, j + 1, k] >= threshold:
        code = code | 8
    if field[i, j, k + 1] >= threshold:
        code = code | 16
    if field[i + 1, j, k + 1] >= threshold:
        code = code | 32
    if field[i + 1, j + 1, k + 1] >= threshold:
        code = code | 64
    if field[i, j + 1, k + 1] >= threshold:
        code = code | 128
    return code


@wp.kernel(enable_backward=False)
def count_cell_triangles(field: wp.array3d(dtype=wp.float32), threshold: wp.float32,
                         case_range: wp.array(dtype=wp.int32), counts: wp.array(dtype=wp.int32)):
    i, j, k = wp.tid()
    ny, nz = field.shape[1] - 1, field.shape[2] - 1
    code = _case_code(field, i, j, k, threshold)
    counts[(i * ny + j) * nz + k] = (case_range[code + 1] - case_range[code]) // 3


@wp.kernel(enable_backward=False)
def write_cell_triangles(field: wp.array3d(dtype=wp.float32), threshold: wp.float32,
                         case_range: wp.array(dtype=wp.int32), tri_edges: wp.array(dtype=wp.int32),
                         edge_offsets: wp.array2d(dtype=wp.int32), edge_vertex: wp.array4d(dtype=wp.int32),
                         ends: wp.array(dtype=wp.int32), indices: wp.array(dtype=wp.int32)):
    """The cell's triangles at 3 * (first triangle of the cell) in `indices`, as vertex
    indices; `ends` is the inclusive prefix sum of count_cell_triangles."""
    i, j, k = wp.tid()
    ny, nz = field.shape[1] - 1, field.shape[2] - 1
    code = _case_code(field, i, j, k, threshold)
    begin = case_range[code]
    n = case_range[code + 1] - begin
    out = 3 * ends[(i * ny + j) * nz + k] - n
    for s in range(n):
        e = tri_edges[begin + s]
        indices[out + s] = edge_vertex[i + edge_offsets[e, 0], j + edge_offsets[e, 1], k + edge_offsets[e, 2],
                                       edge_offsets[e, 3]]
