"""Host-side spatial structures that kernels query: HashGrid (Mesh, Bvh and Volume later)."""

from .hash_grid import HashGrid
from .volume import Volume

__all__ = ["HashGrid", "Volume"]
