"""Functions for kernels that read BSR storage (Warp's `bsr_row_index`, `bsr_block_index`):
`offsets`, `columns` and, for padded matrices, `row_counts` passed as arrays."""

from .. import types as _t
from ..builtins.registry import BUILTINS
from ..lang.decorators import func
from ..runtime.array import array

_where, _lower_bound = BUILTINS["where"], BUILTINS["lower_bound"]


@func
def bsr_row_index(offsets: array(dtype=_t.int32), row_count: int, block_index: int) -> int:
    """The row of the block stored at `block_index` (compact storage), or -1."""
    return _where(block_index < offsets[row_count], _lower_bound(offsets, 0, row_count + 1, block_index + 1), 0) - 1


@func
def bsr_row_index(offsets: array(dtype=_t.int32), row_count: int, block_index: int,  # noqa: F811 - overload
                  row_counts: array(dtype=_t.int32)) -> int:
    """The row of the block stored at `block_index` (padded storage: -1 in a row's unused
    tail; a null `row_counts`, as a compact matrix's, reads compact storage)."""
    r = bsr_row_index(offsets, row_count, block_index)
    if row_counts:
        if r >= 0:
            if block_index - offsets[r] >= row_counts[r]:
                r = -1
    return r


@func
def _block_in_row(bsr_columns: array(dtype=_t.int32), beg: int, end: int, col: int) -> int:
    """Where column `col` is among a row's sorted columns `bsr_columns[beg:end]`, or -1."""
    idx = -1
    if end > beg:
        k = _lower_bound(bsr_columns, beg, end, col)
        if k < end:
            if bsr_columns[k] == col:
                idx = k
    return idx


@func
def _has_row(bsr_offsets: array(dtype=_t.int32), row: int) -> bool:
    """Whether `row` is a row of the storage `bsr_offsets` describes (-1 and rows past the
    end are not: the lookups below find no block there, where Warp reads out of bounds)."""
    return row >= 0 and row + 1 < bsr_offsets.shape[0]


@func
def bsr_block_index(row: int, col: int, bsr_offsets: array(dtype=_t.int32), bsr_columns: array(dtype=_t.int32)) -> int:
    """Where block (row, col) is stored (compact storage, sorted rows), or -1 (also for a
    row out of range)."""
    idx = -1
    if _has_row(bsr_offsets, row):
        idx = _block_in_row(bsr_columns, bsr_offsets[row], bsr_offsets[row + 1], col)
    return idx


@func
def bsr_block_index(row: int, col: int, bsr_offsets: array(dtype=_t.int32),  # noqa: F811 - overload
                    bsr_columns: array(dtype=_t.int32), bsr_row_counts: array(dtype=_t.int32)) -> int:
    """Where block (row, col) is stored (padded storage; compact when `bsr_row_counts` is
    null), or -1 (also for a row out of range)."""
    idx = -1
    if _has_row(bsr_offsets, row):
        beg = bsr_offsets[row]
        end = bsr_offsets[row + 1]
        if bsr_row_counts:
            end = beg + bsr_row_counts[row]
        idx = _block_in_row(bsr_columns, beg, end, col)
    return idx
