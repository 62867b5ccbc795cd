"""Sparse operations inside a graph capture run when the graph does (weft/sparse/deferred.py),
and graphs holding them save and load."""

import numpy as np
import pytest

import weft as wp
from weft.sparse import (
    BSR_STATUS_ROW_CAPACITY_EXCEEDED,
    BSR_STATUS_SUCCESS,
    bsr_assign,
    bsr_axpy,
    bsr_from_triplets,
    bsr_mm,
    bsr_mv,
    bsr_set_from_triplets,
    bsr_set_transpose,
    bsr_transposed,
    bsr_zeros,
)


def dense(A):
    out = np.zeros((A.nrow, A.ncol))
    off = A.offsets.numpy()
    counts = None if A.row_counts is None else A.row_counts.numpy()
    for r in range(A.nrow):
        end = off[r + 1] if counts is None else off[r] + counts[r]
        for k in range(off[r], end):
            out[r, A.columns.numpy()[k]] += A.values.numpy()[k]
    return out


@wp.kernel
def fill_triplets(rows: wp.array(dtype=int), cols: wp.array(dtype=int), vals: wp.array(dtype=float),
                  shift: wp.array(dtype=int)):
    i = wp.tid()
    rows[i] = i
    cols[i] = (i + shift[0]) % rows.shape[0]
    vals[i] = float(i + 1)


def _triplet_arrays(n):
    return (wp.zeros(n, dtype=int), wp.zeros(n, dtype=int), wp.zeros(n, dtype=float),
            wp.array([0], dtype=int))


def test_topology_follows_work_recorded_before_it():
    n = 6
    rows, cols, vals, shift = _triplet_arrays(n)
    A = bsr_zeros(n, n, float)
    At = bsr_zeros(n, n, float)
    with wp.ScopedCapture() as capture:
        wp.launch(fill_triplets, dim=n, inputs=[rows, cols, vals, shift])
        bsr_set_from_triplets(A, rows, cols, vals)
        bsr_set_transpose(At, A)
    # nothing ran yet: the triplets are zeros and the matrices empty
    assert dense(At).sum() == 0.0
    for s in (0, 2, 5):
        shift.numpy()[0] = s
        wp.capture_launch(capture.graph)
        expected = np.zeros((n, n))
        expected[np.arange(n), (np.arange(n) + s) % n] = np.arange(1, n + 1)
        np.testing.assert_array_equal(dense(A), expected)
        np.testing.assert_array_equal(dense(At), expected.T)
        assert A.nnz_sync() == n


def test_outputs_and_storage_exist_at_capture_time():
    n = 4
    rows, cols, vals, shift = _triplet_arrays(n)
    with wp.ScopedCapture() as capture:
        wp.launch(fill_triplets, dim=n, inputs=[rows, cols, vals, shift])
        A = bsr_from_triplets(n, n, rows, cols, vals)
        T = bsr_transposed(A)
        P = bsr_mm(A, T)
        S = bsr_axpy(A, None, alpha=2.0)
        y = bsr_mv(A, wp.ones(n, dtype=float))
    arrays = [(M.columns.ptr, M.values.ptr) for M in (A, T, P, S)]
    shift.numpy()[0] = 1
    wp.capture_launch(capture.graph)
    wp.capture_launch(capture.graph)
    assert [(M.columns.ptr, M.values.ptr) for M in (A, T, P, S)] == arrays  # (no reallocation at replay)
    a = np.zeros((n, n))
    a[np.arange(n), (np.arange(n) + 1) % n] = np.arange(1, n + 1)
    np.testing.assert_array_equal(dense(T), a.T)
    np.testing.assert_array_equal(dense(P), a @ a.T)
    np.testing.assert_array_equal(dense(S), 2 * a)
    np.testing.assert_array_equal(y.numpy(), a.sum(axis=1))


def test_padded_capacity_restored_and_overflow_reported():
    A = bsr_zeros(2, 3, float, row_capacity=3)
    bsr_set_from_triplets(A, wp.array([0, 0, 1, 1], dtype=int), wp.array([0, 2, 1, 2], dtype=int),
                          wp.array([1.0, 2.0, 3.0, 4.0], dtype=float), topology="padded")
    At = bsr_zeros(3, 2, float, row_capacity=2)
    small = bsr_zeros(3, 2, float, row_capacity=1)
    with wp.ScopedCapture() as capture:
        bsr_set_transpose(At, A, topology="padded")
        bsr_set_transpose(small, A, topology="padded")
    for M in (At, small):
        M.offsets.zero_()
        M.row_counts.zero_()
        M._ensure_status().zero_()
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(At.offsets.numpy(), [0, 2, 4, 6])
    np.testing.assert_array_equal(dense(At), dense(A).T)
    assert At.status_sync() == BSR_STATUS_SUCCESS
    # a row over its capacity is left empty (row 2 gets two blocks, has room for one)
    np.testing.assert_array_equal(small.row_counts.numpy(), [1, 1, 0])
    assert small.status_sync() == BSR_STATUS_ROW_CAPACITY_EXCEEDED


def test_readbacks_of_recorded_topology_refused():
    A = bsr_zeros(2, 3, float, row_capacity=2)
    B = bsr_zeros(2, 2, float)
    with pytest.raises(NotImplementedError, match="topology update"):
        with wp.ScopedCapture():
            assert B.nnz_sync() == 0  # (a matrix no recorded call sets: read now)
            bsr_set_from_triplets(B, wp.array([0], dtype=int), wp.array([1], dtype=int), wp.array([1.0], dtype=float))
            B.nnz_sync()
    with pytest.raises(NotImplementedError, match="CPU APIC graph capture"):
        with wp.ScopedCapture():
            A.status_sync()
    assert A.status_sync() == BSR_STATUS_SUCCESS


def test_empty_assignment_recorded():
    dest = bsr_from_triplets(2, 2, wp.array([0], dtype=int), wp.array([0], dtype=int), wp.array([1.0], dtype=float))
    with wp.ScopedCapture() as capture:
        bsr_assign(dest, bsr_zeros(2, 2, float))
    np.testing.assert_array_equal(dest.offsets.numpy(), [0, 1, 1])
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(dest.offsets.numpy(), [0, 0, 0])


def test_tape_keeps_eager_topology():
    """With a Tape recording, the launches are recorded at capture time (the Tape needs them)."""
    A = bsr_from_triplets(2, 2, wp.array([0, 1], dtype=int), wp.array([1, 0], dtype=int),
                          wp.array([2.0, 3.0], dtype=float))
    x = wp.array([1.0, 1.0], dtype=float, requires_grad=True)
    with wp.ScopedCapture() as capture:
        tape = wp.Tape()
        with tape:
            y = bsr_mv(A, x)
    assert len(tape.launches) > 0
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(y.numpy(), [2.0, 3.0])


def test_saved_graph_rebuilds_sparse_calls(tmp_path):
    n = 5
    rows, cols, vals, shift = _triplet_arrays(n)
    A = bsr_zeros(n, n, float)
    At = bsr_zeros(n, n, float)
    with wp.ScopedCapture(apic=True) as capture:
        wp.launch(fill_triplets, dim=n, inputs=[rows, cols, vals, shift])
        bsr_set_from_triplets(A, rows, cols, vals)
        bsr_set_transpose(At, 2.0 * A)
    shift.numpy()[0] = 3
    path = str(tmp_path / "sparse")
    wp.capture_save(capture.graph, path, inputs={"shift": shift},
                    outputs={"offsets": At.offsets, "columns": At.columns, "values": At.values})
    loaded = wp.capture_load(path)
    for s in (3, 1):
        loaded.set_param("shift", wp.array([s], dtype=int))
        wp.capture_launch(loaded)
        offsets, columns, values = wp.zeros_like(At.offsets), wp.zeros_like(At.columns), wp.zeros_like(At.values)
        loaded.get_param("offsets", offsets)
        loaded.get_param("columns", columns)
        loaded.get_param("values", values)
        expected = np.zeros((n, n))
        expected[np.arange(n), (np.arange(n) + s) % n] = 2.0 * np.arange(1, n + 1)
        got = np.zeros((n, n))
        off = offsets.numpy()
        for r in range(n):
            for k in range(off[r], off[r + 1]):
                got[r, columns.numpy()[k]] += values.numpy()[k]
        np.testing.assert_array_equal(got, expected.T)
