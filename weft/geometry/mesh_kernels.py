"""Per-node data for fast winding numbers (Mesh(support_winding_number=True)).

For every BVH node, `winding_data` stores (N, c, r, A) as 8 float32: N the sum of its
triangles' area vectors (half the cross products of their edges), c their area-weighted
centroid, r the radius around c that holds all their corners, A their total area. Seen from
a point p farther than accuracy * r from c, the node's triangles subtend about the solid
angle of one dipole, dot(N, c - p) / |c - p|^3 (builtins/mesh_funcs.winding_number). Nodes
are walked backwards (children are numbered after their parents), so one single-threaded
kernel fills the table at build and refit.

`leaf_triangles` writes, for position k of the BVH's primitive order (leaf by leaf), the
corners a, b, c of face perm[k] and the face's index (its int32 bits; -(face + 1) for a
face whose area is negligible, which point queries skip): a closest-point traversal reads
a leaf's triangles from consecutive memory and does not test each face's area again.

`triangle_bounds` writes each face's box and edge-length sum, at build; a refit writes
them and the leaf triangles in one pass (`refit_leaf_triangles`).

Imported on first use: kernel-language code needs the frontend.
"""

from __future__ import annotations

import weft as wp

from ..builtins.triangle_funcs import degenerate
from .mesh import LEAF_TRI_WORDS


@wp.kernel(enable_backward=False)
def leaf_triangles(points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=int), perm: wp.array(dtype=int),
                   out: wp.array2d(dtype=float)):
    k = wp.tid()
    f = perm[k]
    a = points[indices[3 * f]]
    b = points[indices[3 * f + 1]]
    c = points[indices[3 * f + 2]]
    for j in range(3):
        out[k, j] = a[j]
        out[k, 3 + j] = b[j]
        out[k, 6 + j] = c[j]
    tag = f
    if degenerate(a, b, c):
        tag = -(f + 1)
    words = wp.array(ptr=out.ptr, shape=out.shape[0] * LEAF_TRI_WORDS, dtype=wp.int32)
    words[LEAF_TRI_WORDS * k + 9] = tag


@wp.kernel(enable_backward=False)
def refit_leaf_triangles(points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=int), perm: wp.array(dtype=int),
                         lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3),
                         edges: wp.array(dtype=float), out: wp.array2d(dtype=float)):
    """`leaf_triangles` and `triangle_bounds` in one pass over the faces, in leaf order."""
    k = wp.tid()
    f = perm[k]
    a = points[indices[3 * f]]
    b = points[indices[3 * f + 1]]
    c = points[indices[3 * f + 2]]
    lowers[f] = wp.min(wp.min(a, b), c)
    uppers[f] = wp.max(wp.max(a, b), c)
    edges[f] = wp.length(a - b) + wp.length(a - c) + wp.length(c - b)
    for j in range(3):
        out[k, j] = a[j]
        out[k, 3 + j] = b[j]
        out[k, 6 + j] = c[j]
    tag = f
    if degenerate(a, b, c):
        tag = -(f + 1)
    words = wp.array(ptr=out.ptr, shape=out.shape[0] * LEAF_TRI_WORDS, dtype=wp.int32)
    words[LEAF_TRI_WORDS * k + 9] = tag


@wp.kernel(enable_backward=False)
def winding_data(points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=int), perm: wp.array(dtype=int),
                 children: wp.array2d(dtype=int), out: wp.array2d(dtype=float)):
    n = children.shape[0]
    for k in range(n):
        node = n - 1 - k
        a = children[node, 0]
        b = children[node, 1]
        big_n = wp.vec3(0.0)
        c = wp.vec3(0.0)
        area = 0.0
        r = 0.0
        if a < 0:
            for i in range(-a - 1, b):
                t = perm[i]
                x = points[indices[3 * t]]
                y = points[indices[3 * t + 1]]
                z = points[indices[3 * t + 2]]
                an = 0.5 * wp.cross(y - x, z - x)
                ar = wp.length(an)
                big_n = big_n + an
                c = c + ar * (x + y + z) / 3.0
                area = area + ar
            if area > 0.0:
                c = c / area
            else:
                t = perm[-a - 1]
                c = points[indices[3 * t]]
            for i in range(-a - 1, b):
                t = perm[i]
                for j in range(3):
                    r = wp.max(r, wp.length(points[indices[3 * t + j]] - c))
        else:
            nl = wp.vec3(out[a, 0], out[a, 1], out[a, 2])
            nr = wp.vec3(out[b, 0], out[b, 1], out[b, 2])
            cl = wp.vec3(out[a, 3], out[a, 4], out[a, 5])
            cr = wp.vec3(out[b, 3], out[b, 4], out[b, 5])
            al = out[a, 7]
            ar = out[b, 7]
            big_n = nl + nr
            area = al + ar
            c = 0.5 * (cl + cr)
            if area > 0.0:
                c = (al * cl + ar * cr) / area
            r = wp.max(wp.length(cl - c) + out[a, 6], wp.length(cr - c) + out[b, 6])
        out[node, 0] = big_n[0]
        out[node, 1] = big_n[1]
        out[node, 2] = big_n[2]
        out[node, 3] = c[0]
        out[node, 4] = c[1]
        out[node, 5] = c[2]
        out[node, 6] = r
        out[node, 7] = area


@wp.kernel(enable_backward=False)
def triangle_bounds(points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=int), lowers: wp.array(dtype=wp.vec3),
                    uppers: wp.array(dtype=wp.vec3), edges: wp.array(dtype=float)):
    """Each face's bounding box and the sum of its edge lengths (build and refit: the BVH's
    primitive boxes and the mesh's average edge length, as Warp's refit recomputes both)."""
    f = wp.tid()
    a = points[indices[3 * f]]
    b = points[indices[3 * f + 1]]
    c = points[indices[3 * f + 2]]
    lowers[f] = wp.min(wp.min(a, b), c)
    uppers[f] = wp.max(wp.max(a, b), c)
    edges[f] = wp.length(a - b) + wp.length(a - c) + wp.length(c - b)
