"""Warp's `warp._src.geometry.sparse_marching_cubes` as weft provides it: re-exports of
weft/geometry/sparse_marching_cubes.py."""

from ...geometry.sparse_marching_cubes import (  # noqa: F401
    lipschitz_octree,
    sparse_marching_cubes,
    sparse_marching_cubes_from_cells,
)
