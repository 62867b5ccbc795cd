"""Textures (Warp 1.19's experimental texture API) on weft's CPU backend.

A texture is a grid of 1, 2 or 4 channels per texel in 1, 2 or 3 dimensions, optionally
with a chain of mip levels, sampled in kernels by `texture_sample` (builtins/texture.py)
with the filtering and addressing chosen when it was made.

Kernels see a texture as a small struct (`Texture1D`, `Texture2D`, `Texture3D`: the
fields `id`, `width` and, by dimension, `height` and `depth`), so a texture can be a
kernel parameter, a struct field or an array element, and `tex.width` reads in kernels as
in Warp. `id` is the address of a descriptor (int64 words, layout below) this object
keeps alive: the sampling parameters and, per mip level, its shape and the address of its
texels decoded to float32 (8- and 16-bit integers normalized, as Warp's samplers return
them), so that sampling code loads float32 whatever the stored type. The stored values
themselves are kept too, for `copy_to` (float32 texels are stored once).
"""

from __future__ import annotations

import enum
import math

import numpy as np

from ..types import (
    StructType,
    StructValue,
    Vector,
    float16,
    float32,
    int8,
    int16,
    int32,
    scalar_from_numpy,
    uint8,
    uint16,
    uint32,
    uint64,
)


class TextureFilterMode(enum.IntEnum):
    """How a texture is filtered within a mip level (and between levels)."""

    CLOSEST = 0
    LINEAR = 1


class TextureAddressMode(enum.IntEnum):
    """How coordinates outside the texture are mapped onto it."""

    WRAP = 0
    CLAMP = 1
    MIRROR = 2
    BORDER = 3


class TextureResourceFlags(enum.IntEnum):
    """Flags of graphics-interop texture resources (CUDA only; accepted for compatibility)."""

    NONE = 0x00
    READ_ONLY = 0x01
    WRITE_DISCARD = 0x02
    SURFACE_LDST = 0x04
    TEXTURE_GATHER = 0x08


MAX_MIP_LEVELS = 16
_SUPPORTED = (uint8, uint16, uint32, int8, int16, int32, float16, float32)
_SUPPORTED_TEXT = "uint8, uint16, uint32, int8, int16, int32, float16, float32"

# descriptor layout (int64 words)
D_NDIM, D_CHANNELS, D_FILTER, D_MIP_FILTER = 0, 1, 2, 3
D_ADDRESS = 4          # u, v, w
D_NORMALIZED = 7
D_LEVELS = 8
D_BASE = 9             # base width, height, depth
D_LEVEL0 = 12          # per level: width, height, depth, address of float32 texels
WORDS = D_LEVEL0 + 4 * MAX_MIP_LEVELS


class _Texture1DFields:
    id: uint64
    width: int32


class _Texture2DFields:
    id: uint64
    width: int32
    height: int32


class _Texture3DFields:
    id: uint64
    width: int32
    height: int32
    depth: int32


def _kernel_type(fields, name):
    t = StructType(fields)
    t.name = name
    t.key = f"weft.{name}"
    t.is_texture = True  # (struct fields hold the texture object itself, see types/struct.py)
    return t


TEXTURE1D = _kernel_type(_Texture1DFields, "Texture1D")
TEXTURE2D = _kernel_type(_Texture2DFields, "Texture2D")
TEXTURE3D = _kernel_type(_Texture3DFields, "Texture3D")
TEXTURE_TYPES = {1: TEXTURE1D, 2: TEXTURE2D, 3: TEXTURE3D}


def _decode(raw: np.ndarray) -> np.ndarray:
    """Texels as the samplers read them, in float32 (Warp's conversions, bit for bit)."""
    kind = raw.dtype
    if kind == np.uint8:
        return raw.astype(np.float32) / np.float32(255.0)
    if kind == np.uint16:
        return raw.astype(np.float32) / np.float32(65535.0)
    if kind == np.int8:
        return np.maximum(raw.astype(np.float32) / np.float32(127.0), np.float32(-1.0))
    if kind == np.int16:
        return np.maximum(raw.astype(np.float32) / np.float32(32767.0), np.float32(-1.0))
    return raw.astype(np.float32)


class Texture(StructValue):
    """Texture base class: software sampling of 1D, 2D and 3D grids on the CPU.

    Experimental in Warp, and so here. Use `Texture1D`, `Texture2D` or `Texture3D`.
    Stored types: uint8, uint16, uint32, int8, int16, int32, float16, float32; 8- and
    16-bit integers sample as normalized floats, 32-bit integers (closest filtering only)
    as their float32 value.
    """

    _type = None
    __setattr__ = object.__setattr__
    __hash__ = object.__hash__

    def __new__(cls, *args, **kwargs):
        self = object.__new__(cls)
        self._descriptor = None
        return self

    def __init__(self, ndim: int, data=None, width: int = 0, height: int = 0, depth: int = 0,
                 num_channels: int = 0, dtype=None, filter_mode=None, address_mode=TextureAddressMode.CLAMP,
                 address_mode_u=None, address_mode_v=None, address_mode_w=None, normalized_coords: bool = True,
                 num_mip_levels: int = 1, mip_filter_mode=None, device=None, surface_access: bool = False,
                 cuda_array: int = 0):
        from .device import get_device

        if ndim not in (1, 2, 3):
            raise ValueError(f"Texture dimensionality must be 1, 2, or 3, got {ndim}")
        device = get_device(device)
        if not device.is_cpu:
            raise RuntimeError(f"weft textures live on the CPU, not on {device}")
        if cuda_array:
            raise ValueError("Texture cuda_array was given, but the device is not a CUDA device")
        filter_mode = _mode(TextureFilterMode, filter_mode, "Invalid texture filter mode")
        mip_filter_mode = _mode(TextureFilterMode, mip_filter_mode, "Invalid texture mip filter mode")
        modes = [_address_mode(address_mode, given, axis) if axis < ndim else TextureAddressMode.CLAMP
                 for axis, given in enumerate((address_mode_u, address_mode_v, address_mode_w))]

        raw = None
        if data is not None:
            raw, shape, channels, data_dtype = _from_data(data, ndim)
            given = (width, height, depth)
            for axis, name in enumerate(("width", "height", "depth")[:ndim]):
                if given[axis] and given[axis] != shape[axis]:
                    raise ValueError(f"Specified texture {name} does not match data {name}")
            width, height, depth = shape
            if num_channels and num_channels != channels:
                raise ValueError(f"Specified texture channels do not match data channels (expected "
                                 f"{num_channels}, got {channels})")
            num_channels = channels
            if dtype is not None and _canonical(dtype) is not data_dtype:
                raise ValueError("Specified texture dtype does not match data dtype")
            dtype = data_dtype
        if width <= 0:
            raise ValueError("Texture width must be a positive integer")
        if ndim > 1 and height <= 0:
            raise ValueError("Texture height must be a positive integer")
        if ndim > 2 and depth <= 0:
            raise ValueError("Texture depth must be a positive integer")
        if num_channels not in (1, 2, 4):
            raise ValueError("Texture num_channels must be 1, 2, or 4")
        dtype = _canonical(float32 if dtype is None else dtype)
        shape = (int(width), int(height) if ndim > 1 else 1, int(depth) if ndim > 2 else 1)
        levels = _mip_shapes(shape, ndim, num_mip_levels)
        integer32 = dtype in (int32, uint32)
        default = TextureFilterMode.CLOSEST if integer32 else TextureFilterMode.LINEAR
        filter_mode = default if filter_mode is None else filter_mode
        mip_filter_mode = default if mip_filter_mode is None else mip_filter_mode
        if integer32 and filter_mode != TextureFilterMode.CLOSEST:
            raise ValueError("32-bit integer textures require filter_mode=TextureFilterMode.CLOSEST")
        if integer32 and len(levels) > 1 and mip_filter_mode != TextureFilterMode.CLOSEST:
            raise ValueError("32-bit integer mipmapped textures require mip_filter_mode=TextureFilterMode.CLOSEST")
        if len(levels) > 1 and raw is None:
            raise ValueError("Mipmapped textures require data to be provided at construction")
        if len(levels) > 1 and surface_access:
            raise ValueError("surface_access is not supported for mipmapped textures")

        self.device = device
        self._ndim = ndim
        self._width, self._height, self._depth = shape
        self._num_channels = int(num_channels)
        self._dtype = dtype
        self._filter_mode = filter_mode
        self._mip_filter_mode = mip_filter_mode
        self._address_modes = tuple(modes)
        self._normalized_coords = bool(normalized_coords)
        self._mip_shapes = levels
        self._surface_access = False
        # the stored values and their float32 decoding, per level
        self._raw = [np.zeros(self._array_shape(s), dtype=dtype.np_dtype) for s in levels]
        self._decoded = [r if r.dtype == np.float32 else np.zeros(r.shape, np.float32) for r in self._raw]
        self._descriptor = np.zeros(WORDS, np.int64)
        d = self._descriptor
        d[D_NDIM], d[D_CHANNELS] = ndim, self._num_channels
        d[D_FILTER], d[D_MIP_FILTER] = int(filter_mode), int(mip_filter_mode)
        d[D_ADDRESS:D_ADDRESS + 3] = [int(m) for m in modes]
        d[D_NORMALIZED] = int(self._normalized_coords)
        d[D_LEVELS] = len(levels)
        d[D_BASE:D_BASE + 3] = shape
        for k, s in enumerate(levels):
            d[D_LEVEL0 + 4 * k: D_LEVEL0 + 4 * k + 3] = s
            d[D_LEVEL0 + 4 * k + 3] = self._decoded[k].ctypes.data
        if raw is not None:
            if len(levels) > 1:
                for k, level in enumerate(_mip_chain(np.ascontiguousarray(raw), levels, ndim)):
                    self._set_level(k, level)
            else:
                self._set_level(0, raw)

    # data ------------------------------------------------------------------------------------
    def _array_shape(self, s):
        shape = (s[0],) if self._ndim == 1 else (s[1], s[0]) if self._ndim == 2 else (s[2], s[1], s[0])
        return shape if self._num_channels == 1 else (*shape, self._num_channels)

    def _get_shape(self):
        return self._array_shape(self._mip_shapes[0])

    def _set_level(self, k, values):
        self._raw[k][...] = np.asarray(values).reshape(self._raw[k].shape)
        if self._decoded[k] is not self._raw[k]:  # (float32 texels are read where they are stored)
            self._decoded[k][...] = _decode(self._raw[k])

    def _generate_mipmap_chain(self, data):
        """The levels this texture's mip chain would hold for base-level values `data`."""
        return _mip_chain(np.ascontiguousarray(data), self._mip_shapes, self._ndim)

    def _check_copy(self, other, direction):
        """The numpy view of a texture or contiguous array that `copy_from`/`copy_to` reads or
        writes (`direction`: 'source' or 'destination'), or a ValueError naming the mismatch."""
        if self.is_mipmapped:
            op = "copy_from" if direction == "source" else "copy_to"
            raise RuntimeError(f"{op} is not supported for mipmapped textures; mipmap contents are immutable "
                               f"after construction")
        mine, theirs = ("destination", "source") if direction == "source" else ("source", "destination")
        if isinstance(other, Texture):
            if other.is_mipmapped:
                raise RuntimeError("copies between textures need single-level textures")
            if (other.width, other.height, other.depth) != (self.width, self.height, self.depth):
                raise ValueError(f"Incompatible texture shapes for copy: {mine} shape={self._get_shape()}, "
                                 f"{theirs} shape={other._get_shape()}")
            if other.dtype is not self.dtype or other.num_channels != self.num_channels:
                raise ValueError(f"Incompatible texture data types for copy: {mine} dtype={self.dtype!r}, "
                                 f"{theirs} dtype={other.dtype!r}, {mine} channels={self.num_channels}, "
                                 f"{theirs} channels={other.num_channels}")
            return other._raw[0]
        from .array import array
        if isinstance(other, np.ndarray):
            view = other
        elif type(other) is array:
            view = None
        else:
            raise ValueError(f"Expected contiguous array or Texture, got {type(other)}")
        _, shape, channels, dt = _from_data(other, self._ndim, copy=False)
        if tuple(shape) != (self.width, self.height, self.depth):
            raise ValueError(f"Incompatible array shape for copy: texture shape={self._get_shape()}, "
                             f"{theirs} shape={tuple(other.shape)}")
        if dt is not self.dtype or channels != self.num_channels:
            raise ValueError(f"Incompatible array data type for copy: texture dtype={self.dtype!r}, "
                             f"{theirs} dtype={dt!r}, texture channels={self.num_channels}, "
                             f"{theirs} channels={channels}")
        if view is None:
            if not other.is_contiguous:
                raise ValueError(f"{theirs.capitalize()} array must be contiguous")
            view = other.numpy()
        return view

    def copy_from(self, src):
        """Copy texels from a contiguous weft array, a numpy array or another texture of the
        same shape, type and channel count."""
        self._set_level(0, self._check_copy(src, "source"))

    def copy_to(self, dst):
        """Copy the texels into a contiguous weft array, a numpy array or another texture of
        the same shape, type and channel count."""
        view = self._check_copy(dst, "destination")
        if isinstance(dst, Texture):
            dst._set_level(0, self._raw[0])
            return
        view[...] = self._raw[0].reshape(view.shape)

    # properties ------------------------------------------------------------------------------
    ndim = property(lambda self: self._ndim, doc="Texture dimensionality (1, 2, or 3).")
    width = property(lambda self: self._width, doc="Texture width in texels.")
    height = property(lambda self: self._height, doc="Texture height in texels (1 for 1D textures).")
    depth = property(lambda self: self._depth, doc="Texture depth in texels (1 for 1D and 2D textures).")
    num_channels = property(lambda self: self._num_channels, doc="Number of channels (1, 2 or 4).")
    dtype = property(lambda self: self._dtype, doc="Stored type of the texels.")
    filter_mode = property(lambda self: self._filter_mode, doc="Filtering within a mip level.")
    mip_filter_mode = property(lambda self: self._mip_filter_mode, doc="Filtering between mip levels.")
    num_mip_levels = property(lambda self: len(self._mip_shapes), doc="Number of mip levels (1: not mipmapped).")
    is_mipmapped = property(lambda self: len(self._mip_shapes) > 1, doc="Whether there are several mip levels.")
    address_mode_u = property(lambda self: self._address_modes[0], doc="Address mode along U.")
    address_mode_v = property(lambda self: self._address_modes[1], doc="Address mode along V.")
    address_mode_w = property(lambda self: self._address_modes[2], doc="Address mode along W.")
    normalized_coords = property(lambda self: self._normalized_coords, doc="Whether coordinates span [0, 1].")

    @property
    def id(self) -> int:
        """The texture's handle as kernels receive it (0 for a released texture)."""
        d = self.__dict__.get("_descriptor")
        return 0 if d is None else int(d.ctypes.data)

    @property
    def cuda_array(self) -> int:
        raise RuntimeError("cuda_array is only supported for CUDA textures.")

    @property
    def cuda_texture(self) -> int:
        raise RuntimeError("cuda_texture is only supported for CUDA textures. Use id for a device-independent "
                           "handle.")

    @property
    def cuda_surface(self) -> int:
        raise RuntimeError("cuda_surface is only supported for CUDA textures (created with surface_access=True).")

    def __ctype__(self):
        """The texture's settings as a ctypes structure (the names of Warp's descriptor
        fields; kernels receive the struct of `Texture1D/2D/3D` instead)."""
        import ctypes

        names = ("width", "height", "depth", "num_channels", "num_mip_levels", "filter_mode", "mip_filter_mode",
                 "address_mode_u", "address_mode_v", "address_mode_w", "use_normalized_coords")
        fields = [("tex", ctypes.c_uint64), *((n, ctypes.c_int32) for n in names)]
        struct = type("texture_settings", (ctypes.Structure,), {"_fields_": fields})
        return struct(self.id, *(int(getattr(self, n)) for n in names[:-1]), int(self.normalized_coords))

    def __del__(self):
        # (the buffers are numpy arrays, freed with the object; a half-built texture, made
        # by __new__ alone, has none)
        self.__dict__.pop("_descriptor", None)

    def __eq__(self, other):
        return self is other

    def __repr__(self):
        dims = "x".join(str(n) for n in (self.width, self.height, self.depth)[: self.ndim])
        return (f"{type(self).__name__}({dims}, channels={self.num_channels}, dtype={self.dtype!r}, "
                f"levels={self.num_mip_levels})")


class Texture1D(Texture):
    """A 1D texture: data of shape (width,) or (width, num_channels), or a weft array of
    vectors; sampled with `texture_sample(tex, u, dtype)`."""

    _type = TEXTURE1D

    def __init__(self, data=None, width: int = 0, num_channels: int = 0, dtype=None, filter_mode=None,
                 address_mode=TextureAddressMode.CLAMP, address_mode_u=None, normalized_coords: bool = True,
                 num_mip_levels: int = 1, mip_filter_mode=None, device=None, surface_access: bool = False,
                 cuda_array: int = 0):
        super().__init__(1, data, width, 0, 0, num_channels, dtype, filter_mode, address_mode, address_mode_u,
                         None, None, normalized_coords, num_mip_levels, mip_filter_mode, device, surface_access,
                         cuda_array)


class Texture2D(Texture):
    """A 2D texture: data of shape (height, width) or (height, width, num_channels);
    sampled with `texture_sample(tex, uv, dtype)` or `texture_sample(tex, u, v, dtype)`."""

    _type = TEXTURE2D

    def __init__(self, data=None, width: int = 0, height: int = 0, num_channels: int = 0, dtype=None,
                 filter_mode=None, address_mode=TextureAddressMode.CLAMP, address_mode_u=None, address_mode_v=None,
                 normalized_coords: bool = True, num_mip_levels: int = 1, mip_filter_mode=None, device=None,
                 surface_access: bool = False, cuda_array: int = 0):
        super().__init__(2, data, width, height, 0, num_channels, dtype, filter_mode, address_mode, address_mode_u,
                         address_mode_v, None, normalized_coords, num_mip_levels, mip_filter_mode, device,
                         surface_access, cuda_array)


class Texture3D(Texture):
    """A 3D texture: data of shape (depth, height, width) or (depth, height, width,
    num_channels); sampled with `texture_sample(tex, uvw, dtype)` or `(tex, u, v, w, dtype)`."""

    _type = TEXTURE3D

    def __init__(self, data=None, width: int = 0, height: int = 0, depth: int = 0, num_channels: int = 0,
                 dtype=None, filter_mode=None, address_mode=TextureAddressMode.CLAMP, address_mode_u=None,
                 address_mode_v=None, address_mode_w=None, normalized_coords: bool = True, num_mip_levels: int = 1,
                 mip_filter_mode=None, device=None, surface_access: bool = False, cuda_array: int = 0):
        super().__init__(3, data, width, height, depth, num_channels, dtype, filter_mode, address_mode,
                         address_mode_u, address_mode_v, address_mode_w, normalized_coords, num_mip_levels,
                         mip_filter_mode, device, surface_access, cuda_array)


for _cls in (Texture1D, Texture2D, Texture3D):
    _cls._weft_type = _cls._type
del _cls


class GLTextureResource:
    """OpenGL texture interop: needs CUDA, which weft's CPU backend does not have."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("GLTextureResource needs a CUDA device; weft runs textures on the CPU")


# helpers -------------------------------------------------------------------------------------
def _mode(enum_type, value, message):
    if value is None:
        return None
    try:
        return enum_type(value)
    except (TypeError, ValueError):
        raise ValueError(f"{message}: {value}") from None


def _address_mode(address_mode, given, axis):
    if given is not None:
        mode = given
    elif isinstance(address_mode, tuple):
        mode = address_mode[axis] if axis < len(address_mode) else TextureAddressMode.CLAMP
    else:
        mode = TextureAddressMode.CLAMP if address_mode is None else address_mode
    return _mode(TextureAddressMode, mode, f"Invalid texture address mode for axis {axis}")


def _canonical(dtype):
    if dtype is float:
        return float32
    if dtype is int:
        return int32
    t = getattr(dtype, "_weft_type", None) or dtype
    if t not in _SUPPORTED:
        try:
            t = scalar_from_numpy(dtype)
        except TypeError:
            t = None
    if t in _SUPPORTED:
        return t
    raise ValueError(f"Unsupported texture dtype: {dtype}. Supported: {_SUPPORTED_TEXT}")


def _from_data(data, ndim, copy=True):
    """(values as numpy, (width, height, depth), channels, stored type) of texture data."""
    from .array import array
    if isinstance(data, np.ndarray):
        values, vector = data, None
        scalar = scalar_from_numpy(data.dtype)
        if scalar not in _SUPPORTED:
            raise ValueError(f"Unsupported texture dtype: {data.dtype}. Supported: {_SUPPORTED_TEXT}")
    elif isinstance(data, array):
        vector = data.dtype if isinstance(data.dtype, Vector) else None
        scalar = vector.dtype if vector is not None else data.dtype
        if scalar not in _SUPPORTED:
            raise ValueError(f"Unsupported texture dtype: {scalar!r}. Supported: {_SUPPORTED_TEXT}")
        values = data.numpy() if copy else None
    else:
        raise ValueError("Data must be a Warp array or NumPy array")
    shape = tuple(data.shape)
    if vector is not None:
        if len(shape) != ndim:
            raise ValueError(f"{ndim}D texture data with vector dtype must be a {ndim}D wp.array")
        channels = vector.length
    elif len(shape) == ndim:
        channels = 1
    elif len(shape) == ndim + 1:
        channels, shape = shape[-1], shape[:-1]
    else:
        raise ValueError(f"{ndim}D texture data must be {ndim}D or {ndim + 1}D array")
    dims = tuple(int(n) for n in reversed(shape)) + (1,) * (3 - ndim)
    return values, dims, int(channels), scalar


def _mip_shapes(base, ndim, levels):
    if levels < 0:
        raise ValueError("num_mip_levels must be >= 0")
    full = int(math.floor(math.log2(max(max(base[:ndim]), 1)))) + 1
    if levels == 0:
        levels = full
    elif levels > full:
        raise ValueError(f"num_mip_levels ({levels}) exceeds the maximum for base dimensions {base[:ndim]} "
                         f"({full})")
    if levels > MAX_MIP_LEVELS:
        raise ValueError(f"num_mip_levels ({levels}) exceeds the maximum supported mip levels ({MAX_MIP_LEVELS})")
    out, s = [], list(base)
    for _ in range(levels):
        out.append(tuple(s))
        s = [max(1, n // 2) if axis < ndim else 1 for axis, n in enumerate(s)]
    return out


def _mip_chain(values, shapes, ndim):
    """Each level from the one above by a 2x box filter per axis (a lone last texel pairs with
    itself), averaged in float64; integers rounded and clipped back to their type."""
    info = np.iinfo(values.dtype) if np.issubdtype(values.dtype, np.integer) else None
    out = [values]
    for k in range(1, len(shapes)):
        cur = out[-1]
        for axis in range(ndim):  # numpy axis of texture axis `axis` (u is the last spatial one)
            src, dst = shapes[k - 1][axis], shapes[k][axis]
            if src == dst:
                continue
            a = ndim - 1 - axis
            f = cur.astype(np.float64, copy=False)
            even = np.take(f, np.arange(dst) * 2, axis=a)
            odd = np.take(f, np.minimum(np.arange(dst) * 2 + 1, src - 1), axis=a)
            cur = (even + odd) * 0.5
        if info is not None:
            cur = np.clip(np.rint(cur), info.min, info.max).astype(values.dtype)
        else:
            cur = cur.astype(values.dtype, copy=False)
        out.append(cur)
    return out
