"""Scans of tiles: `tile_scan_inclusive`, `tile_scan_exclusive` (prefix sums) and
`tile_scan_max_inclusive`, `tile_scan_min_inclusive` (prefix maxima and minima).

A multi-dimensional tile is scanned over its row-major sequence, as in Warp; the result has
the input's type. Each scan is a primitive with one loop over the elements (a sequential
scan, so a float sum rounds as numpy's cumsum does).

Gradients (Warp 1.19 has none: its adjoints are empty, so its gradients are zero):
- a prefix sum's adjoint is the suffix sum of the seed (inclusive or exclusive alike), so
  the sum scans come in four directions, each the rule of another;
- a prefix max/min passes each seed `g[k]` to the element that the scan selected at `k`:
  the first element holding the running extreme (the running value moves to a later
  element only when that one is strictly beyond it, or the running value is NaN; NaN
  elements are never selected while a number precedes them, as C's fmax/fmin skip them).
"""

from __future__ import annotations

import llvmlite.ir as ir

from ...types import Scalar, TileType, bfloat16, int32
from ..registry import builtin, primitive
from .args import tile_arg
from .construct import lanes_active, when_owner_runs
from .core import map_tiles
from .reduce import reduction_identity

I32 = ir.IntType(32)


def _scan_rule(name):
    def rule(arg_types):
        t = arg_types[0]
        if not (isinstance(t, TileType) and isinstance(t.dtype, Scalar) and (t.dtype.is_float or t.dtype.is_int)
                and not t.dtype.is_bool):
            raise TypeError(f"{name} needs a tile of float or integer scalars, got {t!r}")
        for other in arg_types[1:]:
            if other != t:
                raise TypeError(f"{name}: the seed must be a {t!r}, got {other!r}")
        return [t]
    return rule


def _combine(cg, kind, t: Scalar, acc, x):
    """acc (+|max|min) x for one element type; max/min skip NaN as C's fmax/fmin do."""
    bld = cg.builder
    if kind == "add":
        r = bld.fadd(acc, x) if t.is_float else bld.add(acc, x)
        return cg.bf16_round(r) if t is bfloat16 else r
    if t.is_float:
        from ..math import float_min_max
        return float_min_max(bld, kind, acc, x)
    cmp = bld.icmp_signed if t.is_signed else bld.icmp_unsigned
    return bld.select(cmp(">" if kind == "max" else "<", x, acc), x, acc)


def _zero(t: Scalar, lt):
    return lt(0.0) if t.is_float else lt(0)


def _position(cg, k, n: int, reverse: bool):
    return cg.builder.sub(I32(n - 1), k) if reverse else k


def _lower_scan(kind: str, exclusive: bool, reverse: bool):
    """out[k] = x[0] op ... op x[k] (inclusive) or up to x[k-1] (exclusive, from zero),
    over the row-major sequence, from its end when `reverse`."""
    def lower(cg, args, op):
        (src,) = args
        t: TileType = op.operands[0].type
        n = t.num_elements
        out = cg.tile_buffer(t, "scan")
        acc_t = TileType(t.dtype, (1,))
        acc = cg.tile_buffer(acc_t, "scan.acc")
        first = cg.tile_get(src, t, I32(n - 1 if reverse else 0))
        # the running value starts at the identity: zero for sums, the first element for max/min
        cg.tile_set(acc, acc_t, I32(0), _zero(t.dtype, first.type) if kind == "add" else first)
        bld = cg.builder
        k, exit_ = cg._loop_header(I32(0), I32(n), "scan")
        pos = _position(cg, k, n, reverse)
        x = cg.tile_get(src, t, pos)
        running = cg.tile_get(acc, acc_t, I32(0))
        if exclusive:
            cg.tile_set(out, t, pos, running)
            cg.tile_set(acc, acc_t, I32(0), _combine(cg, kind, t.dtype, running, x))
        else:
            new = _combine(cg, kind, t.dtype, running, x)
            cg.tile_set(out, t, pos, new)
            cg.tile_set(acc, acc_t, I32(0), new)
        cg._loop_latch(k, bld.add(k, I32(1), flags=("nsw",)))
        bld.position_at_end(exit_)
        return out
    return lower


def _lower_extreme_vjp(kind: str):
    """adj[i] = the sum of g[k] over the positions k whose running extreme is element i."""
    def lower(cg, args, op):
        src, g = args
        t: TileType = op.operands[0].type
        n = t.num_elements
        out = cg.tile_buffer(t, "scan.adj")
        cg.tile_fill_zero(out, t)
        best_t = TileType(t.dtype, (1,))
        best = cg.tile_buffer(best_t, "scan.best")
        where = cg.tile_buffer(TileType(int32, (1,)), "scan.at")
        bld = cg.builder
        cg.tile_set(best, best_t, I32(0), cg.tile_get(src, t, I32(0)))
        bld.store(I32(0), where)
        k, exit_ = cg._loop_header(I32(0), I32(n), "scan.adj")
        x = cg.tile_get(src, t, k)
        cur = cg.tile_get(best, best_t, I32(0))
        if t.dtype.is_float:
            beyond = bld.fcmp_ordered(">" if kind == "max" else "<", x, cur)
            cur_nan = bld.fcmp_unordered("uno", cur, cur)
            x_num = bld.fcmp_ordered("ord", x, x)
            take = bld.or_(beyond, bld.and_(cur_nan, x_num))
        else:
            cmp = bld.icmp_signed if t.dtype.is_signed else bld.icmp_unsigned
            take = cmp(">" if kind == "max" else "<", x, cur)
        at = bld.select(take, k, bld.load(where, typ=I32))
        bld.store(at, where)
        cg.tile_set(best, best_t, I32(0), bld.select(take, x, cur))
        new = bld.fadd(cg.tile_get(out, t, at), cg.tile_get(g, t, k))
        cg.tile_set(out, t, at, cg.bf16_round(new) if t.dtype is bfloat16 else new)
        cg._loop_latch(k, bld.add(k, I32(1), flags=("nsw",)))
        bld.position_at_end(exit_)
        return out
    return lower


SUMS = {}
for _excl in (False, True):
    for _rev in (False, True):
        _name = f"tile_{'suffix' if _rev else 'prefix'}_sum_{'exclusive' if _excl else 'inclusive'}"
        SUMS[_excl, _rev] = primitive(_name, _scan_rule(_name), _lower_scan("add", _excl, _rev),
                                      doc="a running sum over the row-major elements"
                                          + (", from the end" if _rev else ""))
for (_excl, _rev), _p in SUMS.items():
    # the adjoint of a running sum runs the other way, with the same inclusiveness
    _p.vjp = (lambda other: lambda b, args, results, g: [b.call(other, [g])])(SUMS[_excl, not _rev])

EXTREME_VJP = {kind: primitive(f"tile_scan_{kind}_adjoint", _scan_rule(f"tile_scan_{kind}_adjoint"),
                               _lower_extreme_vjp(kind), doc=f"the adjoint of a running {kind}")
               for kind in ("max", "min")}
EXTREMES = {kind: primitive(f"tile_scan_{kind}_inclusive_op", _scan_rule(f"tile_scan_{kind}_inclusive"),
                            _lower_scan(kind, False, False),
                            (lambda k: lambda b, args, results, g: [b.call(EXTREME_VJP[k], [args[0], g])])(kind),
                            doc=f"a running {kind} over the row-major elements")
            for kind in ("max", "min")}


def _skip_idle_lanes(ctx, a, kind):
    """Under cooperative CPU blocks, the elements of lanes that do not run hold the scan's
    identity, so that the scan runs over the others (as Warp's partial blocks do)."""
    active = lanes_active(ctx)
    if active is None:
        return a
    b, t = ctx.b, a.type
    identity = reduction_identity(ctx, kind, t.dtype)

    def body(coords, elems, states):
        return [b.select(when_owner_runs(b, active, coords, t.shape), elems[0], identity)], [], []
    (masked,) = map_tiles(b, t.shape, [a], body)
    return masked


def _scan_builtin(name, prim):
    @builtin(name)
    def expand(ctx, args, kwargs):
        kwargs = dict(kwargs)
        a = args[0] if args else kwargs.pop("a", None)
        if len(args) > 1 or kwargs:
            ctx.error(f"{name}(a) takes one tile", kind=TypeError)
        a = tile_arg(ctx, a, f"{name}'s argument")
        t = a.type
        if not (isinstance(t.dtype, Scalar) and (t.dtype.is_float or t.dtype.is_int) and not t.dtype.is_bool):
            ctx.error(f"{name} needs a tile of float or integer scalars, got {t!r}", kind=TypeError)
        return ctx.b.call(prim, [_skip_idle_lanes(ctx, a, kind)])
    kind = "max" if "max" in name else "min" if "min" in name else "add"
    expand.doc = prim.doc
    return expand


tile_scan_inclusive = _scan_builtin("tile_scan_inclusive", SUMS[False, False])
tile_scan_exclusive = _scan_builtin("tile_scan_exclusive", SUMS[True, False])
tile_scan_max_inclusive = _scan_builtin("tile_scan_max_inclusive", EXTREMES["max"])
tile_scan_min_inclusive = _scan_builtin("tile_scan_min_inclusive", EXTREMES["min"])
