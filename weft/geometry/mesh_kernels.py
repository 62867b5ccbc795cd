"""Per-node data for fast winding numbers (Mesh(support_winding_number=True)).

For every BVH node, `winding_data` works out the moments of its triangles about their
area-weighted centroid c (in `moments`, MOMENT_WORDS float32 a node): N (0-2) the sum of
their area vectors (half the cross products of their edges), c (3-5), r (6) the radius
around c that holds all their corners, A (7) their total area, M (8-16, row-major) with
M[i, k] = integral of (x - c)_i n_k dA, and T (17-43, three row-major 3x3 blocks, block k)
with T_k[i, j] = integral of (x - c)_i (x - c)_j n_k dA. A triangle's moments are exact:
its first moment is its area times its centroid g, its second A (g - c)(g - c)^T plus A / 12
times the sum over its corners v of (v - g)(v - g)^T. A parent's are its children's, moved
to its centroid. Nodes are walked backwards (children are numbered after their parents),
so one single-threaded kernel fills the tables at build and refit.

Seen from a point p farther than accuracy * r from c, a node's triangles subtend about the
solid angle of the Taylor expansion of dot(x - p, n) / |x - p|^3 about c to the second
order (Barill et al.'s fast winding numbers, the order Warp uses). With q = c - p and d = |q|:
    (dot(N, q) + tr M) / d^3 - (3 q.M.q + dot(q, 3 u + 1.5 w)) / d^5
        + 7.5 sum_ijk T_ijk q_i q_j q_k / d^7,
u_j = sum_i T_i[i, j], w_k = tr T_k. `out` (WINDING_WORDS a node) holds what that needs:
c (0-2), r (3), N (4-6), tr M (7), M's symmetric part (8-13: xx, yy, zz, xy, xz, yz),
3 u + 1.5 w (14-16) and the coefficients of the cubic's ten monomials (17-26: xxx, yyy,
zzz, xxy, xxz, yyz, yyx, zzx, zzy, xyz); builtins/mesh_funcs.node_solid_angle adds it up.

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


@wp.func
def _write_leaf_triangle(out: wp.array2d(dtype=float), k: int, f: int, a: wp.vec3, b: wp.vec3, c: wp.vec3):
    """Row k of the leaf triangles: face f's corners and its tag (see the module docstring)."""
    for j in range(3):
        out[k, j] = a[j]
        out[k, 3 + j] = b[j]
        out[k, 6 + j] = c[j]
    tag = f
    if degenerate(a, b, c):
        tag = -(f + 1)
    words = wp.array(ptr=out.ptr, shape=out.shape[0] * LEAF_TRI_WORDS, dtype=wp.int32)
    words[LEAF_TRI_WORDS * k + 9] = tag


@wp.func
def _face_bounds(points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=int), f: int,
                 lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3), edges: wp.array(dtype=float)):
    """Face f's box and edge-length sum into `lowers`, `uppers` and `edges`; its corners."""
    a = points[indices[3 * f]]
    b = points[indices[3 * f + 1]]
    c = points[indices[3 * f + 2]]
    lowers[f] = wp.min(wp.min(a, b), c)
    uppers[f] = wp.max(wp.max(a, b), c)
    edges[f] = wp.length(a - b) + wp.length(a - c) + wp.length(c - b)
    return a, b, c


@wp.kernel(enable_backward=False)
def leaf_triangles(points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=int), perm: wp.array(dtype=int),
                   out: wp.array2d(dtype=float)):
    k = wp.tid()
    f = perm[k]
    a = points[indices[3 * f]]
    b = points[indices[3 * f + 1]]
    c = points[indices[3 * f + 2]]
    _write_leaf_triangle(out, k, f, a, b, c)


@wp.kernel(enable_backward=False)
def refit_leaf_triangles(points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=int), perm: wp.array(dtype=int),
                         lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3),
                         edges: wp.array(dtype=float), out: wp.array2d(dtype=float)):
    """`leaf_triangles` and `triangle_bounds` in one pass over the faces, in leaf order."""
    k = wp.tid()
    f = perm[k]
    a, b, c = _face_bounds(points, indices, f, lowers, uppers, edges)
    _write_leaf_triangle(out, k, f, a, b, c)


@wp.func
def _mat_at(out: wp.array2d(dtype=float), node: int, first: int):
    return wp.mat33(out[node, first], out[node, first + 1], out[node, first + 2],
                    out[node, first + 3], out[node, first + 4], out[node, first + 5],
                    out[node, first + 6], out[node, first + 7], out[node, first + 8])


@wp.func
def _store_mat(out: wp.array2d(dtype=float), node: int, first: int, m: wp.mat33):
    for i in range(3):
        for j in range(3):
            out[node, first + 3 * i + j] = m[i, j]


@wp.func
def _column(m: wp.mat33, k: int):
    return wp.vec3(m[0, k], m[1, k], m[2, k])


@wp.func
def _cubic_term(t0: wp.mat33, t1: wp.mat33, t2: wp.mat33, i: int, j: int, k: int):
    """T_ijk (T_k[i, j]) of the three blocks."""
    r = t0[i, j]
    if k == 1:
        r = t1[i, j]
    elif k == 2:
        r = t2[i, j]
    return r


@wp.func
def _write_evaluation(out: wp.array2d(dtype=float), node: int, c: wp.vec3, r: float, big_n: wp.vec3, m: wp.mat33,
                      t0: wp.mat33, t1: wp.mat33, t2: wp.mat33):
    """A node's row of the table node_solid_angle reads (see the module docstring)."""
    for i in range(3):
        out[node, i] = c[i]
        out[node, 4 + i] = big_n[i]
    out[node, 3] = r
    out[node, 7] = m[0, 0] + m[1, 1] + m[2, 2]
    out[node, 8] = m[0, 0]
    out[node, 9] = m[1, 1]
    out[node, 10] = m[2, 2]
    out[node, 11] = 0.5 * (m[0, 1] + m[1, 0])
    out[node, 12] = 0.5 * (m[0, 2] + m[2, 0])
    out[node, 13] = 0.5 * (m[1, 2] + m[2, 1])
    u = wp.vec3(t0[0, 0] + t1[1, 0] + t2[2, 0], t0[0, 1] + t1[1, 1] + t2[2, 1], t0[0, 2] + t1[1, 2] + t2[2, 2])
    w = wp.vec3(t0[0, 0] + t0[1, 1] + t0[2, 2], t1[0, 0] + t1[1, 1] + t1[2, 2], t2[0, 0] + t2[1, 1] + t2[2, 2])
    v = 3.0 * u + 1.5 * w
    for i in range(3):
        out[node, 14 + i] = v[i]
    for a in range(3):  # q_a^3, then q_a^2 q_b for the two other b
        out[node, 17 + a] = _cubic_term(t0, t1, t2, a, a, a)
        for h in range(2):
            b = (a + 1 + h) % 3
            out[node, 20 + 2 * a + h] = _cubic_term(t0, t1, t2, a, a, b) + _cubic_term(t0, t1, t2, a, b, a) \
                + _cubic_term(t0, t1, t2, b, a, a)
    xyz = 0.0
    for a in range(3):
        b = (a + 1) % 3
        e = (a + 2) % 3
        xyz = xyz + _cubic_term(t0, t1, t2, a, b, e) + _cubic_term(t0, t1, t2, a, e, b)
    out[node, 26] = xyz


@wp.kernel(enable_backward=False)
def winding_data(points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=int), perm: wp.array(dtype=int),
                 children: wp.array2d(dtype=int), moments: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    n = children.shape[0]
    for k in range(n):
        node = n - 1 - k
        a = children[node, 0]
        b = children[node, 1]
        big_n = wp.vec3(0.0)
        c = wp.vec3(0.0)
        area = 0.0
        r = 0.0
        m = wp.mat33(0.0)
        t0 = wp.mat33(0.0)
        t1 = wp.mat33(0.0)
        t2 = wp.mat33(0.0)
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
                x = points[indices[3 * t]]
                y = points[indices[3 * t + 1]]
                z = points[indices[3 * t + 2]]
                an = 0.5 * wp.cross(y - x, z - x)
                g = (x + y + z) / 3.0
                m = m + wp.outer(g - c, an)
                q = wp.outer(g - c, g - c) + (wp.outer(x - g, x - g) + wp.outer(y - g, y - g)
                                              + wp.outer(z - g, z - g)) / 12.0
                t0 = t0 + q * an[0]
                t1 = t1 + q * an[1]
                t2 = t2 + q * an[2]
                r = wp.max(r, wp.max(wp.length(x - c), wp.max(wp.length(y - c), wp.length(z - c))))
        else:
            al = moments[a, 7]
            ar = moments[b, 7]
            cl = wp.vec3(moments[a, 3], moments[a, 4], moments[a, 5])
            cr = wp.vec3(moments[b, 3], moments[b, 4], moments[b, 5])
            area = al + ar
            c = 0.5 * (cl + cr)
            if area > 0.0:
                c = (al * cl + ar * cr) / area
            r = wp.max(wp.length(cl - c) + moments[a, 6], wp.length(cr - c) + moments[b, 6])
            for side in range(2):
                child = a
                if side == 1:
                    child = b
                nc = wp.vec3(moments[child, 0], moments[child, 1], moments[child, 2])
                sh = wp.vec3(moments[child, 3], moments[child, 4], moments[child, 5]) - c  # (x - c: (x - c_child) + sh)
                mc = _mat_at(moments, child, 8)
                big_n = big_n + nc
                m = m + mc + wp.outer(sh, nc)
                t0 = t0 + _mat_at(moments, child, 17) + wp.outer(sh, _column(mc, 0)) + wp.outer(_column(mc, 0), sh) \
                    + wp.outer(sh, sh) * nc[0]
                t1 = t1 + _mat_at(moments, child, 26) + wp.outer(sh, _column(mc, 1)) + wp.outer(_column(mc, 1), sh) \
                    + wp.outer(sh, sh) * nc[1]
                t2 = t2 + _mat_at(moments, child, 35) + wp.outer(sh, _column(mc, 2)) + wp.outer(_column(mc, 2), sh) \
                    + wp.outer(sh, sh) * nc[2]
        for i in range(3):
            moments[node, i] = big_n[i]
            moments[node, 3 + i] = c[i]
        moments[node, 6] = r
        moments[node, 7] = area
        _store_mat(moments, node, 8, m)
        _store_mat(moments, node, 17, t0)
        _store_mat(moments, node, 26, t1)
        _store_mat(moments, node, 35, t2)
        _write_evaluation(out, node, c, r, big_n, m, t0, t1, t2)


@wp.kernel(enable_backward=False)
def triangle_bounds(points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=int), lowers: wp.array(dtype=wp.vec3),
                    uppers: wp.array(dtype=wp.vec3), edges: wp.array(dtype=float)):
    """Each face's bounding box and the sum of its edge lengths (at build; a refit has
    refit_leaf_triangles): the BVH's primitive boxes and the mesh's average edge length, as
    Warp's refit recomputes both."""
    _face_bounds(points, indices, wp.tid(), lowers, uppers, edges)
