"""weft.optim.linear inside a CPU graph capture: a solve with check_every=0 is recorded and
solves (what b and x hold then) each time the graph runs; one that checks the residual on
the host is refused; TiledDot products and sparse operator products are recorded."""

import numpy as np
import pytest

import weft as wp
from weft.optim.linear import TiledDot, aslinearoperator, bicgstab, cg, cr, gmres, preconditioner
from weft.sparse import bsr_from_triplets

SOLVERS = {"cg": cg, "cr": cr, "bicgstab": bicgstab, "gmres": gmres}


def tridiagonal(m):
    rows = np.concatenate([np.arange(m), np.arange(m - 1), np.arange(1, m)]).astype(np.int32)
    cols = np.concatenate([np.arange(m), np.arange(1, m), np.arange(m - 1)]).astype(np.int32)
    vals = np.concatenate([np.full(m, 3.0), np.full(m - 1, -1.0), np.full(m - 1, -1.0)])
    A = bsr_from_triplets(m, m, wp.array(rows), wp.array(cols), wp.array(vals, dtype=wp.float64))
    return A, 3 * np.eye(m) - np.eye(m, k=1) - np.eye(m, k=-1)


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("precondition", [False, True])
def test_captured_solves_run_when_the_graph_does(name, precondition):
    m = 8
    A, dense = tridiagonal(m)
    M = preconditioner(A, "diag") if precondition else None
    b = wp.array(np.ones(m), dtype=wp.float64)
    x = wp.zeros(m, dtype=wp.float64)
    with wp.ScopedCapture(device="cpu") as capture:
        niter, residual_sq, tolerance_sq = SOLVERS[name](A, b, x, maxiter=20, tol=1e-10, M=M, check_every=0)
    assert not np.any(x.numpy())  # (nothing ran yet)
    wp.capture_launch(capture.graph)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(dense, np.ones(m)), atol=1e-8)
    assert niter.numpy()[0] > 0 and residual_sq.numpy()[0] <= tolerance_sq.numpy()[0]
    # a replay reads b and x as they are then
    b_new = np.linspace(-1.0, 2.0, m)
    b.numpy()[:] = b_new
    x.zero_()
    wp.capture_launch(capture.graph)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(dense, b_new), atol=1e-8)


def test_captured_solver_states_reuse_their_arrays():
    A, dense = tridiagonal(6)
    b, x = wp.array(np.ones(6), dtype=wp.float64), wp.zeros(6, dtype=wp.float64)
    state = cg(A, b, x, maxiter=12, tol=1e-10, check_every=0, run=False)
    eager = state()
    with wp.ScopedCapture(device="cpu") as capture:
        captured = state()
    assert eager[0].ptr == captured[0].ptr and eager[1] is captured[1] and eager[2] is captured[2]
    x.zero_()
    wp.capture_launch(capture.graph)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(dense, np.ones(6)), atol=1e-8)


@pytest.mark.parametrize("name", SOLVERS)
def test_solves_that_check_on_the_host_are_refused_in_a_capture(name):
    A, _ = tridiagonal(4)
    b, x = wp.array(np.ones(4), dtype=wp.float64), wp.zeros(4, dtype=wp.float64)
    with wp.ScopedCapture(device="cpu"):
        with pytest.raises(RuntimeError, match=f"{name}: check_every=.*graph capture cannot record.*check_every=0"):
            SOLVERS[name](A, b, x, maxiter=8, check_every=4)


def test_captured_solves_cannot_be_saved(tmp_path):
    A, _ = tridiagonal(4)
    b, x = wp.array(np.ones(4), dtype=wp.float64), wp.zeros(4, dtype=wp.float64)
    with wp.ScopedCapture(device="cpu", apic=True) as capture:
        cg(A, b, x, maxiter=8, check_every=0)
    with pytest.raises(RuntimeError, match="weft.optim.linear.cg"):
        wp.capture_save(capture.graph, str(tmp_path / "solve"))


def test_tiled_dot_in_a_capture_reads_the_arrays_at_replay():
    n = 1000
    a = wp.array(np.ones(n, np.float32))
    dot = TiledDot(n, wp.float32, device="cpu", batch_offsets=wp.array(np.array([0, 400, n - 2], np.int32)))
    with wp.ScopedCapture(device="cpu") as capture:
        dot.compute(a, a)
    a.fill_(2.0)
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(dot.col().numpy(), [4 * 400, 4 * (n - 2 - 400)])


def test_sparse_operator_products_in_a_capture_read_y_at_replay():
    """z = alpha A x + beta y through aslinearoperator(BsrMatrix): the copy of y into z is
    recorded with the product."""
    A, dense = tridiagonal(4)
    op = aslinearoperator(A)
    x, y, z = wp.array(np.ones(4)), wp.array(np.ones(4)), wp.zeros(4, dtype=wp.float64)
    with wp.ScopedCapture(device="cpu") as capture:
        op.matvec(x, y, z, 2.0, 0.5)
    y.fill_(4.0)
    wp.capture_launch(capture.graph)
    np.testing.assert_allclose(z.numpy(), 2.0 * dense @ np.ones(4) + 0.5 * 4.0)
