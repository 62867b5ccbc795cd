"""erfc, erfinv and erfcinv: the complementary error function and the inverses of erf and erfc.

Each is a primitive with its derivative rule beside it:
- erfc calls the C library's erfc/erfcf (accurate in the far tail, where 1 - erf(x) would
  round to 0); d/dx erfc(x) = -2/sqrt(pi) exp(-x^2).
- erfinv and erfcinv start from M. Giles' single-precision approximation ("Approximating
  the erfinv function", GPU Computing Gems, 2011), written in terms of w = -log((1-x)(1+x))
  (for erfcinv, -log(y (2 - y)), which keeps small y exact) where it is valid, or from the
  tail's asymptotic form beyond, then take Newton steps (on erf, or on log erfc in the
  tail, where it stays well scaled: two in float32, four in float64). Their
  derivatives come from the result r: +-sqrt(pi)/2 exp(r^2).
float16 is computed in float32, as the other transcendental builtins do.
"""

from __future__ import annotations

import math

from ..ir.core import Value
from ..types import float32
from .math import PRIM, _apply, _c, _call, _float_args, _via_f32
from .registry import builtin, primitive

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# Giles' coefficients, highest degree first: the central range (w < 5, in w - 2.5) and the
# tails (in sqrt(w) - 3).
_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
            -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
         -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _libm(cg, name, x):
    """The C library's `name` (float version for float32) applied to `x`."""
    from llvmlite import ir
    symbol = name if isinstance(x.type, ir.DoubleType) else name + "f"
    fn = cg.module.globals.get(symbol) or ir.Function(cg.module, ir.FunctionType(x.type, [x.type]), symbol)
    return cg.builder.call(fn, [x])


def _polynomial(bld, coefficients, t):
    acc = t.type(coefficients[0])
    for c in coefficients[1:]:
        acc = bld.fadd(bld.fmul(acc, t), t.type(c))
    return acc


def _giles(cg, w, scale):
    """Giles' approximation times `scale` (x for erfinv), from w = -log((1-x)(1+x))."""
    bld = cg.builder
    central = _polynomial(bld, _CENTRAL, bld.fsub(w, w.type(2.5)))
    root = cg.call_intrinsic("llvm.sqrt", [w])
    tail = _polynomial(bld, _TAIL, bld.fsub(root, w.type(3.0)))
    return bld.fmul(bld.select(bld.fcmp_ordered("<", w, w.type(5.0)), central, tail), scale)


def _steps(r) -> int:
    """Newton steps after the first guess: the guess is made for float32, and float64 needs
    its error squared twice more."""
    from llvmlite import ir
    return 4 if isinstance(r.type, ir.DoubleType) else 2


def _refine_erf(cg, r, x):
    """Newton steps toward erf(r) = x (used where |x| <= 1/2)."""
    from ..codegen import vecmath
    bld = cg.builder
    for _ in range(_steps(r)):
        slope = bld.fmul(r.type(_TWO_OVER_SQRT_PI), vecmath.emit_unary(bld, "exp", bld.fneg(bld.fmul(r, r))))
        r = bld.fsub(r, bld.fdiv(bld.fsub(vecmath.emit_unary(bld, "erf", r), x), slope))
    return r


def _erfcinv_upper(cg, z):
    """erfcinv(z) for 0 < z <= 1 (a result >= 0). The first guess is Giles' formula while it
    is valid (w < 16, z above ~6e-8), else the tail's asymptotic root of
    r^2 + log(r sqrt(pi)) = -log z; then Newton steps on log(erfc(r)) = log(z), which stays
    well scaled however small z is (on erfc itself above z = 1/2)."""
    from ..codegen import vecmath
    bld = cg.builder
    t = z.type
    log = lambda v: vecmath.emit_unary(bld, "log", v)  # noqa: E731
    w = bld.fneg(log(bld.fmul(z, bld.fsub(t(2.0), z))))
    near = _giles(cg, w, bld.fsub(t(1.0), z))
    depth = bld.fneg(log(z))
    far = cg.call_intrinsic("llvm.sqrt", [bld.fsub(depth, bld.fmul(t(0.5), log(bld.fmul(t(math.pi), depth))))])
    r = bld.select(bld.fcmp_ordered("<", w, t(16.0)), near, far)
    log_z = log(z)
    in_tail = bld.fcmp_ordered("<", z, t(0.5))
    for _ in range(_steps(r)):
        tail = _libm(cg, "erfc", r)
        gaussian = vecmath.emit_unary(bld, "exp", bld.fneg(bld.fmul(r, r)))
        log_slope = bld.fdiv(bld.fmul(t(-_TWO_OVER_SQRT_PI), gaussian), tail)
        # above z = 1/2 the plain Newton step, with erfc(r) - z written as (1 - z) - erf(r):
        # 1 - z is exact there, and erfc(r) - z would cancel to nothing near z = 1
        close = bld.fsub(bld.fsub(t(1.0), z), vecmath.emit_unary(bld, "erf", r))
        miss = bld.select(in_tail, bld.fsub(log(tail), log_z), bld.fdiv(close, tail))
        r = bld.fsub(r, bld.fdiv(miss, log_slope))
    return r


def _finish(cg, r, at_pole, pole_value, outside):
    """`r`, except +-inf at the poles and NaN outside the domain."""
    bld = cg.builder
    r = bld.select(at_pole, pole_value, r)
    return bld.select(outside, r.type(math.nan), r)


def _lower_erfinv(cg, x):
    """Giles and Newton on erf where |x| <= 1/2; beyond, sign(x) erfcinv(1 - |x|) (1 - |x|
    is exact there)."""
    from ..codegen import vecmath
    bld = cg.builder
    t = x.type
    one = t(1.0)
    magnitude = cg.call_intrinsic("llvm.fabs", [x])
    w = bld.fneg(vecmath.emit_unary(bld, "log", bld.fmul(bld.fsub(one, x), bld.fadd(one, x))))
    central = _refine_erf(cg, _giles(cg, w, x), x)
    negative = bld.fcmp_ordered("<", x, t(0.0))
    outer = _erfcinv_upper(cg, bld.fsub(one, magnitude))
    outer = bld.select(negative, bld.fneg(outer), outer)
    r = bld.select(bld.fcmp_ordered("<=", magnitude, t(0.5)), central, outer)
    inf = bld.select(negative, t(-math.inf), t(math.inf))
    # NaN stays NaN: an unordered comparison is true for it
    return _finish(cg, r, bld.fcmp_ordered("==", magnitude, one), inf, bld.fcmp_unordered(">", magnitude, one))


def _lower_erfcinv(cg, y):
    """erfcinv(y) = -erfcinv(2 - y) for y > 1 (2 - y is exact there)."""
    bld = cg.builder
    t = y.type
    zero, one, two = t(0.0), t(1.0), t(2.0)
    upper = bld.fcmp_ordered(">", y, one)
    r = _erfcinv_upper(cg, bld.select(upper, bld.fsub(two, y), y))
    r = bld.select(upper, bld.fneg(r), r)
    at_pole = bld.or_(bld.fcmp_ordered("==", y, zero), bld.fcmp_ordered("==", y, two))
    inf = bld.select(bld.fcmp_ordered("==", y, zero), t(math.inf), t(-math.inf))
    outside = bld.or_(bld.fcmp_unordered("<", y, zero), bld.fcmp_unordered(">", y, two))
    return _finish(cg, r, at_pole, inf, outside)


def _result_rule(sign):
    """d/dx of an inverse error function from its result r: sign * sqrt(pi)/2 * exp(r^2)."""
    def vjp(b, args, results, g):
        (r,) = results
        return [b.mul(g, b.mul(_c(b, r, sign * math.sqrt(math.pi) / 2.0), _call(b, "exp", b.mul(r, r))))]
    return vjp


def _erfc_vjp(b, args, results, g):
    (x,) = args
    return [b.mul(g, b.mul(_c(b, x, -_TWO_OVER_SQRT_PI), _call(b, "exp", b.neg(b.mul(x, x)))))]


PRIM["erfc"] = primitive("erfc", _float_args(1), _via_f32(lambda cg, x: _libm(cg, "erfc", x)), _erfc_vjp)
PRIM["erfinv"] = primitive("erfinv", _float_args(1), _via_f32(_lower_erfinv), _result_rule(1.0))
PRIM["erfcinv"] = primitive("erfcinv", _float_args(1), _via_f32(_lower_erfcinv), _result_rule(-1.0))


def _register(name, doc):
    prim = PRIM[name]

    @builtin(name)
    def expand(ctx, args, kwargs, prim=prim, name=name):
        if len(args) != 1 or kwargs:
            ctx.error(f"{name}() takes one argument")
        (x,) = args
        if not isinstance(x, Value):
            if isinstance(x, bool):
                ctx.error(f"{name}() needs a number, got {x!r}")
            x = ctx.coerce(float(x), float32) if isinstance(x, (int, float)) else ctx.materialize(x)
        return _apply(ctx, prim, [x], name)
    expand.__doc__ = doc
    return expand


_register("erfc", "The complementary error function 1 - erf(x), accurate in the tail.")
_register("erfinv", "The inverse of erf on (-1, 1): +-inf at +-1, NaN beyond.")
_register("erfcinv", "The inverse of erfc on (0, 2): +inf at 0, -inf at 2, NaN beyond.")
