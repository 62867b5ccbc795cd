"""Validation of NanoVDB grid buffers before any kernel walks them.

Every field of a grid is untrusted. `check_grid` proves, for one grid, that

- the header and tree header fit, the grid's name ends within its 256 bytes, and the
  blind-metadata table (offset, count) lies inside the grid;
- each blind-metadata entry has a terminated name and a data range (a signed offset from
  the entry, count x value size) inside the grid, computed without overflow;
- the grid type is a NanoVDB type (and one weft reads);
- each node level (root, upper, lower, leaves) is a run of whole nodes inside the grid,
  starting 32-byte aligned after the tree header; FloatN (FpN) leaves have a per-leaf size
  (a 96-byte header and 512 values of 1, 2, 4, 8 or 16 bits), so their starts are listed;
- the populated levels come in breadth-first order without overlap (root tiles, upper,
  lower, leaves) and end before the blind metadata;
- every child link (root tile -> upper, upper -> lower, lower -> leaf) lands exactly on the
  start of a node of the next level.

`check_buffer` checks every grid of a buffer of consecutive grids (a loaded file), which
must consume it exactly. Errors are `NanoVDBError` (a RuntimeError) whose message starts
with Warp's phrase ("Invalid NanoVDB grid structure", "Unsupported NanoVDB tree layout")
and goes on with what exactly is wrong.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

from .nanovdb import (
    BLIND_META_SIZE,
    FLOATN,
    GRID_SIZE,
    LAYOUT,
    LOWER_CHILD_MASK,
    MAGIC_GRID,
    MAGIC_NUMBER,
    TREE_SIZE,
    TYPE_NAMES,
    UPPER_CHILD_MASK,
    GridHeader,
    NanoVDBError,
    grid_header,
)

ALIGNMENT = 32            # NanoVDB's data alignment: grid sizes and node starts
FLAG_BREADTH_FIRST = 1 << 5
TYPE_END = 27             # grid type codes are 1 .. TYPE_END - 1
NAME_SIZE = 256
FPN_LEAF_HEADER = 96
INVALID = "Invalid NanoVDB grid structure"
UNSUPPORTED_LAYOUT = "Unsupported NanoVDB tree layout"


class UnsupportedLayout(NanoVDBError):
    """A well-formed grid whose tree is not stored breadth-first."""


def _invalid(detail: str, index: int | None = None) -> NanoVDBError:
    where = f" (grid {index})" if index is not None else ""
    return NanoVDBError(f"{INVALID}{where}: {detail}")


class _Level(NamedTuple):
    begin: int
    end: int
    stride: int          # 0: variable-size nodes, whose starts are in `starts`
    count: int
    starts: np.ndarray | None

    def holds_node_at(self, offsets: np.ndarray) -> np.ndarray:
        """Whether each byte offset is the start of one of this level's nodes."""
        if self.count == 0:
            return np.zeros(offsets.shape, bool)
        if self.stride == 0:
            i = np.searchsorted(self.starts, offsets)
            return (i < self.count) & (self.starts[np.minimum(i, self.count - 1)] == offsets)
        return (offsets >= self.begin) & (offsets < self.end) & ((offsets - self.begin) % self.stride == 0)


def _field(fmt, buf, off):
    return struct.unpack_from("<" + fmt, buf, off)


def _terminated(buf, off) -> bool:
    return 0 in bytes(buf[off:off + NAME_SIZE])


def _resolve(base: int, relative: int, size: int) -> int | None:
    """`base + relative` if it lies in [0, size], else None (no overflow for any int64)."""
    target = base + relative
    return target if 0 <= base <= size and 0 <= target <= size else None


def _node_begin(relative: int, size: int) -> int | None:
    if relative < TREE_SIZE or relative > size - GRID_SIZE or relative % ALIGNMENT:
        return None
    return GRID_SIZE + relative


def _fixed_level(relative, count, stride, size, what, index) -> _Level:
    if count == 0:
        return _Level(0, 0, stride, 0, None)
    begin = _node_begin(relative, size)
    if begin is None:
        raise _invalid(f"the {what} nodes' offset {relative} is not an aligned offset inside the grid", index)
    if count > (size - begin) // stride:
        raise _invalid(f"{count} {what} nodes at offset {begin} run past the end of the grid ({size} bytes)", index)
    return _Level(begin, begin + count * stride, stride, count, None)


def _fpn_leaves(raw, relative, count, size, index) -> _Level:
    if count == 0:
        return _Level(0, 0, 0, 0, np.zeros(0, np.int64))
    begin = _node_begin(relative, size)
    if begin is None:
        raise _invalid(f"the leaf nodes' offset {relative} is not an aligned offset inside the grid", index)
    if count > (size - begin) // (FPN_LEAF_HEADER + 64):
        raise _invalid(f"{count} FloatN leaves at offset {begin} cannot fit in the grid ({size} bytes)", index)
    starts = np.empty(count, np.int64)
    at = begin
    for i in range(count):
        if FPN_LEAF_HEADER > size - at:
            raise _invalid(f"FloatN leaf {i} at offset {at} runs past the end of the grid", index)
        log_bits = _field("I", raw, at + 12)[0] >> 29
        if log_bits > 4:
            raise _invalid(f"FloatN leaf {i} declares 2^{log_bits}-bit values (at most 16 bits)", index)
        leaf_size = FPN_LEAF_HEADER + (1 << log_bits) * 64
        if leaf_size > size - at:
            raise _invalid(f"FloatN leaf {i} at offset {at} ({leaf_size} bytes) runs past the end of the grid", index)
        starts[i] = at
        at += leaf_size
    return _Level(begin, at, 0, count, starts)


def _check_links(raw, parents: _Level, mask_off, table_off, stride, n_bits, children: _Level, what, index):
    """Every set bit of each parent's child mask must link to the start of a child node."""
    if parents.count == 0:
        return
    a = np.frombuffer(raw, np.uint8, parents.count * parents.stride, parents.begin)
    a = a.reshape(parents.count, parents.stride)
    mask = np.unpackbits(a[:, mask_off:mask_off + n_bits // 8], axis=1, bitorder="little").astype(bool)
    if not mask.any():
        return
    table = a[:, table_off:table_off + stride * n_bits].reshape(parents.count, n_bits, stride)[:, :, :8]
    rel = np.ascontiguousarray(table[mask]).view(np.int64).reshape(-1)
    parent_at = parents.begin + np.nonzero(mask)[0].astype(np.int64) * parents.stride
    # (|rel| < 2^63 and parent_at < 2^40: the sum fits an int64 when rel is not near its limits)
    safe = np.abs(rel.astype(np.float64)) < 2.0 ** 62
    target = np.where(safe, parent_at + np.where(safe, rel, 0), -1)
    if not children.holds_node_at(target).all():
        article = "an" if what == "upper" else "a"
        raise _invalid(f"{article} {what} node links to a child that is not a node of the next level", index)


def check_grid(buf, off: int = 0, available: int | None = None, *, file_layout: bool = False,
               index: int | None = None) -> GridHeader:
    """Check the grid at byte `off` of `buf` (`available` bytes from there on); its header.
    `file_layout` (a loaded file): also require a grid size that is a multiple of 32 and a
    breadth-first tree (else `UnsupportedLayout`, raised after the header and metadata
    checks). A grid handed over in memory need not say it is breadth-first: its nodes are
    checked in that order all the same."""
    if available is None:
        available = len(buf) - off
    if available < GRID_SIZE + TREE_SIZE:
        raise _invalid(f"{available} bytes, a grid's headers alone take {GRID_SIZE + TREE_SIZE}", index)
    raw = memoryview(buf)[off:off + available]
    magic, = _field("Q", raw, 0)
    if magic not in (MAGIC_NUMBER, MAGIC_GRID):
        raise _invalid("NanoVDB signature not found on grid", index)
    flags, = _field("I", raw, 20)
    size, = _field("Q", raw, 32)
    if file_layout and size % ALIGNMENT:
        raise _invalid(f"the grid size {size} is not a multiple of {ALIGNMENT}", index)
    if size < GRID_SIZE + TREE_SIZE or size > available:
        raise _invalid(f"the grid is truncated or its size corrupt: its header says {size} bytes, "
                       f"{available} are there", index)
    raw = raw[:size]
    if not _terminated(raw, 40):
        raise _invalid("the grid name is not terminated within its 256 bytes", index)
    grid_type, blind_offset, blind_count = _field("IqI", raw, 636)
    if blind_offset < 0 or blind_offset > size or blind_count > (size - blind_offset) // BLIND_META_SIZE:
        raise _invalid(f"{blind_count} blind metadata entries at offset {blind_offset} lie outside the grid", index)
    if grid_type == 0 or grid_type >= TYPE_END:
        raise _invalid(f"unknown grid type code {grid_type}", index)
    for i in range(blind_count):
        entry = blind_offset + i * BLIND_META_SIZE
        if not _terminated(raw, entry + 32):
            raise _invalid(f"the name of feature array {i} is not terminated within its 256 bytes", index)
        rel, count, value_size = _field("qQI", raw, entry)
        start = _resolve(entry, rel, size)
        if start is None or (value_size and count > (size - start) // value_size):
            raise _invalid(f"the data of feature array {i} lies outside the grid", index)
    if file_layout and not flags & FLAG_BREADTH_FIRST:
        raise UnsupportedLayout(f"{UNSUPPORTED_LAYOUT}: the grid's nodes are not stored breadth-first "
                                "(weft reads breadth-first NanoVDB trees)")
    if grid_type not in LAYOUT:  # (a well-formed grid of a type weft does not read: not Warp's error)
        raise NanoVDBError(f"Unsupported NanoVDB grid type {TYPE_NAMES.get(grid_type, '?')} "
                           f"({grid_type}); weft reads {', '.join(TYPE_NAMES[t] for t in sorted(LAYOUT))}")
    _check_tree(raw, grid_type, size, blind_offset, blind_count, index)
    return grid_header(buf, off)


def _check_tree(raw, grid_type, size, blind_offset, blind_count, index):
    L = LAYOUT[grid_type]
    t = GRID_SIZE
    o_leaf, o_lower, o_upper, o_root = _field("QQQQ", raw, t)
    n_leaf, n_lower, n_upper = _field("III", raw, t + 32)
    root = _fixed_level(o_root, 1, L.root_size, size, "root", index)
    upper = _fixed_level(o_upper, n_upper, L.upper_size, size, "upper", index)
    lower = _fixed_level(o_lower, n_lower, L.lower_size, size, "lower", index)
    if grid_type == FLOATN:
        leaf = _fpn_leaves(raw, o_leaf, n_leaf, size, index)
    else:
        leaf = _fixed_level(o_leaf, n_leaf, L.leaf_size, size, "leaf", index)
    n_tiles, = _field("I", raw, root.begin + 24)
    if n_tiles > (size - root.end) // L.root_tile_size:
        raise _invalid(f"{n_tiles} root tiles at offset {root.end} run past the end of the grid", index)
    occupied = root.end + n_tiles * L.root_tile_size
    for what, level in (("upper", upper), ("lower", lower), ("leaf", leaf)):
        if level.count:
            if level.begin < occupied:
                raise _invalid(f"the {what} nodes (offset {level.begin}) overlap the level before them "
                               f"(which ends at {occupied})", index)
            occupied = level.end
    boundary = size if blind_count == 0 and blind_offset == 0 else blind_offset
    if occupied > boundary:
        raise _invalid(f"the tree (ending at {occupied}) overlaps the blind metadata at {boundary}", index)
    if n_tiles:
        tiles = np.frombuffer(raw, np.uint8, n_tiles * L.root_tile_size, root.end).reshape(n_tiles, L.root_tile_size)
        rel = np.ascontiguousarray(tiles[:, 8:16]).view(np.int64).reshape(-1)
        rel = rel[rel != 0]
        safe = np.abs(rel.astype(np.float64)) < 2.0 ** 62
        target = np.where(safe, root.begin + np.where(safe, rel, 0), -1)
        if not upper.holds_node_at(target).all():
            raise _invalid("a root tile links to a child that is not an upper node", index)
    _check_links(raw, upper, UPPER_CHILD_MASK, L.upper_off_table, L.table_stride, 32768, lower, "upper", index)
    _check_links(raw, lower, LOWER_CHILD_MASK, L.lower_off_table, L.table_stride, 4096, leaf, "lower", index)


def check_buffer(buf) -> list[GridHeader]:
    """Check every grid of `buf` (consecutive grids, as a file holds them); their headers.
    A malformed grid anywhere is reported before a grid that is only not breadth-first."""
    headers, offset, unsupported, i = [], 0, None, 0
    size = len(buf)
    while offset < size:
        try:
            h = check_grid(buf, offset, size - offset, file_layout=True, index=i if i else None)
        except UnsupportedLayout as e:
            unsupported = unsupported or e
            h = grid_header(buf, offset)
        headers.append(h)
        offset += h.grid_size
        i += 1
    if offset != size or not headers:
        raise _invalid(f"the grids take {offset} bytes of a {size}-byte buffer")
    if unsupported is not None:
        raise unsupported
    return headers
