"""The per-type IR emission helper shared by the vecmath function families.

`FloatEmitter` wraps an IRBuilder for one float type (float32 or float64):
constants rounded to the type, arithmetic, ``llvm.*`` intrinsics with vector
forms, ordered comparisons and selects, error-free transformations (two-sum,
double-word division) and IEEE bit tricks that stay vectorizable on AVX2.
The exact constants below are shared by `vecmath_exp_log` and `vecmath_trig`.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

from llvmlite import ir

# Constants to ~60 digits, as exact rationals so that splitting them into
# hi/lo parts is exact.
PI = Fraction("3.141592653589793238462643383279502884197169399375105820974944592")
LN2 = Fraction("0.6931471805599453094172321214581765680755001343602552541206800095")
LOG2E = Fraction("1.442695040888963407359924681001892137426645954152985934135449407")
LOG10_2 = Fraction("0.3010299956639811952137388947244930267681898814621085413104274611")
LOG10E = Fraction("0.4342944819032518276511289189166050822943970058036665661144537832")


def _f32(v: float) -> float:
    """Round a Python float to the nearest float32 value."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def _round_bits(v: float, bits: int) -> float:
    """Round v to `bits` significant bits (so small-integer multiples are exact)."""
    mant, exp = math.frexp(v)
    return math.ldexp(round(mant * (1 << bits)), exp - bits)


class FloatEmitter:
    """Per-type emission helpers bound to one IRBuilder."""

    def __init__(self, builder: ir.IRBuilder, ty: ir.Type):
        self.b = builder
        self.ty = ty
        # a vector type: the same code on every lane (threads on SIMD lanes, codegen/spmd.py)
        self.width = ty.count if isinstance(ty, ir.VectorType) else None
        elem = ty.element if self.width else ty
        self.d = isinstance(elem, ir.DoubleType)
        self.ity = self.lanes(ir.IntType(64 if self.d else 32))
        self.mant = 52 if self.d else 23
        self.bias = 1023 if self.d else 127
        self.prec = self.mant + 1
        self.sfx = (f"v{self.width}" if self.width else "") + ("f64" if self.d else "f32")

    def lanes(self, t: ir.Type) -> ir.Type:
        """`t`, or a vector of `t` with one element per lane of this emitter's type."""
        return ir.VectorType(t, self.width) if self.width else t

    def like(self, elem: ir.Type) -> FloatEmitter:
        """An emitter for float type `elem` with this one's lanes."""
        return FloatEmitter(self.b, self.lanes(elem))

    def _const(self, t: ir.Type, v) -> ir.Constant:
        return ir.Constant(t, [v] * self.width) if self.width else ir.Constant(t, v)

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
        return self._const(self.ty, self.rnd(v))

    def val(self, a) -> ir.Value:
        return a if isinstance(a, ir.Value) else self.k(a)

    def ik(self, v: int) -> ir.Constant:
        return self._const(self.ity, v)

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
