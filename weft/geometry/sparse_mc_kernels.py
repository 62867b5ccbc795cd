"""Kernels of sparse marching cubes (geometry/sparse_marching_cubes.py). The index work
(de-duplicating corners and edges, picking triangles) is discrete and done on the host; the
kernels here are the octree's cell centres and the two differentiable steps: gathering one
value per unique corner and placing a vertex on each crossed edge."""

from __future__ import annotations

import weft as wp


@wp.kernel(enable_backward=False)
def cell_centers(cells: wp.array(dtype=wp.vec3i), origin: wp.vec3, width: wp.vec3, centers: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    c = cells[i]
    centers[i] = origin + wp.cw_mul(width, wp.vec3(float(c[0]) + 0.5, float(c[1]) + 0.5, float(c[2]) + 0.5))


@wp.kernel
def gather_rows(values: wp.array2d(dtype=wp.float32), source: wp.array(dtype=wp.int32),
                out: wp.array(dtype=wp.float32)):
    """out[u] = the value of unique corner u, read from entry source[u] = cell * 8 + corner
    (one fixed entry per corner, so its gradient goes to exactly that entry)."""
    u = wp.tid()
    s = source[u]
    out[u] = values[s // 8, s % 8]


@wp.kernel
def gather_flat(values: wp.array(dtype=wp.float32), source: wp.array(dtype=wp.int32),
                out: wp.array(dtype=wp.float32)):
    u = wp.tid()
    out[u] = values[source[u]]


@wp.kernel
def edge_vertices(positions: wp.array(dtype=wp.vec3), values: wp.array(dtype=wp.float32),
                  lower_end: wp.array(dtype=wp.int32), upper_end: wp.array(dtype=wp.int32), threshold: wp.float32,
                  verts: wp.array(dtype=wp.vec3)):
    """The vertex of crossed edge i, where the field interpolated linearly from its lower
    corner to its upper corner meets the threshold (as dense marching cubes places it).
    Differentiable in `values`."""
    i = wp.tid()
    a = lower_end[i]
    b = upper_end[i]
    va = values[a]
    t = wp.clamp((threshold - va) / (values[b] - va), 0.0, 1.0)
    verts[i] = wp.lerp(positions[a], positions[b], t)
