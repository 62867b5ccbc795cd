"""Arrays inside kernels beyond element access: slices (`a[1:5]`, `a[::-1, 2]`), the
`shape`/`ptr` attributes, truth (`if a:` is "a is not null") and arrays made from a raw
address (`weft.array(ptr=p, shape=(n, m), dtype=float)`).

A slice is a view (the `slice` op): Python's rules for negative and omitted bounds and
for negative steps, bounds clamped to the array, a zero step refused (at compile time for
a constant step, with an error after the launch for a runtime one). Integer keys in a
slice expression are bounds-checked like element indices.
"""

from __future__ import annotations

import numpy as np

from ..ir.core import Block, Value
from ..types import ArrayType, Scalar, int32, int64, uint64
from ..types.array_type import MAX_DIMS
from .registry import Builtin, builtin


class ArrayShape(tuple):
    """`a.shape` in a kernel: the extents (int32 values); as in Warp, an index past the
    array's dimensions (up to 4) reads 0."""

    def __getitem__(self, k):
        if isinstance(k, int) and len(self) <= k < MAX_DIMS:
            return 0
        return super().__getitem__(k)


def shape_of(ctx, arr: Value) -> ArrayShape:
    return ArrayShape(ctx.b.op("array_shape", [arr], [int32], {"dim": d}).result
                      for d in range(arr.type.ndim))


def ptr_of(ctx, arr: Value) -> Value:
    """The address of an array's first element, as a uint64 (0 for a null array)."""
    return ctx.b.op("array_ptr", [arr], [uint64]).result


def is_not_null(ctx, arr: Value) -> Value:
    return ctx.b.cmp("ne", ptr_of(ctx, arr), ctx.b.const(0, uint64))


def _as_int(ctx, v, what: str) -> Value:
    if isinstance(v, Value):
        if not (isinstance(v.type, Scalar) and v.type.is_int):
            ctx.error(f"{what} must be an integer, got {v.type!r}")
        return v
    if isinstance(v, bool) or not isinstance(v, int):
        ctx.error(f"{what} must be an integer, got {v!r}")
    return ctx.b.const(int(v), int64)


def slice_array(ctx, arr: Value, keys) -> Value:
    """The view `arr[keys]`: `keys` holds, per leading dimension, an integer index (value or
    constant) or a Python `slice` of integer values/constants/None."""
    t = arr.type
    if t.indexed or t.fabric:
        ctx.error(f"slices of a {t!r} are not supported")
    if len(keys) > t.ndim:
        ctx.error(f"too many indices ({len(keys)}) for an array of {t.ndim} dimension(s)", kind=IndexError)
    layout, operands, out_ndim = [], [], t.ndim
    for k in keys:
        if isinstance(k, slice):
            if k.step is not None and not isinstance(k.step, Value) and k.step == 0:
                ctx.error("Slice step cannot be zero", kind=ValueError)
            parts = (k.start, k.stop, k.step)
            layout.append(tuple(p is not None for p in parts))
            for p, name in zip(parts, ("start", "stop", "step")):
                if p is not None:
                    operands.append(_as_int(ctx, p, f"a slice {name}"))
            if isinstance(k.step, Value):
                step = operands[-1]
                ok = ctx.b.cmp("ne", step, ctx.b.const(0, step.type))
                ctx.b.op("assert", [ok], [], {"message": "slice step cannot be zero"})
        else:
            layout.append("i")
            operands.append(_as_int(ctx, k, "an array index"))
            out_ndim -= 1
    if out_ndim < 1:
        ctx.error("a slice expression must leave at least one dimension")
    return ctx.b.op("slice", [arr, *operands], [ArrayType(t.dtype, out_ndim)],
                    {"keys": tuple(layout)}).result


def array_from_ptr(ctx, args, kwargs) -> Value:
    """`weft.array(ptr=p, shape=(n, ...), dtype=T)` inside a kernel: a C-ordered array over
    the memory at address `p` (which the caller vouches for)."""
    from ..types import resolve
    names = ("data", "dtype", "shape", "strides", "ptr")
    given = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names or name in given:
            ctx.error(f"array() inside a kernel takes ptr=, shape= and dtype=, not {name}=")
        given[name] = value
    if given.get("data") is not None or given.get("strides") is not None:
        ctx.error("array() inside a kernel takes ptr=, shape= and dtype= (no data or strides)")
    ptr, shape, dtype = given.get("ptr"), given.get("shape"), given.get("dtype")
    if ptr is None or shape is None or dtype is None:
        ctx.error("array() inside a kernel needs ptr=, shape= and dtype=")
    t = resolve(dtype)
    if t is None or t.is_array:
        ctx.error(f"array() inside a kernel: {dtype!r} is not an element type")
    dims = tuple(shape) if isinstance(shape, tuple) else (shape,)
    if not 1 <= len(dims) <= MAX_DIMS:
        ctx.error(f"arrays have 1 to {MAX_DIMS} dimensions, got a shape of {len(dims)}")
    if isinstance(ptr, Value):
        if not (isinstance(ptr.type, Scalar) and ptr.type.is_int and ptr.type.bits == 64):
            ctx.error(f"array(ptr=...) takes a 64-bit address, got {ptr.type!r}")
    else:
        ptr = ctx.b.const(int(ptr), uint64)
    extents = [_as_int(ctx, d, "an array extent") for d in dims]
    return ctx.b.op("make_array", [ptr, *extents], [ArrayType(t, len(dims))]).result


def local_array(ctx, args, kwargs) -> Value:
    """`zeros(shape, dtype)` inside a kernel or func: a zero-filled C-ordered array of
    constant `shape` in the thread's own memory (Warp's fixedarray), made afresh each time
    the call runs. It is an array like any other (index it, view it, pass it to funcs, return
    it); it lives as long as the kernel's call for this thread."""
    from ..types import resolve
    given = dict(zip(("shape", "dtype"), args))
    for name, value in kwargs.items():
        if name not in ("shape", "dtype") or name in given:
            ctx.error(f"zeros() inside a kernel takes shape and dtype, not {name}=")
        given[name] = value
    shape, dtype = given.get("shape"), given.get("dtype", float)
    if shape is None:
        ctx.error("zeros() inside a kernel needs a shape")
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if any(isinstance(d, Value) or isinstance(d, bool) or not isinstance(d, (int, np.integer)) for d in dims):
        ctx.error("the `shape` argument must be specified as a constant when zero-initializing an array")
    dims = tuple(int(d) for d in dims)
    if not 1 <= len(dims) <= MAX_DIMS or any(d < 0 for d in dims):
        ctx.error(f"zeros() inside a kernel: the shape must have 1 to {MAX_DIMS} non-negative extents, got {dims}")
    t = resolve(dtype)
    if t is None or t.is_array:
        ctx.error(f"zeros() inside a kernel: {dtype!r} is not an element type")
    return ctx.b.op("local_array", [], [ArrayType(t, len(dims))], {"shape": dims}).result


def _expand_array_with_grad(ctx, args, kwargs):
    from ..types import resolve
    ptr, grad, n, dtype = args
    return ctx.b.op("make_array", [ctx.coerce(ptr, uint64), ctx.coerce(grad, uint64), _as_int(ctx, n, "an extent")],
                    [ArrayType(resolve(dtype), 1)], {"grad": True}).result


# `array_with_grad(ptr, grad, n, dtype)`: for weft's own kernel-language code (a mesh's
# points): an array over raw memory whose gradient lives at address `grad` (0: none), as
# a Warp array_t carries its grad pointer.
array_with_grad = Builtin("array_with_grad", _expand_array_with_grad,
                          doc="an array over raw memory, with the address of its gradient")


@builtin("lower_bound")
def lower_bound(ctx, args, kwargs):
    """lower_bound(arr, value) / lower_bound(arr, begin, end, value): by binary search of
    the sorted `arr` over [begin, end) (the whole 1-d array by default), the index of the
    first element not less than `value`, or (as in Warp: the closest element) the last
    index of the range when every element is less."""
    if kwargs or len(args) not in (2, 4):
        ctx.error("lower_bound(arr, value) or lower_bound(arr, begin, end, value)")
    arr, value = args[0], args[-1]
    t = getattr(arr, "type", None)
    if not (isinstance(t, ArrayType) and t.ndim == 1 and isinstance(t.dtype, Scalar)) or t.indexed:
        ctx.error(f"lower_bound() searches a 1-d array of scalars, got {t!r}", kind=TypeError)
    b = ctx.b
    value = ctx.coerce(value, t.dtype, what="the lower_bound value")
    if len(args) == 4:
        lo, hi = (ctx.coerce(x, int32, what=f"lower_bound {name}") for x, name in
                  zip(args[1:3], ("begin", "end")))
    else:
        lo, hi = b.const(0, int32), b.op("array_shape", [arr], [int32], {"dim": 0}).result
    hi = b.sub(hi, b.const(1, int32))  # the search ends on the range's last element
    cond, body = Block([int32, int32], ["lo", "hi"]), Block([int32, int32], ["lo", "hi"])
    with b.at(cond):
        b.op("yield", [b.cmp("lt", *cond.args)])
    with b.at(body):
        first, last = body.args
        mid = b.add(first, b.binary("shr", b.sub(last, first), b.const(1, int32)))
        below = b.cmp("lt", b.op("load", [arr, mid], [t.dtype]).result, value)
        b.op("yield", [b.select(below, b.add(mid, b.const(1, int32)), first),
                       b.select(below, last, mid)])
    return b.op("while", [lo, hi], [int32, int32], regions=[cond, body]).results[0]
