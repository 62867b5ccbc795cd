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

This module is the entry point (``SUPPORTED``, ``emit_unary``, ``emit_atan2``,
``emit_pow``); the bodies live by family: ``vecmath_exp_log`` (exp, log, pow
and what is built on them: sinh/cosh/tanh, erf, cbrt), ``vecmath_trig``
(sin ... atan2), both written against ``vecmath_emitter.FloatEmitter``.

Accuracy: max error in ulp against a high-precision reference (float64 for
float32, 80-bit long double / mpmath for float64), measured on millions of
random and edge-case inputs (float32: every 16th bit pattern)::

    function          f32   f64   notes
    sin, cos          1.6   1.5   valid for |x| < 2^48 (f32: reduced in
    tan               1.0   0.9   double) / 1e15 (f64); beyond, results are
                                  finite, sin/cos in [-1, 1], but not
                                  accurate (no Payne-Hanek)
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

Under ``-mllvm -limit-float-precision=N`` (``cpu_compiler_flags``), float32 exp, exp2,
log, log2 and log10 are LLVM's own intrinsics instead (``_limited_helper``), which its
code generator expands into the low-precision sequences that option asks for.

Special values follow C99 Annex F: NaN propagates, +-0 keep their sign for odd
functions, overflow gives +-inf, underflow gives (sub)normals or 0, log of a
negative number is NaN, log(0) = -inf, pow(x, 0) = 1, pow(1, y) = 1, negative
bases with integer exponents, and so on.  Subnormal inputs and outputs are
handled (no flush to zero).
"""

from __future__ import annotations

from llvmlite import ir

from . import vecmath_exp_log, vecmath_trig
from .vecmath_emitter import FloatEmitter

__all__ = ["SUPPORTED", "emit_unary", "emit_atan2", "emit_pow"]

SUPPORTED = (
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt", "erf",
)

_UNARY = {**vecmath_trig.UNARY, **vecmath_exp_log.UNARY}
_BINARY = {**vecmath_trig.BINARY, **vecmath_exp_log.BINARY}


def _check_type(ty: ir.Type) -> None:
    elem = ty.element if isinstance(ty, ir.VectorType) else ty
    if not isinstance(elem, (ir.FloatType, ir.DoubleType)):
        raise TypeError(f"vecmath supports float and double scalars (and vectors of them), got {ty}")


#: What LLVM's -limit-float-precision option makes low-precision (float32 only).
LIMITED = ("exp", "exp2", "log", "log2", "log10")


def _limited_helper(module: ir.Module, name: str, ty: ir.Type) -> ir.Function:
    """name(x) under `-mllvm -limit-float-precision=N` (cpu.limited_float_precision): LLVM's
    own intrinsic, which its code generator expands into the low-precision sequence the
    option asks for, as it does for Warp's C `expf`. The expansion exists for scalars only,
    so the intrinsic sits in a helper kept out of line (`noinline`: the vectorisers cannot
    widen it) and a vector calls it lane by lane."""
    lanes = isinstance(ty, ir.VectorType)
    fname = f"__weft_lp_{name}_{f'v{ty.count}' if lanes else ''}f32"
    fn = module.globals.get(fname)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(ty, [ty]), fname)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    if lanes:
        fn.attributes.add("alwaysinline")
        scalar = _limited_helper(module, name, ty.element)
        out = ir.Constant(ty, ir.Undefined)
        for i in range(ty.count):
            lane = b.call(scalar, [b.extract_element(fn.args[0], ir.Constant(ir.IntType(32), i))])
            out = b.insert_element(out, lane, ir.Constant(ir.IntType(32), i))
        b.ret(out)
    else:
        fn.attributes.add("noinline")
        intrinsic = module.declare_intrinsic(f"llvm.{name}", [ty])
        b.ret(b.call(intrinsic, [fn.args[0]]))
    return fn


def _helper(module: ir.Module, name: str, ty: ir.Type, nargs: int) -> ir.Function:
    """Get or emit the internal alwaysinline helper for (name, type)."""
    lanes = f"v{ty.count}" if isinstance(ty, ir.VectorType) else ""
    elem = ty.element if lanes else ty
    if name in LIMITED and isinstance(elem, ir.FloatType):
        from .cpu import limited_float_precision
        if limited_float_precision():
            return _limited_helper(module, name, ty)
    fname = f"__weft_vm_{name}_{lanes}{'f64' if isinstance(elem, ir.DoubleType) else 'f32'}"
    fn = module.globals.get(fname)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * nargs), fname)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    body = _UNARY[name] if nargs == 1 else _BINARY[name]
    b.ret(body(FloatEmitter(b, ty), *fn.args))
    return fn


def emit_unary(builder: ir.IRBuilder, name: str, x: ir.Value) -> ir.Value:
    """Emit name(x) for a float/double scalar x (or a vector of them: the same function on
    every lane); name must be in SUPPORTED."""
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
