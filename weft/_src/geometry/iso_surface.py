"""Warp's `warp._src.geometry.iso_surface` as weft provides it: re-exports of
weft/geometry/iso_surface.py."""

from ...geometry.iso_surface import IsoSurfaceBase, resolve_domain_bounds, validate_field  # noqa: F401
