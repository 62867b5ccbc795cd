"""Volume lookups in weft's kernel language: a walk of the NanoVDB tree, as the format defines it.

A volume id is the address of the descriptor that geometry/volume.py writes (the grid's
address and type, the node layout constants of that type, a copy of the index <-> world
map). A lookup of voxel (i, j, k) finds the root tile whose key matches the voxel's
4096^3 block, then follows the child masks and tables of the upper (32^3) and lower
(16^3) nodes down to a leaf (8^3); where a level has no child the value is that level's
tile value, and where the root has no tile it is the background. The walk gives the
address of the value and the level it was found at (0 = a leaf voxel, 4 = background,
5 = no grid: a destroyed volume).

Sampling and its gradients are written here as plain arithmetic on looked-up values, so
their derivatives (with respect to the sample point, the voxel data of index grids and the
background) come from weft's autodiff of this code.

Imported on first use: kernel-language code needs the frontend, which imports the builtins.
"""

from __future__ import annotations

from typing import Any

import weft as wp

from ..geometry.volume import (
    _WORDS,
    D_BACKGROUND,
    D_FIRST_LEAF,
    D_GRID,
    D_LEAF_SIZE,
    D_LEAF_TABLE,
    D_LOWER_TABLE,
    D_MAP,
    D_ROOT,
    D_ROOT_SIZE,
    D_STRIDE,
    D_TILE_SIZE,
    D_TILE_VALUE,
    D_TILES,
    D_TYPE,
    D_UPPER_TABLE,
    D_VALUE_BYTES,
    D_VOXELS,
)
from .registry import Builtin
from .unchecked import expand_constant_load

# arr[i] without a bounds check, for the volume's own (validated) grid buffer; a constant to
# autodiff (as in Warp, a volume's values get no gradient: only the sample point and, for
# index grids, the user's voxel_data array and background do)
_load = Builtin("volume_load", expand_constant_load, doc="an unchecked load of a volume's own data")

_MAPF = 8 * D_MAP           # byte offsets in the descriptor of the map's parts
_MAPD = 8 * D_MAP + 88


@wp.func
def _word(d: wp.uint64, k: int):
    return _load(wp.array(ptr=d, shape=_WORDS, dtype=wp.int64), k)


@wp.func
def _i64(addr: wp.uint64):
    return _load(wp.array(ptr=addr, shape=1, dtype=wp.int64), 0)


@wp.func
def _u64(addr: wp.uint64):
    return _load(wp.array(ptr=addr, shape=1, dtype=wp.uint64), 0)


@wp.func
def _bit(addr: wp.uint64, n: int):
    w = _load(wp.array(ptr=addr + wp.uint64(4 * (n >> 5)), shape=1, dtype=wp.uint32), 0)
    return ((w >> wp.uint32(n & 31)) & wp.uint32(1)) != wp.uint32(0)


@wp.func
def _key(i: int, j: int, k: int):
    """The root key of the 4096^3 block holding (i, j, k): 21 bits per axis, x highest."""
    m = wp.int64(1048575)
    ki = (wp.int64(i) >> wp.int64(12)) & m
    kj = (wp.int64(j) >> wp.int64(12)) & m
    kk = (wp.int64(k) >> wp.int64(12)) & m
    return (ki << wp.int64(42)) | (kj << wp.int64(21)) | kk


@wp.func
def value_address(d: wp.uint64, i: int, j: int, k: int):
    """(address of the value of voxel (i, j, k), the level it lives at: 0 leaf, 1 lower tile,
    2 upper tile, 3 root tile, 4 background, 5 no grid)."""
    addr = wp.uint64(0)
    level = 5
    if _word(d, D_GRID) != wp.int64(0):
        root = wp.uint64(_word(d, D_ROOT))
        key = _key(i, j, k)
        tiles = _word(d, D_TILES)
        tile_size = wp.uint64(_word(d, D_TILE_SIZE))
        tile = root + wp.uint64(_word(d, D_ROOT_SIZE))
        t = wp.int64(0)
        while t < tiles and _i64(tile) != key:
            tile = tile + tile_size
            t = t + wp.int64(1)
        if t >= tiles:
            addr = root + wp.uint64(_word(d, D_BACKGROUND))
            level = 4
        else:
            child = _i64(tile + wp.uint64(8))
            if child == wp.int64(0):
                addr = tile + wp.uint64(_word(d, D_TILE_VALUE))
                level = 3
            else:
                stride = wp.uint64(_word(d, D_STRIDE))
                upper = root + wp.uint64(child)
                n = (((i & 4095) >> 7) << 10) | (((j & 4095) >> 7) << 5) | ((k & 4095) >> 7)
                entry = upper + wp.uint64(_word(d, D_UPPER_TABLE)) + stride * wp.uint64(n)
                addr = entry
                level = 2
                if _bit(upper + wp.uint64(4128), n):
                    lower = upper + wp.uint64(_i64(entry))
                    n = (((i & 127) >> 3) << 8) | (((j & 127) >> 3) << 4) | ((k & 127) >> 3)
                    entry = lower + wp.uint64(_word(d, D_LOWER_TABLE)) + stride * wp.uint64(n)
                    addr = entry
                    level = 1
                    if _bit(lower + wp.uint64(544), n):
                        leaf = lower + wp.uint64(_i64(entry))
                        n = ((i & 7) << 6) | ((j & 7) << 3) | (k & 7)
                        offset = _word(d, D_LEAF_TABLE) + _word(d, D_VALUE_BYTES) * wp.int64(n)
                        addr = leaf + wp.uint64(offset)
                        level = 0
    return addr, level


@wp.func
def _popcount(x: wp.uint64):
    x = x - ((x >> wp.uint64(1)) & wp.uint64(0x5555555555555555))
    x = (x & wp.uint64(0x3333333333333333)) + ((x >> wp.uint64(2)) & wp.uint64(0x3333333333333333))
    x = (x + (x >> wp.uint64(4))) & wp.uint64(0x0F0F0F0F0F0F0F0F)
    return wp.int64((x * wp.uint64(0x0101010101010101)) >> wp.uint64(56))


@wp.func
def voxel_index(d: wp.uint64, addr: wp.uint64, i: int, j: int, k: int):
    """The 1-based linear index of the leaf voxel (i, j, k) whose value lives at `addr`
    (0: an inactive voxel of an OnIndex grid). Index grids store it; other grids number
    every leaf voxel, leaf by leaf."""
    t = _word(d, D_TYPE)
    n = ((i & 7) << 6) | ((j & 7) << 3) | (k & 7)
    r = wp.int64(0)
    if t == wp.int64(19) or t == wp.int64(21):  # Index, IndexMask: every leaf voxel
        r = _i64(addr) + wp.int64(n)
    elif t == wp.int64(20) or t == wp.int64(22):  # OnIndex, OnIndexMask: active voxels only
        leaf = addr - wp.uint64(_word(d, D_LEAF_TABLE))
        word = n >> 6
        bit = wp.uint64(1) << wp.uint64(n & 63)
        mask = _u64(leaf + wp.uint64(16 + 8 * word))
        if (mask & bit) != wp.uint64(0):
            s = _popcount(mask & (bit - wp.uint64(1)))
            if word > 0:
                prefix = _u64(addr + wp.uint64(8))
                s = s + wp.int64((prefix >> wp.uint64(9 * (word - 1))) & wp.uint64(511))
            r = _i64(addr) + s
    else:
        leaf = addr - wp.uint64(_word(d, D_LEAF_TABLE)) - wp.uint64(_word(d, D_VALUE_BYTES) * wp.int64(n))
        leaf_index = wp.int64(leaf - wp.uint64(_word(d, D_FIRST_LEAF))) // _word(d, D_LEAF_SIZE)
        r = leaf_index * wp.int64(512) + wp.int64(n) + wp.int64(1)
    return r


@wp.func
def lookup_index(d: wp.uint64, i: int, j: int, k: int):
    addr, level = value_address(d, i, j, k)
    r = -1
    if level == 0:
        r = int(voxel_index(d, addr, i, j, k)) - 1
    return r


@wp.func
def voxel_count(d: wp.uint64):
    return int(_word(d, D_VOXELS))


@wp.func
def _round(x: float):
    return int(wp.round(x))


# transforms ---------------------------------------------------------------------------------------
@wp.func
def _mat(d: wp.uint64, off: int, p: wp.float32):
    a = wp.array(ptr=d + wp.uint64(off), shape=9, dtype=wp.float32)
    return wp.mat33f(_load(a, 0), _load(a, 1), _load(a, 2), _load(a, 3), _load(a, 4), _load(a, 5),
                     _load(a, 6), _load(a, 7), _load(a, 8))


@wp.func
def _mat(d: wp.uint64, off: int, p: wp.float64):  # noqa: F811 - an overload
    a = wp.array(ptr=d + wp.uint64(off), shape=9, dtype=wp.float64)
    return wp.mat33d(_load(a, 0), _load(a, 1), _load(a, 2), _load(a, 3), _load(a, 4), _load(a, 5),
                     _load(a, 6), _load(a, 7), _load(a, 8))


@wp.func
def _vec(d: wp.uint64, off: int, p: wp.float32):
    a = wp.array(ptr=d + wp.uint64(off), shape=3, dtype=wp.float32)
    return wp.vec3f(_load(a, 0), _load(a, 1), _load(a, 2))


@wp.func
def _vec(d: wp.uint64, off: int, p: wp.float64):  # noqa: F811 - an overload
    a = wp.array(ptr=d + wp.uint64(off), shape=3, dtype=wp.float64)
    return wp.vec3d(_load(a, 0), _load(a, 1), _load(a, 2))


@wp.func
def index_to_world(d: wp.uint64, uvw: wp.vec3f):
    return _mat(d, _MAPF, 0.0) @ uvw + _vec(d, _MAPF + 72, 0.0)


@wp.func
def index_to_world(d: wp.uint64, uvw: wp.vec3d):  # noqa: F811 - an overload
    return _mat(d, _MAPD, wp.float64(0.0)) @ uvw + _vec(d, _MAPD + 144, wp.float64(0.0))


@wp.func
def world_to_index(d: wp.uint64, xyz: wp.vec3f):
    return _mat(d, _MAPF + 36, 0.0) @ (xyz - _vec(d, _MAPF + 72, 0.0))


@wp.func
def world_to_index(d: wp.uint64, xyz: wp.vec3d):  # noqa: F811 - an overload
    return _mat(d, _MAPD + 72, wp.float64(0.0)) @ (xyz - _vec(d, _MAPD + 144, wp.float64(0.0)))


@wp.func
def index_to_world_dir(d: wp.uint64, uvw: wp.vec3f):
    return _mat(d, _MAPF, 0.0) @ uvw


@wp.func
def index_to_world_dir(d: wp.uint64, uvw: wp.vec3d):  # noqa: F811 - an overload
    return _mat(d, _MAPD, wp.float64(0.0)) @ uvw


@wp.func
def world_to_index_dir(d: wp.uint64, xyz: wp.vec3f):
    return _mat(d, _MAPF + 36, 0.0) @ xyz


@wp.func
def world_to_index_dir(d: wp.uint64, xyz: wp.vec3d):  # noqa: F811 - an overload
    return _mat(d, _MAPD + 72, wp.float64(0.0)) @ xyz


# typed access ---------------------------------------------------------------------------------
_CACHE: dict = {}


def typed(T, code: int, scalar, is_vec: bool):
    """The lookup/store/sample funcs for values of type T in grids of type `code` (cached)."""
    key = (T, code)
    if key not in _CACHE:
        _CACHE[key] = _make_typed(T, code, scalar, is_vec)
    return _CACHE[key]


def _make_typed(T, code, S, is_vec):
    G = wp.types.vector(3, S) if not is_vec else wp.types.matrix((T.length, 3), S)
    V3 = wp.types.vector(3, S)

    @wp.func
    def read(addr: wp.uint64):
        return _load(wp.array(ptr=addr, shape=1, dtype=T), 0)

    @wp.func
    def at(d: wp.uint64, i: int, j: int, k: int):
        r = T(0)
        if _word(d, D_TYPE) == wp.int64(code):
            addr, level = value_address(d, i, j, k)
            if level < 5:
                r = read(addr)
        return r

    @wp.func
    def store(d: wp.uint64, i: int, j: int, k: int, value: Any):
        if _word(d, D_TYPE) == wp.int64(code):
            addr, level = value_address(d, i, j, k)
            if level == 0:
                a = wp.array(ptr=addr, shape=1, dtype=T)
                a[0] = value

    @wp.func
    def at_index(d: wp.uint64, data: Any, bg: Any, i: int, j: int, k: int):
        r = bg
        addr, level = value_address(d, i, j, k)
        if level == 0:
            v = voxel_index(d, addr, i, j, k)
            if v > wp.int64(0):
                r = data[int(v - wp.int64(1))]
        return r

    @wp.func
    def _acc_grad(g: Any, v: Any, gw: Any):
        if wp.static(is_vec):
            return g + wp.outer(v, gw)
        else:
            return g + v * gw

    def sampler(get, fast_path):
        @wp.func
        def leaf_base(d: wp.uint64, i: int, j: int, k: int):
            """(the value address of voxel (i, j, k), whether all 8 corners of its cell lie in
            its leaf): then the other corners are at fixed offsets, and one walk serves all 8."""
            base = wp.uint64(0)
            fast = False
            if wp.static(fast_path):
                addr, level = value_address(d, i, j, k)
                base = addr
                fast = level == 0 and (i & 7) != 7 and (j & 7) != 7 and (k & 7) != 7
            return base, fast

        @wp.func
        def corner(d: wp.uint64, data: Any, bg: Any, i: int, j: int, k: int, dx: int, dy: int, dz: int,
                   base: wp.uint64, fast: bool):
            if fast:
                return read(base + wp.uint64(_word(d, D_VALUE_BYTES) * wp.int64(dx * 64 + dy * 8 + dz)))
            return get(d, data, bg, i + dx, j + dy, k + dz)

        @wp.func
        def sample(d: wp.uint64, uvw: wp.vec3f, mode: int, data: Any, bg: Any, valid: bool):
            r = T(0)
            if valid:
                if mode == 0:
                    r = get(d, data, bg, _round(uvw[0]), _round(uvw[1]), _round(uvw[2]))
                elif mode == 1:
                    b = wp.vec3f(wp.floor(uvw[0]), wp.floor(uvw[1]), wp.floor(uvw[2]))
                    f = uvw - b
                    i = int(b[0])
                    j = int(b[1])
                    k = int(b[2])
                    base, fast = leaf_base(d, i, j, k)
                    for dx in range(2):
                        wx = f[0] * float(dx) + (1.0 - f[0]) * float(1 - dx)
                        for dy in range(2):
                            wy = f[1] * float(dy) + (1.0 - f[1]) * float(1 - dy)
                            for dz in range(2):
                                wz = f[2] * float(dz) + (1.0 - f[2]) * float(1 - dz)
                                r = r + S(wx * wy * wz) * corner(d, data, bg, i, j, k, dx, dy, dz, base, fast)
            return r

        @wp.func
        def sample_grad(d: wp.uint64, uvw: wp.vec3f, mode: int, data: Any, bg: Any, valid: bool):
            r = T(0)
            g = G()
            if valid:
                if mode == 0:
                    r = get(d, data, bg, _round(uvw[0]), _round(uvw[1]), _round(uvw[2]))
                elif mode == 1:
                    b = wp.vec3f(wp.floor(uvw[0]), wp.floor(uvw[1]), wp.floor(uvw[2]))
                    f = uvw - b
                    i = int(b[0])
                    j = int(b[1])
                    k = int(b[2])
                    base, fast = leaf_base(d, i, j, k)
                    for dx in range(2):
                        wx = f[0] * float(dx) + (1.0 - f[0]) * float(1 - dx)
                        sx = float(2 * dx - 1)
                        for dy in range(2):
                            wy = f[1] * float(dy) + (1.0 - f[1]) * float(1 - dy)
                            sy = float(2 * dy - 1)
                            for dz in range(2):
                                wz = f[2] * float(dz) + (1.0 - f[2]) * float(1 - dz)
                                sz = float(2 * dz - 1)
                                v = corner(d, data, bg, i, j, k, dx, dy, dz, base, fast)
                                r = r + S(wx * wy * wz) * v
                                gw = V3(S(sx * wy * wz), S(sy * wx * wz), S(sz * wx * wy))
                                g = _acc_grad(g, v, gw)
            return r, g

        return sample, sample_grad

    @wp.func
    def get_value(d: wp.uint64, data: Any, bg: Any, i: int, j: int, k: int):
        return at(d, i, j, k)

    @wp.func
    def get_indexed(d: wp.uint64, data: Any, bg: Any, i: int, j: int, k: int):
        return at_index(d, data, bg, i, j, k)

    sample, sample_grad = sampler(get_value, True)
    sample_index, sample_grad_index = sampler(get_indexed, False)

    @wp.func
    def valid(d: wp.uint64):
        return _word(d, D_TYPE) == wp.int64(code)

    class Funcs:
        pass

    fs = Funcs()
    fs.at, fs.store, fs.sample, fs.sample_grad = at, store, sample, sample_grad
    fs.sample_index, fs.sample_grad_index, fs.valid, fs.grad_type = sample_index, sample_grad_index, valid, G
    return fs
