"""weft.sparse under a Tape, checked against float64 central finite differences: products
whose x is their y, re-blocking copies, the transposed product (its cached block order);
which results require gradients (Warp's rules); the kernel lookups (`bsr_block_index`,
`bsr_row_index`) out of range and on compact matrices."""

import numpy as np
import pytest

import weft as wp
from weft.sparse import (
    bsr_assign,
    bsr_axpy,
    bsr_block_index,
    bsr_copy,
    bsr_diag,
    bsr_from_triplets,
    bsr_mm,
    bsr_mv,
    bsr_row_index,
    bsr_set_from_triplets,
    bsr_transposed,
    bsr_zeros,
)

ROWS = np.array([0, 1, 2, 2, 0, 1], np.int32)
COLS = np.array([1, 0, 2, 0, 0, 2], np.int32)


@wp.kernel
def weighted_squares(v: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, v[i] * v[i] * wp.float64(i + 1))


def loss_of(v: wp.array) -> wp.array:
    """sum_i (i + 1) v_i^2 over a float64 vector."""
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(weighted_squares, dim=v.size, inputs=[v, loss])
    return loss


def finite_differences(f, *args, h=1e-6):
    """Central differences of the scalar f(*args) with respect to each float64 array argument."""
    grads = []
    for k, a in enumerate(args):
        g = np.zeros(a.size)
        for i in range(a.size):
            lo, hi = [x.copy() for x in args], [x.copy() for x in args]
            lo[k].reshape(-1)[i] -= h
            hi[k].reshape(-1)[i] += h
            g[i] = (f(*hi) - f(*lo)) / (2 * h)
        grads.append(g.reshape(a.shape))
    return grads


def test_aliased_mv_gradients_match_finite_differences():
    """y := A y + 0.5 y twice (x is y): the copy of x is recorded, so gradients reach A and
    the initial y through both products."""
    def forward(vals_np, y_np, tape=None):
        vals = wp.array(vals_np, dtype=wp.float64, requires_grad=True)
        y = wp.array(y_np, dtype=wp.float64, requires_grad=True)
        with tape or wp.Tape():
            A = bsr_from_triplets(3, 3, wp.array(ROWS), wp.array(COLS), vals)
            bsr_mv(A, y, y, alpha=1.0, beta=0.5)
            bsr_mv(A, y, y, alpha=-0.5, beta=1.0)
            loss = loss_of(y)
        return vals, y, loss

    vals_np, y_np = np.array([1.0, -2.0, 0.5, 1.5, 3.0, -0.7]), np.array([0.3, 0.2, -0.1])
    tape = wp.Tape()
    vals, y, loss = forward(vals_np, y_np, tape)
    tape.backward(loss)
    fd_vals, fd_y = finite_differences(lambda v, w: forward(v, w)[2].numpy()[0], vals_np, y_np)
    np.testing.assert_allclose(vals.grad.numpy(), fd_vals, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), fd_y, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("src_shape, dest_shape", [((2, 2), (1, 1)), ((2, 2), (1, 2)), ((1, 1), (2, 2)),
                                                   ((2, 1), (2, 2)), ((2, 2), (4, 2))])
def test_reblocking_copy_gradients_match_finite_differences(src_shape, dest_shape):
    """bsr_copy into another block shape (scaled, duplicates summed where small blocks merge),
    then a product with a fixed vector and a weighted sum of squares."""
    R, C = src_shape
    block_t = wp.float64 if src_shape == (1, 1) else wp.types.matrix(shape=src_shape, dtype=wp.float64)
    rng = np.random.default_rng(4)
    rows, cols = ROWS.repeat(2) % 2, COLS.repeat(2) % 2  # (a 2 x 2 matrix of blocks, duplicates)
    vals_np = rng.standard_normal((rows.size, R, C)) if src_shape != (1, 1) else rng.standard_normal(rows.size)
    x_np = rng.standard_normal(2 * C)

    def forward(v, tape=None):
        vals = wp.array(v, dtype=block_t, requires_grad=True)
        with tape or wp.Tape():
            A = bsr_from_triplets(2, 2, wp.array(rows), wp.array(cols), vals)
            B = bsr_copy(0.5 * A, block_shape=dest_shape)
            y = wp.zeros(2 * R, dtype=wp.float64, requires_grad=True)  # (flat scalars: any block shape)
            bsr_mv(B, wp.array(x_np, dtype=wp.float64), y)
            loss = loss_of(y)
        return vals, B, loss

    tape = wp.Tape()
    vals, B, loss = forward(vals_np, tape)
    tape.backward(loss)
    (fd,) = finite_differences(lambda v: forward(v)[2].numpy()[0], vals_np)
    np.testing.assert_allclose(vals.grad.numpy().reshape(fd.shape), fd, rtol=1e-6, atol=1e-6)
    assert B.values.requires_grad


def test_reblocking_assign_gradients_with_scalar_conversion_and_masks():
    """bsr_assign of float32 2x2 blocks into a float64 CSR matrix (masked to its own
    topology), against finite differences of the float32 values (the conversion is exact)."""
    rng = np.random.default_rng(5)
    vals_np = rng.standard_normal((ROWS.size, 2, 2)).astype(np.float32)
    w = rng.standard_normal(36)

    def forward(v, tape=None):
        vals = wp.array(v, dtype=wp.mat22f, requires_grad=True)
        with tape or wp.Tape():
            A = bsr_from_triplets(3, 3, wp.array(ROWS), wp.array(COLS), vals)
            diagonals = np.arange(6, dtype=np.int32)
            D = bsr_from_triplets(6, 6, wp.array(np.tile(diagonals, 2)),
                                  wp.array(np.concatenate((diagonals, diagonals[::-1]))),
                                  wp.ones(12, dtype=wp.float64))
            D.values.requires_grad = True
            bsr_assign(D, 3.0 * A, topology="masked")  # (keeps D's diagonal and anti-diagonal)
            y = bsr_mv(D, wp.array(w[:6], dtype=wp.float64, requires_grad=True))
            loss = loss_of(y)
        return vals, loss

    tape = wp.Tape()
    vals, loss = forward(vals_np, tape)
    tape.backward(loss)
    (fd,) = finite_differences(lambda v: forward(v.astype(np.float32))[1].numpy()[0],
                               vals_np.astype(np.float64), h=1e-2)  # (the loss is quadratic: exact)
    np.testing.assert_allclose(vals.grad.numpy(), fd, rtol=1e-4, atol=1e-4)


def test_transposed_mv_gradients_and_the_cached_order():
    """x @ A (A^T x) under a Tape, twice (the second reuses the block order kept on A), then
    after A's topology changes (the order is rebuilt)."""
    x_np = np.array([0.4, -1.0, 2.0])

    def forward(v, x_v, tape=None, A=None):
        vals = wp.array(v, dtype=wp.float64, requires_grad=True)
        x = wp.array(x_v, dtype=wp.float64, requires_grad=True)
        with tape or wp.Tape():
            if A is None:
                A = bsr_from_triplets(3, 3, wp.array(ROWS), wp.array(COLS), vals)
            else:
                bsr_set_from_triplets(A, wp.array(ROWS), wp.array(COLS), vals)
            loss = loss_of(x @ A)
        return vals, x, loss, A

    vals_np = np.array([1.0, -2.0, 0.5, 1.5, 3.0, -0.7])
    fd_vals, fd_x = finite_differences(lambda v, w: forward(v, w)[2].numpy()[0], vals_np, x_np)
    A = None
    for _ in range(2):
        tape = wp.Tape()
        vals, x, loss, A = forward(vals_np, x_np, tape, A)
        tape.backward(loss)
        np.testing.assert_allclose(vals.grad.numpy(), fd_vals, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), fd_x, rtol=1e-6, atol=1e-6)
    # a new topology in the same matrix (same number of blocks): the order follows it
    dense = np.zeros((3, 3))
    rows, cols = np.array([2, 2, 1, 0, 0, 1], np.int32), np.array([2, 1, 1, 2, 0, 0], np.int32)
    np.add.at(dense, (rows, cols), vals_np)
    bsr_set_from_triplets(A, wp.array(rows), wp.array(cols), wp.array(vals_np, dtype=wp.float64))
    np.testing.assert_allclose((wp.array(x_np, dtype=wp.float64) @ A).numpy(), x_np @ dense, atol=1e-12)
    # columns rewritten in place (a kernel, or numpy, may do it): seen as a new topology too
    n, off, columns = A.nnz_sync(), A.offsets.numpy(), A.columns.numpy()
    columns[:n] = (columns[:n] + 1) % 3
    for r in range(3):
        columns[off[r]:off[r + 1]].sort()
    expected = np.zeros((3, 3))
    for r in range(3):
        for k in range(off[r], off[r + 1]):
            expected[r, columns[k]] += A.values.numpy()[k]
    np.testing.assert_allclose((wp.array(x_np, dtype=wp.float64) @ A).numpy(), x_np @ expected, atol=1e-12)


def test_results_require_gradients_where_an_operand_does():
    def matrix(rg):
        return bsr_from_triplets(2, 2, wp.array([0, 1], dtype=int), wp.array([1, 0], dtype=int),
                                 wp.array(np.ones((2, 2, 2)), dtype=wp.mat22d, requires_grad=rg))

    for rg in (False, True):
        A, B = matrix(rg), matrix(not rg)
        x = wp.array(np.ones((2, 2)), dtype=wp.vec2d, requires_grad=not rg)
        # products with a vector: as either operand (Warp's follow x alone, and lose the
        # gradient of A's values where x has none)
        for y in (bsr_mv(A, x), A @ x, x @ A, bsr_mv(A, x, transpose=True)):
            assert y.requires_grad is True
        x_alone = wp.array(np.ones((2, 2)), dtype=wp.vec2d)
        assert bsr_mv(A, x_alone).requires_grad is rg
        # copies and transposes: as the source, also for the structure alone and other blocks
        for C in (bsr_copy(A), bsr_copy(A, structure_only=True), bsr_copy(A, block_shape=(1, 1)),
                  bsr_copy(A, block_shape=(1, 2), structure_only=True), bsr_copy(A, scalar_type=wp.float32),
                  bsr_transposed(A), A.transpose(), bsr_copy(bsr_zeros(2, 2, wp.mat22d)) if not rg else A):
            assert C.requires_grad is rg
        for C in (bsr_mm(A, A), bsr_axpy(A), bsr_diag(A.values)):
            assert C.requires_grad is rg
        # new products: as either operand
        for C in (bsr_mm(A, B), A @ B):
            assert C.requires_grad is True


@wp.kernel
def lookups(offsets: wp.array(dtype=int), columns: wp.array(dtype=int), row_counts: wp.array(dtype=int),
            qr: wp.array(dtype=int), qc: wp.array(dtype=int), nrow: int,
            compact: wp.array(dtype=int), counted: wp.array(dtype=int), row: wp.array(dtype=int)):
    i = wp.tid()
    compact[i] = bsr_block_index(qr[i], qc[i], offsets, columns)
    counted[i] = bsr_block_index(qr[i], qc[i], offsets, columns, row_counts)
    row[i] = bsr_row_index(offsets, nrow, qr[i], row_counts)


def test_kernel_lookups_out_of_range_and_with_null_row_counts():
    """Rows out of range find no block (-1, where Warp reads out of bounds past the end); a
    compact matrix's null row_counts reads compact storage, as Warp's overloads do."""
    A = bsr_diag(wp.array(np.array([1.0, 2.0, 3.0], np.float32)))
    assert A.row_counts is None
    qr = wp.array(np.array([0, -1, 2, 3, 7, 1, 1], np.int32))
    qc = wp.array(np.array([0, 0, 2, 0, 0, 1, 5], np.int32))
    outs = [wp.zeros(7, dtype=int) for _ in range(3)]
    wp.launch(lookups, dim=7, inputs=[A.offsets, A.columns, A.row_counts, qr, qc, A.nrow, *outs])
    np.testing.assert_array_equal(outs[0].numpy(), [0, -1, 2, -1, -1, 1, -1])
    np.testing.assert_array_equal(outs[1].numpy(), [0, -1, 2, -1, -1, 1, -1])
    np.testing.assert_array_equal(outs[2].numpy(), [0, -1, 2, -1, -1, 1, 1])  # (qr as block indices)
    P = bsr_zeros(3, 3, float, row_capacity=2)
    bsr_set_from_triplets(P, wp.array([0, 2], dtype=int), wp.array([1, 2], dtype=int),
                          wp.array([1.0, 2.0], dtype=float), topology="padded")
    wp.launch(lookups, dim=7, inputs=[P.offsets, P.columns, P.row_counts, qr, wp.array(np.full(7, 2, np.int32)),
                                      P.nrow, *outs])
    np.testing.assert_array_equal(outs[1].numpy(), [-1, -1, 4, -1, -1, -1, -1])
    np.testing.assert_array_equal(outs[2].numpy(), [0, -1, -1, -1, -1, -1, -1])  # (block 2 is row 1's tail)
