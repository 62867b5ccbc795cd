"""NanoVDB in Python: the .nvdb file container, grid validation, and a grid writer.

Written from the format (NanoVDB 32.x, as PNanoVDB.h lays it out), no C++ involved. A
grid is one contiguous little-endian buffer:

    GridData (672 bytes) | TreeData (64) | RootData + root tiles | upper nodes (32^3 children)
    | lower nodes (16^3) | leaves (8^3 voxels) | blind metadata and data

Every child link is a signed byte offset (root tile -> upper: from the root; upper -> lower
and lower -> leaf: from the parent node). Offsets inside a node depend on the value type;
LAYOUT below gives them per grid type. nanovdb_check.py checks every link of a grid before
a kernel may walk it (so a corrupt file is a Python exception, never a stray read), and
`build_grid` writes a grid with the same layout from a list of dense 8^3 tiles.
"""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

import numpy as np

MAGIC_NUMBER = 0x304244566F6E614E  # "NanoVDB0": file header and grids of older versions
MAGIC_GRID = 0x314244566F6E614E    # "NanoVDB1": grid
MAGIC_FILE = 0x324244566F6E614E    # "NanoVDB2": file header
VERSION = (32 << 21) | (6 << 10) | 0
GRID_SIZE = 672
TREE_SIZE = 64
MAP_OFFSET = 296
BLIND_META_SIZE = 288
UPPER_CHILD_MASK, LOWER_CHILD_MASK, LEAF_VALUE_MASK = 4128, 544, 16
UPPER_VALUE_MASK, LOWER_VALUE_MASK = 32, 32
CODECS = {0: "none", 1: "zip", 2: "blosc"}

TYPE_NAMES = {0: "?", 1: "float", 2: "double", 3: "int16", 4: "int32", 5: "int64", 6: "Vec3f", 7: "Vec3d",
              8: "Mask", 9: "Half", 10: "uint32", 11: "bool", 12: "RGBA8", 13: "Float4", 14: "Float8",
              15: "Float16", 16: "FloatN", 17: "Vec4f", 18: "Vec4d", 19: "Index", 20: "OnIndex",
              21: "IndexMask", 22: "OnIndexMask", 23: "PointIndex", 24: "Vec3u8", 25: "Vec3u16", 26: "uint8"}
INDEX, ONINDEX, INDEXMASK, ONINDEXMASK = 19, 20, 21, 22
FLOATN = 16
INDEX_TYPES = (INDEX, ONINDEX, INDEXMASK, ONINDEXMASK)


class Layout(NamedTuple):
    """Byte offsets and sizes of one grid type's nodes (PNanoVDB's grid type constants)."""
    root_off_background: int
    root_size: int
    value_stride_bits: int
    table_stride: int
    root_tile_off_value: int
    root_tile_size: int
    upper_off_table: int
    upper_size: int
    lower_off_table: int
    lower_size: int
    leaf_off_table: int
    leaf_size: int


_L32 = Layout(28, 64, 32, 8, 20, 32, 8256, 270400, 1088, 33856, 96, 2144)     # float, int32, uint32
_L64 = Layout(32, 96, 64, 8, 24, 32, 8256, 270400, 1088, 33856, 128, 4224)    # double, int64
_L16 = Layout(28, 64, 16, 8, 20, 32, 8256, 270400, 1088, 33856, 96, 1120)     # int16, half
_LIDX = Layout(32, 96, 0, 8, 24, 32, 8256, 270400, 1088, 33856, 80, 96)       # Index, OnIndex
_LIDXM = _LIDX._replace(leaf_size=160)                                         # IndexMask, OnIndexMask
LAYOUT = {
    1: _L32, 2: _L64, 3: _L16, 4: _L32, 5: _L64, 9: _L16, 10: _L32,
    6: Layout(28, 96, 96, 16, 20, 32, 8256, 532544, 1088, 66624, 128, 6272),        # Vec3f
    7: Layout(32, 128, 192, 24, 24, 64, 8288, 794720, 1120, 99424, 160, 12448),     # Vec3d
    17: Layout(28, 96, 128, 16, 20, 64, 8288, 532576, 1120, 66656, 128, 8320),      # Vec4f
    18: Layout(32, 160, 256, 32, 24, 64, 8320, 1056896, 1152, 132224, 160, 16544),  # Vec4d
    26: Layout(28, 64, 8, 8, 20, 32, 8256, 270400, 1088, 33856, 96, 608),           # uint8
    FLOATN: Layout(28, 64, 0, 8, 20, 32, 8256, 270400, 1088, 33856, 96, 96),  # FloatN: leaves vary (96 + 64 * bits)
    INDEX: _LIDX, ONINDEX: _LIDX, INDEXMASK: _LIDXM, ONINDEXMASK: _LIDXM,
}

# numpy value type of each grid type with values (shape of one value, scalar type)
VALUE_NP = {1: ((), np.float32), 2: ((), np.float64), 3: ((), np.int16), 4: ((), np.int32),
            5: ((), np.int64), 6: ((3,), np.float32), 7: ((3,), np.float64), 9: ((), np.float16),
            10: ((), np.uint32), 17: ((4,), np.float32), 18: ((4,), np.float64), 26: ((), np.uint8)}


class NanoVDBError(RuntimeError):
    """A buffer or file that is not a NanoVDB grid weft can read (RuntimeError, as Warp)."""


def _u(fmt, buf, off):
    size = struct.calcsize("<" + fmt)
    if off < 0 or off + size > len(buf):
        raise NanoVDBError(f"NanoVDB data truncated: {size} bytes at offset {off} lie past the end ({len(buf)})")
    return struct.unpack_from("<" + fmt, buf, off)


# File container ---------------------------------------------------------------------------
def read_file(data) -> bytes:
    """The grids of a .nvdb file (bytes-like), decompressed and concatenated."""
    data = bytes(data)
    if len(data) < 16:
        raise NanoVDBError(f"NanoVDB file too short ({len(data)} bytes)")
    magic, version, grid_count, codec = _u("QIHH", data, 0)
    if magic not in (MAGIC_NUMBER, MAGIC_FILE):
        raise NanoVDBError("NanoVDB signature not found")
    if version >> 21 != 32:
        raise NanoVDBError(f"Unsupported NanoVDB version {version >> 21}.{(version >> 10) & 2047} (weft reads 32.x)")
    if codec not in CODECS:
        raise NanoVDBError(f"Unsupported codec code: {codec} (weft reads none, zip and blosc)")
    if grid_count == 0:
        raise NanoVDBError("NanoVDB file holds no grid")
    offset, sizes = 16, []
    for _ in range(grid_count):  # FileMetaData (176 bytes) and the grid's name
        grid_size, file_size = _u("QQ", data, offset)
        (name_size,) = _u("I", data, offset + 136)
        sizes.append((grid_size, file_size))
        offset += 176 + name_size
    out = bytearray()
    for grid_size, _file_size in sizes:
        if codec == 0:
            chunk = data[offset:offset + grid_size]
            offset += grid_size
        else:
            (n,) = _u("Q", data, offset)
            offset += 8
            raw = data[offset:offset + n]
            if len(raw) != n:
                raise NanoVDBError("NanoVDB file truncated inside a compressed grid")
            offset += n
            chunk = _decompress(raw, codec)
        if len(chunk) != grid_size:
            raise NanoVDBError(f"NanoVDB file truncated: a grid of {grid_size} bytes has {len(chunk)}")
        out += chunk
    return bytes(out)


def _decompress(raw, codec):
    if codec == 1:
        try:
            return zlib.decompress(raw)
        except zlib.error as e:
            raise NanoVDBError(f"NanoVDB file: corrupt zip-compressed grid ({e})") from e
    try:
        import blosc  # noqa: PLC0415 - optional
    except ImportError as e:
        raise NanoVDBError("NanoVDB buffer is compressed using blosc, but the Python module 'blosc' "
                           f"could not be imported: {e}") from e
    try:
        return blosc.decompress(raw)
    except Exception as e:
        raise NanoVDBError(f"NanoVDB file: corrupt blosc-compressed grid ({e})") from e


def write_file(path, grids: bytes, codec: str = "none"):
    """Write the grids in `grids` (a buffer of consecutive grids) as a .nvdb file."""
    codes = {v: k for k, v in CODECS.items()}
    if codec not in codes:
        raise RuntimeError(f"Unsupported codec requested: {codec}")
    if codec == "blosc":
        try:
            import blosc  # noqa: PLC0415 - optional
        except ImportError as e:
            raise RuntimeError(f"blosc compression was requested, but Python module could not be imported: {e}") from e
    infos, offset = [], 0
    count = _u("I", grids, 28)[0]
    for _ in range(count):
        info = grid_header(grids, offset)
        raw = bytes(grids[offset:offset + info.grid_size])
        body = raw if codec == "none" else (zlib.compress(raw) if codec == "zip" else blosc.compress(raw))
        infos.append((info, raw, body))
        offset += info.grid_size
    out = bytearray(struct.pack("<QIHH", MAGIC_NUMBER, VERSION, count, codes[codec]))
    for info, raw, body in infos:
        name = info.name.encode("ascii", "replace") + b"\0"
        meta = struct.pack("<QQQQII", info.grid_size, len(body), 0, info.voxel_count, info.grid_type, info.grid_class)
        meta += raw[560:608]                        # world bbox (6 doubles)
        meta += struct.pack("<6i", *info.index_bbox)
        meta += raw[608:632]                        # voxel size (3 doubles)
        meta += struct.pack("<I4I3IHHI", len(name), *info.node_counts, *info.tile_counts, codes[codec], 0, VERSION)
        assert len(meta) == 176
        out += meta + name
    for _, _, body in infos:
        if codec != "none":
            out += struct.pack("<Q", len(body))
        out += body
    with open(path, "wb") as f:
        f.write(out)
    return path


# Grid header and validation ---------------------------------------------------------------
class GridHeader(NamedTuple):
    grid_size: int
    grid_index: int
    grid_count: int
    grid_type: int
    grid_class: int
    name: str
    voxel_count: int
    node_counts: tuple   # leaf, lower, upper, root (1)
    tile_counts: tuple   # lower, upper, root tiles as NanoVDB counts them
    index_bbox: tuple
    blind_offset: int
    blind_count: int


def grid_header(buf, off: int = 0) -> GridHeader:
    if len(buf) - off < GRID_SIZE + TREE_SIZE:
        raise NanoVDBError(f"NanoVDB grid truncated: {len(buf) - off} bytes, a header alone takes "
                           f"{GRID_SIZE + TREE_SIZE}")
    magic, _checksum, version, _flags, index, count, size = _u("QQIIIIQ", buf, off)
    if magic not in (MAGIC_NUMBER, MAGIC_GRID):
        raise NanoVDBError("NanoVDB signature not found on grid")
    if version >> 21 != 32:
        raise NanoVDBError(f"Unsupported NanoVDB grid version {version >> 21}")
    name = bytes(buf[off + 40:off + 296]).split(b"\0", 1)[0].decode("ascii", "replace")
    grid_class, grid_type, blind_offset, blind_count = _u("IIqI", buf, off + 632)
    t = off + GRID_SIZE
    leaf_n, lower_n, upper_n = _u("III", buf, t + 32)
    tiles = _u("III", buf, t + 44)
    (voxels,) = _u("Q", buf, t + 56)
    (root_off,) = _u("Q", buf, t + 24)
    bbox = _u("6i", buf, t + root_off) if t + root_off + 24 <= len(buf) else (0,) * 6
    return GridHeader(size, index, count, grid_type, grid_class, name, voxels, (leaf_n, lower_n, upper_n, 1),
                      tiles, bbox, blind_offset, blind_count)


def leaf_origins(buf, off: int = 0) -> np.ndarray:
    """(leaf count, 3) int32: the origin of every leaf (its bbox minimum rounded down to a
    multiple of 8: the stored minimum is that of the active voxels), in the grid's leaf order."""
    h = grid_header(buf, off)
    L = LAYOUT[h.grid_type]
    (o_leaf,) = _u("Q", buf, off + GRID_SIZE)
    n = h.node_counts[0]
    if h.grid_type == FLOATN:  # (leaves of varying size: walk them)
        at, out = off + GRID_SIZE + o_leaf, np.empty((n, 3), np.int32)
        for i in range(n):
            out[i] = _u("3i", buf, at)
            at += 96 + 64 * (1 << (_u("I", buf, at + 12)[0] >> 29))
        return out & ~np.int32(7)
    a = np.frombuffer(buf, np.uint8, n * L.leaf_size, off + GRID_SIZE + o_leaf).reshape(n, L.leaf_size)
    return np.ascontiguousarray(a[:, :12]).view(np.int32).reshape(n, 3) & ~np.int32(7)


def leaf_voxel_indices(buf, off: int = 0) -> np.ndarray:
    """(leaf count, 512) int64: the linear index of each leaf voxel (Warp's numbering: all 512 voxels
    of each leaf for value grids; the active voxels' value indices minus one for OnIndex grids,
    -1 for an inactive voxel)."""
    h = grid_header(buf, off)
    L = LAYOUT[h.grid_type]
    (o_leaf,) = _u("Q", buf, off + GRID_SIZE)
    n = h.node_counts[0]
    a = np.frombuffer(buf, np.uint8, n * L.leaf_size, off + GRID_SIZE + o_leaf).reshape(n, L.leaf_size)
    if h.grid_type in (ONINDEX, ONINDEXMASK):
        mask = np.unpackbits(a[:, 16:80], axis=1, bitorder="little").astype(bool)
        base = np.ascontiguousarray(a[:, 80:88]).view(np.uint64).reshape(n).astype(np.int64)
        rank = np.cumsum(mask, axis=1) - 1
        return np.where(mask, base[:, None] + rank - 1, -1)
    if h.grid_type in (INDEX, INDEXMASK):
        base = np.ascontiguousarray(a[:, 80:88]).view(np.uint64).reshape(n).astype(np.int64)
        return base[:, None] + np.arange(512)[None, :] - 1
    return np.arange(n * 512, dtype=np.int64).reshape(n, 512)


def local_coords() -> np.ndarray:
    """(512, 3): the voxel offset inside a leaf of each leaf table position n = x*64 + y*8 + z."""
    n = np.arange(512)
    return np.stack([n >> 6, (n >> 3) & 7, n & 7], axis=1).astype(np.int32)


# Writing a grid ---------------------------------------------------------------------------
def _put(buf: np.ndarray, off: int, fmt: str, *values):
    struct.pack_into("<" + fmt, buf, off, *values)


def _upper_key(o):
    o = o.astype(np.int64)
    return (((o[:, 0] >> 12) & 0xFFFFF) << 42) | (((o[:, 1] >> 12) & 0xFFFFF) << 21) | ((o[:, 2] >> 12) & 0xFFFFF)


def _child_pos(o, mask, shift, bits):
    o = o.astype(np.int64)
    x, y, z = ((o[:, a] & mask) >> shift for a in range(3))
    return (x << (2 * bits)) | (y << bits) | z


def _fill_table(nodes: np.ndarray, table_off: int, stride: int, count: int, value: bytes):
    """Set every table entry of the nodes (uint8 array, one row per node) to `value`."""
    if not value.strip(b"\0") or len(nodes) == 0:
        return
    entry = np.zeros(stride, np.uint8)
    entry[:len(value)] = np.frombuffer(value, np.uint8)
    nodes[:, table_off:table_off + stride * count] = np.tile(entry, count)[None, :]


def build_grid(origins, grid_type: int, background: bytes, matrix, translation, values=None, active=None,
               name: str = "") -> bytearray:
    """A NanoVDB grid of dense 8^3 tiles with the given (N, 3) int origins (multiples of 8, distinct).

    `values`: (N, 512) values in leaf order (x*64 + y*8 + z), as bytes per voxel (N, 512, value size),
    or None for the background everywhere. `active`: (N, 512) bools for index grids (default: all).
    `matrix` (3x3, row-major, index -> world) and `translation` define the map.
    """
    L = LAYOUT[grid_type]
    origins = np.asarray(origins, np.int32).reshape(-1, 3)
    n_leaf = len(origins)
    ukey = _upper_key(origins)
    un = _child_pos(origins, 4095, 7, 5)
    ln = _child_pos(origins, 127, 3, 4)
    order = np.lexsort((ln, un, ukey))
    origins, ukey, un, ln = origins[order], ukey[order], un[order], ln[order]
    if values is not None:
        values = np.asarray(values)[order]
    if active is not None:
        active = np.asarray(active, bool)[order]
    new_upper = np.ones(n_leaf, bool)
    new_upper[1:] = ukey[1:] != ukey[:-1]
    new_lower = new_upper.copy()
    new_lower[1:] |= un[1:] != un[:-1]
    upper_of_leaf = np.cumsum(new_upper) - 1
    lower_of_leaf = np.cumsum(new_lower) - 1
    n_upper, n_lower = int(new_upper.sum()), int(new_lower.sum())
    upper_of_lower = upper_of_leaf[new_lower]

    root_at = GRID_SIZE + TREE_SIZE
    upper_at = root_at + L.root_size + n_upper * L.root_tile_size
    lower_at = upper_at + n_upper * L.upper_size
    leaf_at = lower_at + n_lower * L.lower_size
    size = leaf_at + n_leaf * L.leaf_size
    buf = np.zeros(size, np.uint8)

    m = np.asarray(matrix, np.float64).reshape(3, 3)
    tr = np.asarray(translation, np.float64).reshape(3)
    inv = np.linalg.inv(m)
    lo = origins.min(axis=0) if n_leaf else np.zeros(3, np.int32)
    hi = origins.max(axis=0) + 7 if n_leaf else np.zeros(3, np.int32)
    corners = np.array([[x, y, z] for x in (lo[0], hi[0] + 1) for y in (lo[1], hi[1] + 1)
                        for z in (lo[2], hi[2] + 1)], np.float64) @ m.T + tr
    voxel_size = m @ np.ones(3)
    is_index = grid_type in INDEX_TYPES
    n_active = int(active.sum()) if active is not None else n_leaf * 512
    _put(buf, 0, "QQIIIIQ", MAGIC_NUMBER, 0, VERSION, 2 | 32, 0, 1, size)
    nm = name.encode("ascii")[:255]
    buf[40:40 + len(nm)] = np.frombuffer(nm, np.uint8)
    _put(buf, MAP_OFFSET, "9f9f3ff", *m.reshape(-1), *inv.reshape(-1), *tr, 1.0)
    _put(buf, MAP_OFFSET + 88, "9d9d3dd", *m.reshape(-1), *inv.reshape(-1), *tr, 1.0)
    _put(buf, 560, "6d", *corners.min(axis=0), *corners.max(axis=0))
    _put(buf, 608, "3d", *voxel_size)
    _put(buf, 632, "IIqI", 8 if is_index else 0, grid_type, size, 0)
    t = GRID_SIZE
    _put(buf, t, "QQQQIIIIIIQ", leaf_at - t, lower_at - t, upper_at - t, root_at - t, n_leaf, n_lower, n_upper,
         0, 0, 0, n_active)
    _put(buf, root_at, "6iI", *lo, *hi, n_upper)
    buf[root_at + L.root_off_background:root_at + L.root_off_background + len(background)] = \
        np.frombuffer(background, np.uint8)
    bg_entry = b"" if is_index else background

    upper_origins = origins[new_upper] & ~4095
    lower_origins = origins[new_lower] & ~127
    for u in range(n_upper):
        tile = root_at + L.root_size + u * L.root_tile_size
        _put(buf, tile, "Qq", int(ukey[new_upper][u]), upper_at + u * L.upper_size - root_at)
    uppers = buf[upper_at:lower_at].reshape(n_upper, L.upper_size)
    lowers = buf[lower_at:leaf_at].reshape(n_lower, L.lower_size)
    leaves = buf[leaf_at:].reshape(n_leaf, L.leaf_size)
    _fill_table(uppers, L.upper_off_table, L.table_stride, 32768, bg_entry)
    _fill_table(lowers, L.lower_off_table, L.table_stride, 4096, bg_entry)
    uppers[:, 0:24] = np.concatenate([upper_origins, upper_origins + 4095], axis=1).astype(np.int32).view(np.uint8)
    lowers[:, 0:24] = np.concatenate([lower_origins, lower_origins + 127], axis=1).astype(np.int32).view(np.uint8)
    _link(uppers, upper_at, L.upper_size, upper_of_lower, un[new_lower], UPPER_CHILD_MASK, UPPER_VALUE_MASK,
          L.upper_off_table, L.table_stride, lower_at + np.arange(n_lower, dtype=np.int64) * L.lower_size)
    _link(lowers, lower_at, L.lower_size, lower_of_leaf, ln, LOWER_CHILD_MASK, LOWER_VALUE_MASK,
          L.lower_off_table, L.table_stride, leaf_at + np.arange(n_leaf, dtype=np.int64) * L.leaf_size)

    leaves[:, 0:12] = origins.astype(np.int32).view(np.uint8).reshape(n_leaf, 12)
    leaves[:, 12:16] = np.array([7, 7, 7, 2], np.uint8)
    mask = np.ones((n_leaf, 512), bool) if active is None else active
    leaves[:, 16:80] = np.packbits(mask, axis=1, bitorder="little")
    if is_index:
        counts = mask.sum(axis=1)
        if grid_type in (ONINDEX, ONINDEXMASK):
            first = 1 + np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.uint64)
        else:
            first = 1 + np.arange(n_leaf, dtype=np.uint64) * 512
        words = mask.reshape(n_leaf, 8, 64).sum(axis=2).astype(np.uint64)
        prefix = np.zeros(n_leaf, np.uint64)
        running = np.zeros(n_leaf, np.uint64)
        for w in range(1, 8):
            running += words[:, w - 1]
            prefix |= running << np.uint64(9 * (w - 1))
        leaves[:, 80:88] = first.reshape(-1, 1).view(np.uint8)
        leaves[:, 88:96] = prefix.reshape(-1, 1).view(np.uint8)
    else:
        vsize = L.value_stride_bits // 8
        if values is None:
            vals = np.tile(np.frombuffer(background, np.uint8)[:vsize], 512)
            leaves[:, L.leaf_off_table:L.leaf_off_table + 512 * vsize] = vals[None, :]
        else:
            leaves[:, L.leaf_off_table:L.leaf_off_table + 512 * vsize] = \
                np.ascontiguousarray(values).view(np.uint8).reshape(n_leaf, 512 * vsize)
    return bytearray(buf.tobytes())


def _link(parents, parents_at, parent_size, parent_of_child, pos, child_mask_off, value_mask_off, table_off,
          stride, child_addr):
    """Set the child mask bit and table entry (offset from the parent) of each child."""
    if len(pos) == 0:
        return
    byte = child_mask_off + (pos >> 3)
    bit = (1 << (pos & 7)).astype(np.uint8)
    np.bitwise_or.at(parents, (parent_of_child, byte), bit)
    rel = child_addr - (parents_at + parent_of_child.astype(np.int64) * parent_size)
    cols = table_off + stride * pos[:, None] + np.arange(8)[None, :]
    parents[parent_of_child[:, None], cols] = rel.astype(np.int64).view(np.uint8).reshape(-1, 8)
