"""Mesh: a triangle mesh with a BVH over its triangles, that kernels query by id.

`id` is the address of a descriptor whose first bvh.WORDS words are a BVH descriptor (over
the triangles' boxes, so `mesh_get_bvh(id)` is `id` itself and the bvh_query_* builtins
work on it), followed by the mesh's own words: its points, velocities and indices, their
counts, the per-node winding-number data (mesh_kernels.py; 0 without
support_winding_number), the mean edge length (the scale of
`mesh_query_point_sign_normal`'s epsilon), the addresses of the points' and velocities'
gradients (0 where none), which `mesh_get(id).points[i]` differentiates into (as Warp's
array_t carries its grad pointer; taken when the mesh is built, refit or given new arrays),
and the triangles' corners in the BVH's leaf order (the closest-point traversal reads
those; `_leaf_triangles`).
builtins/mesh_funcs.py reads it. As for Bvh, the descriptor outlives the Mesh: a deleted
mesh leaves an empty one behind (no triangles), so a kernel given a stale id finds nothing.
"""

from __future__ import annotations

import numpy as np

from ..runtime import capture
from ..types import float32, int32, vec3f
from . import bvh_build
from .bvh import WORDS as BVH_WORDS
from .bvh import check_groups, group_root_table, publish, resolve_constructor

PTR_POINTS, PTR_VELOCITIES, PTR_INDICES = BVH_WORDS, BVH_WORDS + 1, BVH_WORDS + 2
NUM_POINTS, NUM_TRIS, PTR_WINDING, AVG_EDGE = BVH_WORDS + 3, BVH_WORDS + 4, BVH_WORDS + 5, BVH_WORDS + 6
PTR_POINTS_GRAD, PTR_VELOCITIES_GRAD = BVH_WORDS + 7, BVH_WORDS + 8
PTR_LEAF_TRIS = BVH_WORDS + 9  # the triangles in leaf order (mesh_kernels.leaf_triangles)
MESH_WORDS = BVH_WORDS + 10
LEAF_TRI_WORDS = 10  # per triangle there: the corners a, b, c and the face (int32 bits)
#: float32 words per BVH node of a mesh's winding-number table, and of the moments it is made
#: from (geometry/mesh_kernels.py)
WINDING_WORDS, MOMENT_WORDS = 28, 44

_DESCRIPTORS: list[np.ndarray] = []  # never freed: an id stays readable for the process


def _grad_ptr(a) -> int:
    grad = None if a is None else getattr(a, "grad", None)
    return 0 if grad is None else grad.ptr


class Mesh:
    """A triangle mesh: `points` (wp.vec3), `indices` (int32, three per triangle),
    optional `velocities` (wp.vec3, one per point). Call `refit()` after moving points."""

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self.id = None
        self._desc = None
        return self

    def __init__(self, points, indices, velocities=None, support_winding_number=False, bvh_constructor=None,
                 bvh_leaf_size=None, groups=None):
        if points is None or indices is None:
            raise RuntimeError("Mesh needs points and indices arrays")
        if points.device != indices.device:
            raise RuntimeError("Mesh points and indices must live on the same device")
        if points.dtype is not vec3f or points.ndim != 1 or not points.is_contiguous:
            raise RuntimeError("Mesh points should be a contiguous array of type wp.vec3")
        if velocities is not None and (velocities.dtype is not vec3f or not velocities.is_contiguous
                                       or velocities.ndim != 1):
            raise RuntimeError("Mesh velocities should be a contiguous array of type wp.vec3")
        if velocities is not None and velocities.shape[0] != points.shape[0]:
            raise RuntimeError("Mesh velocities must have one entry per point")
        if indices.dtype is not int32 or not indices.is_contiguous:
            raise RuntimeError("Mesh indices should be a contiguous array of type wp.int32")
        if indices.ndim != 1:
            raise RuntimeError("Mesh indices should be a flattened 1d array of indices")
        if indices.shape[0] % 3 != 0:
            raise RuntimeError(f"Mesh indices must hold three indices per triangle; got {indices.shape[0]}, "
                               "not a multiple of 3")
        num_tris = indices.shape[0] // 3
        if groups is not None:
            if groups.dtype is not int32 or groups.ndim != 1 or not groups.is_contiguous:
                raise RuntimeError("groups should be a contiguous array of type wp.int32")
            if groups.device != points.device:
                raise RuntimeError("groups must live on the same device as points")
            if groups.shape[0] != num_tris:
                raise RuntimeError("groups must have the same length as indices / 3")
            check_groups(groups)
        constructor = resolve_constructor(bvh_constructor, groups, support_winding_number)
        if bvh_leaf_size is None:
            bvh_leaf_size = 4
        elif bvh_leaf_size < 1:
            raise ValueError(f"bvh_leaf_size must be greater than or equal to 1, current value: {bvh_leaf_size}")
        idx = indices.numpy()
        if num_tris == 0:
            raise RuntimeError("Mesh needs at least one triangle (indices is empty)")
        if points.shape[0] == 0:
            raise RuntimeError("Mesh needs at least one point (points is empty)")
        bad = (idx < 0) | (idx >= points.shape[0])
        if bad.any():
            k = int(np.argmax(bad))
            raise RuntimeError(f"Mesh indices out of range: indices[{k}] = {int(idx[k])}, but there are "
                               f"{points.shape[0]} points")
        self.device = points.device
        self._points, self._velocities, self.indices, self.groups = points, velocities, indices, groups
        self.support_winding_number = bool(support_winding_number)
        self._constructor = constructor
        self._leaf_size = int(bvh_leaf_size)
        self._tris = idx.reshape(-1, 3).astype(np.int64)
        self._lowers = self._uppers = None  # the faces' boxes (see _triangle_bounds)
        self._desc = np.zeros(MESH_WORDS, np.int64)
        _DESCRIPTORS.append(self._desc)
        self.id = int(self._desc.ctypes.data)
        capture.handles[self.id] = self
        self._build()

    # Building ------------------------------------------------------------------------------
    def _triangle_bounds(self) -> float:
        """Each face's box into `_lowers`/`_uppers` ((faces, 3) float32, the BVH's primitive
        boxes) in one launch; returns the average edge length."""
        from ..runtime.array import array
        from ..runtime.launch import launch_internal
        from . import mesh_kernels
        if self._lowers is None:
            n = self._tris.shape[0]
            self._lowers, self._uppers = (bvh_build.aligned_empty((n, 3), np.float32) for _ in range(2))
            self._bounds_args = [array(self._lowers, dtype=vec3f, copy=False),
                                 array(self._uppers, dtype=vec3f, copy=False), array(shape=n, dtype=float32)]
        lo, hi, edges = self._bounds_args
        launch_internal(mesh_kernels.triangle_bounds, lo.shape[0], inputs=[self._points, self.indices, lo, hi, edges])
        return float(edges.numpy().sum(dtype=np.float64)) / (3 * lo.shape[0])

    def _build(self):
        average_edge = self._triangle_bounds()
        g = None if self.groups is None else self.groups.numpy().astype(np.int64)
        self._tree = bvh_build.build(self._lowers, self._uppers, self._leaf_size, g, self._constructor == 0)
        self._group_roots = group_root_table(self._tree, g)
        self._publish(average_edge)

    def _publish(self, average_edge: float, leaves_written: bool = False):
        table = self._group_roots
        publish(self._desc, self._tree, self._lowers.ctypes.data, self._uppers.ctypes.data, self._lowers.shape[0],
                0 if table is None else table.ctypes.data, 0 if table is None else table.shape[1])
        d = self._desc
        d[PTR_POINTS] = self._points.ptr
        d[PTR_VELOCITIES] = 0 if self._velocities is None else self._velocities.ptr
        d[PTR_POINTS_GRAD] = _grad_ptr(self._points)
        d[PTR_VELOCITIES_GRAD] = _grad_ptr(self._velocities)
        d[PTR_INDICES] = self.indices.ptr
        d[NUM_POINTS] = self._points.shape[0]
        d[NUM_TRIS] = self._tris.shape[0]
        d[PTR_WINDING] = 0
        if self.support_winding_number:
            self._winding = self._winding_data()
            d[PTR_WINDING] = self._winding.ptr
        if not leaves_written:
            self._leaf_tris = self._leaf_triangles()
        d[PTR_LEAF_TRIS] = self._leaf_tris.ctypes.data
        d.view(np.float32).reshape(MESH_WORDS, 2)[AVG_EDGE, 0] = average_edge

    def _leaf_triangles(self):
        """The corners of the triangles in the order of the BVH's leaves, as of this build
        or refit (the node boxes are too), each with its face index (-(face + 1) for a
        face that point queries skip): see mesh_kernels.leaf_triangles."""
        from ..runtime.launch import launch_internal
        from . import mesh_kernels
        out, out_array = self._leaf_buffer()
        launch_internal(mesh_kernels.leaf_triangles, out.shape[0],
                        inputs=[self._points, self.indices, self._tree.native[2], out_array])
        return out

    def _leaf_buffer(self):
        """The leaf triangles' buffer (numpy, and a weft array over it); a refit keeps the
        topology, so the same buffer."""
        from ..runtime.array import array
        from . import mesh_kernels
        kept = getattr(self, "_leaf_tris_args", None)
        if kept is None or kept[1] is not self._tree:
            out = bvh_build.aligned_empty((self._tree.prims.shape[0], mesh_kernels.LEAF_TRI_WORDS), np.float32)
            kept = self._leaf_tris_args = (out, self._tree, array(out, dtype=float32, copy=False))
        return kept[0], kept[2]

    def _refit_leaves(self) -> float:
        """A refit's first pass: the faces' boxes and the leaf triangles, in one launch;
        returns the average edge length."""
        from ..runtime.launch import launch_internal
        from . import mesh_kernels
        lo, hi, edges = self._bounds_args
        out, out_array = self._leaf_buffer()
        launch_internal(mesh_kernels.refit_leaf_triangles, out.shape[0],
                        inputs=[self._points, self.indices, self._tree.native[2], lo, hi, edges, out_array])
        self._leaf_tris = out
        return float(edges.numpy().sum(dtype=np.float64)) / (3 * lo.shape[0])

    def _winding_data(self):
        from ..runtime.array import empty
        from ..runtime.launch import launch_internal
        from . import mesh_kernels
        boxes, children, perm = self._tree.native
        out = empty((children.shape[0], WINDING_WORDS), dtype=float32)
        moments = empty((children.shape[0], MOMENT_WORDS), dtype=float32)
        launch_internal(mesh_kernels.winding_data, 1, inputs=[self._points, self.indices, perm, children, moments, out])
        return out

    def refit(self):
        """Recompute the BVH bounds from the current points (after moving them in place)."""
        if self._desc is None:
            raise RuntimeError("Failed to refit mesh: this Mesh was not initialised or was destroyed")
        work = self._refit_now
        if not capture.record(work, ("unsaveable", "wp.Mesh.refit()")):
            work()

    def _refit_now(self):
        average_edge = self._refit_leaves()
        bvh_build.refit(self._tree, *self._bounds_args[:2])
        self._publish(average_edge, leaves_written=True)

    # Properties ----------------------------------------------------------------------------
    @property
    def points(self):
        """The mesh's points (wp.vec3); assigning a new array of the same shape refits."""
        return self._points

    @points.setter
    def points(self, points_new):
        self._check_same(points_new, self._points, "points")
        self._points = points_new
        if self._desc is not None:
            self._refit_now()

    @property
    def velocities(self):
        """The mesh's velocities (wp.vec3, or None)."""
        return self._velocities

    @velocities.setter
    def velocities(self, velocities_new):
        if self._velocities is not None:
            self._check_same(velocities_new, self._velocities, "velocities")
        elif velocities_new.dtype is not vec3f or velocities_new.shape != self._points.shape:
            raise RuntimeError("Mesh velocities should be an array of wp.vec3 with one entry per point")
        self._velocities = velocities_new
        if self._desc is not None:
            self._desc[PTR_VELOCITIES] = velocities_new.ptr
            self._desc[PTR_VELOCITIES_GRAD] = _grad_ptr(velocities_new)

    @staticmethod
    def _check_same(new, old, what):
        if new.device != old.device:
            raise RuntimeError(f"The new {what} and the original {what} must live on the same device, the new "
                               f"{what} are on {new.device} while the old ones are on {old.device}.")
        if new.ndim != 1 or new.shape[0] != old.shape[0] or new.dtype is not vec3f or not new.is_contiguous:
            raise RuntimeError(f"The new {what} and the original {what} must have the same shape, the new "
                               f"{what}' shape is {new.shape}, while the old {what}' shape is {old.shape}.")

    def __del__(self):
        desc = getattr(self, "_desc", None)
        if desc is None:
            return
        desc[:] = 0  # a stale id now names a mesh without triangles
        self._desc = None
