"""`texture_sample` (Warp 1.19's texture builtin): the value of a Texture1D/2D/3D at a
coordinate, read as float (1 channel), vec2f (2) or vec4f (4), with an optional mip LOD.

Spellings: `texture_sample(tex1d, u, dtype, lod=-1.0)`, `(tex2d, uv, dtype, lod)`,
`(tex2d, u, v, dtype, lod)`, `(tex3d, uvw, dtype, lod)`, `(tex3d, u, v, w, dtype, lod)`.
The sampling code and its derivative rule are kernel-language funcs (texture_funcs.py);
here the builtin checks its arguments and emits the call.
"""

from __future__ import annotations

from ..ir.core import Value
from ..types import Scalar, StructType, Type, Vector, float32, vec2f, vec4f
from .arguments import kernel_funcs
from .registry import builtin

_funcs = kernel_funcs(".texture_funcs")
_CHANNELS = {float32: 1, vec2f: 2, vec4f: 4}
_NAME = "texture_sample"


def _texture_ndim(ctx, tex):
    t = tex.type if isinstance(tex, Value) else None
    if not (isinstance(t, StructType) and getattr(t, "is_texture", False)):
        got = repr(t) if t is not None else repr(tex)
        ctx.error(f"{_NAME}(): the first argument must be a wp.Texture1D, wp.Texture2D or wp.Texture3D, "
                  f"got {got}", kind=TypeError)
    return {"Texture1D": 1, "Texture2D": 2, "Texture3D": 3}[t.name]


def _float(ctx, x, what):
    if isinstance(x, Value):
        if not (isinstance(x.type, Scalar) and x.type.is_float):
            ctx.error(f"{_NAME}(): {what} must be a float32, got {x.type!r}", kind=TypeError)
        return x if x.type is float32 else ctx.b.cast(x, float32)
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        ctx.error(f"{_NAME}(): {what} must be a float32, got {x!r}", kind=TypeError)
    return ctx.b.const(float(x), float32)


def _coords(ctx, ndim, given):
    """(u, v, w) as float32 Values from the coordinate arguments given."""
    zero = ctx.b.const(0.0, float32)
    if len(given) == 1 and ndim > 1:
        c = given[0]
        t = c.type if isinstance(c, Value) else None
        if not (isinstance(t, Vector) and t.length == ndim and t.dtype.is_float and t.flavor == "vec"):
            want = "vec2f" if ndim == 2 else "vec3f"
            ctx.error(f"{_NAME}(): a {ndim}D texture takes a {want} coordinate (or {ndim} floats), got "
                      f"{t!r}" if t is not None else f"{_NAME}(): a {ndim}D texture takes a {want} coordinate, "
                      f"got {c!r}", kind=TypeError)
        parts = [_float(ctx, ctx.b.extract(c, i), "the coordinate") for i in range(ndim)]
    elif len(given) == ndim:
        parts = [_float(ctx, c, f"coordinate {'uvw'[i]}") for i, c in enumerate(given)]
    else:
        ctx.error(f"{_NAME}(): a {ndim}D texture takes {'a float' if ndim == 1 else f'a vec{ndim}f or {ndim} floats'}"
                  f" as its coordinate, got {len(given)} coordinate arguments", kind=TypeError)
    return parts + [zero] * (3 - len(parts))


def _dtype(ctx, t):
    if t is float:
        t = float32
    if isinstance(t, Value) or t not in _CHANNELS:
        shown = t.type if isinstance(t, Value) else t
        ctx.error(f"{_NAME}(): unsupported texture type `{shown!r}`. Supported types: float, vec2f, vec4f",
                  kind=TypeError)
    return _CHANNELS[t]


@builtin(_NAME)
def texture_sample(ctx, args, kwargs):
    """texture_sample(tex, coords..., dtype, lod=-1.0): the texture's value at the coordinates
    (Texture1D: u; Texture2D: uv or u, v; Texture3D: uvw or u, v, w) with its filtering and
    address modes, as `dtype` (float, vec2f or vec4f: 1, 2 or 4 channels; channels the
    texture lacks read 0). A LOD >= 0 selects or blends mip levels."""
    unknown = set(kwargs) - {"tex", "dtype", "lod", "u", "v", "w", "uv", "uvw"}
    if unknown:
        ctx.error(f"{_NAME}(): unexpected keyword argument(s) {sorted(unknown)}", kind=TypeError)
    args = list(args)
    tex = kwargs["tex"] if "tex" in kwargs else args.pop(0) if args else None
    if tex is None:
        ctx.error(f"{_NAME}() needs a texture", kind=TypeError)
    ndim = _texture_ndim(ctx, tex)
    lod = kwargs.get("lod")
    dtype = kwargs.get("dtype")
    if dtype is None:
        # positional: ..., dtype[, lod]; a type is the dtype
        for i, a in enumerate(args):
            if not isinstance(a, Value) and isinstance(a, (type, Type)):
                dtype = a
                rest = args[i + 1:]
                args = args[:i]
                if len(rest) > 1 or (rest and lod is not None):
                    ctx.error(f"{_NAME}(): too many arguments", kind=TypeError)
                if rest:
                    lod = rest[0]
                break
    if dtype is None:
        ctx.error(f"{_NAME}() needs dtype (float, wp.vec2f or wp.vec4f)", kind=TypeError)
    dtype = getattr(dtype, "_weft_type", dtype) if isinstance(dtype, type) and dtype is not float else dtype
    channels = _dtype(ctx, dtype)
    named = [kwargs[k] for k in ("uvw", "uv", "u", "v", "w") if k in kwargs]
    coords = _coords(ctx, ndim, args + named)
    lod = ctx.b.const(-1.0, float32) if lod is None else _float(ctx, lod, "lod")
    d = ctx.b.extract(tex, tex.type.field_index("id"))
    sample = _funcs().typed(ndim, channels)
    return sample.emit_call(ctx, [d, *coords, lod], {}, None)
