"""Geometry helpers in weft's kernel language: `closest_point_edge_edge` and
`intersect_tri_tri` (registered in geometry.py). Being kernel-language funcs, their
derivatives come from reverse mode like any user code.

Imported on first use: kernel-language code needs the frontend, which imports the builtins.
"""

from __future__ import annotations

from typing import Any

import weft as wp


@wp.func
def edge_edge(p1: Any, q1: Any, p2: Any, q2: Any, epsilon: Any):
    """(s, t, distance) of the closest points p1 + s (q1 - p1) and p2 + t (q2 - p2), s and t
    in [0, 1]. An edge of squared length <= epsilon is a point (weight 0). The unclamped
    s of two skew lines is the ratio of two cross-product dot products (Lagrange's identity),
    which stays accurate for nearly parallel edges."""
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = wp.dot(d1, d1)
    e = wp.dot(d2, d2)
    f = wp.dot(d2, r)
    zero = type(a)(0.0)
    one = type(a)(1.0)
    s = zero
    t = zero
    if a <= epsilon and e <= epsilon:
        s = zero
    elif a <= epsilon:
        t = wp.clamp(f / e, zero, one)
    else:
        c = wp.dot(d1, r)
        if e <= epsilon:
            s = wp.clamp(-c / a, zero, one)
        else:
            b = wp.dot(d1, d2)
            n = wp.cross(d1, d2)
            denom = wp.dot(n, n)
            if denom > a * e * 1.0e-12:
                s = wp.clamp(wp.dot(n, wp.cross(d2, r)) / denom, zero, one)
            t = (b * s + f) / e
            if t < 0.0:
                t = zero
                s = wp.clamp(-c / a, zero, one)
            elif t > 1.0:
                t = one
                s = wp.clamp((b - c) / a, zero, one)
    c1 = p1 + d1 * s
    c2 = p2 + d2 * t
    return type(p1)(s, t, wp.length(c1 - c2))


@wp.func
def segment_hits_triangle(p: Any, q: Any, a: Any, b: Any, c: Any):
    """Whether segment pq crosses triangle abc (closed: touching counts), for a segment
    not in the triangle's plane."""
    n = wp.cross(b - a, c - a)
    dp = wp.dot(p - a, n)
    dq = wp.dot(q - a, n)
    hit = False
    if (dp <= 0.0 and dq >= 0.0) or (dp >= 0.0 and dq <= 0.0):
        if dp != dq:
            x = p + (q - p) * (dp / (dp - dq))
            u = wp.dot(wp.cross(b - a, x - a), n)
            v = wp.dot(wp.cross(c - b, x - b), n)
            w = wp.dot(wp.cross(a - c, x - c), n)
            hit = u >= 0.0 and v >= 0.0 and w >= 0.0
    return hit


@wp.func
def point_in_triangle(x: Any, a: Any, b: Any, c: Any, n: Any):
    u = wp.dot(wp.cross(b - a, x - a), n)
    v = wp.dot(wp.cross(c - b, x - b), n)
    w = wp.dot(wp.cross(a - c, x - c), n)
    return (u >= 0.0 and v >= 0.0 and w >= 0.0) or (u <= 0.0 and v <= 0.0 and w <= 0.0)


@wp.func
def segments_touch(p1: Any, q1: Any, p2: Any, q2: Any):
    scale = wp.max(wp.length_sq(q1 - p1), wp.length_sq(q2 - p2))
    st = edge_edge(p1, q1, p2, q2, scale * 1.0e-12)
    return st[2] * st[2] <= scale * 1.0e-10


@wp.func
def edges_touch(v0: Any, v1: Any, v2: Any, u0: Any, u1: Any, u2: Any):
    """Whether an edge of triangle (v0, v1, v2) touches an edge of (u0, u1, u2)."""
    hit = segments_touch(v0, v1, u0, u1) or segments_touch(v0, v1, u1, u2) or segments_touch(v0, v1, u2, u0)
    hit = hit or segments_touch(v1, v2, u0, u1) or segments_touch(v1, v2, u1, u2) or segments_touch(v1, v2, u2, u0)
    return hit or segments_touch(v2, v0, u0, u1) or segments_touch(v2, v0, u1, u2) or segments_touch(v2, v0, u2, u0)


@wp.func
def coplanar_overlap(v0: Any, v1: Any, v2: Any, u0: Any, u1: Any, u2: Any):
    n = wp.cross(v1 - v0, v2 - v0)  # (v has an area: see tri_tri; u may have none)
    hit = point_in_triangle(u0, v0, v1, v2, n)
    if wp.length_sq(wp.cross(u1 - u0, u2 - u0)) > 0.0:
        hit = hit or point_in_triangle(v0, u0, u1, u2, n)
    return hit or edges_touch(v0, v1, v2, u0, u1, u2)


@wp.func
def tri_tri(v0: Any, v1: Any, v2: Any, u0: Any, u1: Any, u2: Any):
    """1 if triangles (v0, v1, v2) and (u0, u1, u2) intersect (touching included), else 0.
    A triangle of zero area (a segment or a point) has no plane: the other's is used, and
    two of them meet where their edges touch."""
    result = 0
    if wp.length_sq(wp.cross(v1 - v0, v2 - v0)) > 0.0:
        result = tri_tri_in_plane_of(v0, v1, v2, u0, u1, u2)
    elif wp.length_sq(wp.cross(u1 - u0, u2 - u0)) > 0.0:
        result = tri_tri_in_plane_of(u0, u1, u2, v0, v1, v2)
    else:
        if edges_touch(v0, v1, v2, u0, u1, u2):
            result = 1
    return result


@wp.func
def tri_tri_in_plane_of(v0: Any, v1: Any, v2: Any, u0: Any, u1: Any, u2: Any):
    """`tri_tri` where (v0, v1, v2) has an area. Two triangles in different planes meet
    exactly where an edge of one crosses the other."""
    nv = wp.cross(v1 - v0, v2 - v0)
    du0 = wp.dot(u0 - v0, nv)
    du1 = wp.dot(u1 - v0, nv)
    du2 = wp.dot(u2 - v0, nv)
    result = 0
    if (du0 > 0.0 and du1 > 0.0 and du2 > 0.0) or (du0 < 0.0 and du1 < 0.0 and du2 < 0.0):
        result = 0
    elif du0 == 0.0 and du1 == 0.0 and du2 == 0.0:
        if coplanar_overlap(v0, v1, v2, u0, u1, u2):
            result = 1
    else:
        hit = segment_hits_triangle(u0, u1, v0, v1, v2) or segment_hits_triangle(u1, u2, v0, v1, v2)
        hit = hit or segment_hits_triangle(u2, u0, v0, v1, v2)
        hit = hit or segment_hits_triangle(v0, v1, u0, u1, u2) or segment_hits_triangle(v1, v2, u0, u1, u2)
        hit = hit or segment_hits_triangle(v2, v0, u0, u1, u2)
        if hit:
            result = 1
    return result
