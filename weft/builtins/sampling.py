"""Uniform samples of simple shapes from a random state: `sample_unit_sphere_surface(state)`
and the rest of Warp's family (ring, disk, sphere, hemisphere, square, cube, triangle),
and `sample_cdf(state, cdf)`, an index drawn from a discrete distribution.

Each advances the state (a local uint32 from `rand_init`, updated in place like `randf`)
by the same draws, in the same order and with the same formulas as Warp, so a seed gives
Warp's points (within float rounding of acos/cos/sin/pow):
- ring: theta = 2 pi u; (cos, sin). disk: r = sqrt(u1), theta = 2 pi u2.
- sphere surface: phi = acos(1 - 2 u1), theta = 2 pi u2; the solid sphere scales that
  point by r = u3^(1/3). Hemispheres use phi = acos(1 - u1) (z >= 0).
- square/cube: each coordinate u - 0.5.
- triangle: r = sqrt(u1); barycentric (1 - r, u2 r).
- sample_cdf: the first index whose cdf entry is >= u (`lower_bound`).
The draws come from the integer state, so no gradient flows through them.
"""

from __future__ import annotations

import math

from ..types import Vector, float32
from .math import PRIM
from .random import _state, _uniform01
from .registry import BUILTINS, builtin


def _draws(ctx, name, args, kwargs, n):
    if kwargs or len(args) != 1:
        ctx.error(f"{name}(state) takes the random state only")
    state, us = _state(ctx, args, name), []
    for _ in range(n):
        state, u = _uniform01(ctx, state)
        us.append(u)
    return state, us


def _f(ctx, x):
    return ctx.b.const(x, float32)


def _call(ctx, name, *xs):
    return ctx.b.call(PRIM[name], list(xs))


def _vec(ctx, parts):
    return ctx.b.construct(Vector(len(parts), float32), parts)


def _angle(ctx, u):
    return ctx.b.mul(_f(ctx, 2.0 * math.pi), u)  # Warp: randf(state, 0, 2 pi)


def _direction(ctx, phi, theta, r=None):
    """(cos theta sin phi, sin theta sin phi, cos phi), scaled by r."""
    b = ctx.b
    sin_phi = _call(ctx, "sin", phi)
    xyz = [b.mul(_call(ctx, "cos", theta), sin_phi), b.mul(_call(ctx, "sin", theta), sin_phi), _call(ctx, "cos", phi)]
    return _vec(ctx, xyz if r is None else [b.mul(r, c) for c in xyz])


def _sphere(hemisphere: bool, solid: bool):
    def sample(ctx, args, kwargs, name):
        b = ctx.b
        state, us = _draws(ctx, name, args, kwargs, 3 if solid else 2)
        height = us[0] if hemisphere else b.mul(_f(ctx, 2.0), us[0])
        phi = _call(ctx, "acos", b.sub(_f(ctx, 1.0), height))
        r = _call(ctx, "pow", us[2], _f(ctx, 1.0 / 3.0)) if solid else None
        return [state], _direction(ctx, phi, _angle(ctx, us[1]), r)
    return sample


def _ring(ctx, args, kwargs, name):
    state, (u,) = _draws(ctx, name, args, kwargs, 1)
    theta = _angle(ctx, u)
    return [state], _vec(ctx, [_call(ctx, "cos", theta), _call(ctx, "sin", theta)])


def _disk(ctx, args, kwargs, name):
    b = ctx.b
    state, (u1, u2) = _draws(ctx, name, args, kwargs, 2)
    r, theta = _call(ctx, "sqrt", u1), _angle(ctx, u2)
    return [state], _vec(ctx, [b.mul(r, _call(ctx, "cos", theta)), b.mul(r, _call(ctx, "sin", theta))])


def _box(n):
    def sample(ctx, args, kwargs, name):
        state, us = _draws(ctx, name, args, kwargs, n)
        return [state], _vec(ctx, [ctx.b.sub(u, _f(ctx, 0.5)) for u in us])
    return sample


def _triangle(ctx, args, kwargs, name):
    b = ctx.b
    state, (u1, u2) = _draws(ctx, name, args, kwargs, 2)
    r = _call(ctx, "sqrt", u1)
    return [state], _vec(ctx, [b.sub(_f(ctx, 1.0), r), b.mul(u2, r)])


_SAMPLERS = {
    "sample_unit_ring": _ring,
    "sample_unit_disk": _disk,
    "sample_unit_sphere_surface": _sphere(hemisphere=False, solid=False),
    "sample_unit_sphere": _sphere(hemisphere=False, solid=True),
    "sample_unit_hemisphere_surface": _sphere(hemisphere=True, solid=False),
    "sample_unit_hemisphere": _sphere(hemisphere=True, solid=True),
    "sample_unit_square": _box(2),
    "sample_unit_cube": _box(3),
    "sample_triangle": _triangle,
}


def _register(name, sample):
    def expand(ctx, args, kwargs):
        return sample(ctx, args, kwargs, name)
    expand.__doc__ = f"{name}(state): a uniform sample (see weft/builtins/sampling.py); updates state."
    builtin(name, inout=(0,))(expand)


for _name, _sample in _SAMPLERS.items():
    _register(_name, _sample)


@builtin("sample_cdf", inout=(0,))
def sample_cdf(ctx, args, kwargs):
    """sample_cdf(state, cdf): the first index i with cdf[i] >= u, u uniform in [0, 1);
    cdf is a 1-D float array, non-decreasing and ending at 1. Updates state."""
    if kwargs or len(args) != 2:
        ctx.error("sample_cdf(state, cdf) takes the random state and a cdf array")
    state, u = _uniform01(ctx, _state(ctx, args, "sample_cdf"))
    return [state], BUILTINS["lower_bound"].expand(ctx, [args[1], u], {})
