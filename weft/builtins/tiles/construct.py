"""Making tiles: `tile_zeros/ones/full/empty/arange`, `tile(x)`, `untile`, `tile_from_thread`,
and `block_dim()`.

On the CPU a block has one thread (Warp's CPU tile semantics), so `tile(x)` is a tile whose
last dimension is 1 and `untile` takes that one element back. A kernel compiled for Warp's
cooperative CPU blocks (`compile_lanes()` > 1) has `block_dim()` threads per block: there
`tile(x)` is the primitive `lanes_tile` and a thread's own lane is `lane_index`, both
replaced by the block program that transforms/lanes.py makes of the kernel.
"""

from __future__ import annotations

import math

import numpy as np

from ...ir.core import Value
from ...lang.module import compile_lanes
from ...types import Matrix, Scalar, StructType, TileType, Vector, bool_, float32, int32
from ...types.scalars import SCALAR_VALUES
from .. import arith
from ..registry import builtin, primitive
from .args import dtype_arg, no_more, option, shape_arg, shared, storage_arg, tile_arg
from .core import TILE_GET, map_tiles

#: threads per block on the CPU (unless compiled for cooperative blocks: compile_lanes())
CPU_BLOCK_DIM = 1


def _only_in_block_programs(cg, args, op):
    raise NotImplementedError(f"internal: {op.attrs['fn'].name} outside a cooperative block program")


def _lanes_tile_rule(arg_types):
    return [TileType(arg_types[0], (compile_lanes(),))]


# Made by the frontend for kernels compiled with lanes; transforms/lanes.py replaces both.
LANES_TILE = primitive("lanes_tile", _lanes_tile_rule, _only_in_block_programs,
                       doc="the block's threads' values of x, as a tile of shape (block_dim,)")
LANE_INDEX = primitive("lane_index", lambda arg_types: [int32], _only_in_block_programs,
                       doc="this thread's index within its block")
# Which of the block's threads run here: all but those past the launch's threads in its last
# block, and those that skip a branch holding tile ops. Warp's reductions skip the elements
# the others own (element k of a tile is lane k % block_dim's).
LANES_ACTIVE = primitive("lanes_active", lambda arg_types: [TileType(bool_, (compile_lanes(),))],
                         _only_in_block_programs, doc="a bool per lane of the block: whether it runs here")


def lanes_active(ctx) -> Value | None:
    """Which of the block's lanes run (a bool tile), in a kernel compiled for cooperative CPU
    blocks; None otherwise (then every element is its one thread's)."""
    return ctx.b.call(LANES_ACTIVE, []) if compile_lanes() > 1 else None


def owner_runs(b, active: Value | None, linear: Value) -> Value | None:
    """Whether the lane owning row-major element `linear` of a tile runs (None: all do)."""
    if active is None:
        return None
    return b.call(TILE_GET, [active, b.binary("mod", linear, b.const(active.type.shape[0], int32))])


def when_owner_runs(b, active: Value | None, coords, shape, cond: Value | None = None) -> Value | None:
    """`cond` (None: always) and, under cooperative blocks (`active` not None), whether the
    lane owning element `coords` of a tile of `shape` runs; None where nothing restricts."""
    if active is None:
        return cond
    runs = owner_runs(b, active, row_major(b, coords, shape))
    return runs if cond is None else b.select(cond, runs, b.const(False, bool_))


def row_major(b, coords, shape) -> Value:
    """The row-major index of `coords` in `shape`."""
    flat = coords[0]
    for c, n in zip(coords[1:], shape[1:]):
        flat = b.add(b.mul(flat, b.const(n, int32)), c)
    return flat


def _constant_tile(ctx, shape, dtype, value_of, storage=("tile", None)):
    """A tile of `shape` whose element is `value_of(coords)` (emitted in the map's body);
    `storage`: (the builtin's name, its storage argument)."""
    if 0 in shape or not shape:
        ctx.error("a tile needs at least one element", kind=ValueError)
    storage_arg(ctx, *storage, TileType(dtype, shape))
    (t,) = map_tiles(ctx.b, shape, [], lambda coords, elems, states: ([value_of(coords)], [], []))
    if t.type.dtype is not dtype:
        ctx.error(f"internal: tile element {t.type.dtype!r} is not {dtype!r}")
    return shared(ctx, t, storage[1])


def _shape_dtype(ctx, name, args, kwargs, n_value=0):
    kwargs = dict(kwargs)
    args = list(args)
    shape = option(kwargs, "shape", args.pop(0) if args else None)
    value = None
    if n_value:
        value = option(kwargs, "value", args.pop(0) if args else None)
    dtype = option(kwargs, "dtype", args.pop(0) if args else None)
    storage = option(kwargs, "storage", args.pop(0) if args else None)
    no_more(ctx, name, kwargs)
    if shape is None:
        ctx.error(f"{name}() needs a shape", kind=TypeError)
    return shape_arg(ctx, shape), value, dtype, (name, storage)


@builtin("tile_zeros")
def tile_zeros(ctx, args, kwargs):
    """tile_zeros(shape, dtype=float, storage="register")"""
    shape, _, dtype, storage = _shape_dtype(ctx, "tile_zeros", args, kwargs)
    t = dtype_arg(ctx, dtype)
    return _constant_tile(ctx, shape, t, lambda c: arith.zero(ctx, t), storage)


@builtin("tile_empty")
def tile_empty(ctx, args, kwargs):
    """tile_empty(shape, dtype=float, storage="register"): zeros in weft (never garbage)."""
    shape, _, dtype, storage = _shape_dtype(ctx, "tile_empty", args, kwargs)
    t = dtype_arg(ctx, dtype)
    return _constant_tile(ctx, shape, t, lambda c: arith.zero(ctx, t), storage)


@builtin("tile_ones")
def tile_ones(ctx, args, kwargs):
    """tile_ones(shape, dtype=float, storage="register")"""
    shape, _, dtype, storage = _shape_dtype(ctx, "tile_ones", args, kwargs)
    t = dtype_arg(ctx, dtype)
    if isinstance(t, StructType):
        ctx.error(f"tile_ones does not support Warp struct dtypes ({t!r} has no 'one')", kind=TypeError)
    return _constant_tile(ctx, shape, t, lambda c: _filled(ctx, t, 1), storage)


def _filled(ctx, t, x):
    if isinstance(t, Scalar):
        return ctx.coerce(x, t) if not isinstance(x, Value) else arith.construct(ctx, t, [x], {})
    comp = ctx.coerce(x, t.dtype) if not isinstance(x, Value) or isinstance(x.type, Scalar) else None
    if comp is None:
        return ctx.coerce(x, t)
    return ctx.b.construct(t, [comp] * t.num_components)


@builtin("tile_full")
def tile_full(ctx, args, kwargs):
    """tile_full(shape, value, dtype=type(value), storage="register")"""
    shape, value, dtype, storage = _shape_dtype(ctx, "tile_full", args, kwargs, n_value=1)
    if dtype is None:
        value = ctx.materialize(value)
        t = value.type
    else:
        t = dtype_arg(ctx, dtype)
    v = _filled(ctx, t, value)  # (outside the map: the same value for every element)
    return _constant_tile(ctx, shape, t, lambda c: v, storage)


@builtin("tile_arange")
def tile_arange(ctx, args, kwargs):
    """tile_arange(stop) / (start, stop) / (start, stop, step), dtype=float: a 1D tile of
    start + k * step, k = 0 .. ceil((stop - start) / step) - 1, the bounds taken at dtype."""
    kwargs = dict(kwargs)
    dtype = option(kwargs, "dtype", None)
    option(kwargs, "storage", None)
    no_more(ctx, "tile_arange", kwargs)
    if not args:
        ctx.error("tile_arange() needs at least a stop", kind=TypeError)
    if len(args) > 3:
        ctx.error(f"tile_arange() accepts at most 3 positional arguments, got {len(args)}", kind=TypeError)
    names = {1: ("stop",), 2: ("start", "stop"), 3: ("start", "stop", "step")}[len(args)]
    given = dict(zip(names, (_arange_constant(ctx, a, n) for a, n in zip(args, names))))
    t = dtype_arg(ctx, dtype, default=float32)
    if not isinstance(t, Scalar) or t.is_bool:
        ctx.error(f"tile_arange() requires a numeric scalar dtype, got {t!r}", kind=TypeError)
    start, stop, step = (_at_dtype(ctx, given.get(n, d), n, t) for n, d in (("start", 0), ("stop", None),
                                                                            ("step", 1)))
    if step == 0:
        ctx.error("tile_arange: step cannot be zero", kind=ValueError)
    # a float range is counted at its dtype's precision, as stop / step - start / step (which
    # does not overflow for a range spanning the whole type)
    ft = np.dtype(t.np_dtype).type if not t.is_int else None
    with np.errstate(over="ignore", invalid="ignore"):
        span = float(ft(stop) / ft(step) - ft(start) / ft(step)) if not t.is_int else None
    if span is not None and not math.isfinite(span):
        ctx.error("tile_arange(): the range spans more elements than can be counted", kind=ValueError)
    n = -((start - stop) // step) if t.is_int else max(int(math.ceil(span)), 0)
    if not t.is_int and n == 0 and (stop - start) / step > 0:
        n = 1  # a range shorter than its step (even one the dtype's division rounds to 0) holds its start
    if n <= 0:
        ctx.error(f"tile_arange(): a non-empty range is required (start={start}, stop={stop}, step={step} "
                  "gives a zero-length tile)", kind=ValueError)
    b = ctx.b

    def element(coords):
        k = b.cast(coords[0], t)
        return b.add(b.const(start, t), b.mul(k, b.const(step, t)))
    return _constant_tile(ctx, (n,), t, element)


def _arange_constant(ctx, x, name):
    """A compile-time number: a literal, or a local variable holding a constant."""
    if isinstance(x, Value):
        from ...ir.core import constant_value
        value = constant_value(x)
        if value is None:
            ctx.error(f"tile_arange() arguments must be compile time constants, but {name} is not",
                      kind=TypeError)
        return value
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        ctx.error(f"tile_arange() arguments must be numbers, got {name}={x!r}", kind=TypeError)
    return x.item() if isinstance(x, SCALAR_VALUES) else x


def _at_dtype(ctx, x, name, t):
    """`x` as a value of scalar type `t` (exact for integers; rounded for floats)."""
    if t.is_int:
        if isinstance(x, float):
            if not math.isfinite(x) or abs(x) >= 2.0 ** 64:
                ctx.error(f"tile_arange() {name}={x!r} is out of range for {t!r}", kind=ValueError)
            if x != int(x):
                ctx.error(f"tile_arange() {name}={x!r} has a fractional part; {t!r} needs integers",
                          kind=ValueError)
            x = int(x)
        if x.bit_length() > 64:
            ctx.error(f"tile_arange() {name}={x} is too wide to use as an integer bound", kind=ValueError)
        lo, hi = (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if t.is_signed else (0, (1 << t.bits) - 1)
        if not lo <= x <= hi:
            ctx.error(f"tile_arange() {name}={x} is out of range for {t!r}", kind=ValueError)
        return x
    if isinstance(x, int) and (x.bit_length() > 64 or x < -(1 << 63)):
        ctx.error(f"tile_arange() {name}={x} is too wide to use as an integer bound; write it as a float "
                  f"({float(x)!r})", kind=ValueError)
    if isinstance(x, int):  # rounded once, from the integer (through float64 it could round twice)
        whole = np.array(x, dtype=np.int64 if x < (1 << 63) else np.uint64)
        rounded = float(whole.astype(t.np_dtype))
    else:
        rounded = float(np.dtype(t.np_dtype).type(float(x)))
    if math.isfinite(float(x)) and not math.isfinite(rounded):
        ctx.error(f"tile_arange() {name}={x!r} is out of range for {t!r}", kind=ValueError)
    return rounded


@builtin("tile")
def tile(ctx, args, kwargs):
    """tile(x, preserve_type=False): the block's per-thread values as a tile (one thread on
    the CPU: the last dimension is 1)."""
    kwargs = dict(kwargs)
    x = args[0] if args else option(kwargs, "x", None)
    preserve = option(kwargs, "preserve_type", args[1] if len(args) > 1 else False)
    no_more(ctx, "tile", kwargs)
    x = ctx.materialize(x)
    t = x.type
    lanes = compile_lanes()
    if lanes > 1:
        return _lanes_tile(ctx, x, preserve)
    if isinstance(t, Scalar) or preserve:
        return _per_lane(_constant_tile(ctx, (CPU_BLOCK_DIM,), t, lambda c: x))
    if isinstance(t, Vector):
        return _per_lane(_constant_tile(ctx, (t.length, CPU_BLOCK_DIM), t.dtype,
                                        lambda c: ctx.b.op("extract_dyn", [x, c[0]], [t.dtype]).result))
    if isinstance(t, Matrix):
        return _per_lane(_constant_tile(ctx, (t.rows, t.cols, CPU_BLOCK_DIM), t.dtype,
                                        lambda c: ctx.b.op("extract_dyn", [x, c[0], c[1]], [t.dtype]).result))
    ctx.error(f"tile(x): x must be a scalar, vector or matrix, got {t!r}", kind=TypeError)


def _lanes_tile(ctx, x: Value, preserve) -> Value:
    """tile(x) in a kernel compiled for cooperative blocks: the lanes' values as a tile of
    shape (block_dim,), or (n, block_dim) / (rows, cols, block_dim) for vectors and matrices."""
    t = x.type
    if not isinstance(t, (Scalar, Vector, Matrix)) and not preserve:
        ctx.error(f"tile(x): x must be a scalar, vector or matrix, got {t!r}", kind=TypeError)
    lanes = ctx.b.call(LANES_TILE, [x])
    if isinstance(t, Scalar) or preserve:
        return lanes
    shape = (t.length,) if isinstance(t, Vector) else (t.rows, t.cols)
    from .elements import get_element

    def element(c):
        v = get_element(ctx, lanes, [c[-1]])
        return ctx.b.op("extract_dyn", [v, *c[:-1]], [t.dtype]).result
    return _constant_tile(ctx, (*shape, compile_lanes()), t.dtype, element)


@builtin("untile")
def untile(ctx, args, kwargs):
    """untile(a): this thread's value of a tile made by tile(x)."""
    a = tile_arg(ctx, args[0] if args else kwargs.get("a"), "untile's argument")
    t: TileType = a.type
    lanes = compile_lanes()
    if t.shape[-1] != lanes:
        where = "on the CPU" if lanes == 1 else "here"
        ctx.error(f"untile: the tile's last dimension must be the block size ({lanes} {where}), "
                  f"got shape {t.shape}", kind=ValueError)
    from .elements import get_element
    # (this thread's lane)
    zero = _per_lane(ctx.b.const(0, int32)) if lanes == 1 else ctx.b.call(LANE_INDEX, [])
    if t.ndim == 1:
        return get_element(ctx, a, [zero])
    if t.ndim == 2:
        from ...types import vector
        vt = vector(t.shape[0], t.dtype)
        return ctx.b.construct(vt, [get_element(ctx, a, [ctx.b.const(i, int32), zero]) for i in range(t.shape[0])])
    if t.ndim == 3:
        from ...types import matrix
        rows, cols = t.shape[:2]
        return ctx.b.construct(matrix((rows, cols), t.dtype),
                               [get_element(ctx, a, [ctx.b.const(r, int32), ctx.b.const(c, int32), zero])
                                for r in range(rows) for c in range(cols)])
    ctx.error(f"untile: a tile of shape {t.shape} has no per-thread value type", kind=ValueError)


@builtin("tile_from_thread")
def tile_from_thread(ctx, args, kwargs):
    """tile_from_thread(shape, value, thread_idx=0, storage="register"): the one thread's value."""
    kwargs = dict(kwargs)
    args = list(args)
    shape = shape_arg(ctx, option(kwargs, "shape", args.pop(0) if args else None))
    value = ctx.materialize(option(kwargs, "value", args.pop(0) if args else None))
    thread_idx = option(kwargs, "thread_idx", args.pop(0) if args else 0)
    option(kwargs, "storage", None)
    no_more(ctx, "tile_from_thread", kwargs)
    if compile_lanes() > 1:  # the value of thread `thread_idx`, for all
        from .elements import get_element
        value = get_element(ctx, ctx.b.call(LANES_TILE, [value]), [ctx.coerce(thread_idx, int32, what="thread_idx")])
    return _per_lane(_constant_tile(ctx, shape, value.type, lambda c: value))


@builtin("block_dim")
def block_dim(ctx, args, kwargs):
    """block_dim(): threads per block (1 on the CPU, unless cooperative blocks)."""
    lanes = compile_lanes()
    return _per_lane(ctx.b.const(CPU_BLOCK_DIM, int32)) if lanes == 1 else ctx.b.const(lanes, int32)


def _per_lane(value: Value) -> Value:
    """Mark the op making `value` as depending on the block's threads (tile(x), untile,
    block_dim): launch_tiled cannot run such a kernel one thread per block when Warp's
    cooperative CPU blocks are asked for (see runtime/launch.py)."""
    value.owner.attrs["per_lane"] = True
    return value
