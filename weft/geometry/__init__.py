"""Host-side spatial structures that kernels query (HashGrid, Bvh, Mesh, Volume) and
iso-surface extraction (IsoSurfaceMarchingCubes)."""

from .bvh import Bvh, BvhConstructor, is_cubql_available
from .hash_grid import HashGrid
from .iso_surface import IsoSurfaceBase
from .marching_cubes import IsoSurfaceMarchingCubes
from .mesh import Mesh
from .volume import Volume

__all__ = ["Bvh", "BvhConstructor", "HashGrid", "IsoSurfaceBase", "IsoSurfaceMarchingCubes", "is_cubql_available",
           "Mesh", "Volume"]
