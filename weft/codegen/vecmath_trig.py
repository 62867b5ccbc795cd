"""Circular trigonometric functions for vecmath.

sin, cos, tan (Cody-Waite reduction by pi/2 in three parts), asin, acos,
atan and atan2 (reductions by pi/4 carried in double-word).
`UNARY` / `BINARY` map each public name to its body; `vecmath` dispatches.
"""

from __future__ import annotations

import math
from fractions import Fraction

from llvmlite import ir

from .vecmath_emitter import PI, FloatEmitter

# Minimax coefficients, lowest order first, as (float32, float64) tuples.
# sin(r) ~ r + sum c[k] r^(2k+3),  |r| <= 0.9 (covers pi/4 plus the slack
# of a quadrant estimate that is off by one for large |x|)
_SIN = (
    (-0.1666666716337204, 0.008333324454724789, -0.00019837891159113497,
     2.706365648919018e-06),
    (-0.16666666666666666, 0.008333333333333278, -0.00019841269841210825,
     2.7557319194397787e-06, -2.5052100440025186e-08, 1.6057869663304598e-10,
     -7.557081122502437e-13),
)
# cos(r) ~ 1 - r^2/2 + sum c[k] r^(2k+4),  |r| <= 0.9
_COS = (
    (0.04166661947965622, -0.0013886152300983667, 2.4316283088410273e-05),
    (0.041666666666666664, -0.0013888888888888805, 2.4801587301520596e-05,
     -2.75573191968835e-07, 2.0876750814266396e-09, -1.1469946801097333e-11,
     4.724572139905093e-14),
)
# asin(x) ~ x + sum c[k] x^(2k+3),  |x| <= 1/2
_ASIN = (
    (0.16666659712791443, 0.07500503957271576, 0.04451695457100868,
     0.03180772438645363, 0.01443857979029417, 0.03751648589968681),
    (0.1666666666666676, 0.07499999999970798, 0.044642857174613026,
     0.0303819427077432, 0.022372214988444387, 0.0173516120043489,
     0.013980820611536972, 0.011398911975515815, 0.01078025321230616,
     0.0037064092758599793, 0.021707442842809756, -0.02099905427111207,
     0.032628617962090885),
)
# atan(t) ~ t + sum c[k] t^(2k+3),  |t| <= tan(pi/8)
_ATAN = (
    (-0.3333331346511841, 0.19998449087142944, -0.1424308717250824,
     0.10590339452028275, -0.06068999320268631),
    (-0.3333333333333319, 0.19999999999951512, -0.1428571427998325,
     0.11111110772622912, -0.09090897441812495, 0.07692054526630701,
     -0.06663038663842574, 0.05847408541105176, -0.05037116988836083,
     0.03800845745331845, -0.017845226639569424),
)


# ---------------------------------------------------------------------------
# trigonometric
# ---------------------------------------------------------------------------

def _reduce_in_double(m: FloatEmitter, xs, precise: bool):
    """float32 x = r + q*pi/2 reduced in double: (r as float32 (+ its low part if `precise`),
    q's low bits as m's ints). Exact enough for every |x| < 2^48, where x * 2/pi rounds by
    less than 1/16 (the same reduction in float32 lost the quadrant past about 1e6)."""
    md = m.like(ir.DoubleType())
    xd = m.b.fpext(xs, md.ty)
    q = md.rint(md.mul(xd, float(2 / PI)))
    nq = md.neg(q)
    c1, c2, c3 = md.parts(PI / 2, 3)
    rd = md.fma(nq, c3, md.fma(nq, c2, md.fma(nq, c1, xd)))
    r = m.clamp(m.b.fptrunc(rd, m.ty), -0.9, 0.9)  # (bounded past 2^48 too, as for float64)
    rlo = m.b.fptrunc(md.sub(rd, m.b.fpext(r, md.ty)), m.ty) if precise else None
    return r, rlo, m.b.trunc(md.to_int(q), m.ity)  # (the quadrant is q's two low bits)


def _sincos_core(m: FloatEmitter, x, precise: bool):
    """Returns (sin r, cos r, quadrant) with x = r + quadrant*pi/2 (mod 2pi);
    sin r and cos r as (hi, lo) pairs.  precise=True carries the reduced
    argument in double-word (~0.7 ulp instead of ~1.5 ulp, 35% slower)."""
    xs = m.sel(m.isfinite(x), x, 0.0)        # keep inf/NaN out of the ints
    if not m.d:
        return _sincos_poly(m, *_reduce_in_double(m, xs, precise))
    q = m.rint(m.mul(xs, float(2 / PI)))
    c1, c2, c3 = m.parts(PI / 2, 3)
    nq = m.neg(q)
    # x - q*(c1 + c2 + c3): the c1 step is exact (fma; c1 and x share the
    # grid and |r1| < 1)
    r1 = m.fma(nq, c1, xs)
    if precise:
        # r + rlo: the c2 product is split exactly and added with Fast2Sum
        # (exact, or exact anyway when r1 and c2*q cancel)
        p2 = m.mul(nq, c2)
        p2l = m.fma(nq, c2, m.neg(p2))
        rh, e = m.fast_two_sum(r1, p2)
        rl = m.fma(nq, c3, m.add(e, p2l))
        r, rlo = m.fast_two_sum(rh, rl)
    else:
        r = m.fma(nq, c3, m.fma(nq, c2, r1))
        rlo = None
    # past 2^50 the product x * 2/pi rounds by up to 1/4 and q can be one off: |r| > pi/4
    # then, and one more step of pi/2 (its first part exactly) brings it back
    up, down = m.gt(r, float(PI / 4)), m.lt(r, float(-PI / 4))
    r = m.sel(up, m.sub(r, c1), m.sel(down, m.add(r, c1), r))
    if rlo is None:
        r = m.sel(up, m.sub(r, c2), m.sel(down, m.add(r, c2), r))
    else:
        r, rlo = m.fast_two_sum(r, m.sel(up, m.sub(rlo, c2), m.sel(down, m.add(rlo, c2), rlo)))
    q = m.sel(up, m.add(q, 1.0), m.sel(down, m.sub(q, 1.0), q))
    # clamping only matters past the accurate range, where it keeps the polynomials bounded
    r = m.clamp(r, -0.9, 0.9)
    qm = m.sub(q, m.mul(m.floor(m.mul(q, 0.25)), 4.0))   # q mod 4, in float
    return _sincos_poly(m, r, rlo, m.to_int(qm))


def _sincos_poly(m: FloatEmitter, r, rlo, qi):
    """(sin r, cos r, qi) for the reduced argument r (+ rlo), as (hi, lo) pairs."""
    z = m.mul(r, r)
    nhr = m.neg(m.mul(r, 0.5))
    w = m.fma(nhr, r, 1.0)                   # 1 - r^2/2, one rounding ...
    dw = m.fma(nhr, r, m.sub(1.0, w))        # ... and its exact error
    # sin(r + rlo) ~ sin r + rlo cos r,  cos(r + rlo) ~ cos r - rlo r
    ts = m.mul(m.mul(r, z), m.horner(z, m.coef(_SIN)))
    if rlo is not None:
        ts = m.fma(rlo, w, ts)
        dw = m.fma(m.neg(rlo), r, dw)
    s = m.fast_two_sum(r, ts)
    tc = m.fma(m.mul(z, z), m.horner(z, m.coef(_COS)), dw)
    c = m.fast_two_sum(w, tc)
    return s, c, qi


def _trig_finish(m: FloatEmitter, x, res):
    res = m.sel(m.eq(x, 0.0), x, res)        # sin/tan(-0) = -0
    return m.sel(m.isfinite(x), res, math.nan)


def _sin(m: FloatEmitter, x):
    (s, _), (c, _), qi = _sincos_core(m, x, precise=False)
    odd = m.b.trunc(qi, m.lanes(ir.IntType(1)))
    negate = m.b.icmp_unsigned("!=", m.b.and_(qi, m.ik(2)), m.ik(0))
    v = m.sel(odd, c, s)
    v = m.sel(negate, m.neg(v), v)
    return _trig_finish(m, x, v)


def _cos(m: FloatEmitter, x):
    (s, _), (c, _), qi = _sincos_core(m, x, precise=False)
    odd = m.b.trunc(qi, m.lanes(ir.IntType(1)))
    q1 = m.b.add(qi, m.ik(1))
    negate = m.b.icmp_unsigned("!=", m.b.and_(q1, m.ik(2)), m.ik(0))
    v = m.sel(odd, s, c)
    v = m.sel(negate, m.neg(v), v)
    return m.sel(m.isfinite(x), v, math.nan)


def _tan(m: FloatEmitter, x):
    (sh, sl), (ch, cl), qi = _sincos_core(m, x, precise=True)
    odd = m.b.trunc(qi, m.lanes(ir.IntType(1)))
    # odd quadrant: -cot(r); double-word quotient keeps tan near 1 ulp
    nh = m.sel(odd, m.neg(ch), sh)
    nl = m.sel(odd, m.neg(cl), sl)
    dh = m.sel(odd, sh, ch)
    dl = m.sel(odd, sl, cl)
    return _trig_finish(m, x, m.div_dw(nh, nl, dh, dl))


def _asin_parts(m: FloatEmitter, x, a):
    """(big, s, tail) with asin(s) ~ s + tail and, for |x| > 1/2,
    asin|x| = pi/2 - 2 asin(s), s = sqrt((1-|x|)/2); else s = x."""
    big = m.gt(a, 0.5)
    zb = m.fma(a, -0.5, 0.5)                  # (1-|x|)/2, exact
    sb = m.sqrt(zb)
    # low part of the square root: sqrt(zb) ~ sb + (zb - sb^2) / (2 sb)
    slo = m.div(m.fma(m.neg(sb), sb, zb), m.sel(m.eq(sb, 0.0), 1.0, m.mul(sb, 2.0)))
    z = m.sel(big, zb, m.mul(x, x))
    s = m.sel(big, sb, x)
    tail = m.mul(m.mul(s, z), m.horner(z, m.coef(_ASIN)))
    # asin'(s) = 1 + s^2/2 + ...
    tail = m.add(tail, m.sel(big, m.fma(m.mul(slo, 0.5), z, slo), 0.0))
    return big, s, tail


def _asin(m: FloatEmitter, x):
    a = m.abs(x)
    big, s, tail = _asin_parts(m, a, a)
    hi, lo = m.parts(PI / 2, 2)
    bh, bl = m.two_sum(hi, m.mul(s, -2.0))
    pb = m.add(bh, m.add(bl, m.fma(tail, -2.0, lo)))
    ps = m.add(s, tail)
    return m.copysign(m.sel(big, pb, ps), x)  # NaN: big is false, ps is NaN


def _acos(m: FloatEmitter, x):
    a = m.abs(x)
    big, s, tail = _asin_parts(m, x, a)
    h2hi, h2lo = m.parts(PI / 2, 2)
    pihi, pilo = m.parts(PI, 2)
    sh, sl = m.two_sum(h2hi, m.neg(s))        # pi/2 - asin(x)
    small = m.add(sh, m.add(sl, m.sub(h2lo, tail)))
    pos = m.mul(m.add(s, tail), 2.0)          # 2 asin(sqrt((1-x)/2))
    nh, nl = m.fast_two_sum(pihi, m.mul(s, -2.0))   # 2s <= 1 < pi
    negv = m.add(nh, m.add(nl, m.fma(tail, -2.0, pilo)))
    return m.sel(big, m.sel(m.gt(x, 0.0), pos, negv), small)


def _atan_tail(m: FloatEmitter, t, tlo):
    """atan(t + tlo) - t for |t| <= tan(pi/8), |tlo| ~ ulp(t)."""
    z = m.mul(t, t)
    tail = m.mul(m.mul(t, z), m.horner(z, m.coef(_ATAN)))
    return m.add(tail, m.fma(m.neg(tlo), z, tlo))    # atan'(t) ~ 1 - t^2


def _atan_finish(m: FloatEmitter, khi, klo, t, tail):
    """khi + klo + t + tail, with |khi| >= |t| or khi == 0."""
    sh, sl = m.fast_two_sum(khi, t)
    return m.add(sh, m.add(sl, m.add(tail, klo)))


def _atan(m: FloatEmitter, x):
    a = m.abs(x)
    big = m.gt(a, float(Fraction(24142135623730950488, 10 ** 19)))  # tan(3pi/8)
    mid = m.gt(a, float(Fraction(4142135623730950488, 10 ** 19)))   # tan(pi/8)
    # a > tan(3pi/8): pi/2 + atan(-1/a);  a > tan(pi/8): pi/4 + atan((a-1)/(a+1))
    am1 = m.sub(a, 1.0)
    ap1 = m.add(a, 1.0)
    num = m.sel(big, -1.0, m.sel(mid, am1, a))
    den = m.sel(big, a, m.sel(mid, ap1, 1.0))
    # rounding errors of a -+ 1 (exact in this range) for the quotient
    mid = m.and_(mid, m.not_(big))
    nlo = m.sel(mid, m.sub(a, m.add(am1, 1.0)), 0.0)
    dlo = m.sel(mid, m.sub(a, m.sub(ap1, 1.0)), 0.0)
    t = m.div(num, den)
    rho = m.fma(m.neg(t), den, num)
    rho = m.fma(m.neg(t), dlo, m.add(rho, nlo))
    tlo = m.div(rho, den)
    tlo = m.sel(m.isnan(tlo), 0.0, tlo)       # a = inf: 0 * inf above
    h2hi, h2lo = m.parts(PI / 2, 2)
    h4hi, h4lo = m.parts(PI / 4, 2)
    bhi = m.sel(big, h2hi, m.sel(mid, h4hi, 0.0))
    blo = m.sel(big, h2lo, m.sel(mid, h4lo, 0.0))
    res = _atan_finish(m, bhi, blo, t, _atan_tail(m, t, tlo))
    return m.copysign(res, x)


def _atan2(m: FloatEmitter, y, x):
    ax = m.abs(x)
    ay = m.abs(y)
    swap = m.gt(ay, ax)
    num = m.sel(swap, ax, ay)
    den = m.sel(swap, ay, ax)
    # 0/0 and inf/inf would be NaN; the quadrant logic below gives the
    # C99 answers (0, pi, +-pi/4, +-3pi/4) from t = 0 resp. t = 1.
    both_inf = m.and_(m.eq(ax, math.inf), m.eq(ay, math.inf))
    num = m.sel(both_inf, 1.0, num)
    den = m.sel(both_inf, 1.0, m.sel(m.eq(den, 0.0), 1.0, den))
    tan_pi8 = float(Fraction(4142135623730950488, 10 ** 19))
    mid = m.gt(num, m.mul(den, tan_pi8))
    # (num-den)/(num+den) must not overflow: scale huge operands down
    sc = m.sel(m.gt(den, math.ldexp(1.0, m.bias - 2)), 0.25, 1.0)
    ns = m.mul(num, sc)
    ds = m.mul(den, sc)
    nh, nl = m.two_sum(ns, m.neg(ds))
    dh, dl = m.two_sum(ns, ds)
    nh = m.sel(mid, nh, num)
    nl = m.sel(mid, nl, 0.0)
    dh = m.sel(mid, dh, den)
    dl = m.sel(mid, dl, 0.0)
    u = m.div(nh, dh)
    rho = m.fma(m.neg(u), dh, nh)
    rho = m.fma(m.neg(u), dl, m.add(rho, nl))
    ulo = m.div(rho, dh)
    ulo = m.sel(m.isnan(ulo), 0.0, ulo)       # den = inf: 0 * inf above
    tail = _atan_tail(m, u, ulo)
    # angle = k*pi/4 + sign*p with k from (mid, swap, x<0)
    b = m.sel(mid, 1.0, 0.0)
    xneg = m.signbit(x)
    k = m.sel(swap, m.sel(xneg, m.add(b, 2.0), m.sub(2.0, b)),
              m.sel(xneg, m.sub(4.0, b), b))
    flip = m.b.xor(swap, xneg)
    su = m.sel(flip, m.neg(u), u)
    stail = m.sel(flip, m.neg(tail), tail)
    q4hi, q4lo = m.parts(PI / 4, 2, hibits=m.prec - 3)
    res = _atan_finish(m, m.mul(k, q4hi), m.mul(k, q4lo), su, stail)
    res = m.copysign(res, y)
    return m.sel(m.b.fcmp_unordered("uno", x, y), m.add(x, y), res)


UNARY = {
    "sin": _sin, "cos": _cos, "tan": _tan, "asin": _asin, "acos": _acos,
    "atan": _atan,
}
BINARY = {"atan2": _atan2}
