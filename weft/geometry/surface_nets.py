"""Surface nets iso-surface extraction from a dense 3D float32 field (Warp's
`warp.geometry.IsoSurfaceNets`), in the uniform (non-adaptive) form of OpenVDB's mesher.

Each cell the surface passes through gets one vertex per sheet of the surface inside it
(sn_tables.py groups the cell's crossed edges into sheets; a cell that is a tube through a
face, as is its neighbour across it, uses its complement's sheets), at the mean of the points where
the field, interpolated linearly along the sheet's edges, meets the threshold. Around every
crossed grid edge inside the grid, the vertices of the four cells sharing it make one quad
(or its two triangles (0, 1, 2), (0, 2, 3)), wound counter-clockwise seen from where the field
is above the threshold (outward for a signed distance field). A surface inside the grid gives
a closed manifold mesh; one that leaves the grid is left open there, and sheets whose edges
all lie on the grid's boundary get no vertex. Vertices are ordered by cell (i, then j, then
k) and sheet, faces by cell and then x, y, z edge. Vertex positions are differentiable in the
field (a Tape records their kernel); classification and faces are discrete.
"""

from __future__ import annotations

import numpy as np

from . import sn_tables
from .iso_surface import IsoSurfaceBase, resolve_domain_bounds, validate_field

# the tables under Warp's names (warp._src.geometry.surface_nets reads them)
_SN_CORNER_OFFSETS = sn_tables.CORNER_OFFSETS
_SN_EDGE_TO_CORNERS = sn_tables.EDGE_TO_CORNERS
_SN_EDGE_GROUP_TABLE = sn_tables.EDGE_GROUP_TABLE
_SN_AMBIGUOUS_FACE = sn_tables.AMBIGUOUS_FACE

_TOPOLOGIES = ("triangle", "quad")
_tables_by_device: dict = {}


def _validate_topology(topology) -> None:
    if topology not in _TOPOLOGIES:
        raise ValueError(f"IsoSurfaceNets: expected 'topology' to be one of {_TOPOLOGIES}, got {topology!r}.")


def _tables(device):
    key = str(device)
    if key not in _tables_by_device:
        from ..runtime.array import array
        from ..types import int32
        edges = []
        for a, b in sn_tables.EDGE_TO_CORNERS:
            pa, pb = sn_tables.CORNER_OFFSETS[a], sn_tables.CORNER_OFFSETS[b]
            axis = next(d for d in range(3) if pa[d] != pb[d])
            edges.append([min(pa[d], pb[d]) for d in range(3)] + [axis])

        def arr(x):
            return array(np.asarray(x, dtype=np.int32), dtype=int32, device=device)
        _tables_by_device[key] = (arr(sn_tables.EDGE_GROUP_TABLE), arr(sn_tables.AMBIGUOUS_FACE), arr(edges),
                                  arr(sn_tables.CORNER_OFFSETS),
                                  arr(sn_tables.EDGE_TO_CORNERS))
    return _tables_by_device[key]


def _last(a) -> int:
    return int(a.numpy()[-1]) if a.shape[0] else 0


def surface_nets_extract(field, threshold, lower, delta, topology="triangle"):
    """(verts, flat int32 indices) of the surface `field == threshold`; node (i, j, k) at
    lower + (i, j, k) * delta; 3 indices per face for "triangle" (two per quad), 4 for "quad"."""
    from ..runtime.array_create import empty, zeros
    from ..runtime.launch import launch
    from ..types import int32, vec3
    from ..utils import array_scan
    from . import sn_kernels as k
    device = field.device
    threshold = float(threshold)
    nx, ny, nz = field.shape
    cells = (nx - 1, ny - 1, nz - 1)
    n_cells = cells[0] * cells[1] * cells[2]
    table, ambiguous, edges, corners, edge_corners = _tables(device)
    signs = empty(n_cells, dtype=int32, device=device)
    codes = empty(n_cells, dtype=int32, device=device)
    masks = empty(n_cells, dtype=int32, device=device)
    vert_counts = empty(n_cells, dtype=int32, device=device)
    face_counts = empty(n_cells, dtype=int32, device=device)
    launch(k.classify, cells, inputs=[field, threshold, table, ambiguous, edges],
           outputs=[signs, codes, masks, vert_counts, face_counts], device=device, record_tape=False)
    vert_ends = zeros(n_cells, dtype=int32, device=device)
    array_scan(vert_counts, vert_ends, inclusive=True)
    face_ends = zeros(n_cells, dtype=int32, device=device)
    array_scan(face_counts, face_ends, inclusive=True)
    verts = empty(_last(vert_ends), dtype=vec3, device=device, requires_grad=field.requires_grad)
    launch(k.place_vertices, cells, inputs=[field, threshold, vec3(*lower), vec3(*delta), table, corners, edge_corners,
                                            codes, masks, vert_ends], outputs=[verts], device=device)
    per_face = 4 if topology == "quad" else 6
    indices = empty(per_face * _last(face_ends), dtype=int32, device=device)
    launch(k.stitch, cells, inputs=[ny, nz, table, signs, codes, masks, vert_ends, vert_counts, face_ends, face_counts,
                                    per_face], outputs=[indices], device=device, record_tape=False)
    return verts, indices


class IsoSurfaceNets(IsoSurfaceBase):
    """Reusable surface-nets extractor for fields of `nx * ny * nz` nodes (see the module
    docstring); `topology` ("triangle" or "quad") picks the faces `surface` writes."""

    def __init__(self, nx: int, ny: int, nz: int, *, lower=None, upper=None, topology: str = "triangle"):
        _validate_topology(topology)
        super().__init__(nx, ny, nz, lower=lower, upper=upper)
        self.topology = topology

    def surface(self, field, threshold: float) -> None:
        """Extract `field == threshold` into `self.verts` and `self.indices`; `field` must
        have the instance's shape."""
        self._check_field_shape(field)
        self.verts, self.indices = self.extract(field, threshold, lower=self.lower, upper=self.upper,
                                                topology=self.topology)

    @classmethod
    def extract(cls, field, threshold: float = 0.0, *, lower=None, upper=None, topology: str = "triangle"):
        """(verts: vec3 array, indices: flat int32 array) of the surface `field == threshold`;
        node (0, 0, 0) at `lower`, node (nx-1, ny-1, nz-1) at `upper`."""
        validate_field(field)
        _validate_topology(topology)
        lower, delta = resolve_domain_bounds(field.shape, lower, upper)
        return surface_nets_extract(field, threshold, lower, delta, topology)
