"""Host-side topology of sparse results, and the launches that fill their values.

Every operation that produces a matrix lists its *contributions*: (row, column) pairs, each
with a block value in a staged array (or the user's triplet values). `assemble` decides the
destination topology (compact, padded or masked) and where each contribution lands;
`Plan.write` then sums each destination block's contributions with one gather kernel.
"""

from __future__ import annotations

import numpy as np

from .. import types as _t
from ..runtime import capture
from ..runtime.array import array
from ..runtime.launch import launch
from . import kernels as K
from .matrix import (
    BSR_STATUS_ROW_CAPACITY_EXCEEDED,
    BSR_STATUS_SUCCESS,
    BsrMatrix,
    block_shape_of,
    ensure_capacity,
    write_offsets,
)


def iarray(a, device) -> array:
    return array(np.ascontiguousarray(a, dtype=np.int32), dtype=_t.int32, device=device)


class Plan:
    """Where contributions go: `slot[k]` (storage position of contribution k, -1 when
    dropped) and `pos` (every active storage position of the destination, each of which the
    write sets: the sum of its contributions, or zero). `idx` lists the kept contributions
    by slot (stably), `begin`/`end` bound each position's run in it. A caller that has them
    from its own sort passes them, and may pass `slot` None with the number of
    contributions, `count`: the runs then follow one another in `idx`, and `slot` is made
    from them when asked for (a plain assembly never asks)."""

    def __init__(self, slot, pos: np.ndarray, idx=None, begin=None, end=None, count: int = 0):
        self._slot = None if slot is None else np.asarray(slot, dtype=np.int64)
        self._count = count
        self.pos = np.asarray(pos, dtype=np.int64)
        if idx is not None:
            self.idx, self.begin, self.end = idx, begin, end
            return
        kept = np.nonzero(self._slot >= 0)[0]
        order = np.argsort(self._slot[kept], kind="stable")
        self.idx = kept[order]
        sorted_slots = self._slot[self.idx]
        self.begin = np.searchsorted(sorted_slots, self.pos, side="left")
        self.end = np.searchsorted(sorted_slots, self.pos, side="right")

    @property
    def slot(self) -> np.ndarray:
        if self._slot is None:
            slot = np.full(self._count, -1, np.int64)
            slot[self.idx] = np.repeat(self.pos, self.end - self.begin)
            self._slot = slot
        return self._slot

    def of_all(self, keep: np.ndarray, n: int) -> Plan:
        """This plan of the contributions `keep` (indices into n contributions, ascending)
        as a plan of all n (the others dropped)."""
        if self._slot is None:
            return Plan(None, self.pos, keep[self.idx], self.begin, self.end, count=n)
        slot = np.full(n, -1, np.int64)
        slot[keep] = self._slot
        return Plan(slot, self.pos, keep[self.idx], self.begin, self.end)

    def write(self, src: array, dest_values: array, contribution_index: np.ndarray | None = None):
        """dest_values[pos[b]] = sum of the contributions of block b; contribution k's value
        is src[k] (or src[contribution_index[k]])."""
        if self.pos.size == 0:
            return
        dev = dest_values.device
        idx = self.idx if contribution_index is None else contribution_index[self.idx]
        launch(K.gather_kernel(K.scalar_of(dest_values.dtype)), dim=(int(self.pos.size), K.entries(dest_values.dtype)),
               inputs=[K.scalar_rows(src), iarray(idx, dev), iarray(self.begin, dev), iarray(self.end, dev),
                       iarray(self.pos, dev)],
               outputs=[K.scalar_rows(dest_values)], device=dev)


def assemble(dest: BsrMatrix, rows: np.ndarray, cols: np.ndarray, topology: str,
             nnz_bound: int | None = None, max_blocks: int | None = None) -> Plan:
    """Set `dest`'s topology to hold the blocks of the contributions at (rows, cols) (all in
    range) and return where each goes. compact: the sorted distinct blocks (at most
    `max_blocks`); padded: the same per row within the row capacities (a row that does not
    fit is left empty and the status reports the overflow); masked: the existing blocks of
    `dest` only."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    ncol = max(dest.ncol, 1)
    if topology == "masked":
        r, c, p = dest._active()
        keys = r * ncol + c
        order = np.argsort(keys, kind="stable")
        skeys = keys[order]
        ckeys = rows * ncol + cols
        at = np.searchsorted(skeys, ckeys)
        at_c = np.minimum(at, max(skeys.size - 1, 0))
        found = (at < skeys.size) & (skeys[at_c] == ckeys) if skeys.size else np.zeros(ckeys.size, bool)
        slot = np.where(found, p[order][at_c] if skeys.size else -1, -1)
        return Plan(slot, p)

    keys = rows * ncol + cols
    order = stable_order(keys, int(dest.nrow) * ncol)
    sorted_keys = keys[order]
    first = np.ones(keys.size, bool)  # (the first contribution of each distinct block, in key order)
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    uniq = sorted_keys[starts]
    kept = keys.size
    if max_blocks is not None and uniq.size > max_blocks:
        kept = int(starts[max_blocks])
        uniq, starts = uniq[:max_blocks], starts[:max_blocks]
    urows = uniq // ncol
    ucols = uniq % ncol
    if topology == "compact":
        n = int(uniq.size)
        counts = np.bincount(urows, minlength=dest.nrow)[: dest.nrow]
        offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int32)
        dest.row_counts = None
        write_offsets(dest, offsets)
        dest.nnz = max(n, int(nnz_bound or 0))
        ensure_capacity(dest, dest.nnz)
        cols_np = dest.columns.numpy()
        cols_np[:n] = ucols
        cols_np[n:] = -1
        dest._topology_changed()
        # (blocks are numbered in key order: the sort already lists each block's contributions)
        return Plan(None, np.arange(n), order[:kept], starts, np.append(starts[1:], kept), count=keys.size)

    if topology != "padded":
        raise ValueError(f"Unsupported topology policy: {topology}")
    inverse = np.full(keys.size, -1, np.int64)  # each contribution's block (-1: beyond max_blocks)
    inverse[order[:kept]] = np.repeat(np.arange(uniq.size), np.diff(np.append(starts, kept)))
    if dest.row_counts is None:
        raise ValueError("padded topology needs a destination with row capacities "
                         "(bsr_zeros(..., row_capacity=...))")
    off = dest._host_offsets()
    caps = off[1:] - off[:-1]
    first = np.searchsorted(urows, np.arange(dest.nrow))
    rank = np.arange(uniq.size) - first[urows] if uniq.size else np.zeros(0, np.int64)
    counts = np.bincount(urows, minlength=dest.nrow)[: dest.nrow]
    overflow = counts > caps
    counts = np.where(overflow, 0, counts)  # (a row over its capacity is left empty, as Warp's)
    fits = ~overflow[urows] if uniq.size else np.zeros(0, bool)
    block_pos = np.where(fits, off[urows] + rank, -1)
    dest.row_counts.numpy()[: dest.nrow] = counts
    dest.nnz = max(int(off[-1]), int(dest.nnz))
    ensure_capacity(dest, dest.nnz)
    dest.columns.numpy()[block_pos[fits]] = ucols[fits]
    dest._set_status(BSR_STATUS_SUCCESS if bool(np.all(fits)) else BSR_STATUS_ROW_CAPACITY_EXCEEDED)
    dest._topology_changed()
    slot = np.where(inverse >= 0, block_pos[np.maximum(inverse, 0)], -1) if uniq.size else inverse
    return Plan(slot, block_pos[fits])


#: keys with fewer than one descent in this many count as nearly sorted (stable_order)
NEARLY_SORTED_DESCENTS = 32


def stable_order(keys: np.ndarray, bound: int) -> np.ndarray:
    """The stable sorting permutation of non-negative int64 `keys` (all below `bound`):
    large arrays in no particular order through weft's radix sort kernels (only the bits
    below `bound`); small ones, nearly sorted ones (rows assembled in order: numpy's timsort
    takes them in one pass over their runs) and any during a graph capture (which would
    record the kernels, not run them) through numpy's."""
    from ..runtime.algorithms import KERNEL_SORT_FROM
    if keys.size < KERNEL_SORT_FROM or capture.capturing() or \
            np.count_nonzero(keys[1:] < keys[:-1]) < keys.size // NEARLY_SORTED_DESCENTS:
        return np.argsort(keys, kind="stable")
    from .. import sort_kernels  # (kernel-language code: imported on the first large sort)
    n = keys.size
    pairs_keys = array(shape=(2 * n,), dtype=_t.uint64, device="cpu")
    pairs_keys.numpy()[:n] = keys
    order = array(shape=(2 * n,), dtype=_t.uint32, device="cpu")
    order.numpy()[:n] = np.arange(n, dtype=np.uint32)
    sort_kernels.sort_pairs(pairs_keys, order, n, sort_kernels.UNSIGNED, 0, max(int(bound - 1).bit_length(), 1))
    return order.numpy()[:n].view(np.int32)  # (n < 2**31: an exact index)


def default_topology(dest: BsrMatrix, topology):
    """The topology policy of an operation writing `dest`: "compact" unless one is given,
    also for a padded `dest` (as in Warp: the rebuild drops its row capacities)."""
    if topology is None:
        return "compact"
    if topology not in ("compact", "padded", "masked"):
        raise ValueError(f"Unsupported topology policy: {topology}")
    return topology


def stage(parts, block_t, device, requires_grad=False) -> array:
    """One array of contributions from several sources: `parts` lists
    (source values, source indices, alpha, transpose) and, for block products,
    ("product", x values, x indices, y values, y indices, alpha)."""
    total = sum(int(len(p[2] if p[0] == "product" else p[1])) for p in parts)
    out = array(shape=(total,), dtype=block_t, device=device, requires_grad=requires_grad)
    s_t = K.scalar_of(block_t)
    out_rows = K.scalar_rows(out)
    e = K.entries(block_t)
    offset = 0
    for p in parts:
        if p[0] == "product":
            _, x, xi, y, yi, alpha = p
            n = len(xi)
            if n:
                (_r, inner), (_i, cols) = block_shape_of(x.dtype), block_shape_of(y.dtype)
                launch(K.product_kernel(s_t), dim=(n, e),
                       inputs=[K.scalar_rows(x), iarray(xi, device), K.scalar_rows(y), iarray(yi, device), s_t(alpha),
                               offset, inner, cols],
                       outputs=[out_rows], device=device)
        else:
            src, idx, alpha, transpose = p
            n = len(idx)
            if n:
                rows, cols = block_shape_of(src.dtype)
                launch(K.stage_kernel(s_t), dim=(n, e),
                       inputs=[K.scalar_rows(src), iarray(idx, device), s_t(alpha), offset, rows, cols,
                               int(bool(transpose))],
                       outputs=[out_rows], device=device)
        offset += n
    return out


def overlaps(a: array, b: array) -> bool:
    """Whether two arrays share memory (so that writing one may change what the other reads)."""
    if a is None or b is None or a.size == 0 or b.size == 0:
        return False
    a_end = a.ptr + a.size * a.numpy().itemsize
    b_end = b.ptr + b.size * b.numpy().itemsize
    return a.ptr < b_end and b.ptr < a_end
