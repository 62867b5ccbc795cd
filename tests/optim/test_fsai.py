"""FSAI (weft/optim/fsai.py) against dense numpy references: local solves, the greedy
support, the exact inverse on a full pattern, refits, deferred patterns, and CG/CR."""

import numpy as np
import pytest

import weft as wp
import weft.sparse as sp
from weft.optim.linear import FSAI, cg, cr, preconditioner


def bsr(a, dtype=wp.float64, block=1):
    r, c = np.nonzero(a)
    A = sp.bsr_from_triplets(a.shape[0], a.shape[1], wp.array(r, dtype=int), wp.array(c, dtype=int),
                             wp.array(a[r, c], dtype=dtype))
    return sp.bsr_copy(A, block_shape=(block, block)) if block > 1 else A


def dense(A):
    out = np.zeros(A.shape)
    off, cols, vals = A.offsets.numpy(), A.columns.numpy(), A.values.numpy().astype(np.float64)
    counts = None if A.row_counts is None else A.row_counts.numpy()
    for r in range(A.nrow):
        end = off[r + 1] if counts is None else off[r] + counts[r]
        out[r, cols[off[r]:end]] = vals[off[r]:end]
    return out


def laplacian(n, diag=3.0):
    return np.diag(np.full(n, diag)) - np.diag(np.ones(n - 1), 1) - np.diag(np.ones(n - 1), -1)


def random_spd(n, seed, density=0.4):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n)) * (rng.random((n, n)) < density)
    a = a + a.T
    np.fill_diagonal(a, np.abs(a).sum(axis=1) + 1.0)
    return a


def check_rows(pre, a, rtol=1e-10):
    """Each row i of G, on its support S (i last, the others < i), is z / sqrt(z_i) with
    A[S, S] z = e_i."""
    g = dense(pre.G)
    np.testing.assert_array_equal(dense(pre.GT), g.T)
    off, cols = pre.G.offsets.numpy(), pre.G.columns.numpy()
    for i in range(len(a)):
        s = cols[off[i]:off[i + 1]] if pre.G.row_counts is None else cols[off[i]:off[i] + pre.G.row_counts.numpy()[i]]
        assert s[-1] == i and np.all(np.diff(s) > 0)
        rhs = np.zeros(len(s))
        rhs[-1] = 1.0
        z = np.linalg.solve(a[np.ix_(s, s)], rhs)
        np.testing.assert_allclose(g[i, s], z / np.sqrt(z[-1]), rtol=rtol, atol=1e-12)
    return g


def greedy_support(a, i, width, step, tolerance):
    """The support rule, written out on dense matrices: candidates adjacent to the support,
    below i, by largest |Ã[c, S] z| (then smaller c), a zero residual never taken."""
    d = np.sqrt(np.diag(a))
    e = a / np.outer(d, d)
    support, z = [i], np.ones(1)
    while len(support) < width:
        frontier = sorted({int(c) for j in support for c in np.flatnonzero(a[j]) if c < i} - set(support))
        ranked = sorted((-abs(e[c, support] @ z), c) for c in frontier)
        chosen = [c for score, c in ranked if score < 0][: min(step, width - len(support))]
        if not chosen:
            break
        old = z[0]
        support += chosen
        rhs = np.zeros(len(support))
        rhs[0] = 1.0
        z = np.linalg.solve(e[np.ix_(support, support)], rhs)
        if tolerance > 0 and 1 - old / z[0] <= tolerance:
            break
    return sorted(support)


@pytest.mark.parametrize("dtype", [wp.float32, wp.float64])
def test_full_pattern_is_the_inverse(dtype):
    a = random_spd(7, 3, density=1.0)
    pre = FSAI(bsr(a, dtype), max_row_size=7, kap_tolerance=0.0)
    g = check_rows(pre, a, rtol=1e-4 if dtype == wp.float32 else 1e-10)
    np.testing.assert_allclose(g.T @ g, np.linalg.inv(a), rtol=1e-4 if dtype == wp.float32 else 1e-10, atol=1e-7)


@pytest.mark.parametrize("block", [1, 2])
@pytest.mark.parametrize("width,step,tolerance", [(3, 1, 0.0), (5, 2, 1e-3), (6, 1, 0.05)])
def test_adaptive_supports_match_the_greedy_rule(block, width, step, tolerance):
    a = random_spd(12, 17)
    pre = FSAI(bsr(a, block=block), max_row_size=width, max_step_size=step, kap_tolerance=tolerance)
    assert pre.truncated_rows == 0
    check_rows(pre, a)
    off, cols = pre.G.offsets.numpy(), pre.G.columns.numpy()
    for i in range(len(a)):
        assert list(cols[off[i]:off[i + 1]]) == greedy_support(a, i, width, step, tolerance)


def test_pivot_floor_truncates_rows():
    a = np.array([[1.0, 1 - 1e-14, 0], [1 - 1e-14, 1.0, 0], [0, 0, 2.0]])
    pre = FSAI(bsr(a), max_row_size=2)
    assert pre.truncated_rows == 1
    np.testing.assert_allclose(dense(pre.G), np.diag(1 / np.sqrt(np.diag(a))))


@pytest.mark.parametrize("dtype", [wp.float32, wp.float64])
def test_application_and_aliasing(dtype):
    a = laplacian(10)
    pre = FSAI(bsr(a, dtype), max_row_size=4)
    g = dense(pre.G)
    rng = np.random.default_rng(1)
    tol = 1e-5 if dtype == wp.float32 else 1e-12
    for alias in ("none", "xz", "yz", "xyz"):
        x = wp.array(rng.normal(size=10), dtype=dtype)
        y = x if alias == "xyz" else wp.array(rng.normal(size=10), dtype=dtype)
        z = x if alias in ("xz", "xyz") else y if alias == "yz" else wp.empty_like(x)
        expected = 0.5 * g.T @ g @ x.numpy() - 2.0 * y.numpy()
        pre.matvec(x, y, z, 0.5, -2.0)
        np.testing.assert_allclose(z.numpy(), expected, rtol=tol, atol=tol)
    x, y, z = wp.full(10, float("nan"), dtype=dtype), wp.full(10, 4.0, dtype=dtype), wp.empty(10, dtype=dtype)
    pre.matvec(x, y, z, 0.0, 0.5)  # alpha 0: x is not read
    np.testing.assert_array_equal(z.numpy(), 2.0)
    pre.matvec(y, x, z, 1.0, 0.0)  # beta 0: y is not read
    np.testing.assert_allclose(z.numpy(), g.T @ g @ np.full(10, 4.0), rtol=tol)


@pytest.mark.parametrize("solver", [cg, cr])
@pytest.mark.parametrize("block", [1, 2])
def test_solvers_converge_with_fsai(solver, block):
    a = laplacian(24, 2.05)
    A = bsr(a, block=block)
    b = wp.ones(24 // block, dtype=wp.float64 if block == 1 else wp.vec2d)
    iterations = {}
    for name, M in (("none", None), ("fsai", preconditioner(A, "fsai"))):
        x = wp.zeros_like(b)
        it, _err, _tol = solver(A, b, x, M=M, tol=1e-10, maxiter=200)
        np.testing.assert_allclose(a @ x.numpy().ravel(), 1.0, atol=1e-8)
        iterations[name] = int(it.numpy()[0]) if hasattr(it, "numpy") else int(it)
    assert isinstance(preconditioner(A, "fsai"), FSAI)
    assert iterations["fsai"] < iterations["none"]


def test_refit_keeps_arrays_and_rolls_back():
    a = random_spd(9, 5)
    b = a + np.diag(np.arange(9.0))
    pre = FSAI(bsr(a), max_row_size=4, reuse_pattern=True, max_step_size=2)
    ptrs = (pre.G.values.ptr, pre.GT.values.ptr)
    cols = pre.G.columns.numpy().copy()
    assert pre.update(bsr(b)) is pre
    g = check_rows(pre, b)
    assert (pre.G.values.ptr, pre.GT.values.ptr) == ptrs
    np.testing.assert_array_equal(pre.G.columns.numpy(), cols)
    zero_diag = bsr(b)
    zero_diag.values.zero_()
    indefinite = np.where(b != 0.0, 10.0, 0.0)  # (the same sparsity: every local pair indefinite)
    np.fill_diagonal(indefinite, 1.0)
    moved = bsr(b)
    c = moved.columns.numpy()
    c[0] += 1
    for bad, message in ((zero_diag, "SPD"), (bsr(indefinite), "SPD"), (moved, "sparsity"),
                         (bsr(np.eye(3)), "shape")):
        with pytest.raises(ValueError, match=message):
            pre.update(bad)
        np.testing.assert_array_equal(dense(pre.G), g)
        np.testing.assert_array_equal(dense(pre.GT), g.T)


def test_regularized_refit_reports_rows():
    pair = np.array([[1.0, 0.5], [0.5, 1.0]])
    a = np.kron(np.eye(2), pair)
    pre = FSAI(bsr(a), max_row_size=2, reuse_pattern=True, regularize_refit=True)
    singular = a.copy()
    singular[:2, :2] = 1.0
    pre.update(bsr(singular))
    np.testing.assert_array_equal(pre.update_status.numpy(), [0, 0, 0, 1])
    g = dense(pre.G)
    assert np.all(np.isfinite(g)) and np.all(np.diag(g) > 0)
    np.testing.assert_allclose(g[2:, 2:], dense(FSAI(bsr(a), max_row_size=2).G)[2:, 2:], rtol=1e-12)


def test_deferred_pattern_selects_on_first_update():
    a = laplacian(12)
    topology = bsr(a)
    values = topology.values.numpy().copy()
    topology.values.zero_()
    pre = FSAI(topology, max_row_size=5, reuse_pattern=True, defer_pattern=True)
    assert pre.pattern_ready.numpy()[0] == 0 and pre.truncated_rows is None
    x = wp.array(np.arange(1.0, 13.0), dtype=wp.float64)
    y = wp.empty_like(x)
    pre.matvec(x, y, y, 1.0, 0.0)
    np.testing.assert_array_equal(y.numpy(), x.numpy())  # the identity before selection
    with pytest.raises(ValueError, match="positive diagonals"):
        pre.update()  # (all values zero)
    assert pre.pattern_ready.numpy()[0] == 0
    topology.values.assign(values)
    pre.update()
    reference = FSAI(bsr(a), max_row_size=5)
    assert pre.pattern_ready.numpy()[0] == 1
    np.testing.assert_array_equal(dense(pre.G), dense(reference.G))
    np.testing.assert_array_equal(dense(pre.GT), dense(reference.GT))
    topology.values.assign(2.0 * values)
    pre.update()
    check_rows(pre, 2.0 * a)


def test_float32_factor_of_a_float64_matrix():
    a = laplacian(10)
    pre = FSAI(bsr(a), max_row_size=3, factor_dtype=wp.float32)
    assert pre.G.scalar_type is wp.float32
    g = dense(pre.G)
    x = wp.ones(10, dtype=wp.float64)
    y = wp.empty_like(x)
    pre.matvec(x, y, y, 1.0, 0.0)
    np.testing.assert_allclose(y.numpy(), g.T @ g @ np.ones(10), rtol=1e-12)
    with pytest.raises(ValueError, match="positive diagonal"):
        FSAI(bsr(np.eye(3) * 1e100), factor_dtype=wp.float32)  # (1e-50 underflows in float32)


def test_invalid_arguments():
    A = bsr(np.eye(3))
    for option in ("max_row_size", "max_step_size"):
        for value in (0, 65, 1.5):
            with pytest.raises(ValueError, match=option):
                FSAI(A, **{option: value})
    with pytest.raises(ValueError, match="kap_tolerance"):
        FSAI(A, kap_tolerance=1.0)
    with pytest.raises(ValueError, match="pivot_floor"):
        FSAI(A, pivot_floor=0.0)
    with pytest.raises(ValueError, match="factor_dtype"):
        FSAI(A, factor_dtype=wp.float16)
    with pytest.raises(ValueError, match="square"):
        FSAI(sp.bsr_zeros(2, 3, wp.float64))
    with pytest.raises(ValueError, match="reuse_pattern"):
        FSAI(A).update()
    with pytest.raises(ValueError, match="defer_pattern"):
        FSAI(A, defer_pattern=True)
    with pytest.raises(ValueError, match="positive diagonals"):
        FSAI(bsr(np.diag([1.0, -1.0])))
    padded = sp.bsr_zeros(3, 3, wp.float64, row_capacity=2)
    sp.bsr_assign(padded, A, topology="padded")
    with pytest.raises(ValueError, match="compact"):
        FSAI(padded, reuse_pattern=True)
    np.testing.assert_array_equal(dense(FSAI(padded).G), np.eye(3))
