"""User kernels reading a BSR matrix's arrays: wp.sparse.bsr_block_index and bsr_row_index
inside kernels, a matrix-free row sum over offsets/columns/values, in-place edits of values
followed by bsr_mv, and the masked topology of bsr_set_from_triplets."""

import warp as wp
import warp.sparse as sp


@wp.kernel
def lookup(offsets: wp.array(dtype=int), columns: wp.array(dtype=int), values: wp.array(dtype=float),
           qr: wp.array(dtype=int), qc: wp.array(dtype=int), idx: wp.array(dtype=int), found: wp.array(dtype=float)):
    q = wp.tid()
    k = sp.bsr_block_index(qr[q], qc[q], offsets, columns)
    idx[q] = k
    if k >= 0:
        found[q] = values[k]
    else:
        found[q] = -1.0


@wp.kernel
def owner_rows(offsets: wp.array(dtype=int), nrow: int, rows_of: wp.array(dtype=int)):
    k = wp.tid()
    rows_of[k] = sp.bsr_row_index(offsets, nrow, k)


@wp.kernel
def weighted_row_sums(offsets: wp.array(dtype=int), columns: wp.array(dtype=int), values: wp.array(dtype=float),
                      sums: wp.array(dtype=float)):
    r = wp.tid()
    s = float(0.0)  # noqa: UP018 - a variable (a literal would be a constant)
    for k in range(offsets[r], offsets[r + 1]):
        s += values[k] * float(columns[k] + 1)
    sums[r] = s


@wp.kernel
def square_values(values: wp.array(dtype=float)):
    k = wp.tid()
    values[k] = values[k] * values[k]


def run():
    rows = wp.array([0, 0, 1, 3, 3, 3, 2], dtype=int)
    cols = wp.array([3, 1, 0, 0, 2, 3, 2], dtype=int)
    vals = wp.array([1.0, -2.0, 3.0, 0.5, -1.0, 2.5, 4.0], dtype=float)
    A = sp.bsr_from_triplets(4, 4, rows, cols, vals)
    nnz = A.nnz_sync()

    qr = wp.array([0, 0, 1, 3, 2, 3, 1], dtype=int)
    qc = wp.array([1, 2, 0, 3, 2, 1, 3], dtype=int)
    idx = wp.zeros(7, dtype=int)
    found = wp.zeros(7, dtype=float)
    wp.launch(lookup, dim=7, inputs=[A.offsets, A.columns, A.values, qr, qc], outputs=[idx, found])

    rows_of = wp.zeros(nnz + 2, dtype=int)
    wp.launch(owner_rows, dim=nnz + 2, inputs=[A.offsets, A.nrow], outputs=[rows_of])

    sums = wp.zeros(4, dtype=float)
    wp.launch(weighted_row_sums, dim=4, inputs=[A.offsets, A.columns, A.values], outputs=[sums])

    wp.launch(square_values, dim=nnz, inputs=[A.values])
    y = A @ wp.array([1.0, 2.0, 3.0, 4.0], dtype=float)

    # masked: only blocks already in A are updated; the (1, 1) triplet is dropped
    sp.bsr_set_from_triplets(A, wp.array([0, 1, 1, 3], dtype=int), wp.array([1, 1, 0, 0], dtype=int),
                             wp.array([10.0, 20.0, 30.0, 40.0], dtype=float), topology="masked")
    masked_nnz = A.nnz_sync()

    return {
        "columns": A.columns.numpy()[:nnz],
        "idx": idx.numpy(),
        "found": found.numpy(),
        "rows_of": rows_of.numpy(),
        "sums": sums.numpy(),
        "y": y.numpy(),
        "masked_nnz": masked_nnz,
        "masked_values": A.values.numpy()[:masked_nnz],
        "masked_columns": A.columns.numpy()[:masked_nnz],
    }
