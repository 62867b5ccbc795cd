"""Warp's `warp._src.geometry.marching_cubes` as weft provides it: the extractor of
weft/geometry/marching_cubes.py and its corner and edge numbering under Warp's names (the case
tables, which weft derives, are `IsoSurfaceMarchingCubes.CASE_TO_TRI_RANGE` and
`.TRI_LOCAL_INDICES`)."""

from ...geometry.marching_cubes import IsoSurfaceMarchingCubes  # noqa: F401
from ...geometry.mc_tables import CUBE_CORNER_OFFSETS as MC_CUBE_CORNER_OFFSETS  # noqa: F401
from ...geometry.mc_tables import EDGE_TO_CORNERS as MC_EDGE_TO_CORNERS  # noqa: F401
