"""Swept volume (motion envelope) of rigid meshes moved through sampled poses (Warp's
`warp.geometry.swept_volume_*`).

The field at a world point p is min over meshes m and poses s of the signed distance of the
rest-pose mesh m at X[m, s]^-1 p: the poses are rigid, so instead of moving the geometry the
point is moved back into each mesh's rest frame. It is sampled on a dense grid ("dense time
stamping") and its level set is extracted with marching cubes. Forward only.

Poses: `transforms` is a 2D array of `wp.transform` of shape (num_meshes, num_samples), or
anything numpy reads as shape (num_meshes, num_samples, 7): translation xyz then quaternion
xyzw.
"""

from __future__ import annotations

import enum
import math

import numpy as np


class SweptVolumeSignMode(enum.IntEnum):
    """How a point is classified inside/outside a mesh (the value is passed to kernels)."""

    NORMAL = 0  # mesh_query_point_sign_normal
    WINDING_NUMBER = 1  # mesh_query_point_sign_winding_number (mesh needs support_winding_number=True)
    PARITY = 2  # mesh_query_point_sign_parity
    NO_SIGN = 3  # unsigned distance: positive everywhere, only a threshold > 0 level is meaningful


def _kernels():
    from . import swept_volume_kernels
    return swept_volume_kernels


def _as_transforms(transforms, device):
    from ..runtime.array import array
    from ..types import transform
    if hasattr(transforms, "dtype") and hasattr(transforms, "ndim") and hasattr(transforms, "device") \
            and not isinstance(transforms, np.ndarray):
        if transforms.ndim != 2:
            raise ValueError("swept volume: 'transforms' must be a 2D array of shape (num_meshes, num_samples), "
                             f"got ndim {transforms.ndim}.")
        if transforms.dtype != transform:
            raise TypeError(f"swept volume: 'transforms' must have dtype wp.transform, got {transforms.dtype}.")
        return transforms if str(transforms.device) == str(device) else transforms.to(device)
    arr = np.asarray(transforms, dtype=np.float32)
    if arr.ndim != 3 or arr.shape[2] != 7:
        raise ValueError("swept volume: 'transforms' must be a wp.array2d(dtype=wp.transform) or an array of "
                         f"shape (num_meshes, num_samples, 7), got shape {arr.shape}.")
    return array(np.ascontiguousarray(arr), dtype=transform, device=device)


def _check_transforms(meshes, transforms) -> None:
    if transforms.shape[0] != len(meshes):
        raise ValueError(f"swept volume: 'transforms' has {transforms.shape[0]} rows but there are "
                         f"{len(meshes)} meshes.")
    if transforms.shape[1] == 0:
        raise ValueError("swept volume: 'transforms' must contain at least one pose sample.")


def _resolve_device(meshes, device):
    from ..runtime.device import get_device
    if len(meshes) == 0:
        raise ValueError("swept volume: 'meshes' must contain at least one mesh.")
    return get_device(device) if device is not None else meshes[0].device


def _posed_bounds(meshes, transforms, margin, device):
    """(lower, upper) vec3 of every mesh's rest-pose box moved by every pose, widened by margin."""
    from ..runtime.array_create import full
    from ..runtime.launch import launch
    from ..types import vec3
    k = _kernels()
    num_meshes, num_samples = transforms.shape[0], transforms.shape[1]
    inf, ninf = vec3(math.inf, math.inf, math.inf), vec3(-math.inf, -math.inf, -math.inf)
    mesh_lower = full(num_meshes, inf, dtype=vec3, device=device)
    mesh_upper = full(num_meshes, ninf, dtype=vec3, device=device)
    for m, mesh in enumerate(meshes):
        if mesh.points.shape[0] > 0:
            launch(k.mesh_box, mesh.points.shape[0], inputs=[mesh.points, m], outputs=[mesh_lower, mesh_upper],
                   device=device, record_tape=False)
    lower = full(1, inf, dtype=vec3, device=device)
    upper = full(1, ninf, dtype=vec3, device=device)
    launch(k.posed_box, (num_meshes, num_samples), inputs=[mesh_lower, mesh_upper, transforms],
           outputs=[lower, upper], device=device, record_tape=False)
    lo, hi = lower.numpy()[0], upper.numpy()[0]
    if not math.isfinite(float(lo[0])):
        raise ValueError("swept volume: cannot bound the swept volume, every input mesh is empty.")
    return (vec3(*(float(lo[a]) - margin for a in range(3))), vec3(*(float(hi[a]) + margin for a in range(3))))


def swept_volume_bounds(meshes, transforms, padding: float = 0.0, device=None):
    """(lower, upper) world-space bounds of every mesh over every pose, widened by `padding` on
    every side: pass them (or a union of several) as `lower`/`upper` to `swept_volume_field` so
    several fields share a grid."""
    device = _resolve_device(meshes, device)
    transforms = _as_transforms(transforms, device)
    _check_transforms(meshes, transforms)
    return _posed_bounds(meshes, transforms, float(padding), device)


def _grid(meshes, transforms, voxel_size, resolution, lower, upper, extra_padding, device):
    """(lower, upper, node counts, tight lower, tight upper) of the sampling grid."""
    from ..types import vec3
    if (lower is None) != (upper is None):
        raise ValueError("swept volume: pass both 'lower' and 'upper', or neither.")
    if voxel_size is not None and resolution is not None:
        raise ValueError("swept volume: pass either 'voxel_size' or 'resolution', not both.")
    if voxel_size is None and resolution is None:
        raise ValueError("swept volume: provide either 'voxel_size' or 'resolution'.")
    if voxel_size is not None and not voxel_size > 0.0:
        raise ValueError(f"swept volume: 'voxel_size' must be positive, got {voxel_size}.")
    dims = None
    if resolution is not None:
        dims = tuple(int(n) for n in resolution)
        if len(dims) != 3:
            raise ValueError(f"swept volume: 'resolution' must have exactly 3 entries, got {dims}.")
        if any(n < 2 for n in dims):
            raise ValueError(f"swept volume: 'resolution' must be at least 2 along each axis, got {dims}.")
    tight_lower, tight_upper = _posed_bounds(meshes, transforms, 0.0, device)
    extent = [tight_upper[a] - tight_lower[a] for a in range(3)]
    if lower is not None:
        if voxel_size is not None:
            raise ValueError("swept volume: 'voxel_size' cannot be combined with explicit 'lower'/'upper' (the "
                             "domain could not be a whole number of cells); pass 'resolution' instead.")
        lower = vec3(*(float(c) for c in lower))
        upper = vec3(*(float(c) for c in upper))
        if any(upper[a] <= lower[a] for a in range(3)):
            raise ValueError(f"swept volume: 'upper' {upper} must exceed 'lower' {lower} on every axis.")
        return lower, upper, dims, tight_lower, tight_upper
    if voxel_size is not None:
        # the bounds padded by the level plus two cells, grown to whole cells of exactly voxel_size
        voxel_size = float(voxel_size)
        pad = extra_padding + 2.0 * voxel_size
        dims = tuple(max(2, int(math.ceil((extent[a] + 2.0 * pad) / voxel_size)) + 1) for a in range(3))
        grow = [0.5 * ((dims[a] - 1) * voxel_size - extent[a]) for a in range(3)]
    else:
        grow = [extra_padding + 2.0 * extent[a] / (dims[a] - 1) for a in range(3)]
    lower = vec3(*(tight_lower[a] - grow[a] for a in range(3)))
    upper = vec3(*(tight_upper[a] + grow[a] for a in range(3)))
    return lower, upper, dims, tight_lower, tight_upper


def swept_volume_field(meshes, transforms, voxel_size=None, *, resolution=None, lower=None, upper=None,
                       sign_mode=SweptVolumeSignMode.WINDING_NUMBER, device=None):
    """(field, lower, upper): the swept-volume signed distance sampled on a grid of float32
    nodes, node (0, 0, 0) at `lower` and the last node at `upper`. Negative inside the union of
    the posed meshes (never with NO_SIGN). Size the grid with `voxel_size` (exact spacing; the
    domain is the posed bounds plus two cells, grown to whole cells) or `resolution` (node
    counts, optionally with an explicit `lower`/`upper`). Forward only."""
    from ..runtime.array import array
    from ..runtime.array_create import empty
    from ..runtime.launch import launch
    from ..types import float32, uint64, vec3
    device = _resolve_device(meshes, device)
    sign_mode = SweptVolumeSignMode(int(sign_mode))
    for i, mesh in enumerate(meshes):
        if str(mesh.device) != str(device):
            raise ValueError(f"swept_volume_field: 'meshes[{i}]' is on device '{mesh.device}' but the launch "
                             f"device is '{device}'.")
        if sign_mode == SweptVolumeSignMode.WINDING_NUMBER and not mesh.support_winding_number:
            raise ValueError(f"swept_volume_field: 'meshes[{i}]' was not built with support_winding_number=True, "
                             "which SweptVolumeSignMode.WINDING_NUMBER (the default) needs; rebuild it with "
                             "wp.Mesh(..., support_winding_number=True) or pass another sign_mode.")
    transforms = _as_transforms(transforms, device)
    _check_transforms(meshes, transforms)
    lower, upper, dims, tight_lower, tight_upper = _grid(meshes, transforms, voxel_size, resolution, lower, upper,
                                                         0.0, device)
    spacing = vec3(*((upper[a] - lower[a]) / (dims[a] - 1) for a in range(3)))
    # a closest-point query that finds nothing gives no sign: let every node reach the geometry,
    # also when an explicit domain lies inside the solid or away from it
    span = [max(upper[a], tight_upper[a]) - min(lower[a], tight_lower[a]) for a in range(3)]
    max_dist = math.sqrt(sum(s * s for s in span))
    ids = array(np.array([mesh.id for mesh in meshes], dtype=np.uint64), dtype=uint64, device=device)
    field = empty(dims, dtype=float32, device=device)
    launch(_kernels().FIELD_KERNELS[int(sign_mode)], dims, inputs=[ids, transforms, lower, spacing, float(max_dist)],
           outputs=[field], device=device, record_tape=False)
    return field, lower, upper


def swept_volume_mesh(meshes, transforms, voxel_size=None, *, resolution=None, lower=None, upper=None,
                      threshold: float = 0.0, sign_mode=SweptVolumeSignMode.WINDING_NUMBER, device=None):
    """(vertices, indices): marching cubes of `swept_volume_field` at `threshold`, in world
    coordinates. The default domain is padded by `threshold` too so the level is not clipped;
    every sampled pose is enclosed once threshold > half a cell diagonal. NO_SIGN needs
    threshold > 0."""
    from .marching_cubes import IsoSurfaceMarchingCubes
    sign_mode = SweptVolumeSignMode(int(sign_mode))
    if sign_mode == SweptVolumeSignMode.NO_SIGN and not threshold > 0.0:
        raise ValueError(f"swept_volume_mesh: 'threshold' must be positive with SweptVolumeSignMode.NO_SIGN "
                         f"(the unsigned field has no zero level), got {threshold}.")
    device = _resolve_device(meshes, device)
    transforms = _as_transforms(transforms, device)
    _check_transforms(meshes, transforms)
    lower, upper, dims, _, _ = _grid(meshes, transforms, voxel_size, resolution, lower, upper,
                                     max(float(threshold), 0.0), device)
    field, lower, upper = swept_volume_field(meshes, transforms, resolution=dims, lower=lower, upper=upper,
                                             sign_mode=sign_mode, device=device)
    return IsoSurfaceMarchingCubes.extract(field, threshold=threshold, lower=lower, upper=upper)
