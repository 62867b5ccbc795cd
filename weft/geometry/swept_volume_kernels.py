"""Kernels of the swept volume (geometry/swept_volume.py); imported on first use (kernel code
needs the frontend)."""

from __future__ import annotations

import weft as wp


@wp.func
def swept_volume_sdf(point: wp.vec3, mesh_ids: wp.array(dtype=wp.uint64), transforms: wp.array2d(dtype=wp.transform),
                     max_dist: wp.float32, sign_mode: wp.int32) -> wp.float32:
    """min over meshes m and poses s of the signed distance of mesh m at pose transforms[m, s]
    to `point` (the point is moved into the rest frame; the poses are rigid so distances
    agree). `sign_mode` is a SweptVolumeSignMode value (0 normal, 1 winding number, 2 parity,
    3 none). A point with no surface within max_dist reads max_dist. Not differentiable."""
    best = max_dist
    for m in range(mesh_ids.shape[0]):
        mesh = mesh_ids[m]
        for s in range(transforms.shape[1]):
            p = wp.transform_point(wp.transform_inverse(transforms[m, s]), point)
            found = False
            face = 0
            u = 0.0
            v = 0.0
            sign = 1.0
            if sign_mode == 1:
                q = wp.mesh_query_point_sign_winding_number(mesh, p, max_dist)
                found, face, u, v, sign = q.result, q.face, q.u, q.v, q.sign
            elif sign_mode == 2:
                q = wp.mesh_query_point_sign_parity(mesh, p, max_dist)
                found, face, u, v, sign = q.result, q.face, q.u, q.v, q.sign
            elif sign_mode == 3:
                # unsigned: nothing farther than the running minimum can lower it
                q = wp.mesh_query_point_no_sign(mesh, p, best)
                found, face, u, v = q.result, q.face, q.u, q.v
            else:
                q = wp.mesh_query_point_sign_normal(mesh, p, max_dist)
                found, face, u, v, sign = q.result, q.face, q.u, q.v, q.sign
            if found:
                d = sign * wp.length(p - wp.mesh_eval_position(mesh, face, u, v))
                best = wp.min(best, d)
    return best


@wp.kernel(enable_backward=False)
def field_kernel(mesh_ids: wp.array(dtype=wp.uint64), transforms: wp.array2d(dtype=wp.transform), origin: wp.vec3,
                 spacing: wp.vec3, max_dist: wp.float32, sign_mode: wp.int32, field: wp.array3d(dtype=wp.float32)):
    i, j, k = wp.tid()
    p = origin + wp.cw_mul(spacing, wp.vec3(float(i), float(j), float(k)))
    field[i, j, k] = swept_volume_sdf(p, mesh_ids, transforms, max_dist, sign_mode)


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
