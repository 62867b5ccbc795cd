"""weft.geometry.nanovdb_check: what a grid buffer must satisfy before a Volume walks it
(Warp's messages first, weft's detail after), every grid of a file, FloatN grids with
per-leaf sizes, and feature (blind) metadata: ranges, names, and the snapshot the
accessors read."""

import struct

import numpy as np
import pytest

import weft as wp
from weft.geometry import nanovdb as nv
from weft.geometry import nanovdb_check as nc

INVALID = "Invalid NanoVDB grid structure"


def float_grid(origins=((0, 0, 0), (8, 0, 0), (0, 64, 0))):
    return nv.build_grid(list(origins), 1, np.float32(0.5).tobytes(), np.eye(3), (0, 0, 0))


def nvdb_file(*grids):
    """An uncompressed .nvdb file of `grids`."""
    out = bytearray(struct.pack("<QIHH", nv.MAGIC_NUMBER, nv.VERSION, len(grids), 0))
    for g in grids:
        meta = bytearray(176)
        struct.pack_into("<QQ", meta, 0, len(g), len(g))
        struct.pack_into("<I", meta, 136, 1)
        out += meta + b"\0"
    for g in grids:
        out += bytes(g)
    return bytes(out)


def tree(g):
    """(leaf, lower, upper, root) offsets, absolute, and (leaf, lower, upper) counts."""
    rel = struct.unpack_from("<QQQQ", g, nv.GRID_SIZE)
    return [nv.GRID_SIZE + r for r in rel], struct.unpack_from("<III", g, nv.GRID_SIZE + 32)


def with_feature(grid, data: bytes, name=b"density\0", value_size=1):
    """`grid` with one blind-data array (`data`) after its tree."""
    g = bytearray(grid)
    meta_at = len(g)
    data_at = meta_at + nv.BLIND_META_SIZE
    g += bytes(nv.BLIND_META_SIZE) + data
    g += bytes(-len(g) % 32)
    struct.pack_into("<qQIIII", g, meta_at, data_at - meta_at, len(data) // value_size, value_size, 0, 0, 26)
    g[meta_at + 32:meta_at + 32 + len(name)] = name
    struct.pack_into("<Q", g, 32, len(g))
    struct.pack_into("<qI", g, 640, meta_at, 1)
    return g


def test_valid_grids_load_and_every_grid_is_checked():
    a, b = float_grid(), float_grid(((16, 16, 16),))
    struct.pack_into("<II", a, 24, 0, 2)  # (grid index, grid count)
    struct.pack_into("<II", b, 24, 1, 2)
    v = wp.Volume.load_from_nvdb(nvdb_file(a, b))
    assert v.get_tile_count() == 3 and v.load_next_grid().get_tile_count() == 1
    bad = bytearray(b)
    (_, _, _, root), _ = tree(bad)
    struct.pack_into("<Q", bad, nv.GRID_SIZE + 24, len(bad))  # root past the grid
    with pytest.raises(RuntimeError, match=rf"^{INVALID} \(grid 1\): the root nodes' offset"):
        wp.Volume.load_from_nvdb(nvdb_file(a, bad))
    # a grid that is only not breadth-first is reported after a malformed one
    not_bf = bytearray(a)
    struct.pack_into("<I", not_bf, 20, 2)
    with pytest.raises(RuntimeError, match=f"^{INVALID}"):
        wp.Volume.load_from_nvdb(nvdb_file(not_bf, bad))
    with pytest.raises(RuntimeError, match="^Unsupported NanoVDB tree layout: .*breadth-first"):
        wp.Volume.load_from_nvdb(nvdb_file(not_bf, b))
    # in memory, the flag is not required (Warp's Volume(data) does not ask for it)
    assert wp.Volume(wp.array(np.frombuffer(bytes(not_bf), np.uint8), dtype=wp.uint8)).get_tile_count() == 3


def test_file_grid_sizes_must_be_aligned_and_consume_the_buffer():
    g = float_grid()
    odd = bytearray(g) + b"\0"
    struct.pack_into("<Q", odd, 32, len(odd))
    with pytest.raises(RuntimeError, match=f"{INVALID}: the grid size {len(odd)} is not a multiple of 32"):
        wp.Volume.load_from_nvdb(nvdb_file(odd))
    wp.Volume(wp.array(np.frombuffer(bytes(odd), np.uint8), dtype=wp.uint8))  # (in memory: accepted)
    with pytest.raises(RuntimeError, match=INVALID):
        nc.check_buffer(bytes(g) + bytes(32))  # 32 stray bytes: not a grid


@pytest.mark.parametrize("case", ["level_overlap", "link_inside_node", "link_to_empty_level", "tiles_past_end",
                                  "unaligned_level", "unknown_type", "name_unterminated"])
def test_structure_errors(case):
    g = bytearray(float_grid())
    (leaf, lower, upper, root), (n_leaf, n_lower, n_upper) = tree(g)
    L = nv.LAYOUT[1]
    if case == "level_overlap":  # the lower nodes moved back into the upper ones
        struct.pack_into("<Q", g, nv.GRID_SIZE + 8, lower - nv.GRID_SIZE - 32)
        detail = "overlap the level before them"
    elif case == "link_inside_node":
        entry = lower + L.lower_off_table
        struct.pack_into("<q", g, entry, struct.unpack_from("<q", g, entry)[0] + 32)
        detail = "a lower node links to a child that is not a node of the next level"
    elif case == "link_to_empty_level":
        struct.pack_into("<I", g, nv.GRID_SIZE + 32, 0)  # no leaves, yet lower nodes link to some
        detail = "a lower node links"
    elif case == "tiles_past_end":
        struct.pack_into("<I", g, root + 24, 0xFFFFFFFF)
        detail = "root tiles at offset"
    elif case == "unaligned_level":
        struct.pack_into("<Q", g, nv.GRID_SIZE, leaf - nv.GRID_SIZE + 8)
        detail = "not an aligned offset"
    elif case == "unknown_type":
        struct.pack_into("<I", g, 636, 27)
        detail = "unknown grid type code 27"
    else:
        g[40:296] = b"A" * 256
        detail = "grid name is not terminated"
    with pytest.raises(RuntimeError, match=f"^{INVALID}: .*{detail}"):
        wp.Volume.load_from_nvdb(nvdb_file(g))
    with pytest.raises(RuntimeError, match=INVALID):
        wp.Volume(wp.array(np.frombuffer(bytes(g), np.uint8), dtype=wp.uint8))


def floatn_grid(bit_widths, origins):
    """A FloatN grid: one upper and one lower node, leaves of the given value widths."""
    L = nv.LAYOUT[nv.FLOATN]
    root = nv.GRID_SIZE + nv.TREE_SIZE
    upper = root + L.root_size + L.root_tile_size
    lower = upper + L.upper_size
    leaf = lower + L.lower_size
    sizes = [96 + 64 * w for w in bit_widths]
    size = leaf + sum(sizes)
    g = bytearray(size)
    struct.pack_into("<QQIIIIQ", g, 0, nv.MAGIC_NUMBER, 0, nv.VERSION, 32, 0, 1, size)
    struct.pack_into("<IIqI", g, 632, 0, nv.FLOATN, size, 0)
    t = nv.GRID_SIZE
    struct.pack_into("<QQQQIII", g, t, leaf - t, lower - t, upper - t, root - t, len(sizes), 1, 1)
    struct.pack_into("<I", g, root + 24, 1)
    struct.pack_into("<q", g, root + L.root_size + 8, upper - root)
    g[upper + nv.UPPER_CHILD_MASK] = 1
    struct.pack_into("<q", g, upper + L.upper_off_table, lower - upper)
    at = leaf
    for i, (w, s, o) in enumerate(zip(bit_widths, sizes, origins)):
        g[lower + nv.LOWER_CHILD_MASK + i // 8] |= 1 << (i % 8)
        struct.pack_into("<q", g, lower + L.lower_off_table + 8 * i, at - lower)
        struct.pack_into("<3iI", g, at, *o, (w.bit_length() - 1) << 29)
        at += s
    return g


def test_floatn_leaves_have_their_own_sizes():
    g = floatn_grid([1, 4, 16], [(0, 0, 0), (0, 0, 8), (0, 0, 16)])
    v = wp.Volume.load_from_nvdb(nvdb_file(g))
    assert v.get_grid_info().type_str == "FloatN"
    np.testing.assert_array_equal(v.get_tiles().numpy(), [[0, 0, 0], [0, 0, 8], [0, 0, 16]])
    # the links must land on the leaves' own starts: one leaf size off is inside a leaf
    (_, lower, _, _), _ = tree(g)
    moved = bytearray(g)
    entry = lower + nv.LAYOUT[nv.FLOATN].lower_off_table + 8
    struct.pack_into("<q", moved, entry, struct.unpack_from("<q", moved, entry)[0] + 96 + 64)
    with pytest.raises(RuntimeError, match=f"{INVALID}: a lower node links"):
        wp.Volume.load_from_nvdb(nvdb_file(moved))
    wide = bytearray(g)
    (leaf, _, _, _), _ = tree(g)
    struct.pack_into("<I", wide, leaf + 12, 5 << 29)  # 32-bit values: not a FloatN width
    with pytest.raises(RuntimeError, match=f"{INVALID}: FloatN leaf 0 declares"):
        wp.Volume.load_from_nvdb(nvdb_file(wide))
    cut = bytearray(g[:len(g) - 64 * 16])  # the last leaf's values cut off
    struct.pack_into("<Q", cut, 32, len(cut))
    struct.pack_into("<q", cut, 640, len(cut))
    with pytest.raises(RuntimeError, match=f"{INVALID}: FloatN leaf 2 .*runs past the end"):
        wp.Volume.load_from_nvdb(nvdb_file(cut))


def test_feature_arrays():
    payload = bytes(range(40))
    g = with_feature(float_grid(), payload)
    v = wp.Volume(wp.array(np.frombuffer(bytes(g), np.uint8), dtype=wp.uint8))
    info = v.get_feature_array_info(0)
    assert (info.name, info.value_size, info.value_count, info.type_str) == ("density", 1, 40, "uint8")
    np.testing.assert_array_equal(v.feature_array(0).numpy(), np.frombuffer(payload, np.uint8))
    meta = struct.unpack_from("<q", g, 640)[0]
    size = len(g)
    for rel, count, vsize in ((-(1 << 63), 1, 1), (-meta - 1, 1, 1), (size - meta + 1, 1, 1),
                              (nv.BLIND_META_SIZE, size, 1), (nv.BLIND_META_SIZE, 1 << 63, 3)):
        bad = bytearray(g)
        struct.pack_into("<qQI", bad, meta, rel, count, vsize)
        with pytest.raises(RuntimeError, match=f"{INVALID}: the data of feature array 0 lies outside the grid"):
            wp.Volume(wp.array(np.frombuffer(bytes(bad), np.uint8), dtype=wp.uint8))
    unnamed = bytearray(g)
    unnamed[meta + 32:meta + 288] = b"B" * 256
    with pytest.raises(RuntimeError, match="name of feature array 0 is not terminated"):
        wp.Volume(wp.array(np.frombuffer(bytes(unnamed), np.uint8), dtype=wp.uint8))
    table = bytearray(g)
    struct.pack_into("<I", table, 648, 2)  # two entries: the second runs past the grid
    with pytest.raises(RuntimeError, match="blind metadata entries"):
        wp.Volume(wp.array(np.frombuffer(bytes(table), np.uint8), dtype=wp.uint8))
    # a negative offset that stays in the grid: the grid's first bytes
    start = bytearray(g)
    struct.pack_into("<qQI", start, meta, -meta, 8, 1)
    v2 = wp.Volume(wp.array(np.frombuffer(bytes(start), np.uint8), dtype=wp.uint8))
    np.testing.assert_array_equal(v2.feature_array(0).numpy(), np.frombuffer(bytes(start[:8]), np.uint8))


def test_feature_metadata_is_a_snapshot():
    g = with_feature(float_grid(), bytes(16))
    data = wp.array(np.frombuffer(bytes(g), np.uint8), dtype=wp.uint8)
    v = wp.Volume(data, copy=False)
    before = v.get_feature_array_info(0)
    meta = struct.unpack_from("<q", g, 640)[0]
    changed = bytearray(g)
    struct.pack_into("<qQI", changed, meta, -meta - 1, 1, 1)
    changed[meta + 32:meta + 288] = b"C" * 256
    data.assign(np.frombuffer(bytes(changed), np.uint8))
    assert v.get_feature_array_info(0) == before
    with pytest.raises(RuntimeError, match="Invalid feature array 1: the grid has 1"):
        v.get_feature_array_info(1)
    with pytest.raises(RuntimeError, match="Invalid feature array 0: the volume holds no grid"):
        wp.Volume.__new__(wp.Volume).get_feature_array_info(0)


def test_decode_name():
    assert wp.Volume._decode_nvdb_name(b"abc\0def" + bytes(249)) == "abc"
    with pytest.raises(RuntimeError, match="Invalid NanoVDB name"):
        wp.Volume._decode_nvdb_name(b"x" * 256)
