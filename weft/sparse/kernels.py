"""The value kernels of `weft.sparse`: every block value a sparse operation produces is
computed by one of these weft kernels (so a Tape records it and gradients flow back to the
source blocks); the topology around them is host-side bookkeeping (sparse/assemble.py).

The kernels see block arrays as 2-D scalar arrays, one row per block (`scalar_rows`: a view
of the same memory whose `.grad` views the block array's gradient), and run one thread per
block entry: the same small scalar kernel serves every block shape (a 16x16 block costs no
more to compile than a 2x2 one).

Two shapes of work cover the operations:
- staging: `out[offset + k] = alpha * f(src[idx[k]])` (f: identity, transpose, a product
  with a second source, or a change of scalar type), so that several sources (the two terms
  of `alpha * x + beta * y`, the block products of `x @ y` and `beta * z`) line up in one
  array of contributions;
- gathering: each destination block is the sum of a range of contributions,
  `out[pos[b]] = sum(src[idx[k]] for k in [begin[b], end[b]))`.
"""

import functools
import typing

from .. import types as _t
from ..builtins.registry import BUILTINS
from ..lang.decorators import func, kernel
from ..runtime.array import array

_tid = BUILTINS["tid"]
_atomic_add = BUILTINS["atomic_add"]


def scalar_of(t):
    """The scalar type of a block type (itself for a scalar)."""
    return t.dtype if isinstance(t, _t.Matrix) else t


def entries(t) -> int:
    """The number of scalars of a block type."""
    if isinstance(t, _t.Matrix):
        r, c = t._shape_
        return r * c
    return 1


def scalar_rows(a: array) -> array:
    """A contiguous array of blocks as a (blocks, entries) array of scalars, the same memory
    (and the same gradient memory, when `a` has one)."""
    if not a.is_contiguous:
        raise ValueError("bsr: block arrays must be contiguous")
    s_t, e = scalar_of(a.dtype), entries(a.dtype)
    grad = None if a.grad is None else scalar_rows(a.grad)
    return array(ptr=a.ptr, shape=(a.shape[0], e), dtype=s_t, device=a.device, deleter=a, grad=grad)


def scalars(a: array) -> array:
    """A contiguous array of blocks as a 1-D array of its scalars (block after block, each
    row-major), the same memory and gradient memory. (`regroup_kernel` reads these.)"""
    return scalar_rows(a).reshape(-1)


@functools.cache
def stage_kernel(s_t):
    """`out[offset + k] = alpha * T(src[idx[k]])` over scalar rows: T the identity, or (with
    `transpose`) the transpose of R x C blocks."""

    @kernel
    def sparse_stage(src: array(dtype=s_t, ndim=2), idx: array(dtype=int), alpha: s_t, offset: int,
                     rows: int, cols: int, transpose: int, out: array(dtype=s_t, ndim=2)):
        k, e = _tid()
        s = e
        if transpose != 0:  # out is cols x rows: its entry (a, b) is the source's (b, a)
            a = e // rows
            b = e - a * rows
            s = b * cols + a
        out[offset + k, e] = alpha * src[idx[k], s]

    return sparse_stage


@functools.cache
def convert_kernel(src_t, dst_t):
    """`out[k] = dst_t(src[idx[k]])` over scalar rows: the same blocks in another scalar type."""

    @kernel
    def sparse_convert(src: array(dtype=src_t, ndim=2), idx: array(dtype=int), out: array(dtype=dst_t, ndim=2)):
        k, e = _tid()
        out[k, e] = dst_t(src[idx[k], e])

    return sparse_convert


@functools.cache
def product_kernel(s_t):
    """`out[offset + k] = alpha * x[xi[k]] @ y[yi[k]]` over scalar rows: (rows x inner) times
    (inner x cols) blocks, one thread per entry of the product."""

    @kernel
    def sparse_block_product(x: array(dtype=s_t, ndim=2), xi: array(dtype=int), y: array(dtype=s_t, ndim=2),
                             yi: array(dtype=int), alpha: s_t, offset: int, inner: int, cols: int,
                             out: array(dtype=s_t, ndim=2)):
        k, e = _tid()
        r = e // cols
        c = e - r * cols
        s = s_t(0.0)
        for m in range(inner):
            s = s + x[xi[k], r * inner + m] * y[yi[k], m * cols + c]
        out[offset + k, e] = alpha * s

    return sparse_block_product


@functools.cache
def gather_kernel(s_t):
    """`out[pos[b]] = sum of src[idx[k]] for k in [begin[b], end[b])` (zero for an empty range)."""

    @kernel
    def sparse_gather(src: array(dtype=s_t, ndim=2), idx: array(dtype=int), begin: array(dtype=int),
                      end: array(dtype=int), pos: array(dtype=int), out: array(dtype=s_t, ndim=2)):
        b, e = _tid()
        s = s_t(0.0)
        if end[b] > begin[b]:
            s = src[idx[begin[b]], e]  # (a single -0.0 stays -0.0, as a plain copy would)
        for k in range(begin[b] + 1, end[b]):
            s = s + src[idx[k], e]
        out[pos[b], e] = s

    return sparse_gather


@functools.cache
def regroup_kernel(s_t):
    """Re-blocking: `out[pos[b], e] = alpha * sum of src[entry[k]]` over the scalar
    contributions `k = idx[j]`, j in [begin[b], end[b]), whose destination entry `at[k]`
    is e (zero for none). `src` is a 1-D array of scalars (the source blocks' entries)."""

    @kernel
    def sparse_regroup(src: array(dtype=s_t), entry: array(dtype=int), at: array(dtype=int),
                       idx: array(dtype=int), begin: array(dtype=int), end: array(dtype=int),
                       pos: array(dtype=int), alpha: s_t, out: array(dtype=s_t, ndim=2)):
        b, e = _tid()
        s = s_t(0.0)
        for j in range(begin[b], end[b]):
            k = idx[j]
            if at[k] == e:
                s = s + src[entry[k]]
        out[pos[b], e] = alpha * s

    return sparse_regroup


@functools.cache
def scatter_kernel(s_t):
    """The atomic reduction: `out[pos[k]] += src[k]` for every `pos[k] >= 0`."""

    @kernel
    def sparse_scatter_add(src: array(dtype=s_t, ndim=2), pos: array(dtype=int), out: array(dtype=s_t, ndim=2)):
        k, e = _tid()
        p = pos[k]
        if p >= 0:
            _atomic_add(out, p, e, src[k, e])

    return sparse_scatter_add


@functools.cache
def fill_kernel(s_t):
    """`out[pos[b]] = value` (value: the entries of one block)."""

    @kernel
    def sparse_fill(pos: array(dtype=int), value: array(dtype=s_t), out: array(dtype=s_t, ndim=2)):
        b, e = _tid()
        out[pos[b], e] = value[e]

    return sparse_fill


@functools.cache
def scale_kernel(s_t):
    """`out[pos[b]] = alpha * out[pos[b]]`, in place."""

    @kernel
    def sparse_scale(pos: array(dtype=int), alpha: s_t, out: array(dtype=s_t, ndim=2)):
        b, e = _tid()
        out[pos[b], e] = alpha * out[pos[b], e]

    return sparse_scale


@func
def _scaled_into(y: array(dtype=typing.Any), i: int, alpha: typing.Any, s: typing.Any, beta: typing.Any):
    """y[i] = alpha s + beta y[i], where y[i] is not read when beta is 0 (it may hold NaN)."""
    if beta == 0.0:
        y[i] = alpha * s
    else:
        y[i] = alpha * s + beta * y[i]


@functools.cache
def mv_transposed_kernel(s_t):
    """`y = alpha * A^T x + beta * y` over scalar views: A's values as (capacity, R, C), x and
    y as flat scalars. One thread per scalar row of the result; `begin`/`end` give each
    block column's range of a host-built order of the blocks (`order`: storage position,
    `rows`: the block's row)."""

    @kernel
    def sparse_mv_transposed(values: array(dtype=s_t, ndim=3), begin: array(dtype=int), end: array(dtype=int),
                             order: array(dtype=int), rows: array(dtype=int), x: array(dtype=s_t),
                             alpha: s_t, beta: s_t, y: array(dtype=s_t)):
        i = _tid()
        R = values.shape[2]
        C = values.shape[1]
        col = i // R
        r = i - col * R
        s = s_t(0.0)
        for k in range(begin[col], end[col]):
            b = order[k]
            j = rows[k]
            for c in range(C):
                s = s + values[b, c, r] * x[j * C + c]
        _scaled_into(y, i, alpha, s, beta)

    return sparse_mv_transposed


@functools.cache
def mv_rows_kernel(s_t, counted: bool):
    """`y = alpha * A x + beta * y` reading the topology itself: row `row`'s blocks are
    storage positions offsets[row] .. offsets[row + 1] (or offsets[row] + row_counts[row]
    when `counted`, a padded topology), columns outside [0, ncol) skipped. The blocks are
    summed in storage order."""

    @kernel
    def sparse_mv_rows(values: array(dtype=s_t, ndim=3), offsets: array(dtype=int), row_counts: array(dtype=int),
                       columns: array(dtype=int), ncol: int, x: array(dtype=s_t), alpha: s_t, beta: s_t,
                       y: array(dtype=s_t)):
        i = _tid()
        R = values.shape[1]
        C = values.shape[2]
        row = i // R
        r = i - row * R
        begin = offsets[row]
        end = offsets[row + 1]
        if counted:
            end = begin + row_counts[row]
        s = s_t(0.0)
        for b in range(begin, end):
            j = columns[b]
            if j >= 0 and j < ncol:
                for c in range(C):
                    s = s + values[b, r, c] * x[j * C + c]
        _scaled_into(y, i, alpha, s, beta)

    return sparse_mv_rows
