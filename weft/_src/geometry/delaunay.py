"""Warp's `warp._src.geometry.delaunay` as weft provides it: the mesh-topology routines and
predicates of weft/geometry/delaunay.py and the swept volume of weft/geometry/swept_volume.py
(Warp keeps both in one module)."""

from . import (  # noqa: F401
    SweptVolumeSignMode,
    delaunay_edge_flip,
    find_triangle_neighbor_edge_index,
    in_circle,
    signed_area,
    swept_volume_bounds,
    swept_volume_field,
    swept_volume_mesh,
    swept_volume_sdf,
    tri_tri_adjacency,
)
