"""Volume: a sparse voxel grid in NanoVDB's own memory layout, which kernels walk directly.

A Volume owns (or aliases) a byte buffer of one or more NanoVDB grids (nanovdb.py reads and
writes the format). Kernels see a volume through `id`: the address of a small descriptor
(the grid's address, its type, the node layout constants of that type and a copy of its
index <-> world map) that builtins/volume_funcs.py reads before walking the grid's
root -> upper -> lower -> leaf nodes. Every grid is validated link by link before it gets
an id. Descriptors live for the whole process; a destroyed volume's descriptor says "no grid"
(null address, type 0), so a kernel handed a stale id reads zeros instead of freed memory.

Semantics (names, signatures, voxel numbering) are Warp 1.19's `wp.Volume`.
"""

from __future__ import annotations

import ctypes
import math
from typing import ClassVar, NamedTuple

import numpy as np

from ..runtime import capture
from ..runtime.array import array
from ..runtime.device import get_device
from ..types import (
    float16,
    float32,
    float64,
    int16,
    int32,
    int64,
    mat33f,
    uint8,
    uint32,
    vec3d,
    vec3f,
    vec4d,
    vec4f,
)
from ..types.scalars import SCALAR_VALUES
from . import nanovdb as nv
from . import nanovdb_check

# Descriptor words (int64); builtins/volume_funcs.py reads them by these indices.
D_GRID, D_TYPE, D_ROOT, D_TILES, D_ROOT_SIZE, D_TILE_SIZE, D_TILE_VALUE, D_BACKGROUND = range(8)
D_STRIDE, D_UPPER_TABLE, D_LOWER_TABLE, D_LEAF_TABLE, D_VALUE_BYTES, D_FIRST_LEAF, D_LEAF_SIZE = range(8, 15)
D_VOXELS = 15
D_MAP = 16  # the grid's map (264 bytes: matf, invmatf, vecf, taperf, matd, invmatd, vecd, taperd)
_WORDS = D_MAP + 33
_DESCRIPTORS: list[np.ndarray] = []  # never freed: an id stays readable for the process
_LIVE: dict[int, int] = {}           # grid address -> id of the live volume over it

# grid type code -> weft value type (grids kernels can read values from)
GRID_DTYPES = {1: float32, 2: float64, 3: int16, 4: int32, 5: int64, 6: vec3f, 7: vec3d, 9: float16,
               10: uint32, 17: vec4f, 18: vec4d, 26: uint8}
_ALLOC_TYPES = {float32: 1, float64: 2, int32: 4, int64: 5, uint32: 10, vec3f: 6, vec3d: 7, vec4f: 17, vec4d: 18}
MAX_INDEXABLE = 2147483647


def _capacity(value, default: int, name: str) -> int:
    """A rebuild capacity (Warp's checks): a positive int that fits uint32."""
    try:
        capacity = int(default if value is None else value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} must be an integer") from e
    if not 0 < capacity < 2**32:
        raise ValueError(f"{name} must be positive and fit in uint32, got {capacity}")
    return capacity


def _status_array(status, device):
    if status is None:
        return None
    if not isinstance(status, array) or status.dtype is not uint32 or status.size < 1:
        raise RuntimeError("status must be a weft array with dtype uint32 and at least one element")
    if status.device != device:
        raise RuntimeError(f"status must be on device {device}")
    return status


def _capacity_flags(grid, info) -> int:
    """Volume.REBUILD_* flags of a built grid against reserved capacities."""
    h = nv.grid_header(grid)
    counts = (h.node_counts[0], h.node_counts[1], h.node_counts[2], h.voxel_count)
    limits = (info.max_leaf_node_count, info.max_lower_node_count, info.max_upper_node_count, info.max_voxel_count)
    return sum(1 << k for k, (n, limit) in enumerate(zip(counts, limits)) if n > limit)


class Volume:
    """Sparse volumetric data structure based on NanoVDB for efficient 3D sampling."""

    CLOSEST = 0
    """Nearest-neighbour sampling (`volume_sample(..., wp.Volume.CLOSEST)`)"""
    LINEAR = 1
    """Trilinear sampling"""
    _NANOVDB_LEAF_TABLE_COUNT: ClassVar[int] = 512

    class RebuildInfo(NamedTuple):
        kind: str | None
        max_voxel_count: int
        max_leaf_node_count: int
        max_lower_node_count: int
        max_upper_node_count: int

    class ActiveStats(NamedTuple):
        voxel_count: int
        leaf_node_count: int
        lower_node_count: int
        upper_node_count: int

    class GridInfo(NamedTuple):
        name: str
        size_in_bytes: int
        grid_index: int
        grid_count: int
        type_str: str
        translation: vec3f
        transform_matrix: mat33f

    class FeatureArrayInfo(NamedTuple):
        name: str
        ptr: int
        value_size: int
        value_count: int
        type_str: str

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self.id = None
        self._desc = None
        return self

    def __init__(self, data: array, copy: bool = True):
        """A volume over `data`, a uint8 array holding one or more NanoVDB grids (as
        `Volume.array()` returns them); `copy=False` aliases it."""
        self._previous_grid = None
        if data is None:
            return
        self.device = get_device(getattr(data, "device", None))
        if isinstance(data, (bytes, bytearray, memoryview)):
            data, copy = array(np.frombuffer(data, np.uint8).copy(), dtype=uint8, device=self.device), False
        if not isinstance(data, array):
            raise TypeError("Volume(data): data must be a uint8 array of NanoVDB grid bytes, "
                            f"got {type(data).__name__}")
        host = data.numpy().reshape(-1).view(np.uint8)
        if copy:
            self._buf = array(np.ascontiguousarray(host), dtype=uint8, device=self.device)
        else:
            self._buf = data
        self._attach(0)

    # internals -------------------------------------------------------------------------------
    def _attach(self, offset, descriptor=None):
        """Validate the grid at byte `offset` of the buffer and publish its descriptor (in
        `descriptor`, the volume's own, when a rebuild keeps its id)."""
        self._offset = offset
        raw = self._bytes()
        self._header = nanovdb_check.check_grid(raw, offset)
        self._features = self._feature_table(raw)
        self._layout = nv.LAYOUT[self._header.grid_type]
        d = descriptor
        if d is None:
            d = np.zeros(_WORDS, np.int64)
            _DESCRIPTORS.append(d)
        self._desc = d
        grid = self._buf.ptr + offset
        L, h = self._layout, self._header
        (o_leaf, _, _, o_root) = np.frombuffer(raw, np.uint64, 4, offset + nv.GRID_SIZE).astype(np.int64)
        root = grid + nv.GRID_SIZE + int(o_root)
        d[D_GRID], d[D_TYPE], d[D_ROOT] = grid, h.grid_type, root
        d[D_TILES] = int(np.frombuffer(raw, np.uint32, 1, offset + nv.GRID_SIZE + int(o_root) + 24)[0])
        d[D_ROOT_SIZE], d[D_TILE_SIZE], d[D_TILE_VALUE] = L.root_size, L.root_tile_size, L.root_tile_off_value
        d[D_BACKGROUND], d[D_STRIDE] = L.root_off_background, L.table_stride
        d[D_UPPER_TABLE], d[D_LOWER_TABLE], d[D_LEAF_TABLE] = L.upper_off_table, L.lower_off_table, L.leaf_off_table
        d[D_VALUE_BYTES], d[D_LEAF_SIZE] = L.value_stride_bits // 8, L.leaf_size
        d[D_FIRST_LEAF] = grid + nv.GRID_SIZE + int(o_leaf)
        d[D_VOXELS] = min(self._indexable_count(), MAX_INDEXABLE)
        d.view(np.uint8)[8 * D_MAP:8 * D_MAP + 264] = np.frombuffer(raw, np.uint8, 264, offset + nv.MAP_OFFSET)
        self.id = int(d.ctypes.data)
        _LIVE[grid] = self.id
        capture.handles[self.id] = self

    def _bytes(self):
        """The whole buffer, as a numpy uint8 array (no copy)."""
        return self._buf.numpy().reshape(-1).view(np.uint8)

    def _grid_bytes(self):
        return self._bytes()[self._offset:self._offset + self._header.grid_size]

    def _check(self):
        if not self.id or self._desc is None or self._desc[D_GRID] == 0:
            raise RuntimeError("Invalid Volume (never created or already destroyed)")

    def _indexable_count(self):
        h = self._header
        if h.grid_type in (nv.ONINDEX, nv.ONINDEXMASK):
            return h.voxel_count
        return h.node_counts[0] * 512

    def _leaf_values(self):
        """(leaf count, 512, *value shape) numpy view of the leaf value tables, in place."""
        t = self._header.grid_type
        shape, scalar = nv.VALUE_NP[t]
        L, n = self._layout, self._header.node_counts[0]
        raw = self._bytes()
        o_leaf = int(np.frombuffer(raw, np.uint64, 1, self._offset + nv.GRID_SIZE)[0])
        start = self._offset + nv.GRID_SIZE + o_leaf + L.leaf_off_table
        item = np.dtype(scalar).itemsize
        base = raw[start:].view(np.uint8)
        return np.lib.stride_tricks.as_strided(base.view(scalar) if base.size % item == 0 else
                                               base[:base.size - base.size % item].view(scalar),
                                               shape=(n, 512, *shape),
                                               strides=(L.leaf_size, L.value_stride_bits // 8,
                                                        *((item,) if shape else ())))

    def __del__(self):
        d = getattr(self, "_desc", None)
        if d is None:
            return
        d[[D_GRID, D_TYPE, D_ROOT, D_TILES, D_FIRST_LEAF, D_VOXELS]] = 0
        self._desc = None
        try:
            grid = int(self._buf.ptr) + self._offset
        except Exception:  # interpreter shutdown
            return
        if _LIVE.get(grid) == self.id:
            del _LIVE[grid]

    # queries ---------------------------------------------------------------------------------
    def array(self) -> array:
        """The raw bytes of this volume's grid(s) (this grid to the end of the buffer)."""
        self._check()
        out = array(ptr=self._buf.ptr + self._offset, dtype=uint8, shape=self._bytes().size - self._offset,
                    device=self.device, deleter=self)
        out.deleter = None  # Warp's spelling: the view owns nothing
        return out

    def get_tile_count(self) -> int:
        """The number of tiles; of a rebuildable volume, its tile capacity (as Warp reports it:
        `get_active_stats()` has the tiles in use)."""
        self._check()
        return self._rebuild[0].max_leaf_node_count if self._rebuild else self._header.node_counts[0]

    def get_tiles(self, out: array | None = None) -> array:
        """The origins (multiples of 8) of the volume's leaf tiles, (tile count, 3) int32."""
        self._check()
        tiles = nv.leaf_origins(self._bytes(), self._offset)
        return self._write_out(tiles, out, "tile")

    def get_voxel_count(self) -> int:
        """The number of indexable voxels; of a rebuildable volume, its voxel capacity."""
        self._check()
        return self._rebuild[0].max_voxel_count if self._rebuild else self._indexable_count()

    def get_active_stats(self) -> Volume.ActiveStats:
        self._check()
        h = self._header
        return Volume.ActiveStats(h.voxel_count, *h.node_counts[:3])

    def get_voxels(self, out: array | None = None) -> array:
        """The coordinates of every indexable voxel, in index order (row v = the voxel that
        `volume_lookup_index` numbers v)."""
        self._check()
        raw = self._bytes()
        origins = nv.leaf_origins(raw, self._offset)
        index = nv.leaf_voxel_indices(raw, self._offset)
        count = self._indexable_count()
        ijk = (origins[:, None, :] + nv.local_coords()[None, :, :]).reshape(-1, 3)
        index = index.reshape(-1)
        keep = (index >= 0) & (index < count)
        voxels = np.zeros((count, 3), np.int32)
        voxels[index[keep]] = ijk[keep]
        return self._write_out(voxels, out, "voxel")

    def _write_out(self, data, out, what):
        """`data` (rows of coordinates) into `out` (new when None); a rebuildable volume gives
        as many rows as its capacity (Warp's count), those not in use zero."""
        capacity = self.get_tile_count() if what == "tile" else self.get_voxel_count()
        if capacity > len(data):
            data = np.concatenate([data, np.zeros((capacity - len(data), 3), data.dtype)])
        if out is None:
            return array(data, dtype=int32, device=self.device)
        if out.device != self.device or out.shape[0] < len(data):
            raise RuntimeError(f"'out' array must an array with at least {len(data)} rows on device {self.device}")
        flat = out.numpy().reshape(-1)
        if flat.dtype != np.int32 or flat.size < 3 * len(data) or not out.is_contiguous:
            raise RuntimeError("'out' must be a contiguous 1D array with type vec3i or a 2D array of type int32 "
                               f"with shape (N, 3) (the {what} coordinates)")
        flat[:3 * len(data)] = data.reshape(-1)
        return out

    def get_voxel_size(self) -> tuple[float, float, float]:
        """The world-space extent of a voxel along each index axis (the map applied to (1,1,1))."""
        self._check()
        v = np.frombuffer(self._grid_bytes(), np.float64, 3, 608).astype(np.float32)
        return (float(v[0]), float(v[1]), float(v[2]))

    def get_grid_info(self) -> Volume.GridInfo:
        self._check()
        h = self._header
        g = self._grid_bytes()
        matf = np.frombuffer(g, np.float32, 9, nv.MAP_OFFSET)
        vecf = np.frombuffer(g, np.float32, 3, nv.MAP_OFFSET + 72)
        return Volume.GridInfo(h.name, h.grid_size, h.grid_index, h.grid_count, nv.TYPE_NAMES.get(h.grid_type, "?"),
                               vec3f(*vecf.tolist()), mat33f(*matf.tolist()))

    _nvdb_type_to_dtype: ClassVar[dict] = {nv.TYPE_NAMES[k]: v for k, v in GRID_DTYPES.items()}

    @property
    def dtype(self):
        """The weft type of the volume's values; None for index grids."""
        return GRID_DTYPES.get(self._header.grid_type) if self._desc is not None else None

    @property
    def is_index(self) -> bool:
        return self._header.grid_type in nv.INDEX_TYPES

    _rebuild = None  # (RebuildInfo, points -> index coordinates, coordinates -> grid) if rebuildable

    @property
    def is_rebuildable(self) -> bool:
        return self._rebuild is not None

    def get_rebuild_info(self) -> Volume.RebuildInfo:
        """The reserved capacities of a rebuildable volume (kind None and zeros otherwise)."""
        return self._rebuild[0] if self._rebuild is not None else Volume.RebuildInfo(None, 0, 0, 0, 0)

    REBUILD_SUCCESS: ClassVar[int] = 0
    REBUILD_LEAF_CAPACITY_EXCEEDED: ClassVar[int] = 1 << 0
    REBUILD_LOWER_CAPACITY_EXCEEDED: ClassVar[int] = 1 << 1
    REBUILD_UPPER_CAPACITY_EXCEEDED: ClassVar[int] = 1 << 2
    REBUILD_VOXEL_CAPACITY_EXCEEDED: ClassVar[int] = 1 << 3
    REBUILD_INVALID_INPUT: ClassVar[int] = 1 << 4

    def rebuild(self, points: array, status: array | None = None, point_mask: array | None = None):
        """Rebuild the topology from `points` (tile points for a volume made by
        `allocate_by_tiles`, voxel points for one made by `allocate_by_voxels`), keeping the
        id, transform, background and capacities; values start at the background. A
        topology beyond the capacities leaves the volume as it was; `status` (one uint32)
        receives Volume.REBUILD_* flags. Returns `status`."""
        if self._rebuild is None:
            raise RuntimeError("Volume is not rebuildable")
        info, points_of, build = self._rebuild
        status = _status_array(status, self.device)
        # (no points: invalid; all masked out: an empty topology, as in Warp)
        grid = build(points_of(points, point_mask)) if len(points) else None
        flags = Volume.REBUILD_INVALID_INPUT if grid is None else _capacity_flags(grid, info)
        if flags == Volume.REBUILD_SUCCESS:
            old_grid = int(self._buf.ptr) + self._offset
            if _LIVE.get(old_grid) == self.id:
                del _LIVE[old_grid]
            self._buf = array(np.frombuffer(grid, np.uint8).copy(), dtype=uint8, device=self.device)
            self._attach(0, self._desc)
        if status is not None:
            status.numpy()[0] = flags
        return status

    # feature (blind) data ----------------------------------------------------------------------
    def get_feature_array_count(self) -> int:
        self._check()
        return self._header.blind_count

    _NANOVDB_NAME_SIZE: ClassVar[int] = 256

    @staticmethod
    def _decode_nvdb_name(name) -> str:
        """A NanoVDB name field (bytes, or the address of the 256-byte field) as a str."""
        field = ctypes.string_at(name, Volume._NANOVDB_NAME_SIZE) if isinstance(name, int) else bytes(name)
        end = field.find(b"\0")
        if end < 0:
            raise RuntimeError("Invalid NanoVDB name: not terminated within its 256 bytes")
        return field[:end].decode("ascii", "replace")

    def _feature_table(self, raw) -> list:
        """The grid's blind metadata as validated now, (name field, data offset in the buffer,
        value count, value size, type code) per feature array: later writes to the buffer do
        not change what the accessors report."""
        h, out = self._header, []
        for i in range(h.blind_count):
            meta = self._offset + h.blind_offset + i * nv.BLIND_META_SIZE
            data_off, count = (int(x) for x in np.frombuffer(raw, np.int64, 2, meta))
            size, _sem, _cls, code = (int(x) for x in np.frombuffer(raw, np.uint32, 4, meta + 16))
            out.append((bytes(raw[meta + 32:meta + 32 + self._NANOVDB_NAME_SIZE]), meta + data_off,
                        count & 0xFFFFFFFFFFFFFFFF, size, code))
        return out

    def get_feature_array_info(self, feature_index: int) -> Volume.FeatureArrayInfo:
        features = getattr(self, "_features", None)
        if not self.id or self._desc is None or self._desc[D_GRID] == 0 or features is None:
            raise RuntimeError(f"Invalid feature array {feature_index}: the volume holds no grid "
                               "(never created or already destroyed)")
        if not 0 <= feature_index < len(features):
            raise RuntimeError(f"Invalid feature array {feature_index}: the grid has {len(features)}")
        name, start, count, size, code = features[feature_index]
        return Volume.FeatureArrayInfo(Volume._decode_nvdb_name(name), self._buf.ptr + start, size, count,
                                       nv.TYPE_NAMES.get(code, "?"))

    def feature_array(self, feature_index: int, dtype=None) -> array:
        info = self.get_feature_array_info(feature_index)
        if dtype is None:
            dtype = Volume._nvdb_type_to_dtype.get(info.type_str, uint8)
        from ..types import type_size_in_bytes  # noqa: PLC0415
        count, size, want = info.value_count, info.value_size, type_size_in_bytes(dtype)
        if want == 1:
            count, size = count * size, 1
        elif size == 1 and count % want == 0:
            count, size = count // want, want
        if want != size:
            raise RuntimeError(f"Cannot cast feature data of size {size} to array dtype {dtype}")
        return array(ptr=info.ptr, dtype=dtype, shape=count, device=self.device, deleter=self)

    # files ---------------------------------------------------------------------------------------
    @classmethod
    def load_from_nvdb(cls, file_or_buffer, device=None) -> Volume:
        """A Volume from a .nvdb file (an open binary file or its bytes); every grid of the
        file is kept (`load_next_grid` walks them)."""
        try:
            data = file_or_buffer.read()
        except AttributeError:
            data = file_or_buffer
        if not isinstance(data, (bytes, bytearray, memoryview, np.ndarray)):
            raise TypeError(f"load_from_nvdb() takes a binary file or a bytes-like buffer, got {type(data).__name__}")
        grids = nv.read_file(data)
        nanovdb_check.check_buffer(grids)
        return cls(array(np.frombuffer(grids, np.uint8).copy(), dtype=uint8, device=device))

    def save_to_nvdb(self, path, codec: str = "none"):
        """Write this volume's grid(s) to a .nvdb file (codec "none", "zip" or "blosc")."""
        self._check()
        if self._header.grid_index > 0:
            raise RuntimeError("Saving of aliased Volumes is not supported. Use `save_to_nvdb` on the original "
                               "volume, before any `load_next_grid` calls.")
        return nv.write_file(path, self._bytes()[self._offset:], codec)

    @classmethod
    def load_from_address(cls, grid_ptr: int, buffer_size: int = 0, device=None) -> Volume:
        """A Volume aliasing the grid(s) at address `grid_ptr` (`buffer_size` bytes, or the size
        its header gives)."""
        if not grid_ptr:
            raise RuntimeError("Invalid grid buffer pointer")
        if int(grid_ptr) in _LIVE:
            raise RuntimeError("A Warp Volume has already been created for this grid, aliasing it is not possible.")
        if not buffer_size:
            buffer_size = int(np.frombuffer(ctypes.string_at(grid_ptr, 40), np.uint64, 1, 32)[0])
        data = array(ptr=int(grid_ptr), dtype=uint8, shape=int(buffer_size), device=device)
        return cls(data, copy=False)

    def load_next_grid(self) -> Volume | None:
        """A Volume for the next grid of this volume's buffer, or None after the last."""
        self._check()
        h = self._header
        nxt = self._offset + h.grid_size
        if h.grid_index + 1 >= h.grid_count or nxt >= self._bytes().size:
            return None
        v = Volume.__new__(Volume)
        v._previous_grid = self
        v.device = self.device
        v._buf = self._buf
        v._attach(nxt)
        return v

    # building --------------------------------------------------------------------------------
    @staticmethod
    def _normalize_voxel_size(voxel_size) -> tuple[float, float, float]:
        if isinstance(voxel_size, (bool, str)) or voxel_size is None:
            raise TypeError("voxel_size must be a numeric scalar or a sequence of 3 floats, "
                            f"got {type(voxel_size).__name__}")
        if isinstance(voxel_size, (int, float, np.floating, np.integer)):
            s = float(voxel_size)
            voxel_size = (s, s, s)
        elif isinstance(voxel_size, (list, tuple, np.ndarray, ctypes.Array)) or hasattr(voxel_size, "__len__"):
            voxel_size = tuple(float(v) for v in voxel_size)
            if len(voxel_size) != 3:
                raise ValueError(f"voxel_size must be a scalar or a 3-element sequence, got length {len(voxel_size)}")
        else:
            raise TypeError("voxel_size must be a numeric scalar or a sequence of 3 floats, "
                            f"got {type(voxel_size).__name__}")
        if not all(math.isfinite(v) and v > 0.0 for v in voxel_size):
            raise ValueError(f"All voxel_size components must be finite and positive, got {voxel_size}")
        return voxel_size

    @staticmethod
    def _transform(voxel_size, transform):
        if transform is None:
            if voxel_size is None:
                raise ValueError("Either 'voxel_size' or 'transform' must be provided")
            return np.diag(Volume._normalize_voxel_size(voxel_size)).astype(np.float32)
        if voxel_size is not None:
            raise ValueError("Only one of 'voxel_size' or 'transform' must be provided")
        m = np.asarray(transform, np.float32).reshape(3, 3)
        if not np.isfinite(m).all() or abs(np.linalg.det(m.astype(np.float64))) < 1e-30:
            raise ValueError(f"transform must be a finite invertible 3x3 matrix, got {m.tolist()}")
        return m

    @classmethod
    def _from_grid(cls, grid: bytearray, device) -> Volume:
        return cls(array(np.frombuffer(grid, np.uint8).copy(), dtype=uint8, device=device), copy=False)

    @staticmethod
    def _points_ijk(points, m, translation, what):
        """(N, 3) int index-space coordinates of `points` (int32: already index space; float32:
        world space, mapped through the inverse transform and rounded)."""
        if not isinstance(points, array):
            raise RuntimeError(f"{what} must be a weft array")
        p = points.numpy()
        kind = p.dtype
        p = p.reshape(-1, 3) if p.size % 3 == 0 else None
        if p is None or kind not in (np.int32, np.float32) or not points.is_contiguous:
            raise RuntimeError(f"{what} must be contiguous and either a 1D array of vec3f or vec3i or a 2D n-by-3 "
                               "array of int32 or float32.")
        if kind == np.int32:
            return p.astype(np.int64)
        inv = np.linalg.inv(m.astype(np.float64)).astype(np.float32)
        idx = (p - np.asarray(translation, np.float32)) @ inv.T
        return np.floor(idx + np.float32(0.5)).astype(np.int64)

    @staticmethod
    def _bg_type(bg_value):
        from ..types import Vector, vector  # noqa: PLC0415
        t = getattr(bg_value, "type", None) if hasattr(bg_value, "_weft_type") else type(bg_value)
        if isinstance(t, Vector) or t in _ALLOC_TYPES:
            grid_t = t
        elif isinstance(bg_value, (bool, np.bool_)):
            grid_t = None
        elif isinstance(bg_value, SCALAR_VALUES):
            grid_t = {np.dtype(np.int32): int32, np.dtype(np.int64): int64, np.dtype(np.uint32): uint32,
                      np.dtype(np.float32): float32, np.dtype(np.float64): float64}.get(bg_value.dtype)
        elif isinstance(bg_value, int):
            grid_t = int32
        elif isinstance(bg_value, float):
            grid_t = float32
        elif hasattr(bg_value, "__len__"):
            grid_t = vector(len(bg_value), float32)
        else:
            grid_t = None
        for k, code in _ALLOC_TYPES.items():
            if grid_t is not None and (grid_t is k or (isinstance(grid_t, Vector) and isinstance(k, Vector)
                                                       and grid_t.length == k.length and grid_t.dtype is k.dtype)):
                shape, scalar = nv.VALUE_NP[code]
                return code, np.asarray(bg_value, scalar).reshape(shape).tobytes()
        raise TypeError(f"Unsupported bg_value type for volume allocation {type(bg_value).__name__}. Supported "
                        "volume types are int32, uint32, int64, float, double, Vec3f, Vec3d, Vec4f, Vec4d.")

    @classmethod
    def allocate_by_tiles(cls, tile_points: array, voxel_size=None, bg_value=0.0, translation=(0.0, 0.0, 0.0),
                          device=None, transform=None, rebuildable: bool = False, max_tiles=None,
                          max_lower_nodes=None, max_upper_nodes=None, status=None, point_mask=None) -> Volume:
        """A volume with a dense 8^3 tile around every point of `tile_points` (int32: index
        space; float32: world space); `bg_value` sets the value type (None: an index grid).
        `rebuildable` (or a capacity: `max_tiles`, default the number of points, and the
        internal node counts) makes a volume `rebuild` can give new tiles; `status` (one
        uint32) receives the Volume.REBUILD_* flags of this first build."""
        device = get_device(device)
        m = cls._transform(voxel_size, transform)
        code, bg = (nv.ONINDEX, bytes(8)) if bg_value is None else cls._bg_type(bg_value)

        def points_of(points, mask):
            return cls._masked_ijk(points, mask, m, translation, "tile_points")

        def build(ijk):
            return nv.build_grid(np.unique((ijk >> 3) << 3, axis=0).astype(np.int32), code, bg, m, translation)

        if not (rebuildable or any(c is not None for c in (max_tiles, max_lower_nodes, max_upper_nodes))):
            return cls._from_grid(build(points_of(tile_points, point_mask)), device)
        leaf = _capacity(max_tiles, len(tile_points), "max_tiles")
        lower = _capacity(max_lower_nodes, leaf, "max_lower_nodes")
        upper = _capacity(max_upper_nodes, lower, "max_upper_nodes")
        info = Volume.RebuildInfo("tiles", leaf * 512, leaf, lower, upper)
        return cls._rebuildable(info, points_of, build, tile_points, point_mask, status, device)

    @classmethod
    def allocate_by_voxels(cls, voxel_points: array, voxel_size=None, translation=(0.0, 0.0, 0.0), device=None,
                           transform=None, rebuildable: bool = False, max_active_voxels=None, max_leaf_nodes=None,
                           max_lower_nodes=None, max_upper_nodes=None, status=None, point_mask=None) -> Volume:
        """An index volume with one active voxel for each point of `voxel_points`.
        `rebuildable` (or a capacity: `max_active_voxels`, default the number of points, and
        the node counts, each defaulting to the one before) makes a volume `rebuild` can give
        new voxels."""
        device = get_device(device)
        m = cls._transform(voxel_size, transform)

        def points_of(points, mask):
            return cls._masked_ijk(points, mask, m, translation, "voxel_points")

        def build(ijk):
            origins, which = np.unique((ijk >> 3) << 3, axis=0, return_inverse=True)
            active = np.zeros((len(origins), 512), bool)
            local = ijk - origins[which.reshape(-1)]
            active[which.reshape(-1), local[:, 0] * 64 + local[:, 1] * 8 + local[:, 2]] = True
            return nv.build_grid(origins.astype(np.int32), nv.ONINDEX, bytes(8), m, translation, active=active)

        if not (rebuildable or any(c is not None for c in (max_active_voxels, max_leaf_nodes, max_lower_nodes,
                                                           max_upper_nodes))):
            return cls._from_grid(build(points_of(voxel_points, point_mask)), device)
        voxels = _capacity(max_active_voxels, len(voxel_points), "max_active_voxels")
        leaf = _capacity(max_leaf_nodes, voxels, "max_leaf_nodes")  # (a voxel per leaf at worst)
        lower = _capacity(max_lower_nodes, leaf, "max_lower_nodes")
        upper = _capacity(max_upper_nodes, lower, "max_upper_nodes")
        info = Volume.RebuildInfo("voxels", voxels, leaf, lower, upper)
        return cls._rebuildable(info, points_of, build, voxel_points, point_mask, status, device)

    @classmethod
    def _rebuildable(cls, info, points_of, build, points, point_mask, status, device) -> Volume:
        """A rebuildable volume from its first points: an empty one (and the flags in
        `status`) when they exceed the capacities, as Warp's."""
        status = _status_array(status, device)
        ijk = points_of(points, point_mask)
        grid = build(ijk)
        flags = _capacity_flags(grid, info)
        if flags != Volume.REBUILD_SUCCESS:
            grid = build(ijk[:0])
        volume = cls._from_grid(grid, device)
        volume._rebuild = (info, points_of, build)
        if status is not None:
            status.numpy()[0] = flags
        return volume

    @classmethod
    def _masked_ijk(cls, points, point_mask, m, translation, what) -> np.ndarray:
        """The index-space coordinates of the points whose mask entry is not zero (no points
        at all: Warp's "Failed to create volume")."""
        ijk = cls._points_ijk(points, m, translation, what)
        if len(ijk) == 0:
            raise RuntimeError(f"Failed to create volume: {what} is empty")
        if point_mask is None:
            return ijk
        mask = point_mask.numpy().reshape(-1) if isinstance(point_mask, array) else None
        if mask is None or point_mask.dtype is not int32 or point_mask.ndim != 1 or len(mask) < len(ijk):
            raise RuntimeError(f"point_mask must be a contiguous 1D array of int32 with at least {len(ijk)} entries")
        return ijk[mask[:len(ijk)] != 0]

    @classmethod
    def allocate(cls, min, max, voxel_size, bg_value=0.0, translation=(0.0, 0.0, 0.0),
                 points_in_world_space=False, device=None) -> Volume:
        """A volume whose tiles cover the voxels [min, max] (inclusive; world coordinates
        with `points_in_world_space`)."""
        voxel_size = cls._normalize_voxel_size(voxel_size)
        if points_in_world_space:
            vs = np.asarray(voxel_size, dtype=np.float32)
            min = np.around((np.array(min, dtype=np.float32) - translation) / vs)
            max = np.around((np.array(max, dtype=np.float32) - translation) / vs)
        lo = np.array(min, dtype=np.int32) // 8
        hi = np.array(max, dtype=np.int32) // 8
        grid = np.stack(np.meshgrid(*[np.arange(lo[a], hi[a] + 1) for a in range(3)], indexing="ij"), axis=-1)
        tiles = array((grid.reshape(-1, 3) * 8).astype(np.int32), dtype=int32, device=device)
        return cls.allocate_by_tiles(tiles, voxel_size, bg_value, translation, device)

    @classmethod
    def load_from_numpy(cls, ndarray: np.ndarray, min_world=(0.0, 0.0, 0.0), voxel_size=1.0, bg_value=0.0,
                        device=None) -> Volume:
        """A volume holding the dense array `ndarray` (3D scalars, or 4D with a last axis of 3
        for vec3f), voxel (0, 0, 0) at `min_world`."""
        voxel_size = cls._normalize_voxel_size(voxel_size)
        data = np.asarray(ndarray)
        vector_valued = hasattr(bg_value, "__len__")
        if data.ndim != (4 if vector_valued else 3) or (vector_valued and data.shape[3] != 3):
            raise ValueError(f"load_from_numpy(): expected a {'4D (X, Y, Z, 3)' if vector_valued else '3D'} array "
                             f"for bg_value {bg_value!r}, got shape {data.shape}")
        padded = [math.ceil(s / 8) * 8 for s in data.shape[:3]]
        hi = [min_world[a] + (padded[a] - 1) * voxel_size[a] for a in range(3)]
        if vector_valued:
            bg = tuple(float(b) for b in bg_value)
        else:
            bg = int(bg_value) if isinstance(bg_value, int) else float(bg_value)
        volume = cls.allocate(min_world, hi, voxel_size, bg_value=bg, points_in_world_space=True,
                              translation=min_world, device=device)
        vals = volume._leaf_values()  # (leaves, 512, *value shape), the background everywhere
        # the data padded to whole leaves (with the background) and cut into 8x8x8 blocks, each in
        # a leaf table's order (x * 64 + y * 8 + z): one copy per leaf, no per-voxel indices
        blocks = np.empty((*padded, *data.shape[3:]), vals.dtype)
        blocks[...] = vals[0, 0]
        blocks[:data.shape[0], :data.shape[1], :data.shape[2]] = data
        nx, ny, nz = (p // 8 for p in padded)
        components = tuple(range(6, blocks.ndim + 3))
        blocks = blocks.reshape(nx, 8, ny, 8, nz, 8, *data.shape[3:]).transpose(0, 2, 4, 1, 3, 5, *components)
        leaf = nv.leaf_origins(volume._bytes(), 0) // 8
        vals[...] = blocks[leaf[:, 0], leaf[:, 1], leaf[:, 2]].reshape(vals.shape)
        return volume
