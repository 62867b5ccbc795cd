"""Warp's `warp._src.geometry`: the predicates and mesh-topology routines of
`weft.geometry.delaunay` (`signed_area`, `in_circle`, ...) and the swept volume; the
submodules re-export weft's extractors under Warp's module paths."""

from ...geometry.delaunay import (  # noqa: F401
    delaunay_edge_flip,
    find_triangle_neighbor_edge_index,
    in_circle,
    signed_area,
    tri_tri_adjacency,
)
from ...geometry.swept_volume import (  # noqa: F401, E402
    SweptVolumeSignMode,
    swept_volume_bounds,
    swept_volume_field,
    swept_volume_mesh,
)
from ...geometry.swept_volume_kernels import swept_volume_sdf  # noqa: F401, E402
