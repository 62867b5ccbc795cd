"""HashGrid: points bucketed by cell in a periodic grid of cells, for neighbour queries.

Semantics are Warp's (native/hashgrid.h): a point p falls in the integer cell
floor(p / cell_width) per axis; cell coordinates wrap modulo (dim_x, dim_y, dim_z), so far
apart points may share a bucket (a query then checks the distance itself). A build sorts the
point indices by cell (stably: within a cell by point index, as Warp's radix sort does), or
by (cell, group) when groups are given, and records where each cell's run starts and ends.

Kernels see the grid through `id`, the address of a small descriptor block (pointers to
the sorted indices, the cell ranges and the sorted groups, the dimensions and the inverse
cell width), which builtins/hash_grid_funcs.py reads. The descriptor lives for the whole
process: a grid that was deleted leaves an empty descriptor behind (null pointers, no
points), so a kernel handed a stale id finds no neighbours instead of reading freed memory.

A build is a counting sort by cell with kernels on all cores (hash_grid_build.py), and one
prefix sum over the cells on the host; a grid with a cell of more than _MAX_RUN points
orders them with numpy's stable argsort instead.
"""

from __future__ import annotations

import operator

import numpy as np

from ..runtime import capture
from ..runtime.array import array
from ..runtime.array import empty as array_empty
from ..runtime.array import zeros as array_zeros
from ..runtime.device import get_device
from ..runtime.launch import launch_internal
from ..types import float16, float32, float64, int32, uint32, vec3d, vec3f, vec3h

# Descriptor words (int64 each); builtins/hash_grid_funcs.py reads them by these indices.
PTR_POINT_IDS, PTR_CELL_STARTS, PTR_CELL_ENDS, PTR_GROUPS = 0, 1, 2, 3
DIM_X, DIM_Y, DIM_Z, NUM_POINTS, HAS_GROUPS = 4, 5, 6, 7, 8
INV_F16, INV_F32, INV_F64 = 9, 10, 11  # 1 / cell width in each precision (low bytes of the word)
_WORDS = 12

_MAX_CELLS = (1 << 31) - 1
_MAX_RUN = 64  # longest cell run sorted in place by one thread; longer: numpy's stable sort
_VEC_TYPES = {float16: vec3h, float32: vec3f, float64: vec3d}
_DESCRIPTORS: list[np.ndarray] = []  # never freed: an id stays readable for the process


class HashGrid:
    """A hash grid of dim_x * dim_y * dim_z cells over points of `dtype` precision
    (float32 by default; float16, float64). Build it with `build(points, radius)`; pass
    `id` to kernels (`hash_grid_query`, `hash_grid_point_id`)."""

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self.id = None
        return self

    def __init__(self, dim_x, dim_y, dim_z, device=None, dtype=None):
        dtype = float32 if dtype is None else dtype
        if dtype not in _VEC_TYPES:
            raise TypeError(f"Unsupported dtype {dtype} for HashGrid. Supported types: float16, float32, float64")
        try:
            dims = tuple(operator.index(d) for d in (dim_x, dim_y, dim_z))
        except TypeError as e:
            raise TypeError("HashGrid dimensions must be integers") from e
        if min(dims) <= 0:
            raise RuntimeError("Hash grid dimensions must be positive")
        cells = dims[0] * dims[1] * dims[2]
        if cells > _MAX_CELLS:
            raise RuntimeError("Hash grid cell count exceeds supported limit: "
                               f"{dims[0]} * {dims[1]} * {dims[2]} = {cells} > {_MAX_CELLS}")
        self.device = get_device(device)
        self.dtype = dtype
        self._vec_type = _VEC_TYPES[dtype]
        self._dims = dims
        self._cell_starts = array_zeros(cells, dtype=int32, device=self.device)
        self._cell_ends = array_zeros(cells, dtype=int32, device=self.device)
        self._cell_counts = array_zeros(cells, dtype=int32, device=self.device)
        self._no_keys = array_zeros(1, dtype=uint32, device=self.device)
        self._point_ids = None
        self._groups_sorted = None
        self._desc = np.zeros(_WORDS, np.int64)
        _DESCRIPTORS.append(self._desc)
        self._desc[[DIM_X, DIM_Y, DIM_Z]] = dims
        self._desc[PTR_CELL_STARTS] = self._cell_starts.ptr
        self._desc[PTR_CELL_ENDS] = self._cell_ends.ptr
        self.id = int(self._desc.ctypes.data)
        capture.handles[self.id] = self
        self.reserved = False
        self.groups = None

    # Building ------------------------------------------------------------------------------
    def build(self, points, radius, groups=None):
        """Bucket `points` (an array of vec3 of the grid's precision, any shape) into cells
        `radius` wide; `groups` (int32, one per point) partitions each cell by group id."""
        if getattr(points, "dtype", None) is not self._vec_type:
            raise TypeError(f"Hash grid points should have type {self._vec_type.__name__}, "
                            f"got {getattr(points, 'dtype', type(points))}")
        if not radius > 0.0:
            raise ValueError(f"Hash grid cell width must be positive, got {radius}")
        if points.device != self.device:
            raise RuntimeError("points must live on the same device as this HashGrid")
        if groups is not None:
            if groups.dtype is not int32:
                raise RuntimeError("groups should be an array of type wp.int32")
            if groups.device != self.device:
                raise RuntimeError("groups must live on the same device as this HashGrid")
            if groups.size != points.size:
                raise RuntimeError("groups must have the same length as points")
        graph = capture.active_graph(self.device) if capture.capturing() else None
        if graph is not None and getattr(graph, "apic", False):
            raise NotImplementedError("HashGrid.build() cannot be used in a saveable APIC capture because "
                                      "HashGrid serialization is not yet supported; use apic=False or build "
                                      "outside capture")
        self.groups = groups
        self.reserved = True
        work = lambda: self._build_now(points, float(radius), groups)  # noqa: E731
        if not capture.record(work):  # inside a graph capture: runs when the graph does
            work()

    def _build_now(self, points, radius, groups):
        from . import hash_grid_build as k  # kernels: imported on the first build
        np_t = self.dtype.np_dtype.type
        inv = np_t(1) / np_t(radius)
        if points.ndim > 1 or not points.is_contiguous:
            points = points.contiguous().flatten()
        n, dev = points.shape[0], self.device
        g = None
        if groups is not None:
            g = np.ascontiguousarray(groups.numpy().reshape(-1).astype(np.int32).view(np.uint32))
        self._cell_counts.zero_()
        cells, slots = array_empty(n, dtype=int32, device=dev), array_empty(n, dtype=int32, device=dev)
        ids = array_empty(n, dtype=int32, device=dev)
        if n:
            launch_internal(k.point_cells, n, inputs=[points, inv, *self._dims, cells, slots, self._cell_counts],
                            device=dev)
            counts = self._cell_counts.numpy()
            starts = self._cell_starts.numpy()
            np.cumsum(counts, out=starts)
            starts -= counts  # exclusive
            self._cell_ends.numpy()[:] = starts + counts
            if counts.max() <= _MAX_RUN:
                launch_internal(k.scatter, n, inputs=[cells, slots, self._cell_starts, ids], device=dev)
                keys = array(g, dtype=uint32, device=dev, copy=False) if g is not None else self._no_keys
                launch_internal(k.sort_runs, n, inputs=[cells, slots, self._cell_starts, self._cell_counts, ids, keys,
                                                        int(g is not None)], device=dev)
            else:  # long runs (many points in one cell): a stable sort instead of insertion sorts
                c = cells.numpy().astype(np.uint64)
                order = np.argsort((c << np.uint64(32)) | g if g is not None else c, kind="stable")
                ids.numpy()[:] = order
        self._point_ids = ids
        self._groups_sorted = np.ascontiguousarray(g[ids.numpy()]) if g is not None else None
        self._publish(n, inv)

    def _publish(self, n, inv):
        d = self._desc
        d[PTR_POINT_IDS] = self._point_ids.ptr if n else 0
        d[PTR_GROUPS] = self._groups_sorted.ctypes.data if self._groups_sorted is not None and n else 0
        d[HAS_GROUPS] = int(self._groups_sorted is not None)
        d[NUM_POINTS] = n
        raw = d.view(np.uint8).reshape(_WORDS, 8)
        raw[INV_F16, :2] = np.frombuffer(np.float16(inv).tobytes(), np.uint8)
        raw[INV_F32, :4] = np.frombuffer(np.float32(inv).tobytes(), np.uint8)
        raw[INV_F64, :8] = np.frombuffer(np.float64(inv).tobytes(), np.uint8)

    def reserve(self, num_points, with_groups=False):
        """Warp reserves buffers ahead of a build; weft's builds allocate as they go, so
        this only checks its arguments (and, as Warp, refuses to run inside a capture)."""
        if capture.capturing():
            raise NotImplementedError("HashGrid.reserve() cannot be called during CPU graph capture; "
                                      "reserve before capture")
        if operator.index(num_points) < 0:
            raise ValueError(f"num_points must be non-negative, got {num_points}")
        self.reserved = True

    def __del__(self):
        desc = getattr(self, "_desc", None)
        if desc is None:
            return
        # no points: queries on a stale id visit nothing and read no cell (see hash_grid_funcs)
        desc[[PTR_POINT_IDS, PTR_GROUPS, NUM_POINTS, HAS_GROUPS, PTR_CELL_STARTS, PTR_CELL_ENDS]] = 0
        self._desc = None
