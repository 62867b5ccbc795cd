"""Building matrices from triplets (`bsr_set_from_triplets`, `bsr_from_triplets`, reusable
`BsrTripletMap`s) and compressing storage with duplicates (`bsr_compress`)."""

from __future__ import annotations

import numpy as np

from .. import types as _t
from ..runtime.array import array
from ..runtime.launch import launch
from . import kernels as K
from .assemble import Plan, assemble, default_topology, iarray, overlaps, stage
from .deferred import deferrable, presize
from .matrix import BsrMatrix, block_shape_of, ensure_capacity, make_block_type, types_equal


class BsrTripletMap:
    """Where each triplet of a `bsr_set_from_triplets(..., build_mapping=...)` call went, so
    that `bsr_set_from_mapped_values` can refill the values of the same topology."""

    def __init__(self, capacity: int = 0, device=None):
        from ..runtime.device import get_device
        self._device = get_device(device)
        self.triplet_count = 0
        self._built = False
        self._storage = self._allocate(int(capacity))
        self._pos = np.zeros(0, np.int64)
        self._nblocks = 0

    def _allocate(self, capacity):
        return tuple(array(np.zeros(capacity, np.int32), dtype=_t.int32, device=self._device) for _ in range(3))

    @property
    def device(self):
        return self._device

    @property
    def capacity(self) -> int:
        return self._storage[0].shape[0]

    @property
    def _triplet_blocks(self) -> array:
        return self._storage[0][: self.triplet_count]

    @property
    def _triplet_indices(self) -> array:
        return self._storage[1][: self.triplet_count]

    @property
    def _block_ends(self) -> array:
        return self._storage[2][: self._nblocks]

    def _build(self, plan: Plan, triplet_count: int):
        if triplet_count > self.capacity or plan.pos.size > self.capacity:
            self._storage = self._allocate(max(triplet_count, int(plan.pos.size)))
        self.triplet_count = triplet_count
        slots = plan.slot[:triplet_count]
        self._storage[0].numpy()[:triplet_count] = slots
        self._storage[1].numpy()[: plan.idx.size] = plan.idx
        self._storage[1].numpy()[plan.idx.size: triplet_count] = -1
        self._nblocks = int(plan.pos.size)
        self._storage[2].numpy()[: self._nblocks] = plan.end
        self._plan = plan
        self._built = True


def _as_blocks(values: array, block_t, what="values") -> array:
    """`values` seen as an array of `block_t` (scalar arrays of shape (n, rows, cols) view
    their memory as blocks)."""
    if not values.is_contiguous:
        raise ValueError(f"bsr: the {what} array must be contiguous")
    if types_equal(values.dtype, block_t) and values.ndim == 1:
        return values
    shape = block_shape_of(block_t)
    n = values.shape[0]
    scalar = K.scalar_of(block_t)
    if values.dtype is not scalar or values.size != n * shape[0] * shape[1]:
        raise ValueError(f"bsr: {what} of dtype {values.dtype!r} and shape {values.shape} do not "
                         f"match the block type {block_t!r}")
    return array(ptr=values.ptr, shape=(n,), dtype=block_t, device=values.device, deleter=values)


def _nonzero_blocks(values: array, n: int) -> np.ndarray:
    if n == 0:
        return np.zeros(0, bool)
    v = values.numpy()[:n].reshape(n, -1)
    return np.any(v != 0, axis=1)


def _check_triplets(dest, rows, columns, topology, prune_numerical_zeros, build_mapping, values=None,
                    count=None) -> str:
    if rows.dtype is not _t.int32 or columns.dtype is not _t.int32:
        raise TypeError("Rows and columns arrays must be of type int32")
    if rows.shape[0] != columns.shape[0]:
        raise ValueError(f"Rows and columns arrays must have the same length, got {rows.shape[0]} and "
                         f"{columns.shape[0]}")
    if values is not None and _as_blocks(values, dest.dtype).shape[0] != rows.shape[0]:
        raise ValueError(f"Values and rows arrays must have the same length, got "
                         f"{_as_blocks(values, dest.dtype).shape[0]} blocks and {rows.shape[0]} rows")
    if count is not None:
        if count.shape != (1,):
            raise ValueError(f"Count array must be a single-element array, got {count.shape}")
        if count.dtype is not _t.int32:
            raise TypeError("Count array must be of type int32")
    if build_mapping is not None and not isinstance(build_mapping, (bool, BsrTripletMap)):
        raise TypeError("build_mapping must be a bool or a BsrTripletMap")
    topology = default_topology(dest, topology)
    if build_mapping:
        if topology == "masked":
            raise ValueError("build_mapping requires topology 'compact' or 'padded'")
        if prune_numerical_zeros:
            raise ValueError("build_mapping requires prune_numerical_zeros=False")
        if isinstance(build_mapping, BsrTripletMap) and build_mapping.device != dest.device:
            raise ValueError("the triplet map must be on the same device as the matrix")
    return topology


def _defer_triplets(a: dict):
    dest, values = a["dest"], a["values"]
    topology = _check_triplets(dest, a["rows"], a["columns"], a["topology"], a["prune_numerical_zeros"],
                               a["build_mapping"], values, a["count"])
    n = min(a["rows"].shape[0], a["columns"].shape[0])
    if values is not None:
        n = min(n, _as_blocks(values, dest.dtype).shape[0])
    if topology == "compact":
        presize(dest, blocks=n, requires_grad=values is not None and values.requires_grad)
    mapping = a["build_mapping"]
    if mapping and not isinstance(mapping, BsrTripletMap):
        mapping = a["build_mapping"] = BsrTripletMap(0, dest.device)
    return (mapping or None), [dest]


@deferrable(_defer_triplets)
def bsr_set_from_triplets(dest: BsrMatrix, rows: array, columns: array, values: array | None = None,
                          count: array | None = None, prune_numerical_zeros: bool = True,
                          topology=None, build_mapping=None):
    """Set `dest` to the sum of the blocks `values[k]` at (`rows[k]`, `columns[k]`) (only
    its topology when `values` is None). Triplets out of range are ignored, and zero blocks
    too with `prune_numerical_zeros`. Returns the `BsrTripletMap` when `build_mapping`."""
    topology = _check_triplets(dest, rows, columns, topology, prune_numerical_zeros, build_mapping, values, count)
    n = min(rows.shape[0], columns.shape[0])
    if count is not None:
        n = max(0, min(n, int(count.numpy()[0])))
    if values is not None:
        values = _as_blocks(values, dest.dtype)
        n = min(n, values.shape[0])
    r = rows.numpy()[:n].astype(np.int64)
    c = columns.numpy()[:n].astype(np.int64)
    valid = (r >= 0) & (r < dest.nrow) & (c >= 0) & (c < dest.ncol)
    if values is not None and prune_numerical_zeros:
        valid &= _nonzero_blocks(values, n)
    keep = np.nonzero(valid)[0]
    plan = assemble(dest, r[keep], c[keep], topology, nnz_bound=n).of_all(keep, n)
    if values is not None:
        if overlaps(values, dest.values):
            values = stage([(values, np.arange(n), 1.0, False)], dest.dtype, dest.device, values.requires_grad)
        ensure_capacity(dest, int(plan.pos.max()) + 1 if plan.pos.size else 0, values.requires_grad)
        plan.write(values, dest.values)
    if build_mapping:
        mapping = build_mapping if isinstance(build_mapping, BsrTripletMap) else BsrTripletMap(0, dest.device)
        mapping._build(plan, n)
        return mapping
    return None


def _defer_mapped(a: dict):
    if not isinstance(a["mapping"], BsrTripletMap):
        raise TypeError(f"Mapping must be a BsrTripletMap, got {type(a['mapping']).__name__}")
    return None, [a["dest"]]


@deferrable(_defer_mapped)
def bsr_set_from_mapped_values(dest: BsrMatrix, mapping: BsrTripletMap, values: array, reduction="gather"):
    """Refill `dest`'s values from new triplet values through a map built by
    `bsr_set_from_triplets(..., build_mapping=...)`: by gathering each block's triplets, or
    by atomic accumulation."""
    if not isinstance(mapping, BsrTripletMap):
        raise TypeError(f"Mapping must be a BsrTripletMap, got {type(mapping).__name__}")
    if not mapping._built:
        raise ValueError("the triplet map has not been built (pass it to bsr_set_from_triplets first)")
    values = _as_blocks(values, dest.dtype)
    plan = mapping._plan
    ensure_capacity(dest, int(plan.pos.max()) + 1 if plan.pos.size else 0, values.requires_grad)
    if reduction == "gather":
        plan.write(values, dest.values)
    elif reduction == "atomic":
        dev = dest.device
        s_t, e = K.scalar_of(dest.dtype), K.entries(dest.dtype)
        if plan.pos.size:
            zero = array(shape=(e,), dtype=s_t, device=dev)
            zero.zero_()
            launch(K.fill_kernel(s_t), dim=(int(plan.pos.size), e), inputs=[iarray(plan.pos, dev), zero],
                   outputs=[K.scalar_rows(dest.values)], device=dev)
        if mapping.triplet_count:
            launch(K.scatter_kernel(s_t), dim=(mapping.triplet_count, e),
                   inputs=[K.scalar_rows(values), iarray(plan.slot[: mapping.triplet_count], dev)],
                   outputs=[K.scalar_rows(dest.values)], device=dev)
    else:
        raise ValueError(f"Unsupported reduction {reduction!r} (expected 'gather' or 'atomic')")


def bsr_from_triplets(rows_of_blocks: int, cols_of_blocks: int, rows: array, columns: array, values: array,
                      prune_numerical_zeros: bool = True) -> BsrMatrix:
    """A new compact matrix from triplets (see `bsr_set_from_triplets`); the block type is
    `values.dtype`, or a matrix of its trailing dimensions for scalar arrays of ndim 3."""
    block_t = values.dtype
    if values.ndim == 3:
        block_t = make_block_type(values.shape[1:], values.dtype)
    A = BsrMatrix(rows_of_blocks, cols_of_blocks, block_t, values.device)
    bsr_set_from_triplets(A, rows, columns, values, prune_numerical_zeros=prune_numerical_zeros)
    return A


@deferrable(lambda a: (a["src"], [a["src"]]))
def bsr_compress(src: BsrMatrix, prune_numerical_zeros: bool = True, inplace: bool = False, topology=None,
                 structure_only: bool = False) -> BsrMatrix:
    """Merge duplicate blocks of each row (summing them), sort rows by column, and drop
    columns out of range (and zero blocks with `prune_numerical_zeros`). `topology`
    "compact" (default) or "padded" (keeps the row capacities). Returns `src`."""
    if topology is None:
        topology = "compact"
    if topology not in ("compact", "padded"):
        raise ValueError(f"Unsupported topology policy: {topology}")
    r, c, p = src._active()
    valid = (c >= 0) & (c < src.ncol)
    if prune_numerical_zeros and not structure_only and p.size:
        valid &= _nonzero_blocks(array(src.values.numpy()[p], dtype=src.dtype, device=src.device), p.size)
    r, c, p = r[valid], c[valid], p[valid]
    staged = None
    if not structure_only:
        staged = stage([(src.values, p, 1.0, False)], src.dtype, src.device, src.values.requires_grad)
    if topology == "padded":
        if src.row_counts is None:
            from .matrix import _capacity_offsets  # noqa: PLC0415
            begin, end = src._row_ranges()
            src.offsets.numpy()[: src.nrow + 1] = _capacity_offsets(src.nrow, iarray(end - begin, src.device))
        src.row_counts = iarray(np.zeros(src.nrow), src.device)
    plan = assemble(src, r, c, topology)
    if not inplace and not structure_only:
        src.values = array(shape=(src.values.shape[0],), dtype=src.dtype, device=src.device,
                           requires_grad=src.values.requires_grad)
        src.values.zero_()
    if staged is not None:
        plan.write(staged, src.values)
    return src
