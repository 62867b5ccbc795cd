"""Block sparse row matrices, as Warp's `warp.sparse` (importable as `weft.sparse`, and as
`warp.sparse` when weft is imported as warp): `BsrMatrix`, construction from triplets,
copies, transposes, diagonals, sums, products with matrices and vectors.

Values are computed by weft kernels (recorded on a Tape, so gradients reach the source
blocks); topologies (which blocks exist, where they are stored) are host-side numpy
bookkeeping. Blocks are scalars or matrices (mat22, mat33, ...) of float32 or float64.
"""

from .build import BsrTripletMap, bsr_compress, bsr_from_triplets, bsr_set_from_mapped_values, bsr_set_from_triplets
from .funcs import bsr_block_index, bsr_row_index
from .matrix import (
    BSR_STATUS_ROW_CAPACITY_EXCEEDED,
    BSR_STATUS_SUCCESS,
    BsrMatrix,
    bsr_matrix_t,
    bsr_set_zero,
    bsr_zeros,
)
from .ops import (
    bsr_assign,
    bsr_axpy,
    bsr_axpy_work_arrays,
    bsr_copy,
    bsr_diag,
    bsr_get_diag,
    bsr_identity,
    bsr_mm,
    bsr_mm_work_arrays,
    bsr_mv,
    bsr_scale,
    bsr_set_diag,
    bsr_set_identity,
    bsr_set_transpose,
    bsr_transposed,
)

__all__ = [
    "BSR_STATUS_ROW_CAPACITY_EXCEEDED", "BSR_STATUS_SUCCESS", "BsrMatrix", "BsrTripletMap", "bsr_assign",
    "bsr_block_index", "bsr_row_index",
    "bsr_axpy", "bsr_axpy_work_arrays", "bsr_compress", "bsr_copy", "bsr_diag", "bsr_from_triplets",
    "bsr_get_diag", "bsr_identity", "bsr_matrix_t", "bsr_mm", "bsr_mm_work_arrays", "bsr_mv", "bsr_scale",
    "bsr_set_diag", "bsr_set_from_mapped_values", "bsr_set_from_triplets", "bsr_set_identity",
    "bsr_set_transpose", "bsr_set_zero", "bsr_transposed", "bsr_zeros",
]
