"""Host-side spatial structures that kernels query (HashGrid, Bvh, Mesh, Volume),
iso-surface extraction (IsoSurfaceMarchingCubes, IsoSurfaceNets, and sparse marching cubes
of an implicit function: `sparse_marching_cubes`, `lipschitz_octree`,
`sparse_marching_cubes_from_cells`), the swept volume of rigid meshes moved through sampled
poses (`swept_volume_field`, `swept_volume_mesh`, `swept_volume_bounds`, the kernel function
`swept_volume_sdf`), and triangle-mesh topology and Delaunay edge flipping
(`tri_tri_adjacency`, `delaunay_edge_flip`)."""

from .bvh import Bvh, BvhConstructor, is_cubql_available
from .delaunay import delaunay_edge_flip, find_triangle_neighbor_edge_index, tri_tri_adjacency
from .hash_grid import HashGrid
from .iso_surface import IsoSurfaceBase
from .marching_cubes import IsoSurfaceMarchingCubes
from .mesh import Mesh
from .sparse_marching_cubes import lipschitz_octree, sparse_marching_cubes, sparse_marching_cubes_from_cells
from .surface_nets import IsoSurfaceNets
from .swept_volume import SweptVolumeSignMode, swept_volume_bounds, swept_volume_field, swept_volume_mesh
from .swept_volume_kernels import swept_volume_sdf
from .volume import Volume

__all__ = ["Bvh", "BvhConstructor", "HashGrid", "IsoSurfaceBase", "IsoSurfaceMarchingCubes", "is_cubql_available",
           "Mesh", "Volume", "delaunay_edge_flip", "find_triangle_neighbor_edge_index", "tri_tri_adjacency",
           "SweptVolumeSignMode", "swept_volume_bounds", "swept_volume_field", "swept_volume_mesh", "swept_volume_sdf",
           "lipschitz_octree", "sparse_marching_cubes", "sparse_marching_cubes_from_cells", "IsoSurfaceNets"]

