"""Perlin noise builtins: `noise`, `pnoise`, `curlnoise` (Warp's fields, value for value).

Each builtin checks its arguments and calls a func written in weft's kernel language
(noise_funcs.py), which the frontend inlines like any user func; their derivatives come
from the reverse pass through that code. The random state is read, never advanced.
"""

from __future__ import annotations

from ..ir.core import Value
from ..types import Scalar, Vector, float32, uint32
from .arguments import as_int32
from .registry import builtin

_FUNCS = None


def _funcs():
    """noise_funcs, imported on first use: it is kernel-language code, so it needs the
    frontend, which imports this package."""
    global _FUNCS
    if _FUNCS is None:
        from . import noise_funcs
        _FUNCS = noise_funcs
    return _FUNCS


def _state(ctx, args, name):
    if not args or not (isinstance(args[0], Value) and args[0].type is uint32):
        ctx.error(f"{name}() needs a random state (a uint32 from rand_init) as its first argument")
    return args[0]


def _point(ctx, x, name, dims=(1, 2, 3, 4)):
    """The sample position: a float32 or a float32 vector; returns (value, dimension)."""
    if isinstance(x, Value) and isinstance(x.type, Vector):
        t = x.type
        if t.flavor != "vec" or t.dtype is not float32 or t.length not in dims or t.length == 1:
            ctx.error(f"{name}(): the position must be a float32 or a vec2f/vec3f/vec4f, got {t!r}")
        return x, t.length
    if 1 not in dims:
        ctx.error(f"{name}(): the position must be a vec2f, vec3f or vec4f, got {_describe(x)}")
    if isinstance(x, Value) and not (isinstance(x.type, Scalar) and x.type is float32):
        ctx.error(f"{name}(): the position must be a float32 or a vec2f/vec3f/vec4f, got {x.type!r}")
    return ctx.coerce(x, float32, what=f"{name}() position"), 1


def _describe(x):
    return repr(x.type) if isinstance(x, Value) else repr(x)


def _call(ctx, func, args):
    return func.emit_call(ctx, args, {}, None)


@builtin("noise")
def noise(ctx, args, kwargs):
    """noise(state, x): Perlin noise at a float32, vec2f, vec3f or vec4f position."""
    if kwargs or len(args) != 2:
        ctx.error("noise(state, x) takes a random state and a position")
    state = _state(ctx, args, "noise")
    p, dim = _point(ctx, args[1], "noise")
    return _call(ctx, getattr(_funcs(), f"noise{dim}"), [state, p])


@builtin("pnoise")
def pnoise(ctx, args, kwargs):
    """pnoise(state, x, px, ...): Perlin noise repeating with one integer period per axis."""
    if kwargs or len(args) < 3:
        ctx.error("pnoise(state, x, px[, py, pz, pt]) takes a state, a position and one period per axis")
    state = _state(ctx, args, "pnoise")
    p, dim = _point(ctx, args[1], "pnoise")
    if len(args) != 2 + dim:
        ctx.error(f"pnoise() at a {dim}-D position takes {dim} period(s), got {len(args) - 2}")
    periods = [as_int32(ctx, a, "pnoise() period") for a in args[2:]]
    return _call(ctx, getattr(_funcs(), f"pnoise{dim}"), [state, p, *periods])


@builtin("curlnoise")
def curlnoise(ctx, args, kwargs):
    """curlnoise(state, x, octaves=1, lacunarity=2.0, gain=0.5): a divergence-free field
    (vec2f for a 2-D position, vec3f for 3-D and 4-D) from octaves of noise gradients."""
    names = ("state", "x", "octaves", "lacunarity", "gain")
    if len(args) > len(names) or any(k not in names[len(args):] for k in kwargs):
        ctx.error("curlnoise(state, x, octaves=1, lacunarity=2.0, gain=0.5)")
    given = dict(zip(names, args), **kwargs)
    if "state" not in given or "x" not in given:
        ctx.error("curlnoise() needs a random state and a position")
    state = _state(ctx, [given["state"]], "curlnoise")
    p, dim = _point(ctx, given["x"], "curlnoise", dims=(2, 3, 4))
    octaves = given.get("octaves", 1)
    if isinstance(octaves, Value):
        if not (isinstance(octaves.type, Scalar) and octaves.type.is_int):
            ctx.error(f"curlnoise(): octaves must be an integer, got {octaves.type!r}")
        octaves = ctx.b.cast(octaves, uint32)
    else:
        octaves = ctx.coerce(octaves, uint32, what="curlnoise() octaves")
    lac = ctx.coerce(given.get("lacunarity", 2.0), float32, what="curlnoise() lacunarity")
    gain = ctx.coerce(given.get("gain", 0.5), float32, what="curlnoise() gain")
    return _call(ctx, getattr(_funcs(), f"curlnoise{dim}"), [state, p, octaves, lac, gain])
