"""weft.optim.linear: cg, cr, bicgstab and gmres against numpy's dense solve, on dense,
diagonal and sparse (BSR) operators, with Jacobi, block-Jacobi and FSAI preconditioners,
batches of independent systems, restarts, reusable states and their errors."""

import numpy as np
import pytest

import weft as wp
from weft.optim.linear import (
    CG,
    LinearOperator,
    aslinearoperator,
    bicgstab,
    cg,
    cr,
    gmres,
    preconditioner,
)
from weft.sparse import bsr_from_triplets


def spd(n, seed):
    rng = np.random.default_rng(seed)
    C = rng.standard_normal((n, n))
    return C @ C.T + n * np.eye(n), rng.standard_normal(n)


def nonsymmetric(n, seed):
    A, b = spd(n, seed)
    return A @ np.diag(np.random.default_rng(seed + 1).uniform(0.5, 2.0, n)), b


def block_spd(nb, bs, seed, scalar=wp.float64):
    rng = np.random.default_rng(seed)
    rows, cols, vals = [], [], []
    for i in range(nb):
        C = rng.uniform(-1, 1, (bs, bs))
        rows.append(i), cols.append(i), vals.append(C @ C.T + bs * np.eye(bs))
        if i + 1 < nb:
            off = 0.1 * rng.uniform(-1, 1, (bs, bs))
            rows += [i, i + 1]
            cols += [i + 1, i]
            vals += [off, off.T]
    A = bsr_from_triplets(nb, nb, wp.array(rows, dtype=int), wp.array(cols, dtype=int),
                          wp.array(np.stack(vals), dtype=scalar))
    dense = np.zeros((nb * bs, nb * bs))
    for r, c, v in zip(rows, cols, vals):
        dense[r * bs:(r + 1) * bs, c * bs:(c + 1) * bs] += v
    return A, dense, rng.standard_normal(nb * bs)


@pytest.mark.parametrize("solver,system", [(cg, spd), (cr, spd), (bicgstab, nonsymmetric), (gmres, nonsymmetric)])
@pytest.mark.parametrize("precond", [None, "diag"])
def test_dense_solves_match_numpy(solver, system, precond):
    A_np, b_np = system(24, 3)
    A, b = wp.array(A_np, dtype=wp.float64), wp.array(b_np, dtype=wp.float64)
    x = wp.zeros_like(b)
    M = None if precond is None else preconditioner(A, precond)
    niter, err, atol = solver(A, b, x, tol=1e-10, maxiter=2000, M=M)
    assert err <= atol
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(A_np, b_np), rtol=1e-6, atol=1e-8)
    # a warm start from the solution takes no iteration
    assert solver(A, b, x, tol=1e-10, maxiter=2000, M=M)[0] == 0


@pytest.mark.parametrize("solver", [cg, cr, bicgstab, gmres])
@pytest.mark.parametrize("ptype", ["diag", "block_jacobi_direct", "block_jacobi_sequential", "fsai"])
def test_sparse_block_solves(solver, ptype):
    A, dense, b_np = block_spd(6, 3, 11)
    b = wp.array(b_np, dtype=wp.float64)
    x = wp.zeros_like(b)
    _niter, err, atol = solver(A, b, x, tol=1e-10, maxiter=500, M=preconditioner(A, ptype))
    assert err <= atol
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(dense, b_np), rtol=1e-6, atol=1e-8)


def test_block_jacobi_inverts_the_diagonal_blocks_and_is_zero_safe():
    A, dense, x_np = block_spd(4, 3, 5)
    z = wp.zeros(12, dtype=wp.float64)
    preconditioner(A, "block_jacobi_direct").matvec(wp.array(x_np, dtype=wp.float64), z, z, 1.0, 0.0)
    expected = np.concatenate([np.linalg.solve(dense[3 * i:3 * i + 3, 3 * i:3 * i + 3], x_np[3 * i:3 * i + 3])
                               for i in range(4)])
    np.testing.assert_allclose(z.numpy(), expected, rtol=1e-10)
    singular = bsr_from_triplets(1, 1, wp.array([0], dtype=int), wp.array([0], dtype=int),
                                 wp.array(np.array([[[1.0, 2.0], [2.0, 4.0]]]), dtype=wp.mat22d))
    for ptype in ("block_jacobi_direct", "block_jacobi_sequential"):
        z = wp.zeros(2, dtype=wp.float64)
        preconditioner(singular, ptype).matvec(wp.array([1.0, 3.0], dtype=wp.float64), z, z, 1.0, 0.0)
        np.testing.assert_array_equal(z.numpy(), [1.0, 3.0])  # the identity, not NaN
    with pytest.raises(ValueError, match="BsrMatrix"):
        preconditioner(wp.array(dense, dtype=wp.float64), "block_jacobi_direct")


def test_float32_vector_unknowns():
    A, dense, b_np = block_spd(5, 3, 7, scalar=wp.float32)
    b = wp.array(b_np.reshape(5, 3), dtype=wp.vec3)
    x = wp.zeros_like(b)
    _niter, err, atol = cg(A, b, x, tol=1e-6, maxiter=200, M=preconditioner(A, "diag"))
    assert err <= atol
    np.testing.assert_allclose(x.numpy().reshape(-1), np.linalg.solve(dense, b_np), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("solver", [cg, cr, bicgstab, gmres])
def test_batches_meet_their_own_tolerance(solver):
    sizes = [5, 9, 7]
    n = sum(sizes)
    A_np, b_np = np.zeros((n + 2, n + 2)), np.zeros(n + 2)
    start = 0
    for k, m in enumerate(sizes):
        Ak, bk = spd(m, 20 + k)
        A_np[start:start + m, start:start + m] = Ak
        b_np[start:start + m] = (10.0 ** k) * bk  # very different scales per batch
        start += m
    offsets = wp.array(np.concatenate(([0], np.cumsum(sizes))).astype(np.int32), dtype=int)
    A = aslinearoperator(wp.array(A_np, dtype=wp.float64), batch_offsets=offsets)
    b = wp.array(b_np, dtype=wp.float64)
    x = wp.zeros_like(b)
    _niter, err, atol = solver(A, b, x, tol=1e-8, maxiter=500)
    assert err <= atol
    start = 0
    for m in sizes:
        sl = slice(start, start + m)
        residual = A_np[sl, sl] @ x.numpy()[sl] - b_np[sl]
        assert np.linalg.norm(residual) <= 1e-8 * np.linalg.norm(b_np[sl]) * 1.01
        start += m
    np.testing.assert_array_equal(x.numpy()[n:], 0.0)  # the inactive tail is left alone


def test_restart_counts_and_callback():
    A_np, b_np = spd(12, 9)
    A, b = wp.array(A_np, dtype=wp.float64), wp.array(b_np, dtype=wp.float64)
    seen = []
    x = wp.zeros_like(b)
    niter, err, atol = cg(A, b, x, tol=1e-10, maxiter=120, check_every=1, restart=3,
                          callback=lambda i, r, t: seen.append(i))
    assert err <= atol and niter % 3 == 0
    assert seen[0] == 0 and seen[-1] == niter and all(i % 3 == 0 for i in seen)
    for bad in (True, 1.5):
        with pytest.raises(TypeError):
            cg(A, b, x, run=False, restart=bad)
    with pytest.raises(ValueError):
        cg(A, b, x, run=False, restart=0)


def test_gmres_cycles_are_at_most_maxiter_long():
    # as Warp: restart is capped at maxiter, so maxiter=5 with the default restart of 31 stops
    # after 5 Arnoldi steps (x is the GMRES(5) iterate, not a converged solution)
    A_np, b_np = nonsymmetric(12, 4)
    A, b = wp.array(A_np, dtype=wp.float64), wp.array(b_np, dtype=wp.float64)
    x = wp.zeros_like(b)
    niter, err, _ = gmres(A, b, x, tol=1e-14, maxiter=5)
    assert niter == 5
    # the GMRES(5) iterate minimizes |b - A x| over the 5-dimensional Krylov space
    K = np.stack([np.linalg.matrix_power(A_np, k) @ b_np for k in range(5)], axis=1)
    y = np.linalg.lstsq(A_np @ K, b_np, rcond=None)[0]
    np.testing.assert_allclose(x.numpy(), K @ y, rtol=1e-6, atol=1e-9)
    assert err == pytest.approx(np.linalg.norm(b_np - A_np @ (K @ y)), rel=1e-6)
    x = wp.zeros_like(b)
    assert gmres(A, b, x, tol=1e-10)[0] == 12  # maxiter defaults to the system size


@pytest.mark.parametrize("solver", [cg, cr, bicgstab, gmres])
def test_check_every_zero_returns_one_element_arrays(solver):
    A_np, b_np = spd(8, 2)
    A, b = wp.array(A_np, dtype=wp.float64), wp.array(b_np, dtype=wp.float64)
    count, r_sq, atol_sq = solver(A, b, wp.zeros_like(b), maxiter=4, tol=0.0, check_every=0)
    assert count.shape == (1,) and count.dtype is wp.int32 and count.numpy()[0] == 4
    assert r_sq.shape == (1,) and atol_sq.shape == (1,)


@wp.kernel
def print_progress(cur_iter: wp.array(dtype=int), r_norm_sq: wp.array(dtype=wp.float64),
                   atol_sq: wp.array(dtype=wp.float64)):
    wp.printf("progress %d %g\n", cur_iter[0], r_norm_sq[0])


@pytest.mark.parametrize("solver", [cg, gmres])
def test_check_every_zero_runs_to_maxiter_and_launches_a_callback_kernel(solver, capfd):
    """Warp's capturable loop as it runs without CUDA graphs: every cycle runs and the count
    is maxiter, even after convergence; a kernel callback gets the count and the residual
    before the first cycle and after each."""
    d = np.arange(1.0, 31.0, dtype=np.float32)
    A, b = wp.array(np.diag(d), dtype=wp.float32), wp.array(np.ones(30, np.float32), dtype=wp.float32)
    count, _, _ = solver(A, b, wp.zeros_like(b), maxiter=30, tol=1e-3, check_every=0)
    assert count.numpy()[0] == 30

    A, b = (wp.array(a, dtype=wp.float64) for a in spd(8, 7))
    restart = {"restart": 2} if solver is gmres else {}
    count, r_sq, _ = solver(A, b, wp.zeros_like(b), maxiter=5, tol=0.0, check_every=0, callback=print_progress,
                            **restart)
    lines = [line.split() for line in capfd.readouterr().out.splitlines() if line.startswith("progress")]
    step = 2 if solver is gmres else 1
    assert [int(w[1]) for w in lines] == list(range(0, 5 + step, step))  # (GMRES: whole cycles of 2)
    residuals = [float(w[2]) for w in lines]
    assert residuals[-1] == pytest.approx(r_sq.numpy()[0], rel=1e-5) and residuals[-1] < residuals[0]
    assert count.numpy()[0] == int(lines[-1][1])


def test_gmres_refines_every_cycle_between_checks():
    """Warp's GMRES has no convergence guard inside its cycles: with checks every 40
    iterations, all four cycles of 10 run and each improves x (weft's froze it after the
    tolerance was met, mid-way)."""
    n = 60
    A_np = np.diag(np.full(n, 4.0)) + np.diag(np.full(n - 1, -1.3), 1) + np.diag(np.full(n - 1, -0.7), -1)
    b_np = np.random.default_rng(2).standard_normal(n)
    A, b, x = wp.array(A_np, dtype=wp.float64), wp.array(b_np, dtype=wp.float64), wp.zeros(n, dtype=wp.float64)
    it, err, _ = gmres(A, b, x, tol=1e-8, maxiter=200, restart=10, check_every=31, use_cuda_graph=False)
    true_err = np.linalg.norm(b_np - A_np @ x.numpy())
    assert it == 40 and err == pytest.approx(true_err, rel=1e-6, abs=1e-14)
    assert true_err < 1e-12 * np.linalg.norm(b_np)


def test_state_reuse_and_compatibility_errors():
    A_np, b_np = spd(10, 4)
    A, b = wp.array(A_np, dtype=wp.float64), wp.array(b_np, dtype=wp.float64)
    x = wp.zeros_like(b)
    state = cg(A, b, x, tol=1e-10, run=False)
    assert isinstance(state, CG)
    state()
    A2_np, b2_np = spd(10, 5)
    x2 = wp.zeros_like(b)
    state(A=wp.array(A2_np, dtype=wp.float64), b=wp.array(b2_np, dtype=wp.float64), x=x2)
    np.testing.assert_allclose(x2.numpy(), np.linalg.solve(A2_np, b2_np), rtol=1e-6)
    with pytest.raises(ValueError):
        state(b=wp.zeros(20, dtype=wp.float64))
    with pytest.raises(ValueError, match="requires batch_offsets"):
        aslinearoperator(A, max_batch_length=3)


def test_user_linear_operator():
    d = np.arange(1.0, 9.0)
    calls = []

    def matvec(x, y, z, alpha, beta):
        calls.append(1)
        z.numpy()[...] = alpha * d * x.numpy() + beta * y.numpy()

    op = LinearOperator((8, 8), wp.float64, wp.get_device("cpu"), matvec)
    b = wp.array(np.ones(8), dtype=wp.float64)
    x = wp.zeros_like(b)
    _niter, err, atol = gmres(op, b, x, tol=1e-12, restart=8)
    assert err <= atol and calls
    np.testing.assert_allclose(x.numpy(), 1.0 / d, rtol=1e-10)


def test_linear_is_loaded_with_the_package():
    """`import warp.optim` then `warp.optim.linear.cg(...)` is how Warp programs reach the
    solvers; a fresh process shows it without this file's own import of the submodule."""
    import subprocess
    import sys

    code = "import weft.optim; print(weft.optim.linear.cg.__name__, 'linear' in weft.optim.__all__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["cg", "True"]
