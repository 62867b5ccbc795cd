"""Tile factorisation and triangular solves: `tile_cholesky`, `tile_cholesky_solve`,
`tile_lower_solve`, `tile_upper_solve`, and their `_inplace` forms.

Two kinds of primitive, each with its own loops (one thread runs a block on the CPU):

- Cholesky (Cholesky–Crout, column by column, in the result's buffer). Only the triangle
  that `fill_mode` names is read; the other comes out zero. `fill_mode="upper"` runs the
  same loops on the transposed indexing (U = Lᵀ of Aᵀ's lower triangle).
- Triangular solve of `T z = y` (y of shape (M,) or (M, NRHS)), where T is the matrix
  operand `M` or its transpose (`transposed`), solved top-down (T lower) or bottom-up (T
  upper, `reverse`). `tile_cholesky_solve` is two of them (L then Lᵀ, or Uᵀ then U).

Rules (the `_inplace` forms are the same primitives: a tile is a value, so "in place" is the
variable taking the result. Warp documents them as not differentiable, and its adjoints
leave the right-hand side's gradient unchanged; weft's are those of the forms that return a
new tile):
- z = T⁻¹ y: ȳ = T⁻ᵀ z̄ (the solve with the transpose), T̄ = -ȳ zᵀ restricted to the
  triangle that is read (the other triangle has no influence, so its gradient is zero).
- L = chol(A), gradient with respect to the triangle of A that is read:
  Φ(L⁻ᵀ (P + Pᵀ) L⁻¹) with P = Φ(Lᵀ L̄), where Φ keeps the lower triangle and halves the
  diagonal; the upper form is the lower one on the transposes.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ...ir.core import Value
from ...types import TileType, float32, float64
from ..registry import builtin, primitive
from .args import no_more, tile_arg
from .core import TILE_GET, add, map_tiles
from .linalg import MATMUL
from .shape import transpose

I32 = ir.IntType(32)
_FLOATS = (float32, float64)


# Type rules ----------------------------------------------------------------------------------
def _square_rule(what):
    def rule(arg_types):
        (a,) = arg_types
        _check_square(a, what, "A")
        return [a]
    return rule


def _check_square(a, what, name):
    if not isinstance(a, TileType):
        raise TypeError(f"{what}: '{name}' must be a tile, got {a!r}")
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{what}: '{name}' must be a square 2D tile, got shape {a.shape}")
    if a.dtype not in _FLOATS:
        raise TypeError(f"{what}: '{name}' must be a tile of float32 or float64, got {a.dtype!r}")


def _solve_rule(what):
    def rule(arg_types):
        m, y = arg_types
        _check_square(m, what, "L")
        if not isinstance(y, TileType):
            raise TypeError(f"{what}: 'y' must be a tile, got {y!r}")
        if y.ndim not in (1, 2):
            raise TypeError(f"{what}: 'y' must be a 1D or 2D tile, got shape {y.shape}")
        if y.dtype is not m.dtype:
            raise TypeError(f"{what}: both tiles must have one dtype, got {m.dtype!r} and {y.dtype!r}")
        if y.shape[0] != m.shape[0]:
            raise ValueError(f"{what}: 'y' has {y.shape[0]} rows but the matrix has {m.shape[0]}")
        return [y]
    return rule


# Lowerings ------------------------------------------------------------------------------------
def _counted(cg, start, stop, name, body):
    """for i in [start, stop): body(i) (i32 values)."""
    i, exit_ = cg._loop_header(start, stop, name)
    body(i)
    cg._loop_latch(i, cg.builder.add(i, I32(1), flags=("nsw",)))
    cg.builder.position_at_end(exit_)


def _lower_cholesky(upper: bool):
    def lower(cg, args, op):
        (a_buf,) = args
        t = op.operands[0].type
        n = t.shape[0]
        bld = cg.builder
        out = a_buf if cg.in_place(op.operands[0], op) else cg.tile_buffer(t, "chol")
        cg.tile_copy(out, a_buf, t)
        ft = _ftype(t.dtype)
        acc = cg._entry_alloca(ft, "chol.acc")

        def at(i, j):  # the logical lower factor's (i, j) in the buffer
            r, c = (j, i) if upper else (i, j)
            return bld.add(bld.mul(r, I32(n)), c)

        def get(i, j):
            return cg.tile_get(out, t, at(i, j))

        def zero_above(i):
            _counted(cg, bld.add(i, I32(1)), I32(n), "chol.z",
                     lambda j: cg.tile_set(out, t, at(i, j), ft(0.0)))

        _counted(cg, I32(0), I32(n), "chol.zi", zero_above)

        def column(j):
            bld.store(get(j, j), acc)
            _counted(cg, I32(0), j, "chol.dk", lambda k: bld.store(
                bld.fsub(bld.load(acc, typ=ft), bld.fmul(get(j, k), get(j, k))), acc))
            sqrt = cg.module.declare_intrinsic("llvm.sqrt", [ft])
            d = bld.call(sqrt, [bld.load(acc, typ=ft)])
            cg.tile_set(out, t, at(j, j), d)

            def row(i):
                bld.store(get(i, j), acc)
                _counted(cg, I32(0), j, "chol.k", lambda k: bld.store(
                    bld.fsub(bld.load(acc, typ=ft), bld.fmul(get(i, k), get(j, k))), acc))
                cg.tile_set(out, t, at(i, j), bld.fdiv(bld.load(acc, typ=ft), d))
            _counted(cg, bld.add(j, I32(1)), I32(n), "chol.i", row)

        _counted(cg, I32(0), I32(n), "chol.j", column)
        return out
    return lower


def _ftype(dtype):
    return ir.DoubleType() if dtype is float64 else ir.FloatType()


def _lower_solve(reverse: bool, transposed: bool):
    """T z = y, T = M (or Mᵀ when `transposed`), rows in order (T lower) or in reverse
    order (T upper): z[i] = (y[i] - Σ_{k before i} T[i, k] z[k]) / T[i, i]."""
    def lower(cg, args, op):
        m_buf, y_buf = args
        mt, yt = op.operands[0].type, op.operands[1].type
        n = mt.shape[0]
        nrhs = yt.shape[1] if yt.ndim == 2 else 1
        bld = cg.builder
        out = y_buf if cg.in_place(op.operands[1], op) else cg.tile_buffer(yt, "solve")
        cg.tile_copy(out, y_buf, yt)
        ft = _ftype(mt.dtype)
        acc = cg._entry_alloca(ft, "solve.acc")

        def row_of(t):
            return bld.sub(I32(n - 1), t) if reverse else t

        def tm(i, k):
            r, c = (k, i) if transposed else (i, k)
            return cg.tile_get(m_buf, mt, bld.add(bld.mul(r, I32(n)), c))

        def zi(i, c):
            return bld.add(bld.mul(i, I32(nrhs)), c)

        def step(t):
            i = row_of(t)

            def rhs(c):
                bld.store(cg.tile_get(out, yt, zi(i, c)), acc)

                def term(s):
                    k = row_of(s)
                    bld.store(bld.fsub(bld.load(acc, typ=ft), bld.fmul(tm(i, k), cg.tile_get(out, yt, zi(k, c)))), acc)
                _counted(cg, I32(0), t, "solve.k", term)
                cg.tile_set(out, yt, zi(i, c), bld.fdiv(bld.load(acc, typ=ft), tm(i, i)))
            _counted(cg, I32(0), I32(nrhs), "solve.c", rhs)

        _counted(cg, I32(0), I32(n), "solve.i", step)
        return out
    return lower


# Rules -------------------------------------------------------------------------------------------
def _triangle(b, src, lower: bool, transposed: bool, scale, halve_diag=False):
    """The tile whose (i, j) is scale * src[i, j] (src[j, i] when `transposed`) inside the
    triangle (lower: j <= i, upper: j >= i, taken after the transposition) and 0 outside;
    `halve_diag` halves the diagonal."""
    n = src.type.shape[0]
    dtype = src.type.dtype

    def body(coords, elems, states):
        i, j = coords
        r, c = (j, i) if transposed else (i, j)
        inside = b.cmp("le" if lower else "ge", c, r)
        x = b.mul(b.call(TILE_GET, [src, r, c]), b.const(scale, dtype))
        if halve_diag:
            x = b.select(b.cmp("eq", i, j), b.mul(x, b.const(0.5, dtype)), x)
        return [b.select(inside, x, b.const(0.0, dtype))], [], []
    (t,) = map_tiles(b, (n, n), [], body)
    return t


def _outer(b, u, v):
    """u vᵀ for 1D tiles, u @ vᵀ for 2D ones."""
    if u.type.ndim == 2:
        return b.call(MATMUL, [u, transpose(b, v)])
    n = u.type.shape[0]

    def body(coords, elems, states):
        i, j = coords
        return [b.mul(b.call(TILE_GET, [u, i]), b.call(TILE_GET, [v, j]))], [], []
    (t,) = map_tiles(b, (n, n), [], body)
    return t


def _vjp_solve(reverse: bool, transposed: bool):
    def vjp(b, args, results, g):
        m, y = args
        (z,) = results if isinstance(results, (list, tuple)) else (results,)
        gy = b.call(SOLVES[(not reverse, not transposed)], [m, g])
        # T̄ = -ȳ zᵀ on T's triangle (lower when solved top-down); M̄ = T̄ or T̄ᵀ.
        gm = _triangle(b, _outer(b, gy, z), lower=not reverse, transposed=False, scale=-1.0)
        return [transpose(b, gm) if transposed else gm, gy]
    return vjp


def _cholesky_lower_grad(b, lo, g):
    """The gradient with respect to A's lower triangle of L = chol(A), from L̄ = g."""
    p = _triangle(b, b.call(MATMUL, [transpose(b, lo), g]), True, False, 1.0, halve_diag=True)
    s = add(b, p, transpose(b, p))
    lt_solve = SOLVES[(True, True)]  # Lᵀ x = s (Lᵀ: upper, read through L's transpose)
    x = b.call(lt_solve, [lo, s])
    bm = b.call(lt_solve, [lo, transpose(b, x)])
    return _triangle(b, bm, True, False, 1.0, halve_diag=True)


def _vjp_cholesky(upper: bool):
    def vjp(b, args, results, g):
        (f,) = results if isinstance(results, (list, tuple)) else (results,)
        if not upper:
            return [_cholesky_lower_grad(b, f, g)]
        return [transpose(b, _cholesky_lower_grad(b, transpose(b, f), transpose(b, g)))]
    return vjp


# Primitives ----------------------------------------------------------------------------------------
def _solve_name(reverse, transposed):
    return f"tile_solve_{'upper' if reverse else 'lower'}{'_transposed' if transposed else ''}"


# Differentiable solves, one per (reverse, transposed).
SOLVES = {(r, t): primitive(_solve_name(r, t), _solve_rule("tile triangular solve"), _lower_solve(r, t),
                            _vjp_solve(r, t), doc="T z = y for a triangular T (a tile or its transpose)")
          for r in (False, True) for t in (False, True)}
CHOLESKY = {u: primitive(f"tile_cholesky_{'upper' if u else 'lower'}", _square_rule("tile_cholesky"),
                         _lower_cholesky(u), _vjp_cholesky(u), doc="the Cholesky factor of a tile")
            for u in (False, True)}

# Builtins ----------------------------------------------------------------------------------------
def _args(ctx, name, args, kwargs, names):
    """The arguments by name (positional or keyword), checking for extra ones."""
    kwargs = dict(kwargs)
    if len(args) > len(names):
        ctx.error(f"{name}() takes at most {len(names)} arguments, got {len(args)}", kind=TypeError)
    out = list(args) + [kwargs.pop(n, None) for n in names[len(args):]]
    no_more(ctx, name, kwargs)
    return out


def _fill_mode(ctx, name, mode) -> bool:
    """True for "upper"."""
    if mode is None:
        return False
    if isinstance(mode, Value) or mode not in ("lower", "upper"):
        ctx.error(f'{name}(): fill_mode must be the compile-time constant "lower" or "upper", got {mode!r}',
                  kind=ValueError)
    return mode == "upper"


def _call(ctx, prim, operands, name):
    try:
        prim.result_types([x.type for x in operands])
    except (TypeError, ValueError) as e:
        ctx.error(str(e).replace("tile triangular solve", name), kind=type(e))
    return ctx.b.call(prim, operands)


@builtin("tile_cholesky")
def tile_cholesky(ctx, args, kwargs):
    """tile_cholesky(A, fill_mode="lower"): the Cholesky factor L (L Lᵀ = A) or U (Uᵀ U = A)
    of a symmetric positive-definite tile, reading only that triangle of A."""
    a, mode = _args(ctx, "tile_cholesky", args, kwargs, ("A", "fill_mode"))
    tile_arg(ctx, a, "tile_cholesky's A")
    return _call(ctx, CHOLESKY[_fill_mode(ctx, "tile_cholesky", mode)], [a], "tile_cholesky")


@builtin("tile_cholesky_inplace", inout=(0,))
def tile_cholesky_inplace(ctx, args, kwargs):
    """tile_cholesky_inplace(A, fill_mode="lower"): A replaced by its Cholesky factor (the
    other triangle zeroed)."""
    a, mode = _args(ctx, "tile_cholesky_inplace", args, kwargs, ("A", "fill_mode"))
    tile_arg(ctx, a, "tile_cholesky_inplace's A")
    upper = _fill_mode(ctx, "tile_cholesky_inplace", mode)
    return [_call(ctx, CHOLESKY[upper], [a], "tile_cholesky_inplace")], None


def _solve_args(ctx, name, args, kwargs, with_mode):
    names = ("L", "y", "fill_mode") if with_mode else ("L", "y")
    if name.startswith("tile_upper_solve"):  # Warp names these arguments U and z
        kwargs = {{"U": "L", "z": "y"}.get(k, k): v for k, v in dict(kwargs).items()}
    got = _args(ctx, name, args, kwargs, names)
    m, y = got[0], got[1]
    tile_arg(ctx, m, f"{name}'s matrix")
    tile_arg(ctx, y, f"{name}'s right-hand side")
    return m, y, _fill_mode(ctx, name, got[2]) if with_mode else False


def _cholesky_steps(upper):
    """The two solves of A x = y from A's factor: L then Lᵀ, or Uᵀ then U."""
    return [(False, upper), (True, not upper)]


@builtin("tile_cholesky_solve")
def tile_cholesky_solve(ctx, args, kwargs):
    """tile_cholesky_solve(L, y, fill_mode="lower"): x with A x = y, from A's Cholesky factor
    (L with L Lᵀ = A, or U with Uᵀ U = A under fill_mode="upper")."""
    m, x, upper = _solve_args(ctx, "tile_cholesky_solve", args, kwargs, True)
    for step in _cholesky_steps(upper):
        x = _call(ctx, SOLVES[step], [m, x], "tile_cholesky_solve")
    return x


@builtin("tile_cholesky_solve_inplace", inout=(1,))
def tile_cholesky_solve_inplace(ctx, args, kwargs):
    """tile_cholesky_solve_inplace(L, y, fill_mode="lower"): y replaced by the solution x of
    A x = y."""
    name = "tile_cholesky_solve_inplace"
    m, x, upper = _solve_args(ctx, name, args, kwargs, True)
    for step in _cholesky_steps(upper):
        x = _call(ctx, SOLVES[step], [m, x], name)
    return [x], None


@builtin("tile_lower_solve")
def tile_lower_solve(ctx, args, kwargs):
    """tile_lower_solve(L, y): z with L z = y, reading L's lower triangle."""
    m, y, _ = _solve_args(ctx, "tile_lower_solve", args, kwargs, False)
    return _call(ctx, SOLVES[(False, False)], [m, y], "tile_lower_solve")


@builtin("tile_upper_solve")
def tile_upper_solve(ctx, args, kwargs):
    """tile_upper_solve(U, z): x with U x = z, reading U's upper triangle."""
    m, y, _ = _solve_args(ctx, "tile_upper_solve", args, kwargs, False)
    return _call(ctx, SOLVES[(True, False)], [m, y], "tile_upper_solve")


@builtin("tile_lower_solve_inplace", inout=(1,))
def tile_lower_solve_inplace(ctx, args, kwargs):
    """tile_lower_solve_inplace(L, y): y replaced by z with L z = y."""
    name = "tile_lower_solve_inplace"
    m, y, _ = _solve_args(ctx, name, args, kwargs, False)
    return [_call(ctx, SOLVES[(False, False)], [m, y], name)], None


@builtin("tile_upper_solve_inplace", inout=(1,))
def tile_upper_solve_inplace(ctx, args, kwargs):
    """tile_upper_solve_inplace(U, z): z replaced by x with U x = z."""
    name = "tile_upper_solve_inplace"
    m, y, _ = _solve_args(ctx, name, args, kwargs, False)
    return [_call(ctx, SOLVES[(True, False)], [m, y], name)], None

