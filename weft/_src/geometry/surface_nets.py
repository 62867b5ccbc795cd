"""Warp's `warp._src.geometry.surface_nets` as weft provides it: re-exports of
weft/geometry/surface_nets.py (the extractor and its lookup tables)."""

from ...geometry.surface_nets import (  # noqa: F401
    _SN_AMBIGUOUS_FACE,
    _SN_CORNER_OFFSETS,
    _SN_EDGE_GROUP_TABLE,
    _SN_EDGE_TO_CORNERS,
    IsoSurfaceNets,
    surface_nets_extract,
)
