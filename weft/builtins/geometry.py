"""Geometry builtins: `closest_point_edge_edge`, `intersect_tri_tri` (work in geometry_funcs.py)."""

from __future__ import annotations

from ..ir.core import Value
from ..types import Scalar, Vector, float32, float64, vec3f
from .arguments import kernel_funcs
from .bvh import as_scalar, bind
from .registry import builtin

_funcs = kernel_funcs(".geometry_funcs")


def _vec3(ctx, name, given, names):
    """The arguments `names` as vec3 of one precision (float32 or float64)."""
    values = [given[n] for n in names]
    t = next((v.type for v in values if isinstance(v, Value)), vec3f)
    if not (isinstance(t, Vector) and t.length == 3 and t.dtype in (float32, float64)):
        ctx.error(f"{name}(): expected vec3f or vec3d arguments, got {t!r}")
    return [ctx.coerce(v, t, what=f"{name}() {n}") for n, v in zip(names, values)], t


@builtin("closest_point_edge_edge")
def closest_point_edge_edge(ctx, args, kwargs):
    """closest_point_edge_edge(p1, q1, p2, q2, epsilon) -> vec3 (s, t, d): the closest points
    p1 + s (q1 - p1) and p2 + t (q2 - p2) of two segments and their distance d."""
    name = "closest_point_edge_edge"
    given = bind(ctx, name, args, kwargs, ("p1", "q1", "p2", "q2", "epsilon"), 5)
    pts, t = _vec3(ctx, name, given, ("p1", "q1", "p2", "q2"))
    eps = given["epsilon"]
    if isinstance(eps, Value) and not isinstance(eps.type, Scalar):
        ctx.error(f"{name}(): epsilon must be a number")
    eps = as_scalar(ctx, eps, t.dtype, f"{name}() epsilon")
    return _funcs().edge_edge.emit_call(ctx, [*pts, eps], {}, None)


@builtin("intersect_tri_tri")
def intersect_tri_tri(ctx, args, kwargs):
    """intersect_tri_tri(v0, v1, v2, u0, u1, u2) -> int: 1 if the triangles intersect, else 0."""
    name = "intersect_tri_tri"
    given = bind(ctx, name, args, kwargs, ("v0", "v1", "v2", "u0", "u1", "u2"), 6)
    pts, _ = _vec3(ctx, name, given, ("v0", "v1", "v2", "u0", "u1", "u2"))
    return _funcs().tri_tri.emit_call(ctx, pts, {}, None)


__all__ = ["closest_point_edge_edge", "intersect_tri_tri"]
