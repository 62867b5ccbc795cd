"""The value kernels of `weft.sparse`: every block value a sparse operation produces is
computed by one of these weft kernels (so a Tape records it and gradients flow back to the
source blocks); the topology around them is host-side bookkeeping (sparse/assemble.py).

Two shapes of work cover the operations:
- staging: `out[offset + k] = alpha * f(src[idx[k]])` (f: identity, transpose, a product
  with a second source, or a change of scalar type), so that several sources (the two terms
  of `alpha * x + beta * y`, the block products of `x @ y` and `beta * z`) line up in one
  array of contributions;
- gathering: each destination block is the sum of a range of contributions,
  `out[pos[b]] = sum(src[idx[k]] for k in [begin[b], end[b]))`.
"""

import functools

from .. import types as _t
from ..builtins.registry import BUILTINS
from ..lang.decorators import kernel
from ..runtime.array import array

_tid = BUILTINS["tid"]
_transpose = BUILTINS["transpose"]
_atomic_add = BUILTINS["atomic_add"]


def scalar_of(t):
    """The scalar type of a block type (itself for a scalar)."""
    return getattr(t, "dtype", t) if isinstance(t, _t.Matrix) else t


@functools.cache
def stage_kernel(src_t, dst_t, transpose: bool):
    """`out[offset + k] = alpha * T(src[idx[k]])` with T the identity or the transpose;
    `src_t` and `dst_t` share their scalar type."""
    s_t = scalar_of(dst_t)

    if transpose:
        @kernel
        def sparse_stage_t(src: array(dtype=src_t), idx: array(dtype=int), alpha: s_t, offset: int,
                           out: array(dtype=dst_t)):
            k = _tid()
            out[offset + k] = alpha * _transpose(src[idx[k]])

        return sparse_stage_t

    @kernel
    def sparse_stage(src: array(dtype=src_t), idx: array(dtype=int), alpha: s_t, offset: int,
                     out: array(dtype=dst_t)):
        k = _tid()
        out[offset + k] = alpha * src[idx[k]]

    return sparse_stage


@functools.cache
def convert_kernel(src_t, dst_t):
    """`out[k] = dst_t(src[idx[k]])`: the same blocks in another scalar type."""

    @kernel
    def sparse_convert(src: array(dtype=src_t), idx: array(dtype=int), out: array(dtype=dst_t)):
        k = _tid()
        out[k] = dst_t(src[idx[k]])

    return sparse_convert


@functools.cache
def product_kernel(x_t, y_t, dst_t):
    """`out[offset + k] = alpha * x[xi[k]] * y[yi[k]]`: the block products of `x @ y`."""
    s_t = scalar_of(dst_t)

    @kernel
    def sparse_block_product(x: array(dtype=x_t), xi: array(dtype=int), y: array(dtype=y_t),
                             yi: array(dtype=int), alpha: s_t, offset: int, out: array(dtype=dst_t)):
        k = _tid()
        out[offset + k] = alpha * (x[xi[k]] * y[yi[k]])

    return sparse_block_product


@functools.cache
def gather_kernel(block_t):
    """`out[pos[b]] = sum of src[idx[k]] for k in [begin[b], end[b])` (zero for an empty range)."""

    @kernel
    def sparse_gather(src: array(dtype=block_t), idx: array(dtype=int), begin: array(dtype=int),
                      end: array(dtype=int), pos: array(dtype=int), out: array(dtype=block_t)):
        b = _tid()
        s = block_t(0.0)
        if end[b] > begin[b]:
            s = src[idx[begin[b]]]  # (a single -0.0 block stays -0.0, as a plain copy would)
        for k in range(begin[b] + 1, end[b]):
            s = s + src[idx[k]]
        out[pos[b]] = s

    return sparse_gather


@functools.cache
def scatter_kernel(block_t):
    """The atomic reduction: `out[pos[k]] += src[k]` for every `pos[k] >= 0`."""

    @kernel
    def sparse_scatter_add(src: array(dtype=block_t), pos: array(dtype=int), out: array(dtype=block_t)):
        k = _tid()
        p = pos[k]
        if p >= 0:
            _atomic_add(out, p, src[k])

    return sparse_scatter_add


@functools.cache
def fill_kernel(block_t):
    """`out[pos[b]] = value`."""

    @kernel
    def sparse_fill(pos: array(dtype=int), value: block_t, out: array(dtype=block_t)):
        b = _tid()
        out[pos[b]] = value

    return sparse_fill


@functools.cache
def scale_kernel(block_t):
    """`out[pos[b]] = alpha * out[pos[b]]`, in place."""
    s_t = scalar_of(block_t)

    @kernel
    def sparse_scale(pos: array(dtype=int), alpha: s_t, out: array(dtype=block_t)):
        b = _tid()
        out[pos[b]] = alpha * out[pos[b]]

    return sparse_scale


@functools.cache
def mv_kernel(s_t, transpose: bool):
    """`y = alpha * A x + beta * y` over scalar views: A's values as (capacity, R, C), x and
    y as flat scalars. One thread per scalar row of the result. Rows of blocks (or, for the
    transposed product, the host-built column order of the blocks) list the blocks to sum."""

    @kernel
    def sparse_mv(values: array(dtype=s_t, ndim=3), begin: array(dtype=int), end: array(dtype=int),
                  order: array(dtype=int), cols: array(dtype=int), x: array(dtype=s_t),
                  alpha: s_t, beta: s_t, y: array(dtype=s_t)):
        i = _tid()
        R = values.shape[1]
        C = values.shape[2]
        if transpose:
            R = values.shape[2]
            C = values.shape[1]
        row = i // R
        r = i - row * R
        s = s_t(0.0)
        for k in range(begin[row], end[row]):
            b = order[k]
            j = cols[k]
            for c in range(C):
                if transpose:
                    s = s + values[b, c, r] * x[j * C + c]
                else:
                    s = s + values[b, r, c] * x[j * C + c]
        if beta == s_t(0.0):
            y[i] = alpha * s
        else:
            y[i] = alpha * s + beta * y[i]

    return sparse_mv
