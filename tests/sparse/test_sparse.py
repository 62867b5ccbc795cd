"""weft.sparse: BSR matrices against dense numpy (construction, copies, transposes, sums,
products with matrices and vectors, diagonals), padded and masked topologies, gradients
through the value kernels, and the errors."""

import numpy as np
import pytest

import weft as wp
from weft.sparse import (
    BSR_STATUS_ROW_CAPACITY_EXCEEDED,
    bsr_assign,
    bsr_axpy,
    bsr_compress,
    bsr_copy,
    bsr_diag,
    bsr_from_triplets,
    bsr_get_diag,
    bsr_identity,
    bsr_matrix_t,
    bsr_mm,
    bsr_mv,
    bsr_scale,
    bsr_set_from_triplets,
    bsr_set_transpose,
    bsr_transposed,
    bsr_zeros,
)

BLOCKS = [((1, 1), wp.float32), ((2, 2), wp.float64), ((1, 3), wp.float32), ((3, 2), wp.float64)]


def block_type(shape, scalar):
    return scalar if shape == (1, 1) else wp.types.matrix(shape=shape, dtype=scalar)


def dense(A):
    """A's dense value, read from its storage (padded rows use row_counts)."""
    R, C = A.block_shape
    out = np.zeros(A.shape)
    off = A.offsets.numpy()
    counts = None if A.row_counts is None else A.row_counts.numpy()
    cols, vals = A.columns.numpy(), A.values.numpy().reshape(-1, R, C)
    for i in range(A.nrow):
        end = off[i + 1] if counts is None else off[i] + counts[i]
        for k in range(off[i], end):
            out[i * R:(i + 1) * R, cols[k] * C:(cols[k] + 1) * C] += vals[k]
    return out


def random_bsr(rng, nrow, ncol, shape, scalar, n=12):
    rows = rng.integers(0, nrow, n).astype(np.int32)
    cols = rng.integers(0, ncol, n).astype(np.int32)
    vals = rng.standard_normal((n, *shape))
    ref = np.zeros((nrow * shape[0], ncol * shape[1]))
    for r, c, v in zip(rows, cols, vals):
        ref[r * shape[0]:(r + 1) * shape[0], c * shape[1]:(c + 1) * shape[1]] += v
    A = bsr_zeros(nrow, ncol, block_type(shape, scalar))
    bsr_set_from_triplets(A, wp.array(rows, dtype=int), wp.array(cols, dtype=int), wp.array(vals, dtype=scalar))
    return A, ref


def tol(scalar):
    return 1e-5 if scalar == wp.float32 else 1e-12


@pytest.mark.parametrize("shape,scalar", BLOCKS)
def test_triplets_sum_duplicates_and_sort(shape, scalar):
    A, ref = random_bsr(np.random.default_rng(1), 4, 5, shape, scalar, n=30)
    np.testing.assert_allclose(dense(A), ref, atol=tol(scalar))
    nnz = A.nnz_sync()
    off, cols = A.offsets.numpy(), A.columns.numpy()[:nnz]
    assert off[-1] == nnz
    for i in range(A.nrow):  # each row: strictly increasing columns (duplicates merged)
        assert np.all(np.diff(cols[off[i]:off[i + 1]]) > 0)


@pytest.mark.parametrize("order", ["random", "by rows"])
def test_many_triplets_sum_duplicates_through_the_radix_sort(order):
    """Enough triplets for sparse/assemble.stable_order's radix kernels (random order) or
    numpy's sort (nearly sorted); out-of-range and zero triplets in between; 2**20 columns,
    so the block keys need more than 32 bits. Against numpy's accumulation, and the triplet
    map refills the values (both reductions)."""
    from weft.sparse import bsr_set_from_mapped_values
    rng = np.random.default_rng(11)
    n, nrow, ncol = 60_000, 3000, 1 << 20
    rows = rng.integers(-5, nrow, n)
    cols = rng.choice(rng.integers(0, ncol, 500), n)  # (few columns: many duplicate blocks)
    if order == "by rows":
        at = np.argsort(rows, kind="stable")
        rows, cols = rows[at], cols[at]
    vals = rng.standard_normal(n)
    vals[::97] = 0.0
    A = bsr_zeros(nrow, ncol, wp.float64)
    mapping = bsr_set_from_triplets(A, wp.array(rows, dtype=int), wp.array(cols, dtype=int),
                                    wp.array(vals, dtype=wp.float64), build_mapping=True, prune_numerical_zeros=False)
    ok = rows >= 0  # (a map keeps zero blocks: Warp's rule)
    keys, sums = np.unique(rows[ok] * ncol + cols[ok], return_inverse=True)
    expected = np.bincount(sums.ravel(), weights=vals[ok])
    nnz = A.nnz_sync()
    assert nnz == keys.size
    off = A.offsets.numpy()
    got_rows = np.repeat(np.arange(nrow), np.diff(off))
    np.testing.assert_array_equal(got_rows * ncol + A.columns.numpy()[:nnz], keys)
    np.testing.assert_allclose(A.values.numpy()[:nnz], expected, rtol=1e-12, atol=1e-12)
    for reduction in ("gather", "atomic"):
        A.values.zero_()
        bsr_set_from_mapped_values(A, mapping, wp.array(2.0 * vals, dtype=wp.float64), reduction=reduction)
        np.testing.assert_allclose(A.values.numpy()[:nnz], 2.0 * expected, rtol=1e-12, atol=1e-12)


def test_stable_order_matches_numpy():
    from weft.sparse.assemble import stable_order
    rng = np.random.default_rng(3)
    for keys in (rng.integers(0, 1 << 40, 50_000), np.sort(rng.integers(0, 90, 50_000)), rng.integers(0, 7, 40_000)):
        np.testing.assert_array_equal(stable_order(keys, int(keys.max()) + 1), np.argsort(keys, kind="stable"))


def test_triplets_ignore_out_of_range_and_prune_zeros():
    rows = wp.array([0, -1, 1, 5, 1], dtype=int)
    cols = wp.array([0, 0, 1, 0, 0], dtype=int)
    vals = wp.array([2.0, 3.0, 4.0, 5.0, 0.0], dtype=float)
    A = bsr_from_triplets(2, 2, rows, cols, vals)
    assert A.nnz_sync() == 2
    np.testing.assert_array_equal(dense(A), [[2.0, 0.0], [0.0, 4.0]])
    B = bsr_from_triplets(2, 2, rows, cols, vals, prune_numerical_zeros=False)
    assert B.nnz_sync() == 3


@pytest.mark.parametrize("shape,scalar", BLOCKS)
def test_mv_and_transposed_mv(shape, scalar):
    rng = np.random.default_rng(2)
    A, ref = random_bsr(rng, 4, 3, shape, scalar)
    R, C = shape
    x_np = rng.standard_normal(3 * C)
    y_np = rng.standard_normal(4 * R)
    x = wp.array(x_np.reshape(3, C) if C > 1 else x_np, dtype=wp.types.vector(C, scalar) if C > 1 else scalar)
    y = wp.array(y_np.reshape(4, R) if R > 1 else y_np, dtype=wp.types.vector(R, scalar) if R > 1 else scalar)
    bsr_mv(A, x, y, alpha=2.0, beta=-0.5)
    np.testing.assert_allclose(y.numpy().reshape(-1), 2.0 * ref @ x_np - 0.5 * y_np, atol=10 * tol(scalar))
    xt = bsr_mv(A, y, transpose=True)
    np.testing.assert_allclose(xt.numpy().reshape(-1), ref.T @ y.numpy().reshape(-1), atol=10 * tol(scalar))
    with pytest.raises(ValueError, match="Incompatible 'x'"):
        bsr_mv(A, y, y)


@pytest.mark.parametrize("shape,scalar", BLOCKS)
def test_transpose_copy_and_scale(shape, scalar):
    A, ref = random_bsr(np.random.default_rng(3), 5, 3, shape, scalar)
    T = bsr_transposed(A)
    assert T.block_shape == shape[::-1]
    np.testing.assert_allclose(dense(T), ref.T, atol=tol(scalar))
    np.testing.assert_allclose(dense((-2.0 * A).transpose().eval()), -2.0 * ref.T, atol=tol(scalar))
    C64 = bsr_copy(A, scalar_type=wp.float64)
    assert C64.scalar_type == wp.float64
    np.testing.assert_allclose(dense(C64), ref, atol=tol(scalar))
    bsr_scale(C64, 3.0)
    np.testing.assert_allclose(dense(C64), 3.0 * ref, atol=tol(scalar))
    np.testing.assert_allclose(dense(A), ref, atol=tol(scalar))  # the source is untouched


@pytest.mark.parametrize("shape,scalar", BLOCKS)
def test_axpy_and_operators(shape, scalar):
    rng = np.random.default_rng(4)
    X, xr = random_bsr(rng, 3, 4, shape, scalar)
    Y, yr = random_bsr(rng, 3, 4, shape, scalar)
    bsr_axpy(X, Y, alpha=1.5, beta=-2.0)
    np.testing.assert_allclose(dense(Y), 1.5 * xr - 2.0 * yr, atol=10 * tol(scalar))
    yr = dense(Y)
    np.testing.assert_allclose(dense(X + 2.0 * Y), xr + 2.0 * yr, atol=10 * tol(scalar))
    np.testing.assert_allclose(dense(Y - X), yr - xr, atol=10 * tol(scalar))
    Y += Y * 2.0  # aliasing: y = 2 y + y
    np.testing.assert_allclose(dense(Y), 3.0 * yr, atol=10 * tol(scalar))
    Z, _ = random_bsr(rng, 3, 5, shape, scalar)
    with pytest.raises(ValueError, match="same number of rows and columns"):
        bsr_axpy(X, Z)
    # an empty y, or beta = 0, does not count: as in Warp, y becomes alpha * x, of x's shape
    for y, beta in ((bsr_zeros(3, 5, block_type(shape, scalar)), 1.0), (Z, 0.0)):
        assert bsr_axpy(X, y, alpha=2.0, beta=beta) is y and y.shape == X.shape
        np.testing.assert_allclose(dense(y), 2.0 * xr, atol=10 * tol(scalar))


def test_mapped_values_need_a_built_triplet_map():
    A = bsr_zeros(3, 3, wp.float32)
    with pytest.raises(TypeError, match="Mapping must be a BsrTripletMap"):
        wp.sparse.bsr_set_from_mapped_values(A, "not a map", wp.zeros(2, dtype=float))
    with pytest.raises(ValueError, match="has not been built"):
        wp.sparse.bsr_set_from_mapped_values(A, wp.sparse.BsrTripletMap(0, "cpu"), wp.zeros(2, dtype=float))


@pytest.mark.parametrize("shape,scalar", BLOCKS)
def test_mm_against_dense(shape, scalar):
    rng = np.random.default_rng(5)
    X, xr = random_bsr(rng, 3, 4, shape, scalar)
    Y, yr = random_bsr(rng, 4, 2, shape[::-1], scalar)
    Z, zr = random_bsr(rng, 3, 2, (shape[0], shape[0]), scalar)
    bsr_mm(X, Y, Z, alpha=-1.0, beta=0.5)
    np.testing.assert_allclose(dense(Z), -xr @ yr + 0.5 * zr, atol=20 * tol(scalar))
    np.testing.assert_allclose(dense(X @ bsr_transposed(X)), xr @ xr.T, atol=20 * tol(scalar))
    S, sr = random_bsr(rng, 3, 3, (shape[0], shape[0]), scalar)
    bsr_mm(S, S, S, alpha=1.0, beta=1.0)  # all three aliased
    np.testing.assert_allclose(dense(S), sr @ sr + sr, atol=50 * tol(scalar))
    with pytest.raises(ValueError, match="Incompatible"):  # (block sizes or rows/columns)
        bsr_mm(X, X)


def test_mm_masked_keeps_destination_topology():
    rng = np.random.default_rng(6)
    X, xr = random_bsr(rng, 4, 4, (2, 2), wp.float64, n=20)
    D = bsr_diag(rows_of_blocks=4, block_type=X.dtype)
    bsr_mm(X, X, D, topology="masked")
    full = xr @ xr
    expected = np.zeros_like(full)
    for i in range(4):
        expected[2 * i:2 * i + 2, 2 * i:2 * i + 2] = full[2 * i:2 * i + 2, 2 * i:2 * i + 2]
    np.testing.assert_allclose(dense(D), expected, atol=1e-12)


def test_diag_identity_and_get_diag():
    rng = np.random.default_rng(7)
    blocks = rng.standard_normal((4, 3, 3))
    D = bsr_diag(wp.array(blocks, dtype=wp.mat33d))
    np.testing.assert_allclose(bsr_get_diag(D).numpy(), blocks)
    I3 = bsr_identity(4, block_type=wp.mat33)
    np.testing.assert_array_equal(dense(I3), np.eye(12))
    A, ref = random_bsr(rng, 4, 4, (3, 3), wp.float64, n=20)
    diag = bsr_get_diag(2.0 * A).numpy()
    for i in range(4):
        np.testing.assert_allclose(diag[i], 2.0 * ref[3 * i:3 * i + 3, 3 * i:3 * i + 3], atol=1e-12)
    with pytest.raises(ValueError, match="warp matrix or scalar"):
        bsr_diag(wp.vec3(1.0), rows_of_blocks=2)


def test_reblocking_copy_and_assign():
    A, ref = random_bsr(np.random.default_rng(8), 4, 8, (4, 2), wp.float32, n=20)
    for shape in ((2, 2), (1, 1), (4, 4), (8, 8)):
        np.testing.assert_allclose(dense(bsr_copy(A, block_shape=shape)), ref, atol=1e-5)
    with pytest.raises(ValueError, match="Incompatible dest and src block shapes"):
        bsr_copy(A, block_shape=(3, 3))
    B = bsr_zeros(2, 4, wp.types.matrix(shape=(8, 4), dtype=wp.float32))
    bsr_assign(B, A)
    np.testing.assert_allclose(dense(B), ref, atol=1e-5)


def test_padded_reblocking_copy_takes_the_overlapped_row_capacities():
    """As Warp's: a row's capacity is that of the source rows it overlaps, times the pieces
    a source block's columns split into."""
    A = bsr_from_triplets(2, 2, wp.array([0, 0, 1], dtype=int), wp.array([0, 1, 1], dtype=int),
                          wp.array(np.arange(12.0).reshape(3, 2, 2), dtype=wp.mat22d))
    ref = dense(A)
    for shape, offsets in (((1, 1), [0, 4, 8, 10, 12]), ((4, 4), [0, 3]), ((1, 4), [0, 2, 4, 5, 6])):
        B = bsr_copy(A, block_shape=shape, topology="padded")
        np.testing.assert_array_equal(B.offsets.numpy(), offsets)
        np.testing.assert_allclose(dense(B), ref)


def test_padded_topology_and_overflow():
    with pytest.raises(ValueError, match="row_capacity requires topology='padded'"):
        bsr_zeros(2, 3, float, row_capacity=2, topology="compact")
    A = bsr_zeros(2, 3, float, row_capacity=2)
    bsr_set_from_triplets(A, wp.array([1, 0, 1, 0], dtype=int), wp.array([2, 1, 0, 1], dtype=int),
                          wp.array([1.0, 2.0, 3.0, 4.0], dtype=float), topology="padded")
    np.testing.assert_array_equal(A.offsets.numpy(), [0, 2, 4])
    np.testing.assert_array_equal(A.row_counts.numpy(), [1, 2])
    np.testing.assert_array_equal(dense(A), [[0, 6, 0], [3, 0, 1]])
    np.testing.assert_allclose(bsr_mv(A, wp.array([1.0, 2.0, 3.0], dtype=float)).numpy(), [12.0, 6.0])
    small = bsr_zeros(2, 3, float, row_capacity=1)
    bsr_set_from_triplets(small, wp.array([1, 1], dtype=int), wp.array([0, 2], dtype=int),
                          wp.array([1.0, 2.0], dtype=float), topology="padded")
    assert small.status_sync() == BSR_STATUS_ROW_CAPACITY_EXCEEDED
    T = bsr_zeros(3, 2, float, row_capacity=2)
    bsr_set_transpose(T, A, topology="padded")
    assert T.row_counts is not None
    np.testing.assert_array_equal(dense(T), dense(A).T)


def test_operations_compact_a_padded_destination_by_default():
    # as in Warp, every operation's topology policy defaults to "compact", padded `dest` too
    A = bsr_zeros(2, 3, float, row_capacity=2)
    bsr_set_from_triplets(A, wp.array([1, 0, 1], dtype=int), wp.array([2, 1, 0], dtype=int),
                          wp.array([1.0, 2.0, 3.0], dtype=float))
    assert A.row_counts is None and A.nnz_sync() == 3
    np.testing.assert_array_equal(A.offsets.numpy()[:3], [0, 1, 3])
    T = bsr_zeros(3, 2, float, row_capacity=2)
    bsr_set_transpose(T, A)
    assert T.row_counts is None and T.nnz_sync() == 3
    np.testing.assert_array_equal(dense(T), dense(A).T)
    Y = bsr_zeros(2, 3, float, row_capacity=3)
    bsr_axpy(A, Y)
    assert Y.row_counts is None and Y.nnz_sync() == 3


def test_compress_merges_and_drops_invalid_columns():
    A = bsr_zeros(1, 3, float)
    A.nnz = 5
    A.offsets = wp.array([0, 5], dtype=int)
    A.columns = wp.array([2, 0, 2, 7, -1], dtype=int)
    A.values = wp.array([1.0, 2.0, 3.0, 9.0, 9.0], dtype=float)
    bsr_compress(A)
    assert A.nnz_sync() == 2
    np.testing.assert_array_equal(A.columns.numpy()[:2], [0, 2])
    np.testing.assert_array_equal(dense(A), [[2.0, 0.0, 4.0]])


def test_gradients_flow_to_triplet_values():
    rng = np.random.default_rng(9)
    vals = wp.array(rng.standard_normal((4, 2, 2)), dtype=wp.mat22d, requires_grad=True)
    rows, cols = wp.array([0, 1, 0, 1], dtype=int), wp.array([1, 0, 1, 1], dtype=int)
    with wp.Tape() as tape:
        A = bsr_from_triplets(2, 2, rows, cols, vals)
        T = (3.0 * A).transpose().eval()
    seed = np.zeros((T.values.shape[0], 2, 2))
    seed[: T.nnz_sync()] = rng.standard_normal((T.nnz_sync(), 2, 2))
    tape.backward(grads={T.values: wp.array(seed, dtype=wp.mat22d)})
    # d<seed, T>/d vals[k] = 3 * seed block of k's transposed position, transposed back
    trows, tcols = T.uncompress_rows().numpy(), T.columns.numpy()
    where = {(int(r), int(c)): k for k, (r, c) in enumerate(zip(trows, tcols)) if r >= 0}
    expected = np.stack([3.0 * seed[where[(c, r)]].T for r, c in zip(rows.numpy(), cols.numpy())])
    np.testing.assert_allclose(vals.grad.numpy(), expected, atol=1e-12)


def test_bad_index_dtype():
    A = bsr_zeros(2, 2, float)
    with pytest.raises(TypeError, match="int32"):
        bsr_set_from_triplets(A, wp.array([0.0], dtype=float), wp.array([0.0], dtype=float),
                              wp.array([1.0], dtype=float))


def test_triplet_arrays_of_different_lengths_are_refused():
    # Warp raises ValueError; taking the shortest would silently drop triplets
    A = bsr_zeros(3, 3, float)
    rows, cols = wp.array([0, 1, 2], dtype=int), wp.array([0, 1, 2], dtype=int)
    with pytest.raises(ValueError, match="Values and rows arrays must have the same length"):
        bsr_set_from_triplets(A, rows, cols, wp.array([1.0, 2.0], dtype=float))
    with pytest.raises(ValueError, match="Values and rows"):
        bsr_from_triplets(3, 3, rows, cols, wp.array([1.0, 2.0, 3.0, 4.0], dtype=float))
    with pytest.raises(ValueError, match="Rows and columns"):
        bsr_set_from_triplets(A, rows, wp.array([0, 1], dtype=int), wp.array([1.0, 2.0, 3.0], dtype=float))
    with pytest.raises(ValueError, match="single-element"):
        bsr_set_from_triplets(A, rows, cols, wp.array([1.0, 2.0, 3.0], dtype=float), count=wp.array([1, 2], dtype=int))
    # (n, 2, 2) scalars are n blocks of mat22
    B = bsr_zeros(2, 2, wp.mat22)
    bsr_set_from_triplets(B, wp.array([0, 1], dtype=int), wp.array([1, 0], dtype=int),
                          wp.array(np.ones((2, 2, 2), dtype=np.float32), dtype=float))
    assert B.nnz_sync() == 2


Csr = bsr_matrix_t(wp.float32)
Bsr22d = bsr_matrix_t(wp.mat22d)


@wp.kernel
def csr_row_sums(A: Csr, out: wp.array(dtype=float)):
    r = wp.tid()
    s = float(0.0)  # noqa: UP018 - a variable (a literal would be a constant)
    end = A.offsets[r + 1]
    if A.row_counts:
        end = A.offsets[r] + A.row_counts[r]
    for k in range(A.offsets[r], end):
        s += A.values[k] * float(A.columns[k] + 1)
    out[r] = s + float(A.nrow * 100 + A.ncol * 10 + A.nnz) * 1000.0


@wp.kernel
def block_traces(A: Bsr22d, out: wp.array(dtype=wp.float64)):
    k = wp.tid()
    out[k] = wp.trace(A.values[k])


def test_matrices_are_kernel_arguments_of_bsr_matrix_t():
    # Warp's bsr_matrix_t is a struct type; a BsrMatrix passes for it, with its attributes
    assert bsr_matrix_t(wp.float32) is Csr and bsr_matrix_t(float) is Csr
    A = bsr_from_triplets(3, 4, wp.array([0, 1, 1, 2], dtype=int), wp.array([0, 1, 3, 2], dtype=int),
                          wp.array([1.0, 2.0, 3.0, 4.0], dtype=float))
    out = wp.zeros(3)
    wp.launch(csr_row_sums, dim=3, inputs=[A, out])
    np.testing.assert_allclose(out.numpy(), np.array([1.0, 2 * 2 + 3 * 4, 4 * 3]) + 344 * 1000.0)
    P = bsr_zeros(3, 4, float, row_capacity=2)  # padded: row_counts is an array
    bsr_set_from_triplets(P, wp.array([0, 2], dtype=int), wp.array([1, 0], dtype=int),
                          wp.array([5.0, 6.0], dtype=float))
    wp.launch(csr_row_sums, dim=3, inputs=[P, out])
    np.testing.assert_allclose(out.numpy() - (340 + P.nnz) * 1000.0, [10.0, 0.0, 6.0])
    B = bsr_diag(wp.array(np.stack([np.eye(2), 3 * np.eye(2)]), dtype=wp.mat22d))
    traces = wp.zeros(2, dtype=wp.float64)
    wp.launch(block_traces, dim=2, inputs=[B, traces])
    assert traces.numpy().tolist() == [2.0, 6.0]
    with pytest.raises(TypeError, match="argument 'A'.*bsr_matrix_t of its block type"):
        wp.launch(block_traces, dim=2, inputs=[A, traces])


def test_products_of_different_scalar_types_are_refused():
    A = bsr_identity(2, block_type=wp.mat22d)
    B = bsr_copy(A, scalar_type=wp.float32)
    for x, y in ((A, B), (B, A)):
        with pytest.raises(ValueError, match="same scalar type"):
            bsr_mm(x, y)
    with pytest.raises(ValueError, match="same scalar type"):
        bsr_mm(A, A, B)
    with pytest.raises(ValueError, match="same scalar type"):
        A @ B


def test_diag_of_a_typed_scalar_value_takes_its_type():
    assert bsr_diag(wp.float64(2.5), rows_of_blocks=2, cols_of_blocks=3).scalar_type is wp.float64
    assert bsr_diag(np.float64(1.0), rows_of_blocks=2).scalar_type is wp.float64
    assert bsr_diag(2.5, rows_of_blocks=2).scalar_type is wp.float32
    D = bsr_diag(wp.float64(2.5), rows_of_blocks=2, cols_of_blocks=3)
    assert D.values.numpy()[: D.nnz_sync()].tolist() == [2.5, 2.5]


def test_row_and_block_index_in_kernels():
    from weft.sparse import bsr_block_index, bsr_row_index

    @wp.kernel
    def lookup(off: wp.array(dtype=int), cols: wp.array(dtype=int), counts: wp.array(dtype=int),
               rows_out: wp.array(dtype=int), found: wp.array(dtype=int)):
        i = wp.tid()
        rows_out[i] = bsr_row_index(off, 2, i, counts)
        found[i] = bsr_block_index(i // 3, i % 3, off, cols, counts)

    A = bsr_zeros(2, 3, float, row_capacity=3)
    bsr_set_from_triplets(A, wp.array([0, 0, 1], dtype=int), wp.array([0, 2, 1], dtype=int),
                          wp.array([1.0, 2.0, 3.0], dtype=float), topology="padded")
    rows_out, found = wp.zeros(6, dtype=int), wp.zeros(6, dtype=int)
    wp.launch(lookup, dim=6, inputs=[A.offsets, A.columns, A.row_counts, rows_out, found])
    np.testing.assert_array_equal(rows_out.numpy(), [0, 0, -1, 1, -1, -1])
    np.testing.assert_array_equal(found.numpy(), [0, -1, 1, -1, 3, -1])


def test_mv_with_strided_vectors():
    """Slices and columns as x and y (Warp takes them): read and written at their strides."""
    A = bsr_diag(wp.array(np.arange(1.0, 7.0, dtype=np.float32)))
    big = wp.array(np.arange(18, dtype=np.float32))
    np.testing.assert_array_equal(bsr_mv(A, big[::3]).numpy(), np.arange(1.0, 7.0) * np.arange(0, 18, 3))
    out = wp.full(12, -1.0)
    bsr_mv(A, wp.ones(6), out[1::2], beta=0.0)
    np.testing.assert_array_equal(out.numpy(), np.ravel(np.column_stack([-np.ones(6), np.arange(1.0, 7.0)])))
    columns = wp.array(np.arange(24, dtype=np.float32).reshape(6, 4))
    np.testing.assert_array_equal(bsr_mv(A, columns[:, 1]).numpy(), np.arange(1.0, 7.0) * np.arange(1, 24, 4))
    bsr_mv(A, columns[:, 1], columns[:, 2], alpha=1.0, beta=1.0)  # (y beside x in the same rows)
    expected = np.arange(2, 24, 4) + np.arange(1.0, 7.0) * np.arange(1, 24, 4)
    np.testing.assert_array_equal(columns.numpy()[:, 2], expected)
    aliased = wp.array(np.arange(1.0, 7.0, dtype=np.float32))
    bsr_mv(A, aliased[::-1], aliased[::-1])  # (x and y the same reversed view: x is read first)
    np.testing.assert_array_equal(aliased.numpy()[::-1], np.arange(1.0, 7.0) * np.arange(6.0, 0.0, -1.0))
    with pytest.raises(RuntimeError, match="contiguous"):  # (Warp's class for a solver's strided b)
        wp.optim.linear.cg(A, columns[:, 1], wp.zeros(6), maxiter=2)


def test_mv_gradients_reach_x_and_values():
    rng = np.random.default_rng(10)
    A, ref = random_bsr(rng, 3, 4, (2, 3), wp.float64, n=8)
    A.values.requires_grad = True
    x = wp.array(rng.standard_normal((4, 3)), dtype=wp.vec3d, requires_grad=True)
    y = wp.zeros(3, dtype=wp.vec2d, requires_grad=True)
    w = rng.standard_normal(6)
    with wp.Tape() as tape:
        bsr_mv(A, x, y, alpha=2.0)
    tape.backward(grads={y: wp.array(w.reshape(3, 2), dtype=wp.vec2d)})
    # d<w, 2 A x>/dx = 2 A^T w
    np.testing.assert_allclose(x.grad.numpy().reshape(-1), 2.0 * ref.T @ w, atol=1e-12)
    # d/d(block k entry (r, c)) = 2 w[row*2 + r] x[col*3 + c]
    rows, cols = A.uncompress_rows().numpy(), A.columns.numpy()
    xv = x.numpy().reshape(-1)
    for k in range(A.nnz_sync()):
        expected = 2.0 * np.outer(w[rows[k] * 2:rows[k] * 2 + 2], xv[cols[k] * 3:cols[k] * 3 + 3])
        np.testing.assert_allclose(A.values.grad.numpy()[k], expected, atol=1e-12)
