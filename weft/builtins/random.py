"""Random numbers: the same PCG hash stream as Warp's rand_init/randf/randi/randn.

The state is a uint32 held in a local variable; each draw hashes it and rebinds the
variable (the builtins are `inout` in their first argument). A seed therefore gives the
same numbers as in Warp, so ported programs reproduce their results.
"""

from __future__ import annotations

import math

from ..ir.core import Value
from ..types import ArrayType, Scalar, Vector, float32, int32, uint32
from .math import PRIM
from .registry import builtin, primitive

_MUL, _INC, _MIX = 747796405, 2891336453, 277803737


def _lower_pcg(cg, args, op):
    (state,) = args
    b = cg.builder
    i32 = state.type
    x = b.add(b.mul(state, i32(_MUL)), i32(_INC))
    shift = b.add(b.lshr(x, i32(28)), i32(4))
    y = b.mul(b.xor(b.lshr(x, shift), x), i32(_MIX))
    return b.xor(b.lshr(y, i32(22)), y)


def _uint32_rule(ts):
    if ts != [uint32]:
        raise TypeError("expects a uint32 state")
    return [uint32]


PCG = primitive("rand_pcg", _uint32_rule, _lower_pcg, lambda b, a, r, g: [None],
                doc="the PCG hash of Jarzynski and Olano; integer, so no gradient")


def pcg_numpy(state: int) -> int:
    """The same hash in Python, for tests and Python-scope use."""
    m = 0xFFFFFFFF
    x = (state * _MUL + _INC) & m
    y = (((x >> ((x >> 28) + 4)) ^ x) * _MIX) & m
    return ((y >> 22) ^ y) & m


def _as_int(ctx, x, what):
    v = ctx.coerce(x, int32, what=what) if not isinstance(x, Value) else x
    if not (isinstance(v.type, Scalar) and v.type.is_int):
        ctx.error(f"{what} must be an integer, got {v.type!r}")
    return ctx.b.cast(v, uint32)


@builtin("rand_init")
def rand_init(ctx, args, kwargs):
    """rand_init(seed) or rand_init(seed, offset): a uint32 random state."""
    if kwargs or len(args) not in (1, 2):
        ctx.error("rand_init(seed[, offset]) takes one or two integers")
    seed = _as_int(ctx, args[0], "seed")
    if len(args) == 2:
        seed = ctx.b.add(seed, ctx.b.call(PCG, [_as_int(ctx, args[1], "offset")]))
    return ctx.b.call(PCG, [seed])


def _state(ctx, args, name):
    if not args or not (isinstance(args[0], Value) and args[0].type is uint32):
        ctx.error(f"{name}() needs a random state (from rand_init) as its first argument")
    return args[0]


def _uniform01(ctx, state):
    """Advance `state`; a float32 in [0, 1) from its top 24 bits."""
    b = ctx.b
    state = b.call(PCG, [state])
    bits = b.binary("shr", state, b.const(8, uint32))
    return state, b.mul(b.cast(bits, float32), b.const(1.0 / 16777216.0, float32))


@builtin("randf", inout=(0,))
def randf(ctx, args, kwargs):
    """randf(state) in [0, 1), or randf(state, low, high)."""
    state = _state(ctx, args, "randf")
    state, u = _uniform01(ctx, state)
    if len(args) == 3:
        lo, hi = (ctx.coerce(a, float32, what="randf bound") for a in args[1:])
        u = ctx.b.add(ctx.b.mul(ctx.b.sub(hi, lo), u), lo)
    elif len(args) != 1:
        ctx.error("randf(state) or randf(state, low, high)")
    return [state], u


@builtin("randi", inout=(0,))
def randi(ctx, args, kwargs):
    """randi(state): any int32; randi(state, low, high): in [low, high)."""
    b = ctx.b
    state = b.call(PCG, [_state(ctx, args, "randi")])
    if len(args) == 1:
        return [state], b.cast(state, int32)
    if len(args) != 3:
        ctx.error("randi(state) or randi(state, low, high)")
    lo, hi = (_as_int(ctx, a, "randi bound") for a in args[1:])
    r = b.add(b.binary("mod", state, b.sub(hi, lo)), lo)
    return [state], b.cast(r, int32)


@builtin("randu", inout=(0,))
def randu(ctx, args, kwargs):
    """randu(state): any uint32; randu(state, low, high): in [low, high) (uint32 bounds)."""
    b = ctx.b
    state = b.call(PCG, [_state(ctx, args, "randu")])
    if len(args) == 1 and not kwargs:
        return [state], state
    if len(args) != 3 or kwargs:
        ctx.error("randu(state) or randu(state, low, high)")
    lo, hi = (_as_int(ctx, a, "randu bound") for a in args[1:])
    return [state], b.add(b.binary("mod", state, b.sub(hi, lo)), lo)


def _float32_rule(arity: int):
    def rule(ts):
        if ts != [float32] * arity:
            raise TypeError(f"expects {arity} float32 argument(s)")
        return [float32]
    return rule


def _lower_libm(name: str, arity: int):
    def lower(cg, args, op):
        from llvmlite import ir
        f32 = ir.FloatType()
        fn = cg.module.globals.get(name) or ir.Function(cg.module, ir.FunctionType(f32, [f32] * arity), name)
        return cg.builder.call(fn, args)
    return lower


# randn and the sample_* builtins call the C library's math functions, as Warp's CPU code
# does, so that their values are bit-identical to Warp's (weft's own log, cos, ... round
# some results differently). Their inputs come from the integer state: no gradient.
LIBM = {name: primitive(f"libm_{name}", _float32_rule(arity), _lower_libm(name, arity),
                        lambda b, a, r, g: [None] * len(a), doc=f"the C library's {name}, for random sampling")
        for name, arity in (("logf", 1), ("expf", 1), ("cosf", 1), ("sinf", 1), ("acosf", 1), ("powf", 2))}


@builtin("randn", inout=(0,))
def randn(ctx, args, kwargs):
    """A standard normal float32 by Box-Muller, consuming two draws (log first, as Warp)."""
    b = ctx.b
    if len(args) != 1 or kwargs:
        ctx.error("randn(state) takes the random state only")
    state, u1 = _uniform01(ctx, _state(ctx, args, "randn"))
    state, u2 = _uniform01(ctx, state)
    eps = b.const(5.96e-8, float32)  # keeps log's argument in (0, 1)
    radius = b.call(PRIM["sqrt"], [b.mul(b.const(-2.0, float32), b.call(LIBM["logf"], [b.add(u1, eps)]))])
    angle = b.mul(b.const(2.0 * math.pi, float32), u2)
    return [state], b.mul(radius, b.call(LIBM["cosf"], [angle]))


# Sampling of shapes (Warp's formulas and draw order) -------------------------------------------
_TWO_PI = float(float32.np_dtype.type(2.0 * math.pi))  # (2 * M_PI_F in float32)


class _Draws:
    """Successive uniform draws from a state, and float32 math on them."""

    def __init__(self, ctx, args, name):
        if len(args) != 1:
            ctx.error(f"{name}(state) takes the random state only")
        self.ctx, self.b, self.state = ctx, ctx.b, _state(ctx, args, name)

    def uniform(self, scale=None, offset=None):
        self.state, u = _uniform01(self.ctx, self.state)
        if scale is not None:
            u = self.b.mul(self.b.const(scale, float32), u)
        if offset is not None:
            u = self.b.add(u, self.b.const(offset, float32))
        return u

    def libm(self, name, *xs):
        return self.b.call(LIBM[name], list(xs))

    def const(self, x):
        return self.b.const(x, float32)

    def done(self, *components):
        return [self.state], self.b.construct(Vector(len(components), float32), list(components))


def _polar(d: _Draws, phi, theta, r=None):
    """(cos theta sin phi, sin theta sin phi, cos phi), times r if given (Warp's products)."""
    b = d.b
    cos_t, sin_t, sin_p = d.libm("cosf", theta), d.libm("sinf", theta), d.libm("sinf", phi)
    if r is None:
        return [b.mul(cos_t, sin_p), b.mul(sin_t, sin_p), d.libm("cosf", phi)]
    return [b.mul(b.mul(r, cos_t), sin_p), b.mul(b.mul(r, sin_t), sin_p), b.mul(r, d.libm("cosf", phi))]


def _sampler(name, doc):
    def register(draw):
        def expand(ctx, args, kwargs):
            if kwargs:
                ctx.error(f"{name}(state) takes no keyword arguments")
            return draw(_Draws(ctx, args, name))
        expand.__doc__ = doc
        return builtin(name, inout=(0,))(expand)
    return register


@_sampler("sample_triangle", "sample_triangle(state): uniform barycentric (u, v) on a triangle.")
def _sample_triangle(d):
    r = d.b.call(PRIM["sqrt"], [d.uniform()])
    u = d.b.sub(d.const(1.0), r)
    return d.done(u, d.b.mul(d.uniform(), r))


@_sampler("sample_unit_ring", "sample_unit_ring(state): a uniform point on the unit circle.")
def _sample_unit_ring(d):
    theta = d.uniform(_TWO_PI)
    return d.done(d.libm("cosf", theta), d.libm("sinf", theta))


@_sampler("sample_unit_disk", "sample_unit_disk(state): a uniform point in the unit disk.")
def _sample_unit_disk(d):
    r = d.b.call(PRIM["sqrt"], [d.uniform()])
    theta = d.uniform(_TWO_PI)
    return d.done(d.b.mul(r, d.libm("cosf", theta)), d.b.mul(r, d.libm("sinf", theta)))


def _phi(d, hemisphere: bool):
    u = d.uniform()
    if not hemisphere:
        u = d.b.mul(d.const(2.0), u)
    return d.libm("acosf", d.b.sub(d.const(1.0), u))


def _surface(hemisphere):
    def draw(d):
        phi = _phi(d, hemisphere)
        theta = d.uniform(_TWO_PI)
        return d.done(*_polar(d, phi, theta))
    return draw


def _ball(hemisphere):
    def draw(d):
        phi = _phi(d, hemisphere)
        theta = d.uniform(_TWO_PI)
        r = d.libm("powf", d.uniform(), d.const(1.0 / 3.0))
        return d.done(*_polar(d, phi, theta, r))
    return draw


_sampler("sample_unit_sphere_surface", "sample_unit_sphere_surface(state): a uniform point on the unit sphere.")(
    _surface(False))
_sampler("sample_unit_hemisphere_surface",
         "sample_unit_hemisphere_surface(state): a uniform point on the unit hemisphere (z >= 0).")(_surface(True))
_sampler("sample_unit_sphere", "sample_unit_sphere(state): a uniform point in the unit ball.")(_ball(False))
_sampler("sample_unit_hemisphere", "sample_unit_hemisphere(state): a uniform point in the unit half ball (z >= 0).")(
    _ball(True))


@_sampler("sample_unit_square", "sample_unit_square(state): a uniform point in [-0.5, 0.5)^2.")
def _sample_unit_square(d):
    return d.done(*(d.uniform(offset=-0.5) for _ in range(2)))


@_sampler("sample_unit_cube", "sample_unit_cube(state): a uniform point in [-0.5, 0.5)^3.")
def _sample_unit_cube(d):
    return d.done(*(d.uniform(offset=-0.5) for _ in range(3)))


# Draws that loop until accepted: kernel-language funcs (sampling_funcs.py) --------------------
def _sampling_funcs():
    from . import sampling_funcs  # kernel-language code needs the frontend, which imports us
    return sampling_funcs


def _state_and_sample(ctx, func, args):
    result = func.emit_call(ctx, args, {}, None)
    return [ctx.b.extract(result, 0)], ctx.b.extract(result, 1)


@builtin("poisson", inout=(0,))
def poisson(ctx, args, kwargs):
    """poisson(state, lam): a uint32 count with mean lam (Warp's samplers: multiplication
    below lam = 10, transformed rejection from 10 on; lam == 0 draws nothing)."""
    if kwargs or len(args) != 2:
        ctx.error("poisson(state, lam) takes a random state and a rate")
    state = _state(ctx, args, "poisson")
    lam = ctx.coerce(args[1], float32, what="poisson() rate")
    return _state_and_sample(ctx, _sampling_funcs().poisson, [state, lam])


@builtin("sample_cdf", inout=(0,))
def sample_cdf(ctx, args, kwargs):
    """sample_cdf(state, cdf): the first index i with cdf[i] >= u for one uniform draw u
    (inverse-transform sampling of a non-decreasing float32 array)."""
    if kwargs or len(args) != 2:
        ctx.error("sample_cdf(state, cdf) takes a random state and a float32 array")
    state = _state(ctx, args, "sample_cdf")
    cdf = args[1]
    if not (isinstance(cdf, Value) and isinstance(cdf.type, ArrayType) and cdf.type.ndim == 1
            and cdf.type.dtype is float32):
        ctx.error("sample_cdf(): the cdf must be a 1-D array of float32")
    return _state_and_sample(ctx, _sampling_funcs().sample_cdf, [state, cdf])
