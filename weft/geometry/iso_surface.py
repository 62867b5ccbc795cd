"""What the dense-grid iso-surface extractors share (Warp's `IsoSurfaceBase`): the grid size,
the mapping of grid nodes to positions, and the checks of the input field."""

from __future__ import annotations

from abc import ABC, abstractmethod

from ..types import float32, vec3


def validate_field(field) -> None:
    """Raise unless `field` is a 3D float32 array with at least one cell (2 nodes per axis)."""
    shape = tuple(getattr(field, "shape", ()))
    if len(shape) != 3:
        raise ValueError(f"iso-surface extraction: expected a 3D array for 'field', got shape {shape}.")
    if any(n < 2 for n in shape):
        raise ValueError(f"iso-surface extraction: expected 'field' to have at least 2 nodes on each axis, "
                         f"got shape {shape}.")
    if field.dtype != float32:
        raise TypeError(f"iso-surface extraction: expected a dtype of float32 for 'field', got {field.dtype}.")


def resolve_domain_bounds(shape, lower, upper):
    """(position of node (0, 0, 0), cell size per axis); the defaults put node (i, j, k) at
    (i, j, k)."""
    cells = [n - 1 for n in shape[:3]]
    # (as Warp's `vec3(bound)`: a number is that number on each axis)
    lower = vec3(0.0, 0.0, 0.0) if lower is None else vec3(lower)
    upper = vec3(*(float(c) for c in cells)) if upper is None else vec3(upper)
    delta = vec3(*((upper[i] - lower[i]) / cells[i] for i in range(3)))
    return lower, delta


class IsoSurfaceBase(ABC):
    """A reusable extractor for fields of `nx * ny * nz` nodes whose node (0, 0, 0) lies at
    `lower` and node (nx-1, ny-1, nz-1) at `upper` (defaults: node (i, j, k) at (i, j, k)).
    `surface(field, threshold)` fills `verts` (vec3) and `indices` (flat int32)."""

    def __init__(self, nx: int, ny: int, nz: int, *, lower=None, upper=None):
        self.nx, self.ny, self.nz = nx, ny, nz
        self.lower = lower
        self.upper = upper
        self.verts = None
        self.indices = None

    def resize(self, nx: int, ny: int, nz: int) -> None:
        """Use the instance for fields of another size from the next `surface` call on."""
        self.nx, self.ny, self.nz = nx, ny, nz

    def _check_field_shape(self, field) -> None:
        if tuple(field.shape) != (self.nx, self.ny, self.nz):
            raise ValueError(f"Field shape {tuple(field.shape)} does not match context grid dimensions "
                             f"{(self.nx, self.ny, self.nz)}.")

    @abstractmethod
    def surface(self, field, threshold: float) -> None:
        """Extract the surface `field == threshold` into `verts` and `indices`."""

    @classmethod
    @abstractmethod
    def extract(cls, field, threshold: float = 0.0, *, lower=None, upper=None):
        """(verts, indices) of the surface `field == threshold`, with no state kept."""
