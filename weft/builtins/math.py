"""Scalar math: each primitive with its type rule, LLVM lowering and derivative rule.

Transcendental functions lower to branch-free polynomial code (`codegen/vecmath.py`) so
that loops calling them vectorise; the rest lower to LLVM intrinsics. Derivative rules
(`vjp`) take the IR builder, the primal arguments and results and the result's adjoint,
and return one adjoint per argument (None: no gradient flows there).
The user-facing builtins at the bottom also accept vectors and matrices componentwise.
"""

from __future__ import annotations

import math as pymath

import numpy as np
from llvmlite import ir

from ..ir.core import Value, constant_value
from ..types import Matrix, Scalar, Vector, bool_, float16, float32, int32
from .registry import builtin, primitive

PRIM = {}


# Type rules ---------------------------------------------------------------------------------
def _float_args(n):
    def rule(ts):
        if len(ts) != n or not all(isinstance(t, Scalar) and t.is_float for t in ts) \
                or any(t is not ts[0] for t in ts):
            raise TypeError(f"expects {n} float argument(s) of one type")
        return [ts[0]]
    return rule


def _numeric_args(n):
    def rule(ts):
        if len(ts) != n or not all(isinstance(t, Scalar) and not t.is_bool for t in ts) \
                or any(t is not ts[0] for t in ts):
            raise TypeError(f"expects {n} numeric argument(s) of one type")
        return [ts[0]]
    return rule


def _int_to_int32(ts):
    if len(ts) != 1 or not (isinstance(ts[0], Scalar) and ts[0].is_int and not ts[0].is_bool):
        raise TypeError("expects one integer argument")
    return [int32]


def _float_predicate(ts):
    _float_args(1)(ts)
    return [bool_]


# Lowering helpers ---------------------------------------------------------------------------
def _via_f32(emit):
    """Lower a float16 operation by computing in float32 (as Warp does for half). bfloat16
    is a float32 in registers already (rounded after the call: KernelCodegen.emit)."""
    def lower(cg, args, op):
        half = op.operands[0].type is float16
        if half:
            args = [cg.builder.fpext(a, cg.f32) for a in args]
        r = emit(cg, *args)
        return cg.builder.fptrunc(r, cg.f16) if half else r
    return lower


def _vecmath(name):
    def emit(cg, x):
        from ..codegen import vecmath
        if name in ("asin", "acos"):
            x = _clamp_unit(cg.builder, x)
        return vecmath.emit_unary(cg.builder, name, x)
    return _via_f32(emit)


def _clamp_unit(bld, x):
    """x clamped to [-1, 1], as Warp's asin and acos do, so that a dot product of unit vectors
    rounded just past 1 gives acos 0, not NaN. As Warp's `min(max(x, -1), 1)`, whose min and
    max return the number of a NaN and a number, NaN becomes -1 (acos(nan) = pi)."""
    one, minus_one = x.type(1.0), x.type(-1.0)
    x = bld.select(bld.fcmp_ordered("ord", x, x), x, minus_one)
    x = bld.select(bld.fcmp_ordered(">", x, one), one, x)
    return bld.select(bld.fcmp_ordered("<", x, minus_one), minus_one, x)


def _intrinsic(name):
    return lambda cg, args, op: cg.call_intrinsic(name, args)


# Derivative rules: g is the adjoint of the result -------------------------------------------
def _c(b, like: Value, value: float) -> Value:
    return b.const(value, like.type)


def _call(b, name, *args):
    return b.call(PRIM[name], list(args))


def _sqrt_rule(b, args, results, g):
    (y,) = results
    return [b.div(g, b.mul(_c(b, y, 2.0), y))]


def _one_minus_sq(b, x):
    return b.sub(_c(b, x, 1.0), b.mul(x, x))


def _unit_domain(b, x, adj):
    """asin and acos clamp their argument to [-1, 1]: no gradient flows from beyond it, nor
    from its ends, where the derivative is infinite (Warp's adj_asin/adj_acos give 0 unless
    1 - x^2 > 0, so acos of a clamped dot product stays differentiable)."""
    return b.select(b.cmp("gt", _one_minus_sq(b, x), _c(b, x, 0.0)), adj, _c(b, x, 0.0))


_UNARY_RULES = {
    "sin": lambda b, x, y, g: b.mul(g, _call(b, "cos", x)),
    "cos": lambda b, x, y, g: b.neg(b.mul(g, _call(b, "sin", x))),
    "tan": lambda b, x, y, g: b.mul(g, b.add(_c(b, x, 1.0), b.mul(y, y))),
    "asin": lambda b, x, y, g: _unit_domain(b, x, b.div(g, _call(b, "sqrt", _one_minus_sq(b, x)))),
    "acos": lambda b, x, y, g: _unit_domain(b, x, b.neg(b.div(g, _call(b, "sqrt", _one_minus_sq(b, x))))),
    "atan": lambda b, x, y, g: b.div(g, b.add(_c(b, x, 1.0), b.mul(x, x))),
    "sinh": lambda b, x, y, g: b.mul(g, _call(b, "cosh", x)),
    "cosh": lambda b, x, y, g: b.mul(g, _call(b, "sinh", x)),
    "tanh": lambda b, x, y, g: b.mul(g, b.sub(_c(b, x, 1.0), b.mul(y, y))),
    "exp": lambda b, x, y, g: b.mul(g, y),
    "exp2": lambda b, x, y, g: b.mul(g, b.mul(y, _c(b, x, pymath.log(2.0)))),
    "log": lambda b, x, y, g: b.div(g, x),
    "log2": lambda b, x, y, g: b.div(g, b.mul(x, _c(b, x, pymath.log(2.0)))),
    "log10": lambda b, x, y, g: b.div(g, b.mul(x, _c(b, x, pymath.log(10.0)))),
    "cbrt": lambda b, x, y, g: b.div(g, b.mul(_c(b, x, 3.0), b.mul(y, y))),
    "erf": lambda b, x, y, g: b.mul(g, b.mul(_c(b, x, 2.0 / pymath.sqrt(pymath.pi)),
                                             _call(b, "exp", b.neg(b.mul(x, x))))),
    # piecewise constant: zero almost everywhere (as Warp)
    "floor": lambda b, x, y, g: None, "ceil": lambda b, x, y, g: None,
    "round": lambda b, x, y, g: None, "rint": lambda b, x, y, g: None,
    "trunc": lambda b, x, y, g: None,
}

_POLY = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "exp2",
         "log", "log2", "log10", "cbrt", "erf")
_INTRINSICS = {"floor": "llvm.floor", "ceil": "llvm.ceil", "trunc": "llvm.trunc",
               "round": "llvm.round", "rint": "llvm.rint"}


def _unary_vjp(rule):
    def vjp(b, args, results, g):
        return [rule(b, args[0], results[0], g)]
    return vjp


for _name in _POLY:
    PRIM[_name] = primitive(_name, _float_args(1), _vecmath(_name), _unary_vjp(_UNARY_RULES[_name]))
for _name, _intr in _INTRINSICS.items():
    PRIM[_name] = primitive(_name, _float_args(1), _via_f32(lambda cg, x, i=_intr: cg.call_intrinsic(i, [x])),
                            _unary_vjp(_UNARY_RULES[_name]))
PRIM["sqrt"] = primitive("sqrt", _float_args(1),
                         _via_f32(lambda cg, x: cg.call_intrinsic("llvm.sqrt", [x])), _sqrt_rule)


def _lower_abs(cg, args, op):
    (x,) = args
    t = op.operands[0].type
    if t.is_float:
        return cg.call_intrinsic("llvm.fabs", [x])
    if not t.is_signed:
        return x
    bld = cg.builder
    return bld.select(bld.icmp_signed("<", x, x.type(0)), bld.neg(x), x)


def _abs_vjp(b, args, results, g):
    (x,) = args
    if not x.type.is_float:
        return [None]
    zero = _c(b, x, 0.0)
    return [b.select(b.cmp("lt", x, zero), b.neg(g), g)]  # +1 at 0, as Warp's adj_abs


def _lower_sign(cg, args, op):
    """-1 where x < 0, else 1 (so sign(0) = 1, as in Warp)."""
    (x,) = args
    t = op.operands[0].type
    bld = cg.builder
    neg = bld.fcmp_ordered("<", x, x.type(0)) if t.is_float else (
        bld.icmp_signed("<", x, x.type(0)) if t.is_signed else cg.i1(0))
    return bld.select(neg, x.type(-1 if t.is_signed else 1), x.type(1))


def float_min_max(bld, which: str, a, c):
    """Warp's host fmin / fmax of floats a and c: (a <= c) ? a : (c == c ? c : a), so a NaN
    operand is dropped and of equal values (-0.0, 0.0) the first is kept. (Not llvm.minnum /
    maxnum: LLVM 20's loop vectoriser fails an assertion on some of their reductions, which
    ends the process.)"""
    keep_a = bld.fcmp_ordered("<=" if which == "min" else ">=", a, c)
    return bld.select(keep_a, a, bld.select(bld.fcmp_ordered("==", c, c), c, a))


def _minmax(which):
    def lower(cg, args, op):
        a, c = args
        t = op.operands[0].type
        bld = cg.builder
        if t.is_float:
            return float_min_max(bld, which, a, c)
        cmp = bld.icmp_signed if t.is_signed else bld.icmp_unsigned
        return bld.select(cmp("<" if which == "min" else ">", a, c), a, c)

    def vjp(b, args, results, g):
        # the adjoint goes to the operand the result came from: a NaN operand is dropped, so
        # where c is NaN (and a is not) the result is a, where a is NaN it is c.
        # On a tie the second operand takes it, as in Warp (so clamp(x, lo, hi) =
        # min(max(lo, x), hi) differentiates x at lo and hi at hi, and relu max(x, 0.0) gives
        # x no gradient at 0)
        a, c = args
        if not a.type.is_float:
            return [None, None]
        zero = _c(b, a, 0.0)
        only_c_nan = b.binary("bitand", b.cmp("ne", c, c), b.cmp("eq", a, a))
        first = b.binary("bitor", b.cmp("lt" if which == "min" else "gt", a, c), only_c_nan)
        return [b.select(first, g, zero), b.select(first, zero, g)]
    return lower, vjp


def _lower_signbit(cg, args, op):
    """The sign bit of a float (set for -0.0 and a negative NaN)."""
    from llvmlite import ir as llir
    (x,) = args
    lanes = x.type.count if isinstance(x.type, llir.VectorType) else None  # (SPMD: a lane vector)
    elem = x.type.element if lanes else x.type
    ity = llir.IntType({llir.HalfType: 16, llir.FloatType: 32, llir.DoubleType: 64}[type(elem)])
    ity = llir.VectorType(ity, lanes) if lanes else ity
    return cg.builder.icmp_signed("<", cg.builder.bitcast(x, ity), llir.Constant(ity, None))


def _lower_bit_count(cg, args, op):
    """The set bits of the integer's own width (two's complement for signed), as an int32."""
    (x,) = args
    n = cg.call_intrinsic("llvm.ctpop", [x])
    bits = op.operands[0].type.bits
    if bits == 32:
        return n
    i32 = ir.IntType(32)
    if isinstance(x.type, ir.VectorType):  # (lanes of a vectorised kernel)
        i32 = ir.VectorType(i32, x.type.count)
    return cg.builder.trunc(n, i32) if bits > 32 else cg.builder.zext(n, i32)


def _lower_pow(cg, args, op):
    """pow(x, y); with a constant y of 2, 1, 0, -1 or 0.5, the exact shortcut a C compiler
    takes for `pow` (x*x, x, 1, 1/x, and sqrt with pow's cases of -0 and -inf): the same
    correctly rounded value, several times faster (`(a - b) ** 2.0` is common)."""
    from ..codegen import vecmath
    exponent = constant_value(op.operands[1])

    def emit(cg, x, y):
        b = cg.builder
        if exponent == 2.0:
            return b.fmul(x, x)
        if exponent == 1.0:
            return x
        if exponent == 0.0:
            return x.type(1.0)  # (a vector type splats the constant over its lanes)
        if exponent == -1.0:
            return b.fdiv(x.type(1.0), x)
        if exponent == 0.5:  # pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf, where sqrt gives -0 and NaN
            root = cg.call_intrinsic("llvm.fabs", [cg.call_intrinsic("llvm.sqrt", [x])])
            return b.select(b.fcmp_ordered("==", x, x.type(float("-inf"))), x.type(float("inf")), root)
        return vecmath.emit_pow(b, x, y)
    return _via_f32(emit)(cg, args, op)


def _pow_vjp(b, args, results, g):
    x, y = args
    (r,) = results
    one = _c(b, x, 1.0)
    dx = b.mul(g, b.mul(y, _call(b, "pow", x, b.sub(y, one))))
    # d/dy x^y = log(x) x^y; only defined for x > 0, and zero where x^y is zero
    zero = _c(b, x, 0.0)
    logx = _call(b, "log", b.select(b.cmp("gt", x, zero), x, one))
    dy = b.mul(g, b.mul(logx, r))
    return [dx, dy]


def _lower_atan2(cg, args, op):
    from ..codegen import vecmath
    return _via_f32(lambda cg, y, x: vecmath.emit_atan2(cg.builder, y, x))(cg, args, op)


def _atan2_vjp(b, args, results, g):
    y, x = args
    d = b.add(b.mul(x, x), b.mul(y, y))
    # at the origin (d = 0) the angle has no derivative: 0 there, as Warp's adj_atan2
    zero = _c(b, x, 0.0)
    away = b.cmp("gt", d, zero)
    return [b.select(away, b.div(b.mul(g, x), d), zero), b.select(away, b.neg(b.div(b.mul(g, y), d)), zero)]


def _lower_fpclass(which):
    def lower(cg, args, op):
        (x,) = args
        bld = cg.builder
        if which == "isnan":
            return bld.fcmp_unordered("uno", x, x)
        inf = cg.call_intrinsic("llvm.fabs", [x])
        is_inf = bld.fcmp_ordered("==", inf, x.type(float("inf")))
        if which == "isinf":
            return is_inf
        return bld.fcmp_ordered("<", inf, x.type(float("inf")))  # isfinite: ordered and not inf
    return lower


PRIM["abs"] = primitive("abs", _numeric_args(1), _lower_abs, _abs_vjp)
PRIM["sign"] = primitive("sign", _numeric_args(1), _lower_sign, lambda b, a, r, g: [None])
for _which in ("min", "max"):
    _lower, _vjp = _minmax(_which)
    PRIM[_which] = primitive(_which, _numeric_args(2), _lower, _vjp)
PRIM["signbit"] = primitive("signbit", _float_predicate, _lower_signbit, lambda b, a, r, g: [None])
PRIM["bit_count"] = primitive("bit_count", _int_to_int32, _lower_bit_count)  # not differentiable
PRIM["pow"] = primitive("pow", _float_args(2), _lower_pow, _pow_vjp)
# a * b + c rounded once (Warp's matrix products and ddot accumulate so: its muladd is fmaf)
PRIM["fma"] = primitive("fma", _float_args(3), lambda cg, args, op: cg.call_intrinsic("llvm.fma", list(args)),
                        lambda b, args, results, g: [b.mul(g, args[1]), b.mul(g, args[0]), g])
PRIM["atan2"] = primitive("atan2", _float_args(2), _lower_atan2, _atan2_vjp)
for _which in ("isnan", "isinf", "isfinite"):
    PRIM[_which] = primitive(_which, _float_predicate, _lower_fpclass(_which),
                             lambda b, a, r, g: [None])


# User-facing builtins ------------------------------------------------------------------------
def _float_operand(ctx, x, name):
    if not isinstance(x, Value):
        if isinstance(x, (bool, np.bool_)):
            ctx.error(f"{name}() needs a number, got {x!r}")
        return ctx.coerce(float(x), float32) if isinstance(x, (int, float)) else ctx.materialize(x)
    return x


def _apply(ctx, prim, args, name):
    """Apply a scalar primitive; vectors and matrices componentwise (all of one shape)."""
    shape = next((a.type for a in args if isinstance(a, Value) and isinstance(a.type, (Vector, Matrix))), None)
    if shape is not None:
        comps = []
        per_arg = []
        for a in args:
            if isinstance(a, Value) and a.type is shape:
                per_arg.append(ctx.b.components(a))
            elif isinstance(a, Value) and isinstance(a.type, (Vector, Matrix)):
                ctx.error(f"{name}() arguments have different shapes: {shape!r} and {a.type!r}")
            else:
                s = ctx.coerce(a, shape.dtype, what=f"{name}() argument")
                per_arg.append([s] * shape.num_components)
        for parts in zip(*per_arg):
            comps.append(_apply(ctx, prim, list(parts), name))
        return ctx.b.construct(shape, comps)
    from .arith import unify
    if len(args) == 2:
        args = list(unify(ctx, *args))
    types = [a.type for a in args]
    try:
        prim.result_types(types)
    except TypeError as e:
        ctx.error(f"{name}(): {e}, got ({', '.join(map(repr, types))})")
    return ctx.b.call(prim, args)


def _register_unary(name, float_only=True):
    prim = PRIM[name]

    @builtin(name)
    def expand(ctx, args, kwargs, prim=prim, name=name):
        if len(args) != 1 or kwargs:
            ctx.error(f"{name}() takes one argument")
        x = _float_operand(ctx, args[0], name) if float_only else args[0]
        if not isinstance(x, Value):
            x = ctx.materialize(x)
        return _apply(ctx, prim, [x], name)
    return expand


for _name in (*_POLY, *_INTRINSICS, "sqrt"):
    _register_unary(_name)


# isnan/isinf of a composite: whether any component is; isfinite: whether all are.
_FPCLASS_REDUCE = {"isnan": "bitor", "isinf": "bitor", "isfinite": "bitand"}


def _register_fpclass(name):
    prim = PRIM[name]

    @builtin(name)
    def expand(ctx, args, kwargs, prim=prim, name=name):
        if len(args) != 1 or kwargs:
            ctx.error(f"{name}() takes one argument")
        x = _float_operand(ctx, args[0], name)
        if not isinstance(x, Value):
            x = ctx.materialize(x)
        if not isinstance(x.type, (Vector, Matrix)):
            return _apply(ctx, prim, [x], name)
        flags = [_apply(ctx, prim, [c], name) for c in ctx.b.components(x)]
        acc = flags[0]
        for f in flags[1:]:
            acc = ctx.b.binary(_FPCLASS_REDUCE[name], acc, f)
        return acc
    return expand


for _name in _FPCLASS_REDUCE:
    _register_fpclass(_name)
_register_unary("abs", float_only=False)
_register_unary("sign", float_only=False)


@builtin("bit_count")
def bit_count(ctx, args, kwargs):
    """The number of set bits of a scalar integer in its own width, as an int32 (a signed
    value counts its two's-complement bits, the sign bit included; a Python int is an
    int32). Not differentiable."""
    if len(args) != 1 or kwargs:
        ctx.error("bit_count() takes one argument")
    (x,) = args
    if not isinstance(x, Value):
        if type(x) is not int and not isinstance(x, np.integer):
            ctx.error(f"Couldn't find function overload for 'bit_count' that matched inputs with types "
                      f"{type(x).__name__}")
        x = ctx.materialize(x)
    t = x.type
    if not (isinstance(t, Scalar) and t.is_int and not t.is_bool):
        ctx.error(f"Couldn't find function overload for 'bit_count' that matched inputs with types {t!r}")
    return ctx.b.call(PRIM["bit_count"], [x])


def _register_binary(name, float_only):
    prim = PRIM[name]

    @builtin(name)
    def expand(ctx, args, kwargs, prim=prim, name=name):
        if name in ("min", "max") and len(args) == 1 and not kwargs:
            return _reduce_vector(ctx, prim, args[0], name)
        if len(args) != 2 or kwargs:
            ctx.error(f"{name}() takes two arguments")
        a, c = args
        if float_only:
            a = _float_operand(ctx, a, name) if not isinstance(c, Value) else a
            c = _float_operand(ctx, c, name) if not isinstance(a, Value) else c
        return _apply(ctx, prim, [a, c], name)
    return expand


def _reduce_vector(ctx, prim, v, name):
    """min(v) / max(v): the smallest / largest component, a NaN ignored unless all are (the
    adjoint goes to the component picked: the first of equal ones)."""
    if not (isinstance(v, Value) and isinstance(v.type, Vector)):
        ctx.error(f"{name}() of one argument needs a vector, got {getattr(v, 'type', v)!r}")
    comps = ctx.b.components(v)
    acc = comps[0]
    for c in comps[1:]:
        acc = ctx.b.call(prim, [c, acc])  # the running result second: it wins ties
    return acc


_register_binary("min", False)
_register_binary("max", False)
_register_binary("pow", True)
_register_binary("atan2", True)
