"""Exponential and logarithmic families for vecmath, and what is built on them.

exp, exp2, expm1, log, log2, log10, log1p, pow (double-double log), the
hyperbolic functions (through exp / expm1), erf (through exp) and cbrt.
`UNARY` / `BINARY` map each public name to its body; `vecmath` dispatches.
"""

from __future__ import annotations

import math
from fractions import Fraction

from llvmlite import ir

from .vecmath_emitter import LN2, LOG2E, LOG10_2, LOG10E, FloatEmitter

# Minimax coefficients, lowest order first, as (float32, float64) tuples.
# expm1(r) ~ r + sum c[k] r^(k+2),  |r| <= ln2/2
_EXPM1 = (
    (0.5, 0.1666666567325592, 0.04166635870933533, 0.008333389647305012,
     0.0013940823264420033, 0.00019845894712489098),
    (0.5, 0.16666666666666677, 0.041666666666666505, 0.008333333333321513,
     0.0013888888888963493, 0.00019841269886477654, 2.4801587171062902e-05,
     2.755724380380654e-06, 2.7557403276419735e-07, 2.5109195254515023e-08,
     2.0875325200687927e-09),
)
# 2*atanh(s)/s - 2 ~ sum c[k] s^(2k+2),  |s| <= (sqrt2-1)/(sqrt2+1)
_LOGR = (
    (0.6666678190231323, 0.39976608753204346, 0.29898789525032043),
    (0.6666666666666745, 0.3999999999933894, 0.2857142876068961,
     0.22222196559859284, 0.18183675388622947, 0.15311057369957665,
     0.1482730731219387),
)
# 2*atanh(s) - 2s - 2s^3/3 ~ sum c[k] s^(2k+5) (double-double log for pow)
_LOGDD = (
    0.39999999999999974, 0.2857142857144757, 0.2222222221694207,
    0.18181818942730066, 0.15384551965943946, 0.13336504771277577,
    0.11671042913534405, 0.12020228584628379,
)
# sinh(x) ~ x + sum c[k] x^(2k+3),  |x| <= 1
_SINH = (
    (0.1666666716337204, 0.008333349600434303, 0.0001983615948120132,
     2.8169513370812638e-06),
    (0.16666666666666669, 0.008333333333333148, 0.00019841269841431873,
     2.7557319157072026e-06, 2.5052123136700577e-08, 1.6057259770394555e-10,
     7.75874875228794e-13),
)
# erf(x) ~ x + sum c[k] x^(2k+1),  |x| <= 1
_ERF = (
    (0.12837916612625122, -0.3761262595653534, 0.1128358542919159,
     -0.026853812858462334, 0.005188327748328447, -0.0008010193705558777,
     7.853861461626366e-05),
    (0.1283791670955126, -0.3761263890318375, 0.11283791670954857,
     -0.026866170645072896, 0.005223977624780864, -0.0008548326978742021,
     0.00012055331036892111, -1.4925593506692267e-05, 1.6460972813617267e-06,
     -1.6350025184624532e-07, 1.4657879577186505e-08, -1.1365664913472984e-09,
     5.945259951542359e-11),
)
# erfc(x) * exp(x^2) ~ sum c[k] t^k,  t = 1/(1+x),  1 <= x <= 4 (f32) / 6 (f64)
# (fitted for absolute error of erfc, which is what erf = 1 - erfc needs)
_ERFC = (
    (0.0007745826151221991, 0.55653315782547, 0.5764759182929993,
     0.4121754467487335, -0.9735486507415771, 0.43994536995887756),
    (-4.196997728790872e-06, 0.5643603019861251, 0.5610044165593492,
     0.3180493656269489, -0.5541912715142402, 0.7340678924009644,
     -5.476722848368675, 14.83749323413681, -15.930410551208325,
     -5.986030013326957, 42.643834798809344, -63.01202453032848,
     50.06715482994549, -22.000776450672028, 4.237315527301414),
)
# cbrt(m) initial guess, relative error 2^-13.7 on [1, 2]
_CBRT0 = (0.5528234467579843, 0.5871142267566456, -0.16296962549906016,
          0.023104953465279167)


# ---------------------------------------------------------------------------
# exp family
# ---------------------------------------------------------------------------

def _exp_core(m: FloatEmitter, x, adj: int = 0, xlo=None, precise: bool = False, limits=None):
    """exp(x + xlo) * 2**adj.  NaN is not handled (caller selects).
    precise=False (~1 ulp) skips the double-word polynomial sum that
    precise=True (~0.6 ulp) and a non-None xlo use. `limits`: where x is clamped (by
    default where this type's exp underflows to 0 and overflows)."""
    xc, n, r, rlo = _exp_reduce(m, x, *(limits or ((-746.0, 712.0) if m.d else (-104.0, 90.0))))
    if xlo is not None:
        # a clamped argument overflows / underflows anyway; its low part
        # may be huge (pow with |y| ~ 1e300) and must not leak in
        rlo = m.add(rlo, m.sel(m.eq(xc, x), xlo, 0.0))
    return m.scale(_exp_sum(m, r, rlo, precise or xlo is not None), n, adj)


def _exp_sum(m: FloatEmitter, r, rlo, precise: bool):
    """exp(r + rlo) rounded to one value, |r| <= ln2/2."""
    if precise:
        ph, pl = _exp_poly(m, r, rlo)
        return m.add(ph, pl)
    em = m.fma(m.mul(r, r), m.horner(r, m.coef(_EXPM1)), r)
    return m.add(m.add(em, m.fma(rlo, em, rlo)), 1.0)


def _exp_dw(m: FloatEmitter, x, adj: int = 0):
    """exp(x) * 2**adj as hi + lo (x not NaN, result not subnormal)."""
    _, n, r, rlo = _exp_reduce(m, x, *((-746.0, 712.0) if m.d else (-104.0, 90.0)))
    ph, pl = _exp_poly(m, r, rlo)
    return m.scale(ph, n, adj), m.scale(pl, n, adj)


def _exp_reduce(m: FloatEmitter, x, lo: float, hi: float):
    """x clamped to [lo, hi] as xc = n*ln2 + r + rlo: (xc, n, r, rlo), with n integral and
    |r| <= ln2/2 (Cody-Waite with fma; rlo = rounding error)."""
    xc = m.clamp(x, lo, hi)
    n = m.rint(m.mul(xc, float(LOG2E)))
    ln2_hi, ln2_lo = m.parts(LN2, 2)
    nn = m.neg(n)
    r1 = m.fma(nn, ln2_hi, xc)              # exact: n*ln2_hi cancels xc
    r = m.fma(nn, ln2_lo, r1)
    rlo = m.fma(nn, ln2_lo, m.sub(r1, r))   # r1 - r is exact (Sterbenz)
    return xc, n, r, rlo


def _expm1_poly(m: FloatEmitter, r, rlo):
    """expm1(r + rlo) as hi + lo, for |r| <= ln2/2 and |rlo| << |r|."""
    tail = m.mul(m.mul(r, r), m.horner(r, m.coef(_EXPM1)))
    em, eml = m.fast_two_sum(r, tail)         # r dominates the tail
    return em, m.add(eml, m.fma(rlo, em, rlo))   # + rlo * e^r, first order


def _exp_poly(m: FloatEmitter, r, rlo):
    """exp(r + rlo) as hi + lo, for |r| <= ln2/2."""
    em, eml = _expm1_poly(m, r, rlo)
    ph, pl = m.fast_two_sum(1.0, em)
    return ph, m.add(pl, eml)


def _exp(m: FloatEmitter, x):
    return m.sel(m.isnan(x), x, _exp_core(m, x))


def _exp2(m: FloatEmitter, x):
    xc = m.clamp(x, *((-1076.0, 1025.0) if m.d else (-151.0, 129.0)))
    n = m.rint(xc)
    r = m.sub(xc, n)                        # exact, |r| <= 1/2
    rh, rl = _mul_split(m, r, 0.0, LN2)    # |r*ln2| <= ln2/2
    res = m.scale(_exp_sum(m, rh, rl, precise=False), n)
    return m.sel(m.isnan(x), x, res)


def _expm1_dw(m: FloatEmitter, x):
    """expm1(x) as hi + lo, without NaN / signed-zero handling."""
    _, n, r, rlo = _exp_reduce(m, x, *((-50.0, 710.0) if m.d else (-30.0, 89.0)))
    em, eml = _expm1_poly(m, r, rlo)
    # expm1(x) = 2^n (1 + em) - 1 = 2 * (t*em + (t - 1/2)),  t = 2^(n-1);
    # t*em, t*eml and t - 1/2 are exact, so only the final sum rounds.
    ni = m.to_int(n)
    t = m.pow2(m.b.sub(ni, m.ik(1)))
    sh, sl = m.two_sum(m.mul(t, em), m.sub(t, 0.5))
    sl = m.fma(t, eml, sl)
    rh, rl = m.fast_two_sum(sh, sl)
    return m.mul(rh, 2.0), m.mul(rl, 2.0)


def _expm1_core(m: FloatEmitter, x):
    return _expm1_dw(m, x)[0]


def _tiny_identity(m: FloatEmitter, x, res):
    """Return x where f(x) rounds to x (keeps -0 and subnormals exact)."""
    tiny = math.ldexp(1.0, -(m.prec + 1))
    return m.sel(m.lt(m.abs(x), tiny), x, res)


def _expm1(m: FloatEmitter, x):
    res = _expm1_core(m, x)
    res = _tiny_identity(m, x, res)
    return m.sel(m.isnan(x), x, res)


# ---------------------------------------------------------------------------
# log family
# ---------------------------------------------------------------------------

def _decompose(m: FloatEmitter, x, subnormal: bool = True):
    """x = 2^e * (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)); returns (e, f)
    as floats.  Garbage (but no poison) for x <= 0, inf, NaN."""
    if subnormal:
        kk = m.prec + 1
        small = m.lt(x, math.ldexp(1.0, 1 - m.bias))
        x = m.sel(small, m.mul(x, math.ldexp(1.0, kk)), x)
    i = m.bits(x)
    # e = (i - bits(sqrt(1/2))) >> mant, arithmetic; done as a logical
    # shift of a biased value since AVX2 lacks a 64-bit arithmetic shift
    off = m.bias + 1
    t = m.b.sub(i, m.ik(m.fbits(math.sqrt(0.5)) - (off << m.mant)))
    e = m.b.sub(m.b.lshr(t, m.ik(m.mant)), m.ik(off))
    mi = m.b.sub(i, m.b.shl(e, m.ik(m.mant)))
    f = m.sub(m.flt(mi), 1.0)                 # exact (Sterbenz)
    ef = m.to_float(e)
    if subnormal:
        ef = m.sub(ef, m.sel(small, float(kk), 0.0))
    return ef, f


def _log1p_poly(m: FloatEmitter, f):
    """log(1+f) = f - (hfsq - srh) for f in [sqrt(1/2)-1, sqrt(2)-1]."""
    s = m.div(f, m.add(f, 2.0))
    z = m.mul(s, s)
    rr = m.mul(z, m.horner(z, m.coef(_LOGR)))
    hfsq = m.mul(m.mul(f, f), 0.5)
    srh = m.mul(s, m.add(hfsq, rr))
    return hfsq, srh


def _ln2_split(m: FloatEmitter):
    # hi part short enough that e * hi is exact for every exponent e
    return m.parts(LN2, 2, hibits=m.prec - 12)


def _log_specials(m: FloatEmitter, x, res, at):
    """log-like specials around the pole `at` (0 for log, -1 for log1p)."""
    res = m.sel(m.eq(x, math.inf), math.inf, res)
    res = m.sel(m.eq(x, at), -math.inf, res)
    res = m.sel(m.lt(x, at), math.nan, res)
    return m.sel(m.isnan(x), x, res)


def _log(m: FloatEmitter, x):
    ef, f = _decompose(m, x)
    hfsq, srh = _log1p_poly(m, f)
    hi, lo = _ln2_split(m)
    res = m.sub(m.mul(ef, hi),
                m.sub(m.sub(hfsq, m.add(srh, m.mul(ef, lo))), f))
    return _log_specials(m, x, res, 0.0)


def _log_mant_dw(m: FloatEmitter, x):
    """(e, hi, lo) with log(x) = e*ln2 + hi + lo, |lo| <~ ulp(hi)."""
    ef, f = _decompose(m, x)
    hfsq, srh = _log1p_poly(m, f)
    d = m.sub(hfsq, srh)
    hi = m.sub(f, d)
    lo = m.sub(m.sub(f, hi), d)               # Fast2Sum, |f| >= |d|
    ff = m.mul(f, f)                          # rounding error of f*f/2
    lo = m.fma(m.fma(f, f, m.neg(ff)), -0.5, lo)
    return ef, hi, lo


def _mul_split(m: FloatEmitter, a, alo, c: Fraction):
    """(a + alo) * c as hi + lo (lo holds the product's rounding error)."""
    chi, clo = m.parts(c, 2)
    hi = m.mul(a, chi)
    lo = m.fma(a, clo, m.fma(a, chi, m.neg(hi)))
    return hi, m.fma(alo, chi, lo)


def _log2(m: FloatEmitter, x):
    ef, lm, lml = _log_mant_dw(m, x)
    t, err = _mul_split(m, lm, lml, LOG2E)
    s = m.add(ef, t)                          # Fast2Sum: |ef| >= |t| or ef == 0
    lo = m.add(m.sub(ef, s), t)
    res = m.add(s, m.add(lo, err))
    return _log_specials(m, x, res, 0.0)


def _log10(m: FloatEmitter, x):
    ef, lm, lml = _log_mant_dw(m, x)
    t, err = _mul_split(m, lm, lml, LOG10E)
    ghi, glo = m.parts(LOG10_2, 2, hibits=m.prec - 12)
    eh = m.mul(ef, ghi)                       # exact
    s = m.add(eh, t)                          # Fast2Sum: |eh| >= |t| or eh == 0
    lo = m.add(m.sub(eh, s), t)
    res = m.add(s, m.add(lo, m.fma(ef, glo, err)))
    return _log_specials(m, x, res, 0.0)


def _log1p(m: FloatEmitter, x):
    u = m.add(x, 1.0)
    ef, f = _decompose(m, u, subnormal=False)
    # c = (1 + x) - u, the rounding error of u, computed exactly
    c = m.sel(m.gt(u, 2.0), m.sub(1.0, m.sub(u, x)), m.sub(x, m.sub(u, 1.0)))
    c = m.div(c, u)
    hfsq, srh = _log1p_poly(m, f)
    hi, lo = _ln2_split(m)
    res = m.sub(m.mul(ef, hi),
                m.sub(m.sub(hfsq, m.add(srh, m.add(m.mul(ef, lo), c))), f))
    res = _tiny_identity(m, x, res)
    return _log_specials(m, x, res, -1.0)


# ---------------------------------------------------------------------------
# hyperbolic
# ---------------------------------------------------------------------------

def _sinh(m: FloatEmitter, x):
    a = m.abs(x)
    z = m.mul(a, a)
    ps = m.fma(m.mul(a, z), m.horner(z, m.coef(_SINH)), a)
    eh, el = _exp_dw(m, a, adj=-1)            # e^a / 2, no early overflow
    sh, sl = m.fast_two_sum(eh, m.neg(m.div(0.25, eh)))
    pb = m.add(sh, m.add(sl, el))
    pb = m.sel(m.eq(eh, math.inf), eh, pb)    # overflow: inf - inf above
    res = m.sel(m.lt(a, 1.0), ps, pb)
    res = m.copysign(res, x)
    return m.sel(m.isnan(x), x, res)


def _cosh(m: FloatEmitter, x):
    eh, el = _exp_dw(m, m.abs(x), adj=-1)     # e^|x| / 2 >= 1/2
    sh, sl = m.fast_two_sum(eh, m.div(0.25, eh))
    res = m.add(sh, m.add(sl, el))
    res = m.sel(m.eq(eh, math.inf), eh, res)
    return m.sel(m.isnan(x), x, res)


def _tanh(m: FloatEmitter, x):
    lim = 20.0 if m.d else 10.0               # tanh rounds to 1 beyond
    a = m.abs(x)
    a = m.sel(m.lt(a, lim), a, lim)
    th, tl = _expm1_dw(m, m.mul(a, 2.0))
    dh, dl = m.two_sum(th, 2.0)
    res = m.copysign(m.div_dw(th, tl, dh, m.add(dl, tl)), x)
    return m.sel(m.isnan(x), x, res)


# ---------------------------------------------------------------------------
# cbrt, erf
# ---------------------------------------------------------------------------

def _cbrt(m: FloatEmitter, x):
    a = m.abs(x)
    kk = 54 if m.d else 24                   # multiple of 3
    small = m.lt(a, math.ldexp(1.0, 1 - m.bias))
    a = m.sel(small, m.mul(a, math.ldexp(1.0, kk)), a)
    i = m.bits(a)
    e = m.b.sub(m.b.lshr(i, m.ik(m.mant)), m.ik(m.bias))
    mant_mask = (1 << m.mant) - 1
    mi = m.b.or_(m.b.and_(i, m.ik(mant_mask)), m.ik(m.bias << m.mant))
    mm = m.flt(mi)                            # [1, 2)
    ef = m.to_float(e)
    q = m.floor(m.mul(m.add(ef, 0.5), 1.0 / 3.0))
    rem = m.sub(ef, m.mul(q, 3.0))            # 0, 1 or 2
    is1 = m.eq(rem, 1.0)
    is2 = m.eq(rem, 2.0)
    am = m.mul(mm, m.sel(is2, 4.0, m.sel(is1, 2.0, 1.0)))      # [1, 8)
    y = m.mul(m.horner(mm, _CBRT0),
              m.sel(is2, 2.0 ** (2 / 3), m.sel(is1, 2.0 ** (1 / 3), 1.0)))
    for _ in range(2 if m.d else 1):          # Newton: y -= (y^3 - a)/(3y^2)
        y2 = m.mul(y, y)
        y = m.sub(y, m.div(m.fma(y2, y, m.neg(am)), m.mul(y2, 3.0)))
    # last step with the residual y^3 - a computed to ~2x precision
    y2 = m.mul(y, y)
    y2e = m.fma(y, y, m.neg(y2))
    rho = m.fma(y2e, y, m.fma(y2, y, m.neg(am)))
    y = m.sub(y, m.div(rho, m.mul(y2, 3.0)))
    qi = m.to_int(q)
    qi = m.b.sub(qi, m.b.select(small, m.ik(kk // 3), m.ik(0)))
    res = m.copysign(m.mul(y, m.pow2(qi)), x)
    special = m.or_(m.eq(x, 0.0), m.not_(m.isfinite(x)))
    return m.sel(special, m.add(x, x), res)


def _erf(m: FloatEmitter, x):
    a = m.abs(x)
    z = m.mul(a, a)
    ps = m.fma(a, m.horner(z, m.coef(_ERF)), a)
    # a >= 1: erf = 1 - exp(-a^2) * F(1/(1+a)); a^2 carried as hi + lo
    amax = 6.0 if m.d else 4.0                # erf rounds to 1 beyond
    ab = m.clamp(a, 1.0, amax)
    zh = m.mul(ab, ab)
    zl = m.fma(ab, ab, m.neg(zh))
    ex = _exp_core(m, m.neg(zh), xlo=m.neg(zl))
    t = m.div(1.0, m.add(ab, 1.0))
    pb = m.sub(1.0, m.mul(ex, m.horner(t, m.coef(_ERFC))))
    res = m.copysign(m.sel(m.lt(a, 1.0), ps, pb), x)
    return m.sel(m.isnan(x), x, res)


# ---------------------------------------------------------------------------
# pow
# ---------------------------------------------------------------------------

def _log_dd(m: FloatEmitter, ax):
    """log(ax) as hi + lo with ~2^-70 relative error (double only)."""
    ef, f = _decompose(m, ax)
    # s = f / (2 + f) in double-double
    dhi = m.add(f, 2.0)
    dlo = m.add(m.sub(2.0, dhi), f)
    shi = m.div(f, dhi)
    slo = m.div(m.sub(m.fma(m.neg(shi), dhi, f), m.mul(shi, dlo)), dhi)
    # s^3 in double-double
    zhi = m.mul(shi, shi)
    zlo = m.fma(shi, shi, m.neg(zhi))
    zlo = m.fma(m.mul(shi, 2.0), slo, zlo)
    s3hi = m.mul(zhi, shi)
    s3lo = m.fma(zhi, shi, m.neg(s3hi))
    s3lo = m.fma(zlo, shi, m.fma(zhi, slo, s3lo))
    # (2/3) s^3
    c23hi, c23lo = m.parts(Fraction(2, 3), 2)
    thi = m.mul(s3hi, c23hi)
    tlo = m.fma(s3hi, c23hi, m.neg(thi))
    tlo = m.fma(s3lo, c23hi, m.fma(s3hi, c23lo, tlo))
    # L = 2s + (2/3)s^3 + s^5 T(z)
    tail = m.mul(m.mul(s3hi, zhi), m.horner(zhi, _LOGDD))
    a2 = m.mul(shi, 2.0)
    h = m.add(a2, thi)
    lo = m.add(m.sub(a2, h), thi)
    lo = m.add(lo, m.add(m.mul(slo, 2.0), m.add(tlo, tail)))
    # + e*ln2 (e*hi exact)
    hi2, lo2 = _ln2_split(m)
    eh = m.mul(ef, hi2)
    s = m.add(eh, h)
    lo = m.add(m.add(m.sub(eh, s), h), m.fma(ef, lo2, lo))
    rhi = m.add(s, lo)
    rlo = m.add(m.sub(s, rhi), lo)
    return rhi, rlo


def _pow(m: FloatEmitter, x, y, dd: bool = True, limits=None):
    """pow in this type; dd=False drops the double-double log (enough when
    a double result is only rounded to float afterwards)."""
    if not m.d:
        # float32: evaluate in double (2^-44 relative error), round once. exp's argument is
        # clamped where float32 underflows and overflows, not double: below -104 the float
        # result is 0 either way, and the double never goes subnormal (pow(0, y) was slow)
        md = m.like(ir.DoubleType())
        r = _pow(md, m.b.fpext(x, md.ty), m.b.fpext(y, md.ty), dd=False, limits=(-104.0, 90.0))
        return m.b.fptrunc(r, m.ty)
    ax = m.abs(x)
    if dd:
        lhi, llo = _log_dd(m, ax)
    else:
        ef, lm, lml = _log_mant_dw(m, ax)
        hi, lo = _ln2_split(m)
        lhi = m.fma(ef, hi, m.add(lm, m.fma(ef, lo, lml)))
    lhi = m.sel(m.eq(ax, 0.0), -math.inf, m.sel(m.eq(ax, math.inf), math.inf, lhi))
    phi = m.mul(y, lhi)
    plo = None
    if dd:
        plo = m.fma(y, llo, m.fma(y, lhi, m.neg(phi)))
        plo = m.sel(m.isfinite(phi), plo, 0.0)   # inf*... would make NaN
    res = _exp_core(m, phi, xlo=plo, limits=limits)
    # sign and special cases (C99 F.9.4.4)
    yint = m.and_(m.eq(m.floor(y), y), m.isfinite(y))
    hy = m.mul(y, 0.5)
    yodd = m.and_(yint, m.ne(m.floor(hy), hy))
    res = m.sel(m.and_(m.signbit(x), yodd), m.neg(res), res)
    neg_base = m.and_(m.lt(x, 0.0), m.isfinite(x))
    res = m.sel(m.and_(neg_base, m.and_(m.not_(yint), m.isfinite(y))), math.nan, res)
    res = m.sel(m.b.fcmp_unordered("uno", x, y), m.add(x, y), res)
    one = m.or_(m.eq(y, 0.0), m.eq(x, 1.0))
    one = m.or_(one, m.and_(m.eq(ax, 1.0), m.eq(m.abs(y), math.inf)))
    return m.sel(one, 1.0, res)


UNARY = {
    "sinh": _sinh, "cosh": _cosh, "tanh": _tanh, "exp": _exp, "exp2": _exp2,
    "expm1": _expm1, "log": _log, "log2": _log2, "log10": _log10,
    "log1p": _log1p, "cbrt": _cbrt, "erf": _erf,
}
BINARY = {"pow": _pow}
