"""Tile linear algebra: `tile_matmul` (returning and accumulating forms).

`tile_matmul` is a primitive with its own loops and its rule dA = dC Bᵀ, dB = Aᵀ dC: for
float32 and float64 a register-blocked micro-kernel (gemm_kernel.py), for the other float
types loops i, k, j (the innermost along a row of the output and of `b`). Each output
element sums its products in k order. The accumulating form `tile_matmul(a, b, out)`
(alpha = beta = 1) is one primitive, `tile_matmul_acc` (out + a @ b, rule: dout = dC),
which writes out's buffer in place when out is dead afterwards, as in a loop over k.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ...ir.core import Value
from ...types import Scalar, TileType, bfloat16, float32
from .. import arith
from ..registry import builtin, primitive
from . import gemm_kernel
from .args import shared, tile_arg
from .elementwise import elementwise
from .shape import transpose


def _matmul_rule(arg_types):
    a, b = arg_types
    if not (isinstance(a, TileType) and isinstance(b, TileType) and a.ndim == 2 and b.ndim == 2):
        raise TypeError("tile_matmul needs two 2D tiles")
    if a.shape[1] != b.shape[0]:
        raise TypeError(f"tile_matmul: shapes {a.shape} and {b.shape} do not chain (a's columns must equal b's rows)")
    if a.dtype is not b.dtype or not getattr(a.dtype, "is_float", False):
        raise TypeError(f"tile_matmul: both tiles must have one float dtype, got {a.dtype!r} and {b.dtype!r}")
    return [TileType(a.dtype, (a.shape[0], b.shape[1]))]


def _lower_product(cg, a_buf, a, b_buf, b, c_buf, ct, accumulate: bool):
    """c_buf (+)= a @ b: the register-blocked micro-kernel (gemm_kernel.py) for float32 and
    float64 (where `a` and `b` may be views of arrays: codegen/tile_views.py), else loops i, k, j (the
    innermost along a row of c and of b)."""
    at, bt = a.type, b.type
    (m, k_dim), n = at.shape, bt.shape[1]
    if gemm_kernel.supported(at.dtype):
        gemm_kernel.emit_product(cg, a_buf, b_buf, c_buf, m, k_dim, n, at.dtype, accumulate,
                                 a_strides=cg.packed_strides(a), b_row_stride=cg.packed_strides(b)[0])
        return
    if not accumulate:
        cg.tile_fill_zero(c_buf, ct)
    bld = cg.builder
    i64 = ir.IntType(64)
    i, exit_i = cg._loop_header(ir.IntType(32)(0), ir.IntType(32)(m), "mm.i")
    k, exit_k = cg._loop_header(ir.IntType(32)(0), ir.IntType(32)(k_dim), "mm.k")
    aik = cg.tile_get(a_buf, at, bld.add(bld.mul(bld.sext(i, i64), i64(k_dim)), bld.sext(k, i64)))
    j, exit_j = cg._loop_header(ir.IntType(32)(0), ir.IntType(32)(n), "mm.j")
    bkj = cg.tile_get(b_buf, bt, bld.add(bld.mul(bld.sext(k, i64), i64(n)), bld.sext(j, i64)))
    flat = bld.add(bld.mul(bld.sext(i, i64), i64(n)), bld.sext(j, i64))
    ptr = cg.tile_element_ptr(c_buf, ct, flat)
    cur = bld.load(ptr, typ=aik.type)
    bld.store(bld.fadd(cur, bld.fmul(aik, bkj)), ptr)
    for iv, exit_ in ((j, exit_j), (k, exit_k), (i, exit_i)):
        cg._loop_latch(iv, bld.add(iv, ir.IntType(32)(1), flags=("nsw",)))
        bld.position_at_end(exit_)


def _lower_matmul(cg, args, op):
    a_buf, b_buf = args
    ct = op.result.type
    c_buf = cg.tile_buffer(ct, "matmul")
    _lower_product(cg, a_buf, op.operands[0], b_buf, op.operands[1], c_buf, ct, False)
    return c_buf


def _lower_matmul_acc(cg, args, op):
    """c + a @ b, into c's buffer when c is dead after this op (the accumulating form in a
    loop over k then updates its tile in place), else into a copy."""
    a_buf, b_buf, c_in = args
    ct = op.result.type
    if cg.in_place(op.operands[2], op):
        c_buf = c_in
    else:
        c_buf = cg.tile_buffer(ct, "matmul")
        cg.tile_copy(c_buf, c_in, ct)
    _lower_product(cg, a_buf, op.operands[0], b_buf, op.operands[1], c_buf, ct, True)
    return c_buf


def _vjp_matmul(b, args, results, g):
    a, c = args
    return [b.call(MATMUL, [g, transpose(b, c)]), b.call(MATMUL, [transpose(b, a), g])]


def _matmul_acc_rule(arg_types):
    (rt,) = _matmul_rule(arg_types[:2])
    if arg_types[2] != rt:
        raise TypeError(f"tile_matmul: out must be a {rt!r}, got {arg_types[2]!r}")
    return [rt]


def _vjp_matmul_acc(b, args, results, g):
    return [*_vjp_matmul(b, args[:2], results, g), g]


def _product_work(arg_types, result_types):
    (m, k_dim), n = arg_types[0].shape, arg_types[1].shape[1]
    return m * k_dim * n


MATMUL = primitive("tile_matmul", _matmul_rule, _lower_matmul, _vjp_matmul, doc="a @ b for 2D tiles",
                   work=_product_work)
MATMUL_ACC = primitive("tile_matmul_acc", _matmul_acc_rule, _lower_matmul_acc, _vjp_matmul_acc,
                       doc="c + a @ b for 2D tiles (the accumulating tile_matmul)", work=_product_work)


def _precision(product: Value, precision: str) -> Value:
    """Note a requested precision on the op (the CPU cannot honor tf32: lang/kernel.py warns)."""
    if precision != "default":
        product.owner.attrs["precision"] = precision
    return product


def _scaled(ctx, t: Value, factor):
    if factor is None or (not isinstance(factor, Value) and float(factor) == 1.0):
        return t
    return elementwise(ctx, lambda x: arith.binary(ctx, "mul", x, factor), [t], "tile_matmul")


@builtin("tile_matmul", inout=(2,))
def tile_matmul(ctx, args, kwargs):
    """tile_matmul(a, b, alpha=1.0) -> alpha a @ b; tile_matmul(a, b, out, alpha=1.0, beta=1.0):
    out = alpha a @ b + beta out (out updated)."""
    kwargs = dict(kwargs)
    a = tile_arg(ctx, args[0] if args else kwargs.pop("a", None), "tile_matmul's a")
    c = tile_arg(ctx, args[1] if len(args) > 1 else kwargs.pop("b", None), "tile_matmul's b")
    rest = list(args[2:])
    out = rest.pop(0) if rest and isinstance(rest[0], Value) and isinstance(rest[0].type, TileType) \
        else kwargs.pop("out", None)
    alpha = kwargs.pop("alpha", rest.pop(0) if rest else 1.0)
    beta = kwargs.pop("beta", rest.pop(0) if rest else 1.0)
    precision = kwargs.pop("precision", "default")
    if precision not in ("default", "tf32"):
        ctx.error(f"tile_matmul: precision must be the string literal 'default' or 'tf32', got {precision!r}",
                  kind=ValueError)
    for name, t in (("a", a), ("b", c), ("out", out)):
        if t is not None and not isinstance(t.type.dtype, Scalar):
            ctx.error("tile_matmul does not support complex tiles (or other non-scalar elements); "
                      f"'{name}' is a {t.type!r}", kind=TypeError)
    if precision == "tf32" and not (a.type.dtype is float32 and c.type.dtype is float32):
        ctx.error("tile_matmul: precision='tf32' requires float32 tiles for 'a' and 'b'", kind=TypeError)
    # the product is accumulated in out's dtype (the accumulating form) or a's
    acc = (out if out is not None else a).type.dtype
    if acc is bfloat16:
        ctx.error("tile_matmul does not support a bfloat16 'out' tile (the product would be accumulated in "
                  "bfloat16)", kind=TypeError)
    if ctx.enable_backward and bfloat16 in (a.type.dtype, c.type.dtype):
        ctx.error("tile_matmul does not support bfloat16 'a' or 'b' tiles when the backward pass is enabled "
                  "(as Warp: their adjoints would be accumulated in bfloat16); convert them with "
                  "tile_astype, or build the kernel with enable_backward=False", kind=TypeError)
    a, c = (x if x.type.dtype is acc else elementwise(ctx, lambda e: arith.construct(ctx, acc, [e], {}), [x],
                                                      "tile_matmul") for x in (a, c))
    try:
        (rt,) = _matmul_rule([a.type, c.type])
    except TypeError as e:
        ctx.error(str(e), kind=TypeError)
    if out is not None and _is_one(alpha) and _is_one(beta) and isinstance(out, Value) and out.type == rt:
        return [_precision(ctx.b.call(MATMUL_ACC, [a, c, out]), precision)], None  # out += a @ b, one op
    product = _scaled(ctx, _precision(ctx.b.call(MATMUL, [a, c]), precision), alpha)
    if out is None:  # (the returning form: nothing to update; Warp allocates the product shared)
        return [None], shared(ctx, product, "shared")
    tile_arg(ctx, out, "tile_matmul's out")
    if out.type != rt:
        ctx.error(f"tile_matmul: out must be a {rt!r}, got {out.type!r}", kind=TypeError)
    if not isinstance(beta, Value) and float(beta) == 0.0:
        return [product], None  # out is not read (it may hold anything, NaN included)
    if isinstance(beta, Value):  # a run-time beta: out is not read when it is 0 (as Warp)
        zero = arith.zero(ctx, beta.type)
        kept = elementwise(ctx, lambda x: ctx.b.select(arith.compare(ctx, "ne", beta, zero),
                                                       arith.binary(ctx, "mul", x, beta),
                                                       arith.zero(ctx, x.type)), [out], "tile_matmul")
        return [arith.binary(ctx, "add", product, kept)], None
    return [arith.binary(ctx, "add", product, _scaled(ctx, out, beta))], None


def _is_one(x) -> bool:
    return not isinstance(x, Value) and float(x) == 1.0

