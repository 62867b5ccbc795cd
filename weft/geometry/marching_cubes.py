"""Marching-cubes iso-surface extraction from a dense 3D float32 field (Warp's
`warp.geometry.IsoSurfaceMarchingCubes`, formerly `warp.MarchingCubes`).

Output: one vertex per grid edge the surface crosses (shared by the cells around that edge,
so the mesh is connected and, inside the grid, watertight), and a flat int32 array of
triangles, three vertex indices each, wound counter-clockwise seen from where the field is
>= the threshold (outward for a signed distance field). Vertices are numbered by grid edge
(node i, then j, then k, then the edge's axis), triangles by cell in the same order. The
vertex positions are differentiable in the field (a Tape records their kernel); the
classification of cells and the triangles are discrete.
"""

from __future__ import annotations

import numpy as np

from ..logger import log_warning
from . import mc_tables
from .iso_surface import IsoSurfaceBase, resolve_domain_bounds, validate_field

_UNSET = object()  # a deprecated argument that was not passed
_tables_by_device: dict = {}


def _tables(device):
    """The case tables as int32 arrays on `device` (made once per device)."""
    key = str(device)
    if key not in _tables_by_device:
        from ..runtime.array import array
        from ..types import int32
        _tables_by_device[key] = (
            array(np.asarray(mc_tables.CASE_TO_TRI_RANGE, dtype=np.int32), dtype=int32, device=device),
            array(np.asarray(mc_tables.TRI_LOCAL_INDICES, dtype=np.int32), dtype=int32, device=device),
            array(np.asarray(mc_tables.EDGE_OFFSETS, dtype=np.int32), dtype=int32, device=device),
        )
    return _tables_by_device[key]


def _last(a) -> int:
    return int(a.numpy()[-1]) if a.shape[0] else 0


def _deprecated_bound(name: str, replacement: str) -> None:
    log_warning(f"IsoSurfaceMarchingCubes.{name} is deprecated and will be removed in a future version of Warp. "
                f"Use `{replacement}` instead.", category=DeprecationWarning, stacklevel=2)


class IsoSurfaceMarchingCubes(IsoSurfaceBase):
    """Reusable marching-cubes extractor for fields of `nx * ny * nz` nodes; see the module
    docstring for the output conventions, `extract` for a one-shot call."""

    CUBE_CORNER_OFFSETS = mc_tables.CUBE_CORNER_OFFSETS
    EDGE_TO_CORNERS = mc_tables.EDGE_TO_CORNERS
    CASE_TO_TRI_RANGE = mc_tables.CASE_TO_TRI_RANGE  # 257 offsets into TRI_LOCAL_INDICES, one range per case
    TRI_LOCAL_INDICES = mc_tables.TRI_LOCAL_INDICES  # edge numbers, three per triangle

    def __init__(self, nx: int, ny: int, nz: int, lower=None, upper=None, *,
                 domain_bounds_lower_corner=_UNSET, domain_bounds_upper_corner=_UNSET):
        for legacy, canonical in (("domain_bounds_lower_corner", "lower"), ("domain_bounds_upper_corner", "upper")):
            value = domain_bounds_lower_corner if canonical == "lower" else domain_bounds_upper_corner
            if value is _UNSET:
                continue
            current = lower if canonical == "lower" else upper
            if current is not None and value is not None:
                raise TypeError(f"Cannot specify both `{canonical}` and `{legacy}`.")
            log_warning(f"IsoSurfaceMarchingCubes() argument `{legacy}` is deprecated and will be removed in a "
                        f"future version of Warp. Use `{canonical}` instead.", category=DeprecationWarning,
                        stacklevel=1)
            if value is not None:
                if canonical == "lower":
                    lower = value
                else:
                    upper = value
        super().__init__(nx, ny, nz, lower=lower, upper=upper)

    @property
    def domain_bounds_lower_corner(self):
        _deprecated_bound("domain_bounds_lower_corner", "lower")
        return self.lower

    @domain_bounds_lower_corner.setter
    def domain_bounds_lower_corner(self, value):
        _deprecated_bound("domain_bounds_lower_corner", "lower")
        self.lower = value

    @property
    def domain_bounds_upper_corner(self):
        _deprecated_bound("domain_bounds_upper_corner", "upper")
        return self.upper

    @domain_bounds_upper_corner.setter
    def domain_bounds_upper_corner(self, value):
        _deprecated_bound("domain_bounds_upper_corner", "upper")
        self.upper = value

    def surface(self, field, threshold: float) -> None:
        """Extract `field == threshold` into `self.verts` and `self.indices`; `field` must
        have the instance's shape."""
        self._check_field_shape(field)
        self.verts, self.indices = self.extract(field, threshold, lower=self.lower, upper=self.upper)

    @classmethod
    def extract(cls, field, threshold: float = 0.0, *, lower=None, upper=None):
        """(verts: vec3 array, indices: flat int32 array) of the surface `field ==
        threshold`; node (0, 0, 0) at `lower`, node (nx-1, ny-1, nz-1) at `upper`."""
        from ..runtime.array_create import empty, zeros
        from ..runtime.launch import launch
        from ..types import int32, vec3
        from ..utils import array_scan
        from . import mc_kernels as k

        validate_field(field)
        origin, delta = resolve_domain_bounds(field.shape, lower, upper)
        threshold = float(threshold)
        device = field.device
        nx, ny, nz = field.shape
        case_range, tri_edges, edge_offsets = _tables(device)

        n_edges = nx * ny * nz * 3
        edge_count = zeros(n_edges, dtype=int32, device=device)
        launch(k.count_edge_vertices, (nx, ny, nz, 3), inputs=[field, threshold, edge_count], device=device,
               record_tape=False)
        edge_end = zeros(n_edges, dtype=int32, device=device)
        array_scan(edge_count, edge_end, inclusive=True)
        verts = empty(_last(edge_end), dtype=vec3, device=device, requires_grad=field.requires_grad)
        edge_vertex = empty((nx, ny, nz, 3), dtype=int32, device=device)
        launch(k.write_edge_vertices, (nx, ny, nz, 3),
               inputs=[field, threshold, origin, delta, edge_end], outputs=[verts, edge_vertex], device=device)

        cells = (nx - 1, ny - 1, nz - 1)
        n_cells = cells[0] * cells[1] * cells[2]
        tri_count = zeros(n_cells, dtype=int32, device=device)
        launch(k.count_cell_triangles, cells, inputs=[field, threshold, case_range, tri_count], device=device,
               record_tape=False)
        tri_end = zeros(n_cells, dtype=int32, device=device)
        array_scan(tri_count, tri_end, inclusive=True)
        indices = empty(3 * _last(tri_end), dtype=int32, device=device)
        launch(k.write_cell_triangles, cells, inputs=[field, threshold, case_range, tri_edges, edge_offsets,
                                                      edge_vertex, tri_end], outputs=[indices],
               device=device, record_tape=False)
        return verts, indices

    @staticmethod
    def extract_surface_marching_cubes(field, threshold: float = 0.0, domain_bounds_lower_corner=None,
                                       domain_bounds_upper_corner=None):
        """Deprecated: `IsoSurfaceMarchingCubes.extract`."""
        log_warning("IsoSurfaceMarchingCubes.extract_surface_marching_cubes() is deprecated and will be removed "
                    "in a future version of Warp. Use IsoSurfaceMarchingCubes.extract() instead.",
                    category=DeprecationWarning, stacklevel=1)
        return IsoSurfaceMarchingCubes.extract(field, threshold, lower=domain_bounds_lower_corner,
                                               upper=domain_bounds_upper_corner)
