"""Host-side spatial structures that kernels query: HashGrid, Bvh, Mesh and Volume."""

from .bvh import Bvh, BvhConstructor, is_cubql_available
from .hash_grid import HashGrid
from .mesh import Mesh
from .volume import Volume

__all__ = ["Bvh", "BvhConstructor", "HashGrid", "is_cubql_available", "Mesh", "Volume"]
