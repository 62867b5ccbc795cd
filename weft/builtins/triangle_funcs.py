"""Triangle geometry in weft's kernel language: the closest point of a triangle (Warp's
barycentric convention: `u a + v b + (1 - u - v) c`), the watertight ray test, normals.
Differentiable funcs that the mesh queries (mesh_funcs.py) recompute from the face they found.

Imported on first use: kernel-language code needs the frontend, which imports the builtins.
"""

from __future__ import annotations

import weft as wp


@wp.func
def closest_bary(p: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3):
    """Weights (wa, wb, wc) of the point of triangle abc closest to p (Voronoi regions)."""
    ab = b - a
    ac = c - a
    ap = p - a
    d1 = wp.dot(ab, ap)
    d2 = wp.dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return wp.vec3(1.0, 0.0, 0.0)
    bp = p - b
    d3 = wp.dot(ab, bp)
    d4 = wp.dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return wp.vec3(0.0, 1.0, 0.0)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        s = d1 / (d1 - d3)
        return wp.vec3(1.0 - s, s, 0.0)
    cp = p - c
    d5 = wp.dot(ab, cp)
    d6 = wp.dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return wp.vec3(0.0, 0.0, 1.0)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        s = d2 / (d2 - d6)
        return wp.vec3(1.0 - s, 0.0, s)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        s = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return wp.vec3(0.0, 1.0 - s, s)
    inv = 1.0 / (va + vb + vc)
    v = vb * inv
    w = vc * inv
    return wp.vec3(1.0 - v - w, v, w)


@wp.func
def degenerate(a: wp.vec3, b: wp.vec3, c: wp.vec3):
    """A face whose area is negligible next to its longest edge is skipped by point queries."""
    e = wp.max(wp.max(wp.length_sq(b - a), wp.length_sq(c - a)), wp.length_sq(c - b))
    n = wp.cross(b - a, c - a)
    return wp.length_sq(n) <= 1.0e-12 * e * e


@wp.func
def cross_2d(ax: float, ay: float, bx: float, by: float):
    """ax by - ay bx, rounded once from float64 (its sign is exact: the edge tests below
    decide on it)."""
    return float(wp.float64(ax) * wp.float64(by) - wp.float64(ay) * wp.float64(bx))


@wp.func
def ray_triangle(start: wp.vec3, dir: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3):
    """(hit, t, u, v, det): where start + t dir crosses triangle abc (either side), as weights
    u of a and v of b. Watertight (Woop, Benthin and Wald 2013, as Warp): the triangle is
    sheared so the ray runs along +z, and the three 2D edge functions decide the hit, so a ray
    through a shared edge or vertex hits at least one of its faces. det, their sum, is
    Warp's `sign`: > 0 where the ray meets the triangle's front (counter-clockwise) side."""
    kz = 0
    if wp.abs(dir[1]) > wp.abs(dir[0]):
        kz = 1
    if wp.abs(dir[2]) > wp.abs(dir[kz]):
        kz = 2
    kx = (kz + 1) % 3
    ky = (kx + 1) % 3
    if dir[kz] < 0.0:
        kx, ky = ky, kx
    sx = dir[kx] / dir[kz]
    sy = dir[ky] / dir[kz]
    sz = 1.0 / dir[kz]
    pa = a - start
    pb = b - start
    pc = c - start
    ax = pa[kx] - sx * pa[kz]
    ay = pa[ky] - sy * pa[kz]
    bx = pb[kx] - sx * pb[kz]
    by = pb[ky] - sy * pb[kz]
    cx = pc[kx] - sx * pc[kz]
    cy = pc[ky] - sy * pc[kz]
    eu = cross_2d(cx, cy, bx, by)
    ev = cross_2d(ax, ay, cx, cy)
    ew = cross_2d(bx, by, ax, ay)
    hit = False
    t = 0.0
    u = 0.0
    v = 0.0
    det = eu + ev + ew
    mixed = (eu < 0.0 or ev < 0.0 or ew < 0.0) and (eu > 0.0 or ev > 0.0 or ew > 0.0)
    if not mixed and det != 0.0:
        tt = eu * (sz * pa[kz]) + ev * (sz * pb[kz]) + ew * (sz * pc[kz])
        if (det > 0.0 and tt >= 0.0) or (det < 0.0 and tt <= 0.0):
            inv = 1.0 / det
            u = eu * inv
            v = ev * inv
            t = tt * inv
            hit = True
    return hit, t, u, v, det


@wp.func
def face_normal(a: wp.vec3, b: wp.vec3, c: wp.vec3):
    return wp.normalize(wp.cross(b - a, c - a))
