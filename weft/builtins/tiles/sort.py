"""`tile_sort(keys, values)`: both tiles permuted together into ascending order of the keys
(a multi-dimensional tile as its row-major sequence), updated in place as in Warp (the
frontend rebinds both variables; `tile_sort(k, k)` sorts `k`).

The sort is a primitive: for tiles of at least RADIX_FROM elements an LSD radix sort, one
counting and scattering pass per byte of the keys; for smaller ones a bottom-up merge sort
(n log n comparisons). Both are stable and order keys alike, so they give the same result;
their passes are unrolled at compile time between the result buffers and a scratch pair.
Warp's sort is not stable and leaves the order of equal keys unspecified; weft's keeps
their order, which is one of the orders Warp may give. Float keys are ordered by their
bits as a radix sort orders them (a total order: -0.0 before +0.0, NaN after +inf and -NaN
before -inf), so NaN keys cannot scramble the sort.

Gradient: the permutation itself is an integer and has none, but each output element is an
input element, so the adjoint of a sorted tile is sent back to the position its element
came from (as torch.sort does; Warp 1.19 has no adjoint here, so its gradients are zero).
The reverse pass recomputes the permutation by sorting the keys with the row-major
positions as payload (the same stable order), inverts it with a second sort and gathers.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ...ir.core import Value
from ...types import Scalar, TileType, int32
from ..registry import builtin, primitive
from .args import tile_arg
from .core import map_tiles, ravel, unravel
from .shape import gather

I32 = ir.IntType(32)
I64 = ir.IntType(64)


def _sort_rule(arg_types):
    k, v = arg_types
    if not (isinstance(k, TileType) and isinstance(v, TileType)):
        raise TypeError("tile_sort needs two tiles: keys and values")
    if not (isinstance(k.dtype, Scalar) and (k.dtype.is_float or k.dtype.is_int) and not k.dtype.is_bool):
        raise TypeError(f"tile_sort: keys must be float or integer scalars, got {k.dtype!r}")
    if k.shape != v.shape:
        raise TypeError(f"tile_sort: keys and values must have one shape, got {k.shape} and {v.shape}")
    return [k, v]


def _less(cg, t: Scalar, a, c):
    bld = cg.builder
    if t.is_float:
        return bld.icmp_unsigned("<", _ordered_bits(bld, a), _ordered_bits(bld, c))
    return (bld.icmp_signed if t.is_signed else bld.icmp_unsigned)("<", a, c)


def _ordered_bits(bld, x):
    """A float's bits as an unsigned integer in the float's order, totally: -NaN < -inf <
    ... < -0.0 < +0.0 < ... < +inf < NaN (a radix sort's order of float keys)."""
    width = {"half": 16, "float": 32, "double": 64}[str(x.type)]
    it = ir.IntType(width)
    bits = bld.bitcast(x, it)
    return bld.xor(bits, bld.or_(bld.ashr(bits, it(width - 1)), it(1 << (width - 1))))


def _copy_element(cg, dst, src, t: TileType, to, frm):
    cg.builder.call(cg._memcpy(), [cg.tile_element_ptr(dst, t, to), cg.tile_element_ptr(src, t, frm),
                                   I64(t.dtype.size), ir.Constant(ir.IntType(1), 0)])


def _merge_pass(cg, kt, vt, src, dst, width: int, n: int):
    """Merge each pair of sorted runs of `width` elements of src into dst."""
    bld = cg.builder
    slots = cg.tile_buffer(TileType(int32, (2,)), "sort.ij")
    runs = (n + 2 * width - 1) // (2 * width)
    q, exit_q = cg._loop_header(I32(0), I32(runs), f"sort.w{width}")
    lo = bld.mul(q, I32(2 * width))
    mid = _min(bld, bld.add(lo, I32(width)), I32(n))
    hi = _min(bld, bld.add(lo, I32(2 * width)), I32(n))
    bld.store(lo, slots)
    j_ptr = bld.gep(slots, [I64(4)], source_etype=ir.IntType(8), inbounds=True)
    bld.store(mid, j_ptr)
    k, exit_k = cg._loop_header(lo, hi, f"sort.m{width}")
    i = bld.load(slots, typ=I32)
    j = bld.load(j_ptr, typ=I32)
    last = I32(n - 1)
    ki = cg.tile_get(src[0], kt, _min(bld, i, last))
    kj = cg.tile_get(src[0], kt, _min(bld, j, last))
    left_open = bld.icmp_signed("<", i, mid)
    right_done = bld.icmp_signed(">=", j, hi)
    take_left = bld.and_(left_open, bld.or_(right_done, bld.not_(_less(cg, kt.dtype, kj, ki))))
    frm = bld.select(take_left, i, j)
    _copy_element(cg, dst[0], src[0], kt, k, frm)
    _copy_element(cg, dst[1], src[1], vt, k, frm)
    bld.store(bld.add(i, bld.zext(take_left, I32)), slots)
    bld.store(bld.add(j, bld.zext(bld.not_(take_left), I32)), j_ptr)
    cg._loop_latch(k, bld.add(k, I32(1), flags=("nsw",)))
    bld.position_at_end(exit_k)
    cg._loop_latch(q, bld.add(q, I32(1), flags=("nsw",)))
    bld.position_at_end(exit_q)


#: tiles of at least this many elements sort by radix (fewer: by merging)
RADIX_FROM = 32  # (measured: from 32 elements on, radix passes beat merging)


def _radix_bits(bld, t: Scalar, x):
    """Key `x` as an unsigned integer in the sort's order (see _less)."""
    if t.is_float:
        return _ordered_bits(bld, x)
    if t.is_signed:  # (the sign bit flipped: two's complement in unsigned order)
        return bld.xor(x, ir.Constant(x.type, 1 << (x.type.width - 1)))
    return x


def _radix_pass(cg, kt, vt, src, dst, shift: int, n: int, counts):
    """Stable counting pass on byte `shift // 8` of the keys: src -> dst."""
    bld = cg.builder

    def digit(k):
        bits = _radix_bits(bld, kt.dtype, cg.tile_get(src[0], kt, k))
        return bld.zext(bld.trunc(bld.lshr(bits, ir.Constant(bits.type, shift)), ir.IntType(8)), I32) \
            if bits.type.width > 8 else bld.zext(bits, I32)

    def count_at(d):
        return bld.gep(counts, [bld.mul(bld.zext(d, I64), I64(4))], source_etype=ir.IntType(8), inbounds=True)

    cg.fill_zero(counts, 4 * 256)
    k, done = cg._loop_header(I32(0), I32(n), f"radix.count{shift}")
    slot = count_at(digit(k))
    bld.store(bld.add(bld.load(slot, typ=I32), I32(1)), slot)
    cg._loop_latch(k, bld.add(k, I32(1), flags=("nsw",)))
    bld.position_at_end(done)
    total = cg.stack_buffer(4, "radix.total", align=4)  # (the exclusive sum of the counts so far)
    bld.store(I32(0), total)
    d, done = cg._loop_header(I32(0), I32(256), f"radix.offsets{shift}")
    slot = count_at(d)
    before = bld.load(total, typ=I32)
    bld.store(bld.add(before, bld.load(slot, typ=I32)), total)
    bld.store(before, slot)
    cg._loop_latch(d, bld.add(d, I32(1), flags=("nsw",)))
    bld.position_at_end(done)
    k, done = cg._loop_header(I32(0), I32(n), f"radix.scatter{shift}")
    slot = count_at(digit(k))
    to = bld.load(slot, typ=I32)
    bld.store(bld.add(to, I32(1)), slot)
    _copy_element(cg, dst[0], src[0], kt, to, k)
    _copy_element(cg, dst[1], src[1], vt, to, k)
    cg._loop_latch(k, bld.add(k, I32(1), flags=("nsw",)))
    bld.position_at_end(done)


def _min(bld, a, c):
    return bld.select(bld.icmp_signed("<", a, c), a, c)


def _lower_sort(cg, args, op):
    keys, values = args
    kt, vt = op.operands[0].type, op.operands[1].type
    n = kt.num_elements
    cur = (cg.tile_buffer(kt, "sort.keys"), cg.tile_buffer(vt, "sort.values"))
    cg.tile_copy(cur[0], keys, kt)
    cg.tile_copy(cur[1], values, vt)
    if n > 1:
        other = (cg.tile_buffer(kt, "sort.keys2"), cg.tile_buffer(vt, "sort.values2"))
        if n >= RADIX_FROM:
            counts = cg.stack_buffer(4 * 256, "radix.counts")
            for shift in range(0, 8 * kt.dtype.size, 8):
                _radix_pass(cg, kt, vt, cur, other, shift, n, counts)
                cur, other = other, cur
        else:
            width = 1
            while width < n:
                _merge_pass(cg, kt, vt, cur, other, width, n)
                cur, other = other, cur
                width *= 2
    return list(cur)


def _positions(b, shape) -> Value:
    (t,) = map_tiles(b, shape, [], lambda coords, elems, states: ([ravel(b, coords, shape)], [], []))
    return t


def _vjp_sort(b, args, results, g):
    keys, _ = args
    shape = keys.type.shape
    g_keys, g_values = g
    # perm[k]: the row-major position the k-th sorted element came from; inv[i]: where
    # position i went (sorting perm with the positions as payload inverts it).
    _, perm = b.call(SORT, [keys, _positions(b, shape)])
    _, inv = b.call(SORT, [perm, _positions(b, shape)])

    def back(adj):
        if adj is None:
            return None
        from .core import TILE_GET
        return gather(b, adj, shape, lambda coords: unravel(b, b.call(TILE_GET, [inv, *coords]), shape))
    return [back(g_keys), back(g_values)]


SORT = primitive("tile_sort", _sort_rule, _lower_sort, _vjp_sort,
                 doc="keys and values sorted together by key (a stable radix or merge sort)")


@builtin("tile_sort", inout=(0, 1))
def tile_sort(ctx, args, kwargs):
    """tile_sort(keys, values): both tiles sorted in place by ascending key."""
    kwargs = dict(kwargs)
    keys = args[0] if args else kwargs.pop("keys", None)
    values = args[1] if len(args) > 1 else kwargs.pop("values", None)
    if len(args) > 2 or kwargs:
        ctx.error("tile_sort(keys, values) takes two tiles", kind=TypeError)
    keys = tile_arg(ctx, keys, "tile_sort's keys")
    values = tile_arg(ctx, values, "tile_sort's values")
    try:
        _sort_rule([keys.type, values.type])
    except TypeError as e:
        ctx.error(str(e), kind=TypeError)
    new_keys, new_values = ctx.b.call(SORT, [keys, values])
    return [new_keys, new_values], None
