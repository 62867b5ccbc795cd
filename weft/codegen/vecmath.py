"""Vectorizable elementary functions emitted as LLVM IR.

Calls into libm (``sinf``, ``exp``...) stop LLVM's loop vectorizer, so kernels
use these instead.  Every function is emitted as a branch-free sequence of
plain arithmetic, integer bit tricks on the IEEE encoding, ``select`` for the
special cases and intrinsics that have vector forms (``llvm.fma``,
``llvm.fabs``, ``llvm.floor``, ``llvm.rint``, ``llvm.sqrt``,
``llvm.copysign``).  The scheme is the usual one: range reduction (Cody-Waite
with FMA), a minimax polynomial on the reduced interval, reconstruction.
The polynomial coefficients were fitted for this module with a weighted Remez
exchange in high precision and rounded to the target type.

Each (function, type) pair is emitted once per module as an ``internal
alwaysinline`` helper named ``__weft_vm_<name>_<f32|f64>``; callers get a
``call`` to it, and the always-inliner splices the body into the loop before
the vectorizer runs (at every optimisation level).

Accuracy: max error in ulp against a high-precision reference (float64 for
float32, 80-bit long double / mpmath for float64), measured on millions of
random and edge-case inputs (float32: every 16th bit pattern)::

    function          f32   f64   notes
    sin, cos          1.6   1.5   valid for |x| <= 1e6 (f32) / 1e14 (f64);
    tan               1.0   0.9   beyond, results are finite, sin/cos in
                                  [-1, 1], but not accurate (no Payne-Hanek)
    asin, acos        0.7   0.7
    atan              0.7   0.7
    atan2             0.8   0.7
    sinh, cosh        0.9   0.9
    tanh              0.8   0.8
    exp, exp2         1.0   1.1   subnormal results: error in subnormal ulps
    expm1             1.1   1.1
    log, log2, log10  0.9   0.9
    log1p             0.9   0.9
    cbrt              0.5   0.5
    erf               1.1   1.0
    pow               0.5   1.3   f32 is computed in double; f64 carries
                                  log(x) in double-double, so the error
                                  does not grow with |y*log(x)|

Every function is accurate over its whole domain except sin/cos/tan past the
ranges above.

Special values follow C99 Annex F: NaN propagates, +-0 keep their sign for odd
functions, overflow gives +-inf, underflow gives (sub)normals or 0, log of a
negative number is NaN, log(0) = -inf, pow(x, 0) = 1, pow(1, y) = 1, negative
bases with integer exponents, and so on.  Subnormal inputs and outputs are
handled (no flush to zero).
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

from llvmlite import ir

__all__ = ["SUPPORTED", "emit_unary", "emit_atan2", "emit_pow"]

SUPPORTED = (
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt", "erf",
)

# Constants to ~60 digits, as exact rationals so that splitting them into
# hi/lo parts is exact.
_PI = Fraction("3.141592653589793238462643383279502884197169399375105820974944592")
_LN2 = Fraction("0.6931471805599453094172321214581765680755001343602552541206800095")
_LOG2E = Fraction("1.442695040888963407359924681001892137426645954152985934135449407")
_LOG10_2 = Fraction("0.3010299956639811952137388947244930267681898814621085413104274611")
_LOG10E = Fraction("0.4342944819032518276511289189166050822943970058036665661144537832")

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


def _f32(v: float) -> float:
    """Round a Python float to the nearest float32 value."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def _round_bits(v: float, bits: int) -> float:
    """Round v to `bits` significant bits (so small-integer multiples are exact)."""
    mant, exp = math.frexp(v)
    return math.ldexp(round(mant * (1 << bits)), exp - bits)


class _M:
    """Per-type emission helpers bound to one IRBuilder."""

    def __init__(self, builder: ir.IRBuilder, ty: ir.Type):
        self.b = builder
        self.ty = ty
        self.d = isinstance(ty, ir.DoubleType)
        self.ity = ir.IntType(64 if self.d else 32)
        self.mant = 52 if self.d else 23
        self.bias = 1023 if self.d else 127
        self.prec = self.mant + 1
        self.sfx = "f64" if self.d else "f32"

    # ---- constants -------------------------------------------------------
    def rnd(self, v) -> float:
        v = float(v)
        return v if self.d else _f32(v)

    def parts(self, value: Fraction, n: int, hibits: int | None = None):
        """Split an exact constant into n type-precision parts (hi first)."""
        out = []
        rest = value
        for i in range(n):
            p = self.rnd(rest)
            if i == 0 and hibits is not None:
                p = _round_bits(p, hibits)
            out.append(p)
            rest -= Fraction(p)
        return out

    def coef(self, table):
        return table[1] if self.d else table[0]

    def k(self, v) -> ir.Constant:
        return ir.Constant(self.ty, self.rnd(v))

    def val(self, a) -> ir.Value:
        return a if isinstance(a, ir.Value) else self.k(a)

    def ik(self, v: int) -> ir.Constant:
        return ir.Constant(self.ity, v)

    def fbits(self, v: float) -> int:
        """IEEE encoding of a Python float in this type."""
        if self.d:
            return struct.unpack("<q", struct.pack("<d", v))[0]
        return struct.unpack("<i", struct.pack("<f", v))[0]

    # ---- float arithmetic ------------------------------------------------
    def add(self, a, b):
        return self.b.fadd(self.val(a), self.val(b))

    def sub(self, a, b):
        return self.b.fsub(self.val(a), self.val(b))

    def mul(self, a, b):
        return self.b.fmul(self.val(a), self.val(b))

    def div(self, a, b):
        return self.b.fdiv(self.val(a), self.val(b))

    def neg(self, a):
        return self.b.fneg(self.val(a))

    def _intr(self, name: str, *args):
        fname = f"llvm.{name}.{self.sfx}"
        mod = self.b.module
        fn = mod.globals.get(fname)
        if fn is None:
            fnty = ir.FunctionType(self.ty, [self.ty] * len(args))
            fn = ir.Function(mod, fnty, fname)
        return self.b.call(fn, [self.val(a) for a in args])

    def fma(self, a, b, c):
        return self._intr("fma", a, b, c)

    def abs(self, a):
        return self._intr("fabs", a)

    def floor(self, a):
        return self._intr("floor", a)

    def rint(self, a):
        return self._intr("rint", a)

    def sqrt(self, a):
        return self._intr("sqrt", a)

    def copysign(self, mag, sgn):
        return self._intr("copysign", mag, sgn)

    def two_sum(self, a, b):
        """a + b = s + e exactly (Knuth)."""
        s = self.add(a, b)
        bb = self.sub(s, a)
        e = self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))
        return s, e

    def fast_two_sum(self, a, b):
        """a + b = s + e exactly, requires |a| >= |b| or a == 0."""
        s = self.add(a, b)
        return s, self.sub(b, self.sub(s, a))

    def div_dw(self, nh, nl, dh, dl):
        """(nh + nl) / (dh + dl) with one Newton correction (~0.5 ulp)."""
        q = self.div(nh, dh)
        rho = self.fma(self.neg(q), dh, nh)        # exact residual
        rho = self.fma(self.neg(q), dl, self.add(rho, nl))
        return self.add(q, self.div(rho, dh))

    def horner(self, x, coefs):
        acc = self.k(coefs[-1])
        for c in reversed(coefs[:-1]):
            acc = self.fma(acc, x, c)
        return acc

    # ---- comparisons and selects (ordered: false on NaN) ----------------
    def _cmp(self, op, a, b):
        return self.b.fcmp_ordered(op, self.val(a), self.val(b))

    def lt(self, a, b):
        return self._cmp("<", a, b)

    def gt(self, a, b):
        return self._cmp(">", a, b)

    def eq(self, a, b):
        return self._cmp("==", a, b)

    def ne(self, a, b):
        return self._cmp("!=", a, b)

    def isnan(self, a):
        return self.b.fcmp_unordered("uno", a, a)

    def isfinite(self, a):
        return self.lt(self.abs(a), math.inf)

    def signbit(self, a):
        return self.b.icmp_signed("<", self.bits(a), self.ik(0))

    def sel(self, c, a, b):
        return self.b.select(c, self.val(a), self.val(b))

    def clamp(self, x, lo: float, hi: float):
        """x limited to [lo, hi]; NaN gives hi (finite: no poison downstream)."""
        x = self.sel(self.lt(x, hi), x, hi)
        return self.sel(self.gt(x, lo), x, lo)

    def and_(self, a, b):
        return self.b.and_(a, b)

    def or_(self, a, b):
        return self.b.or_(a, b)

    def not_(self, a):
        return self.b.not_(a)

    # ---- bit level --------------------------------------------------------
    def bits(self, a):
        return self.b.bitcast(a, self.ity)

    def flt(self, i):
        return self.b.bitcast(i, self.ty)

    # AVX2 has no vector double <-> int64 conversion (fptosi/sitofp on
    # <4 x i64> get scalarized), so for doubles convert through the
    # 1.5*2^52 trick: an integer-valued |v| < 2^51 added to it lands in the
    # low mantissa bits.
    _MAGIC = 1.5 * 2.0 ** 52

    def to_int(self, v):
        """Integer-valued float (|v| < 2^31) -> ity."""
        if not self.d:
            return self.b.fptosi(v, self.ity)
        t = self.bits(self.add(v, self._MAGIC))
        return self.b.sub(t, self.ik(self.fbits(self._MAGIC)))

    def to_float(self, i):
        """ity (|i| < 2^31) -> float."""
        if not self.d:
            return self.b.sitofp(i, self.ty)
        t = self.flt(self.b.add(i, self.ik(self.fbits(self._MAGIC))))
        return self.sub(t, self._MAGIC)

    def pow2(self, n):
        """2**n for an integer n in the normal exponent range."""
        biased = self.b.add(n, self.ik(self.bias))
        return self.flt(self.b.shl(biased, self.ik(self.mant)))

    def scale(self, p, n, adj: int = 0):
        """p * 2**(n + adj) for float-valued integer n, in two exact steps
        so that results that overflow / underflow do so with one rounding.
        (Halves are split in float: AVX2 has no 64-bit arithmetic shift.)"""
        if adj:
            n = self.add(n, float(adj))
        n1 = self.floor(self.mul(n, 0.5))
        n2 = self.sub(n, n1)
        p = self.mul(p, self.pow2(self.to_int(n1)))
        return self.mul(p, self.pow2(self.to_int(n2)))


# ---------------------------------------------------------------------------
# exp family
# ---------------------------------------------------------------------------

def _exp_core(m: _M, x, adj: int = 0, xlo=None, precise: bool = False):
    """exp(x + xlo) * 2**adj.  NaN is not handled (caller selects).
    precise=False (~1 ulp) skips the double-word polynomial sum that
    precise=True (~0.6 ulp) and a non-None xlo use."""
    xc, n, r, rlo = _exp_reduce(m, x, *((-746.0, 712.0) if m.d else (-104.0, 90.0)))
    if xlo is not None:
        # a clamped argument overflows / underflows anyway; its low part
        # may be huge (pow with |y| ~ 1e300) and must not leak in
        rlo = m.add(rlo, m.sel(m.eq(xc, x), xlo, 0.0))
    return m.scale(_exp_sum(m, r, rlo, precise or xlo is not None), n, adj)


def _exp_sum(m: _M, r, rlo, precise: bool):
    """exp(r + rlo) rounded to one value, |r| <= ln2/2."""
    if precise:
        ph, pl = _exp_poly(m, r, rlo)
        return m.add(ph, pl)
    em = m.fma(m.mul(r, r), m.horner(r, m.coef(_EXPM1)), r)
    return m.add(m.add(em, m.fma(rlo, em, rlo)), 1.0)


def _exp_dw(m: _M, x, adj: int = 0):
    """exp(x) * 2**adj as hi + lo (x not NaN, result not subnormal)."""
    _, n, r, rlo = _exp_reduce(m, x, *((-746.0, 712.0) if m.d else (-104.0, 90.0)))
    ph, pl = _exp_poly(m, r, rlo)
    return m.scale(ph, n, adj), m.scale(pl, n, adj)


def _exp_reduce(m: _M, x, lo: float, hi: float):
    """x clamped to [lo, hi] as xc = n*ln2 + r + rlo: (xc, n, r, rlo), with n integral and
    |r| <= ln2/2 (Cody-Waite with fma; rlo = rounding error)."""
    xc = m.clamp(x, lo, hi)
    n = m.rint(m.mul(xc, float(_LOG2E)))
    ln2_hi, ln2_lo = m.parts(_LN2, 2)
    nn = m.neg(n)
    r1 = m.fma(nn, ln2_hi, xc)              # exact: n*ln2_hi cancels xc
    r = m.fma(nn, ln2_lo, r1)
    rlo = m.fma(nn, ln2_lo, m.sub(r1, r))   # r1 - r is exact (Sterbenz)
    return xc, n, r, rlo


def _expm1_poly(m: _M, r, rlo):
    """expm1(r + rlo) as hi + lo, for |r| <= ln2/2 and |rlo| << |r|."""
    tail = m.mul(m.mul(r, r), m.horner(r, m.coef(_EXPM1)))
    em, eml = m.fast_two_sum(r, tail)         # r dominates the tail
    return em, m.add(eml, m.fma(rlo, em, rlo))   # + rlo * e^r, first order


def _exp_poly(m: _M, r, rlo):
    """exp(r + rlo) as hi + lo, for |r| <= ln2/2."""
    em, eml = _expm1_poly(m, r, rlo)
    ph, pl = m.fast_two_sum(1.0, em)
    return ph, m.add(pl, eml)


def _exp(m: _M, x):
    return m.sel(m.isnan(x), x, _exp_core(m, x))


def _exp2(m: _M, x):
    xc = m.clamp(x, *((-1076.0, 1025.0) if m.d else (-151.0, 129.0)))
    n = m.rint(xc)
    r = m.sub(xc, n)                        # exact, |r| <= 1/2
    rh, rl = _mul_split(m, r, 0.0, _LN2)    # |r*ln2| <= ln2/2
    res = m.scale(_exp_sum(m, rh, rl, precise=False), n)
    return m.sel(m.isnan(x), x, res)


def _expm1_dw(m: _M, x):
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


def _expm1_core(m: _M, x):
    return _expm1_dw(m, x)[0]


def _tiny_identity(m: _M, x, res):
    """Return x where f(x) rounds to x (keeps -0 and subnormals exact)."""
    tiny = math.ldexp(1.0, -(m.prec + 1))
    return m.sel(m.lt(m.abs(x), tiny), x, res)


def _expm1(m: _M, x):
    res = _expm1_core(m, x)
    res = _tiny_identity(m, x, res)
    return m.sel(m.isnan(x), x, res)


# ---------------------------------------------------------------------------
# log family
# ---------------------------------------------------------------------------

def _decompose(m: _M, x, subnormal: bool = True):
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


def _log1p_poly(m: _M, f):
    """log(1+f) = f - (hfsq - srh) for f in [sqrt(1/2)-1, sqrt(2)-1]."""
    s = m.div(f, m.add(f, 2.0))
    z = m.mul(s, s)
    rr = m.mul(z, m.horner(z, m.coef(_LOGR)))
    hfsq = m.mul(m.mul(f, f), 0.5)
    srh = m.mul(s, m.add(hfsq, rr))
    return hfsq, srh


def _ln2_split(m: _M):
    # hi part short enough that e * hi is exact for every exponent e
    return m.parts(_LN2, 2, hibits=m.prec - 12)


def _log_specials(m: _M, x, res, at):
    """log-like specials around the pole `at` (0 for log, -1 for log1p)."""
    res = m.sel(m.eq(x, math.inf), math.inf, res)
    res = m.sel(m.eq(x, at), -math.inf, res)
    res = m.sel(m.lt(x, at), math.nan, res)
    return m.sel(m.isnan(x), x, res)


def _log(m: _M, x):
    ef, f = _decompose(m, x)
    hfsq, srh = _log1p_poly(m, f)
    hi, lo = _ln2_split(m)
    res = m.sub(m.mul(ef, hi),
                m.sub(m.sub(hfsq, m.add(srh, m.mul(ef, lo))), f))
    return _log_specials(m, x, res, 0.0)


def _log_mant_dw(m: _M, x):
    """(e, hi, lo) with log(x) = e*ln2 + hi + lo, |lo| <~ ulp(hi)."""
    ef, f = _decompose(m, x)
    hfsq, srh = _log1p_poly(m, f)
    d = m.sub(hfsq, srh)
    hi = m.sub(f, d)
    lo = m.sub(m.sub(f, hi), d)               # Fast2Sum, |f| >= |d|
    ff = m.mul(f, f)                          # rounding error of f*f/2
    lo = m.fma(m.fma(f, f, m.neg(ff)), -0.5, lo)
    return ef, hi, lo


def _mul_split(m: _M, a, alo, c: Fraction):
    """(a + alo) * c as hi + lo (lo holds the product's rounding error)."""
    chi, clo = m.parts(c, 2)
    hi = m.mul(a, chi)
    lo = m.fma(a, clo, m.fma(a, chi, m.neg(hi)))
    return hi, m.fma(alo, chi, lo)


def _log2(m: _M, x):
    ef, lm, lml = _log_mant_dw(m, x)
    t, err = _mul_split(m, lm, lml, _LOG2E)
    s = m.add(ef, t)                          # Fast2Sum: |ef| >= |t| or ef == 0
    lo = m.add(m.sub(ef, s), t)
    res = m.add(s, m.add(lo, err))
    return _log_specials(m, x, res, 0.0)


def _log10(m: _M, x):
    ef, lm, lml = _log_mant_dw(m, x)
    t, err = _mul_split(m, lm, lml, _LOG10E)
    ghi, glo = m.parts(_LOG10_2, 2, hibits=m.prec - 12)
    eh = m.mul(ef, ghi)                       # exact
    s = m.add(eh, t)                          # Fast2Sum: |eh| >= |t| or eh == 0
    lo = m.add(m.sub(eh, s), t)
    res = m.add(s, m.add(lo, m.fma(ef, glo, err)))
    return _log_specials(m, x, res, 0.0)


def _log1p(m: _M, x):
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
# trigonometric
# ---------------------------------------------------------------------------

def _sincos_core(m: _M, x, precise: bool):
    """Returns (sin r, cos r, quadrant) with x = r + quadrant*pi/2 (mod 2pi);
    sin r and cos r as (hi, lo) pairs.  precise=True carries the reduced
    argument in double-word (~0.7 ulp instead of ~1.5 ulp, 35% slower)."""
    xs = m.sel(m.isfinite(x), x, 0.0)        # keep inf/NaN out of the ints
    q = m.rint(m.mul(xs, float(2 / _PI)))
    c1, c2, c3 = m.parts(_PI / 2, 3)
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
    # |r| <= pi/4 plus the error of q; clamping only matters past the
    # accurate range, where it keeps the polynomials bounded
    r = m.clamp(r, -0.9, 0.9)
    qm = m.sub(q, m.mul(m.floor(m.mul(q, 0.25)), 4.0))   # q mod 4, in float
    qi = m.to_int(qm)
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


def _trig_finish(m: _M, x, res):
    res = m.sel(m.eq(x, 0.0), x, res)        # sin/tan(-0) = -0
    return m.sel(m.isfinite(x), res, math.nan)


def _sin(m: _M, x):
    (s, _), (c, _), qi = _sincos_core(m, x, precise=False)
    odd = m.b.trunc(qi, ir.IntType(1))
    negate = m.b.icmp_unsigned("!=", m.b.and_(qi, m.ik(2)), m.ik(0))
    v = m.sel(odd, c, s)
    v = m.sel(negate, m.neg(v), v)
    return _trig_finish(m, x, v)


def _cos(m: _M, x):
    (s, _), (c, _), qi = _sincos_core(m, x, precise=False)
    odd = m.b.trunc(qi, ir.IntType(1))
    q1 = m.b.add(qi, m.ik(1))
    negate = m.b.icmp_unsigned("!=", m.b.and_(q1, m.ik(2)), m.ik(0))
    v = m.sel(odd, s, c)
    v = m.sel(negate, m.neg(v), v)
    return m.sel(m.isfinite(x), v, math.nan)


def _tan(m: _M, x):
    (sh, sl), (ch, cl), qi = _sincos_core(m, x, precise=True)
    odd = m.b.trunc(qi, ir.IntType(1))
    # odd quadrant: -cot(r); double-word quotient keeps tan near 1 ulp
    nh = m.sel(odd, m.neg(ch), sh)
    nl = m.sel(odd, m.neg(cl), sl)
    dh = m.sel(odd, sh, ch)
    dl = m.sel(odd, sl, cl)
    return _trig_finish(m, x, m.div_dw(nh, nl, dh, dl))


def _asin_parts(m: _M, x, a):
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


def _asin(m: _M, x):
    a = m.abs(x)
    big, s, tail = _asin_parts(m, a, a)
    hi, lo = m.parts(_PI / 2, 2)
    bh, bl = m.two_sum(hi, m.mul(s, -2.0))
    pb = m.add(bh, m.add(bl, m.fma(tail, -2.0, lo)))
    ps = m.add(s, tail)
    return m.copysign(m.sel(big, pb, ps), x)  # NaN: big is false, ps is NaN


def _acos(m: _M, x):
    a = m.abs(x)
    big, s, tail = _asin_parts(m, x, a)
    h2hi, h2lo = m.parts(_PI / 2, 2)
    pihi, pilo = m.parts(_PI, 2)
    sh, sl = m.two_sum(h2hi, m.neg(s))        # pi/2 - asin(x)
    small = m.add(sh, m.add(sl, m.sub(h2lo, tail)))
    pos = m.mul(m.add(s, tail), 2.0)          # 2 asin(sqrt((1-x)/2))
    nh, nl = m.fast_two_sum(pihi, m.mul(s, -2.0))   # 2s <= 1 < pi
    negv = m.add(nh, m.add(nl, m.fma(tail, -2.0, pilo)))
    return m.sel(big, m.sel(m.gt(x, 0.0), pos, negv), small)


def _atan_tail(m: _M, t, tlo):
    """atan(t + tlo) - t for |t| <= tan(pi/8), |tlo| ~ ulp(t)."""
    z = m.mul(t, t)
    tail = m.mul(m.mul(t, z), m.horner(z, m.coef(_ATAN)))
    return m.add(tail, m.fma(m.neg(tlo), z, tlo))    # atan'(t) ~ 1 - t^2


def _atan_finish(m: _M, khi, klo, t, tail):
    """khi + klo + t + tail, with |khi| >= |t| or khi == 0."""
    sh, sl = m.fast_two_sum(khi, t)
    return m.add(sh, m.add(sl, m.add(tail, klo)))


def _atan(m: _M, x):
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
    h2hi, h2lo = m.parts(_PI / 2, 2)
    h4hi, h4lo = m.parts(_PI / 4, 2)
    bhi = m.sel(big, h2hi, m.sel(mid, h4hi, 0.0))
    blo = m.sel(big, h2lo, m.sel(mid, h4lo, 0.0))
    res = _atan_finish(m, bhi, blo, t, _atan_tail(m, t, tlo))
    return m.copysign(res, x)


def _atan2(m: _M, y, x):
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
    q4hi, q4lo = m.parts(_PI / 4, 2, hibits=m.prec - 3)
    res = _atan_finish(m, m.mul(k, q4hi), m.mul(k, q4lo), su, stail)
    res = m.copysign(res, y)
    return m.sel(m.b.fcmp_unordered("uno", x, y), m.add(x, y), res)


# ---------------------------------------------------------------------------
# hyperbolic
# ---------------------------------------------------------------------------

def _sinh(m: _M, x):
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


def _cosh(m: _M, x):
    eh, el = _exp_dw(m, m.abs(x), adj=-1)     # e^|x| / 2 >= 1/2
    sh, sl = m.fast_two_sum(eh, m.div(0.25, eh))
    res = m.add(sh, m.add(sl, el))
    res = m.sel(m.eq(eh, math.inf), eh, res)
    return m.sel(m.isnan(x), x, res)


def _tanh(m: _M, x):
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

def _cbrt(m: _M, x):
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


def _erf(m: _M, x):
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

def _log_dd(m: _M, ax):
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


def _pow(m: _M, x, y, dd: bool = True):
    """pow in this type; dd=False drops the double-double log (enough when
    a double result is only rounded to float afterwards)."""
    if not m.d:
        # float32: evaluate in double (2^-44 relative error), round once
        md = _M(m.b, ir.DoubleType())
        r = _pow(md, m.b.fpext(x, md.ty), m.b.fpext(y, md.ty), dd=False)
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
    res = _exp_core(m, phi, xlo=plo)
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


# ---------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------

_UNARY = {
    "sin": _sin, "cos": _cos, "tan": _tan, "asin": _asin, "acos": _acos,
    "atan": _atan, "sinh": _sinh, "cosh": _cosh, "tanh": _tanh, "exp": _exp,
    "exp2": _exp2, "expm1": _expm1, "log": _log, "log2": _log2,
    "log10": _log10, "log1p": _log1p, "cbrt": _cbrt, "erf": _erf,
}
_BINARY = {"atan2": _atan2, "pow": _pow}


def _check_type(ty: ir.Type) -> None:
    if not isinstance(ty, (ir.FloatType, ir.DoubleType)):
        raise TypeError(f"vecmath supports float and double scalars, got {ty}")


def _helper(module: ir.Module, name: str, ty: ir.Type, nargs: int) -> ir.Function:
    """Get or emit the internal alwaysinline helper for (name, type)."""
    fname = f"__weft_vm_{name}_{'f64' if isinstance(ty, ir.DoubleType) else 'f32'}"
    fn = module.globals.get(fname)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * nargs), fname)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    body = _UNARY[name] if nargs == 1 else _BINARY[name]
    b.ret(body(_M(b, ty), *fn.args))
    return fn


def emit_unary(builder: ir.IRBuilder, name: str, x: ir.Value) -> ir.Value:
    """Emit name(x) for a float/double scalar x; name must be in SUPPORTED."""
    if name not in _UNARY:
        raise ValueError(f"unsupported vecmath function {name!r}")
    _check_type(x.type)
    return builder.call(_helper(builder.module, name, x.type, 1), [x])


def emit_atan2(builder: ir.IRBuilder, y: ir.Value, x: ir.Value) -> ir.Value:
    """Emit atan2(y, x) (C99 semantics) for float/double scalars."""
    _check_type(x.type)
    if y.type != x.type:
        raise TypeError("atan2 operands must have the same type")
    return builder.call(_helper(builder.module, "atan2", x.type, 2), [y, x])


def emit_pow(builder: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """Emit pow(x, y) (C99 semantics) for float/double scalars."""
    _check_type(x.type)
    if y.type != x.type:
        raise TypeError("pow operands must have the same type")
    return builder.call(_helper(builder.module, "pow", x.type, 2), [x, y])
