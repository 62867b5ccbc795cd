"""`tid()` in a launch with more dimensions than it unpacks (Warp 1.19's rule).

`i = wp.tid()` gives the first index of the launch and `i, j = wp.tid()` the first two:
in a launch of shape (3, 4), `i = wp.tid()` runs 4 threads for each i in 0..2. A kernel is
compiled for the common case, a launch with as many dimensions as `tid()` unpacks, where
the single index is the linear one. For another launch shape, `on_grid(fn, ndim)` gives a
copy of the kernel whose every `tid` op reads its indices from an `ndim`-dimensional grid.
It is applied before differentiation, so the adjoint knows that several threads then share
an index (their adjoint writes must add, not overwrite).
"""

from __future__ import annotations

import copy

from ..ir.core import Function, walk
from ..ir.passes import clone_block


def on_grid(fn: Function, ndim: int) -> Function:
    """A copy of kernel `fn` whose `tid()` reads the leading indices of an `ndim`-dimensional launch."""
    new = copy.copy(fn)
    new.body = clone_block(fn.body, {})
    for op in walk(new.body):
        if op.name == "tid":
            dim = op.attrs["dim"]
            op.attrs = {**op.attrs, "dim": max(dim, 0), "of": ndim}  # (a fresh dict: clones share attrs)
    return new
