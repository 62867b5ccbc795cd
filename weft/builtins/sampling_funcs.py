"""`poisson` and `sample_cdf` in weft's kernel language (their draws loop until accepted).

Warp's algorithms, step for step, so that a state gives the same samples: below a rate of
10 the multiplication method (multiply uniforms until the product drops below e^-lam),
from 10 on Hoermann's transformed rejection (PTRS, as NumPy's generator has it, in
float32); `sample_cdf` is a lower-bound binary search for one uniform draw. The logs and
exponentials are the C library's float functions, which Warp's CPU code calls. Each func
returns the advanced state with its sample; random.py's builtins rebind the state.

Imported on first use: kernel-language code needs the frontend, which imports the builtins.
"""

from __future__ import annotations

import weft as wp

from ..types import float32
from .random import LIBM
from .registry import Builtin


def _libm(name):
    def expand(ctx, args, kwargs):
        return ctx.b.call(LIBM[name], [ctx.coerce(args[0], float32, what=name)])
    return Builtin(f"libm_{name}", expand, doc=f"the C library's {name} (random sampling)")


_logf = _libm("logf")
_expf = _libm("expf")


@wp.func
def _loggam(x: float):
    """log Gamma(x) (Zhang and Jin's series, in float32 as Warp evaluates it)."""
    if x == 1.0 or x == 2.0:
        return 0.0
    n = wp.uint32(0)
    if x < 7.0:
        n = wp.uint32(7.0 - x)
    x0 = x + float(n)
    x2 = (1.0 / x0) * (1.0 / x0)
    gl0 = -1.39243221690590e+00
    gl0 = gl0 * x2 + 1.796443723688307e-01
    gl0 = gl0 * x2 + -2.955065359477124e-02
    gl0 = gl0 * x2 + 6.410256410256410e-03
    gl0 = gl0 * x2 + -1.917526917526918e-03
    gl0 = gl0 * x2 + 8.417508417508418e-04
    gl0 = gl0 * x2 + -5.952380952380952e-04
    gl0 = gl0 * x2 + 7.936507936507937e-04
    gl0 = gl0 * x2 + -2.777777777777778e-03
    gl0 = gl0 * x2 + 8.333333333333333e-02
    gl = gl0 / x0 + 0.5 * 1.8378770664093453 + (x0 - 0.5) * _logf(x0) - x0
    if x < 7.0:
        for _k in range(int(n)):
            gl = gl - _logf(x0 - 1.0)
            x0 = x0 - 1.0
    return gl


@wp.func
def _poisson_mult(state: wp.uint32, lam: float):
    s = state
    enlam = _expf(-lam)
    count = wp.uint32(0)
    prod = wp.randf(s)
    while prod > enlam:
        count = count + wp.uint32(1)
        prod = prod * wp.randf(s)
    return s, count


@wp.func
def _poisson_ptrs(state: wp.uint32, lam: float):
    s = state
    slam = wp.sqrt(lam)
    loglam = _logf(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    k = 0.0
    searching = True
    while searching:
        u = wp.randf(s) - 0.5
        v = wp.randf(s)
        us = 0.5 - wp.abs(u)
        k = wp.floor((2.0 * a / us + b) * u + lam + 0.43)
        if us >= 0.07 and v <= vr:
            searching = False
        elif k >= 0.0 and not (us < 0.013 and v > us):
            lhs = _logf(v) + _logf(invalpha) - _logf(a / (us * us) + b)
            if lhs <= -lam + k * loglam - _loggam(k + 1.0):
                searching = False
    return s, wp.uint32(k)


@wp.func
def poisson(state: wp.uint32, lam: float):
    if lam >= 10.0:
        return _poisson_ptrs(state, lam)
    if lam == 0.0:
        return state, wp.uint32(0)
    return _poisson_mult(state, lam)


@wp.func
def sample_cdf(state: wp.uint32, cdf: wp.array(dtype=float)):
    s = state
    u = wp.randf(s)
    lower = 0
    upper = cdf.shape[0] - 1
    while lower < upper:
        mid = lower + (upper - lower) // 2
        if cdf[mid] < u:
            lower = mid + 1
        else:
            upper = mid
    return s, lower
