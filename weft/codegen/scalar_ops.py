"""Lowering of scalar ops: constants, arithmetic, comparisons, casts, selects, builtin calls."""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from ..builtins.registry import Primitive
from ..ir.core import constant_value
from ..types import Matrix, Scalar, StructType, TupleType, Vector, bfloat16, float16, float32
from .llvm_types import (
    I16,
    I32,
    I64,
    llvm_type,
)


def has_bfloat16(t) -> bool:
    """Whether a value of type `t` has bfloat16 leaves (which each operation rounds)."""
    if isinstance(t, Scalar):
        return t is bfloat16
    if isinstance(t, (Vector, Matrix)):
        return t.dtype is bfloat16
    if isinstance(t, (StructType, TupleType)):
        return any(has_bfloat16(p) for p in (t.fields.values() if isinstance(t, StructType) else t.elements))
    return False


def safe_divisor(op) -> int | None:
    """The divisor of integer division or modulo `op` if it is a constant that cannot trap
    (not 0, nor -1 for a signed type), else None."""
    if op.attrs["op"] not in ("div", "floordiv", "mod"):
        return None
    d = constant_value(op.operands[1])
    if not isinstance(d, int) or isinstance(d, bool) or d == 0 or d == -1 and op.operands[1].type.is_signed:
        return None
    return d


class ScalarOps:
    """Scalar op lowerings of `KernelCodegen`."""

    def op_const(self, op):
        t = op.result.type
        if t is bfloat16:
            from ..types.scalars import round_to_bfloat16
            return llvm_type(t)(float(round_to_bfloat16(float(op.attrs["value"]))))
        if t is float16:  # (rounded first: a value past float16's range is an infinity)
            with np.errstate(over="ignore"):
                return llvm_type(t)(float(np.float16(op.attrs["value"])))
        return llvm_type(t)(op.attrs["value"])

    # bfloat16: a float32 in registers whose low 16 bits are zero; 16 bits in memory ---------
    def bf16_bits(self, x):
        """The bfloat16 nearest float `x` (ties to even), as its 16 bits; a NaN becomes the
        quiet NaN of its sign (as ml_dtypes converts)."""
        return self.builder.trunc(self.builder.lshr(self._bf16_rounded_word(x), I32(16)), I16)

    def bf16_round(self, x):
        """Float `x` rounded to the nearest bfloat16, as a float."""
        b = self.builder
        return b.bitcast(b.and_(self._bf16_rounded_word(x), I32(0xFFFF0000 - (1 << 32))), self.f32)

    def bf16_from_bits(self, bits):
        """The float of bfloat16 bits `bits` (i16): exact."""
        b = self.builder
        return b.bitcast(b.shl(b.zext(bits, I32), I32(16)), self.f32)

    def _bf16_rounded_word(self, x):
        b = self.builder
        i = b.bitcast(x, I32)
        lsb = b.and_(b.lshr(i, I32(16)), I32(1))  # round half to even: add 0x7FFF + lsb
        rounded = b.add(i, b.add(lsb, I32(0x7FFF)))
        nan = b.or_(b.and_(i, I32(-(1 << 31))), I32(0x7FC00000))
        return b.select(b.fcmp_unordered("uno", x, x), nan, rounded)

    def round_bf16_leaves(self, rep, t):
        """`rep` (a value of type `t`) with its bfloat16 leaves rounded."""
        if isinstance(t, Scalar):
            return self.bf16_round(rep) if t is bfloat16 else rep
        if isinstance(t, (Vector, Matrix)):
            return [self.bf16_round(x) for x in rep] if t.dtype is bfloat16 else rep
        if isinstance(t, (StructType, TupleType)):
            parts = t.fields.values() if isinstance(t, StructType) else t.elements
            return [self.round_bf16_leaves(x, pt) for x, pt in zip(rep, parts)]
        return rep

    def op_binary(self, op):
        a, c = (self.v(x) for x in op.operands)
        t = op.operands[0].type
        kind = op.attrs["op"]
        b = self.builder
        if t.is_float:  # (bfloat16 is rounded after the op, see KernelCodegen.emit)
            if t is float16:
                a, c = b.fpext(a, self.f32), b.fpext(c, self.f32)
            r = self._float_binary(kind, a, c)
            return b.fptrunc(r, self.f16) if t is float16 else r
        if t.is_bool:
            return {"bitand": b.and_, "bitor": b.or_, "bitxor": b.xor}[kind](a, c)
        signed = t.is_signed
        # int32/int64 overflow is undefined as in Warp's C++ (nsw), but int8/int16 arithmetic
        # wraps: C++ computes it in int and truncates, so `int16(200) * int16(200)` is -25536
        flags = ("nsw",) if signed and t.bits >= 32 else ()
        if kind == "add":
            return b.add(a, c, flags=flags)
        if kind == "sub":
            return b.sub(a, c, flags=flags)
        if kind == "mul":
            return b.mul(a, c, flags=flags)
        if kind in ("div", "floordiv", "mod"):
            return self._int_division(op, kind, a, c, signed)
        if kind == "bitand":
            return b.and_(a, c)
        if kind == "bitor":
            return b.or_(a, c)
        if kind == "bitxor":
            return b.xor(a, c)
        if kind in ("shl", "shr"):
            # shifting by the width or more is poison in LLVM: define it (0, or the sign)
            too_far = b.icmp_unsigned(">=", c, c.type(t.bits))
            if kind == "shl":
                return b.select(too_far, a.type(0), b.shl(a, c))
            if not signed:
                return b.select(too_far, a.type(0), b.lshr(a, c))
            return b.ashr(a, b.select(too_far, c.type(t.bits - 1), c))
        raise NotImplementedError(kind)

    def _float_binary(self, kind, a, c):
        b = self.builder
        if kind == "add":
            return b.fadd(a, c, flags=self.fmf)
        if kind == "sub":
            return b.fsub(a, c, flags=self.fmf)
        if kind == "mul":
            return b.fmul(a, c, flags=self.fmf)
        if kind == "div":
            return b.fdiv(a, c, flags=self.fmf)
        if kind == "mod":  # C fmod: the sign of the dividend, as Warp
            return b.frem(a, c)
        if kind == "floordiv":
            return self.call_intrinsic("llvm.floor", [b.fdiv(a, c, flags=self.fmf)])
        raise NotImplementedError(kind)

    def _int_division(self, op, kind, a, c, signed):
        """Integer /, // and %, as C (/ truncates, % keeps the dividend's sign) and // floors.
        A zero divisor records an error instead of trapping (which would kill the process);
        a constant one that cannot trap needs no check (and runs on vectors: spmd.py)."""
        b = self.builder
        if safe_divisor(op) is not None:
            safe = c
        else:
            zero = c.type(0)
            bad = b.icmp_unsigned("==", c, zero)
            if signed:  # INT_MIN / -1 also traps on x86
                int_min = c.type(-(1 << (c.type.width - 1)))
                bad_overflow = b.and_(b.icmp_signed("==", a, int_min), b.icmp_signed("==", c, c.type(-1)))
                safe = b.select(b.or_(bad, bad_overflow), c.type(1), c)
            else:
                safe = b.select(bad, c.type(1), c)
            self._check(op, b.not_(bad), [b.zext(c, I64) if not signed else b.sext(c, I64)], [I64(0)])
        if kind == "div":
            return b.sdiv(a, safe) if signed else b.udiv(a, safe)
        if kind == "mod":
            return b.srem(a, safe) if signed else b.urem(a, safe)
        if not signed:
            return b.udiv(a, safe)
        q = b.sdiv(a, safe)
        r = b.srem(a, safe)
        # floor: subtract one where the remainder is nonzero and has the other sign
        adjust = b.and_(b.icmp_signed("!=", r, r.type(0)),
                        b.icmp_signed("<", b.xor(r, safe), r.type(0)))
        return b.sub(q, b.zext(adjust, q.type))

    def op_unary(self, op):
        (a,) = (self.v(x) for x in op.operands)
        t = op.operands[0].type
        b = self.builder
        kind = op.attrs["op"]
        if kind == "not":
            return b.not_(a) if t.is_bool else b.icmp_unsigned("==", a, a.type(0))
        if kind == "invert":
            return b.not_(a)
        return b.fneg(a) if t.is_float else b.neg(a)

    def op_cmp(self, op):
        a, c = (self.v(x) for x in op.operands)
        t = op.operands[0].type
        pred = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op.attrs["pred"]]
        b = self.builder
        if t.is_float:
            if pred == "!=":
                return b.fcmp_unordered(pred, a, c)  # NaN != NaN is true, as in Python
            return b.fcmp_ordered(pred, a, c)
        if t.is_signed and not t.is_bool:
            return b.icmp_signed(pred, a, c)
        return b.icmp_unsigned(pred, a, c)

    def op_cast(self, op):
        return self.convert(self.v(op.operands[0]), op.operands[0].type, op.result.type)

    def convert(self, x, src: Scalar, dst: Scalar):
        """`x` (of type `src`; in a vector body, a vector of them) as a `dst`."""
        b = self.builder
        to = llvm_type(dst)
        if isinstance(x.type, ir.VectorType):
            to = ir.VectorType(to, x.type.count)
        if src is dst:
            return x
        if src is bfloat16:  # exactly a float32
            return x if dst is float32 else self.convert(x, float32, dst)
        if dst is bfloat16:  # through float32 (float64 rounds twice, as in Warp)
            return self.bf16_round(x if src is float32 else self.convert(x, src, float32))
        if dst.is_bool:
            return b.fcmp_unordered("!=", x, x.type(0)) if src.is_float else b.icmp_unsigned("!=", x, x.type(0))
        # half precision converts only to and from float32 here: LLVM lowers the other
        # conversions to compiler-rt calls (__truncdfhf2, __floatdihf, ...) that the JIT
        # process does not have, which would jump to address 0. (float64 -> float16 thus
        # rounds twice, like Warp's CPU path through float.)
        if src.is_float and src.bits == 16 and dst is not float32:
            return self.convert(b.fpext(x, self.f32), float32, dst)
        if dst.is_float and dst.bits == 16 and src is not float32:
            return self.convert(self.convert(x, src, float32), float32, dst)
        if src.is_float and dst.is_float:
            return b.fpext(x, to) if dst.bits > src.bits else b.fptrunc(x, to)
        if src.is_float:
            return self.float_to_int(x, src, dst)
        if dst.is_float:
            return b.sitofp(x, to) if src.is_signed and not src.is_bool else b.uitofp(x, to)
        if dst.bits == src.bits:
            return x
        if dst.bits < src.bits:
            return b.trunc(x, to)
        return b.sext(x, to) if src.is_signed and not src.is_bool else b.zext(x, to)

    def float_to_int(self, x, src: Scalar, dst: Scalar):
        """C's float-to-integer conversion as Warp's x86-64 code does it (C leaves values out
        of range undefined), never poison: the signed types and uint8 / uint16 through x86's
        signed conversion to 32 bits (64 for int64), the low bits kept, NaN and values out of
        its range giving the lowest integer; uint32 and uint64 through AVX-512's unsigned
        conversion, NaN and values out of range giving all ones. So uint8(-1.0) is 255,
        int32(3e9) is -2147483648 and uint32(-1.0) is 4294967295, as in Warp."""
        b = self.builder
        lanes = x.type.count if isinstance(x.type, ir.VectorType) else None
        signed = dst.is_signed or dst.bits < 32
        bits = 64 if dst.bits == 64 else 32
        to = ir.IntType(bits) if lanes is None else ir.VectorType(ir.IntType(bits), lanes)
        kind = "fptosi" if signed else "fptoui"
        name = f"llvm.{kind}.sat.{f'v{lanes}' if lanes else ''}i{bits}.f{src.bits}"  # (halves come as float32)
        fn = self.module.globals.get(name) or ir.Function(self.module, ir.FunctionType(to, [x.type]), name)
        lo, hi = (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1)) if signed else (-1.0, 2.0 ** bits)
        low_ok = b.fcmp_ordered(">=" if signed else ">", x, x.type(lo))
        in_range = b.and_(low_ok, b.fcmp_ordered("<", x, x.type(hi)))
        r = b.select(in_range, b.call(fn, [x]), to(-(1 << (bits - 1)) if signed else -1))
        if dst.bits == bits:
            return r
        return b.trunc(r, llvm_type(dst) if lanes is None else ir.VectorType(llvm_type(dst), lanes))

    def op_select(self, op):
        c, a, d = op.operands
        t = a.type
        cond = self.v(c)
        picked = [self.builder.select(cond, x, y) for x, y in zip(self.leaves(self.v(a), t), self.leaves(self.v(d), t))]
        return self.from_leaves(t, iter(picked))

    def op_call(self, op):
        prim: Primitive = op.attrs["fn"]
        args = [self.v(x) for x in op.operands]
        return prim.lower(self, args, op)

