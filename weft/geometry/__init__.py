"""Host-side spatial structures that kernels query: HashGrid (Mesh, Bvh and Volume later)."""

from .bvh import Bvh, BvhConstructor, is_cubql_available
from .hash_grid import HashGrid
from .mesh import Mesh

__all__ = ["Bvh", "BvhConstructor", "HashGrid", "is_cubql_available", "Mesh"]
