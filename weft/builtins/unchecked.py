"""Loads without a bounds check, for the funcs that read a geometry object's or a
texture's own (validated) buffers at indices in range by construction."""

import weft as wp


def expand_load(ctx, args, kwargs):
    """`arr[i]` unchecked (to autodiff, an ordinary load)."""
    arr, index = args
    return ctx.b.op("load", [arr, ctx.coerce(index, wp.int32)], [arr.type.dtype], {"in_bounds": True}).result


def expand_constant_load(ctx, args, kwargs):
    """`arr[i]` unchecked and a constant to autodiff (no gradient reaches the buffer)."""
    arr, index = args
    return ctx.b.op("load", [arr, ctx.coerce(index, wp.int32)], [arr.type.dtype],
                    {"in_bounds": True, "constant": True}).result
