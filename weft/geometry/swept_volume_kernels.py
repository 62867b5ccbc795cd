"""Kernels of the swept volume (geometry/swept_volume.py); imported on first use (kernel code
needs the frontend)."""

from __future__ import annotations

import weft as wp


@wp.func
def _rest_point(transforms: wp.array2d(dtype=wp.transform), m: int, s: int, point: wp.vec3):
    # the point in mesh m's rest frame at pose s (a rigid map: distances agree in both frames)
    return wp.transform_point(wp.transform_inverse(transforms[m, s]), point)


# One function instance per sign mode (`query` is the mode's mesh query), so the field
# kernel of a mode compiles only that mode's query (the four together take several times
# as long to compile). A point with no surface within max_dist reads max_dist.

@wp.func
def _sdf_signed(point: wp.vec3, mesh_ids: wp.array(dtype=wp.uint64), transforms: wp.array2d(dtype=wp.transform),
                max_dist: wp.float32, query: wp.Function) -> wp.float32:
    best = max_dist
    for m in range(mesh_ids.shape[0]):
        for s in range(transforms.shape[1]):
            p = _rest_point(transforms, m, s, point)
            q = query(mesh_ids[m], p, max_dist)
            if q.result:
                best = wp.min(best, q.sign * wp.length(p - wp.mesh_eval_position(mesh_ids[m], q.face, q.u, q.v)))
    return best


@wp.func
def _sdf_unsigned(point: wp.vec3, mesh_ids: wp.array(dtype=wp.uint64), transforms: wp.array2d(dtype=wp.transform),
                  max_dist: wp.float32) -> wp.float32:
    best = max_dist
    for m in range(mesh_ids.shape[0]):
        for s in range(transforms.shape[1]):
            p = _rest_point(transforms, m, s, point)
            # nothing farther than the running minimum can lower it: search only that far
            q = wp.mesh_query_point_no_sign(mesh_ids[m], p, best)
            if q.result:
                best = wp.min(best, wp.length(p - wp.mesh_eval_position(mesh_ids[m], q.face, q.u, q.v)))
    return best


@wp.func
def swept_volume_sdf(point: wp.vec3, mesh_ids: wp.array(dtype=wp.uint64), transforms: wp.array2d(dtype=wp.transform),
                     max_dist: wp.float32, sign_mode: wp.int32) -> wp.float32:
    """min over meshes m and poses s of the signed distance of mesh m at pose transforms[m, s]
    to `point`. `sign_mode` is a SweptVolumeSignMode value (0 normal, 1 winding number, 2
    parity, 3 none). A point with no surface within max_dist reads max_dist (so pass a bound
    that reaches the geometry from every point of interest). Not differentiable."""
    if sign_mode == 1:
        return _sdf_signed(point, mesh_ids, transforms, max_dist, wp.mesh_query_point_sign_winding_number)
    if sign_mode == 2:
        return _sdf_signed(point, mesh_ids, transforms, max_dist, wp.mesh_query_point_sign_parity)
    if sign_mode == 3:
        return _sdf_unsigned(point, mesh_ids, transforms, max_dist)
    return _sdf_signed(point, mesh_ids, transforms, max_dist, wp.mesh_query_point_sign_normal)


@wp.func
def _node(origin: wp.vec3, spacing: wp.vec3, i: int, j: int, k: int):
    return origin + wp.cw_mul(spacing, wp.vec3(float(i), float(j), float(k)))


@wp.kernel(enable_backward=False)
def field_normal(mesh_ids: wp.array(dtype=wp.uint64), transforms: wp.array2d(dtype=wp.transform), origin: wp.vec3,
                 spacing: wp.vec3, max_dist: wp.float32, field: wp.array3d(dtype=wp.float32)):
    i, j, k = wp.tid()
    field[i, j, k] = _sdf_signed(_node(origin, spacing, i, j, k), mesh_ids, transforms, max_dist,
                                  wp.mesh_query_point_sign_normal)


@wp.kernel(enable_backward=False)
def field_winding(mesh_ids: wp.array(dtype=wp.uint64), transforms: wp.array2d(dtype=wp.transform), origin: wp.vec3,
                  spacing: wp.vec3, max_dist: wp.float32, field: wp.array3d(dtype=wp.float32)):
    i, j, k = wp.tid()
    field[i, j, k] = _sdf_signed(_node(origin, spacing, i, j, k), mesh_ids, transforms, max_dist,
                                  wp.mesh_query_point_sign_winding_number)


@wp.kernel(enable_backward=False)
def field_parity(mesh_ids: wp.array(dtype=wp.uint64), transforms: wp.array2d(dtype=wp.transform), origin: wp.vec3,
                 spacing: wp.vec3, max_dist: wp.float32, field: wp.array3d(dtype=wp.float32)):
    i, j, k = wp.tid()
    field[i, j, k] = _sdf_signed(_node(origin, spacing, i, j, k), mesh_ids, transforms, max_dist,
                                  wp.mesh_query_point_sign_parity)


@wp.kernel(enable_backward=False)
def field_unsigned(mesh_ids: wp.array(dtype=wp.uint64), transforms: wp.array2d(dtype=wp.transform),
                   origin: wp.vec3, spacing: wp.vec3, max_dist: wp.float32, field: wp.array3d(dtype=wp.float32)):
    i, j, k = wp.tid()
    field[i, j, k] = _sdf_unsigned(_node(origin, spacing, i, j, k), mesh_ids, transforms, max_dist)


FIELD_KERNELS = (field_normal, field_winding, field_parity, field_unsigned)  # by SweptVolumeSignMode value


@wp.kernel(enable_backward=False)
def mesh_box(points: wp.array(dtype=wp.vec3), slot: int, lower: wp.array(dtype=wp.vec3),
             upper: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    wp.atomic_min(lower, slot, points[i])
    wp.atomic_max(upper, slot, points[i])


@wp.kernel(enable_backward=False)
def posed_box(mesh_lower: wp.array(dtype=wp.vec3), mesh_upper: wp.array(dtype=wp.vec3),
              transforms: wp.array2d(dtype=wp.transform), lower: wp.array(dtype=wp.vec3),
              upper: wp.array(dtype=wp.vec3)):
    """The axis-aligned box of the eight corners of mesh m's rest box moved by pose s."""
    m, s = wp.tid()
    lo = mesh_lower[m]
    hi = mesh_upper[m]
    if lo[0] > hi[0]:  # an empty mesh
        return
    for c in range(8):
        corner = wp.vec3(wp.where((c & 1) == 0, lo[0], hi[0]), wp.where((c & 2) == 0, lo[1], hi[1]),
                         wp.where((c & 4) == 0, lo[2], hi[2]))
        p = wp.transform_point(transforms[m, s], corner)
        wp.atomic_min(lower, 0, p)
        wp.atomic_max(upper, 0, p)
