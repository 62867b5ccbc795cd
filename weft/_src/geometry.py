"""Warp's `warp._src.geometry`: the predicates and mesh-topology routines of
`weft.geometry.delaunay` (`signed_area`, `in_circle`, ...)."""

from ..geometry.delaunay import (  # noqa: F401
    delaunay_edge_flip,
    find_triangle_neighbor_edge_index,
    in_circle,
    signed_area,
    tri_tri_adjacency,
)
