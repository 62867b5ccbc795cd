"""Warp's dense linear algebra builtins on flat float32 arrays: dense_gemm, dense_chol,
dense_subs, dense_solve."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def gemm(m: int, n: int, p: int, t1: int, t2: int, A: wp.array(dtype=float), B: wp.array(dtype=float),
         C: wp.array(dtype=float)):
    wp.dense_gemm(m, n, p, t1, t2, A, B, C)


@wp.kernel
def factor_and_solve(n: int, A: wp.array(dtype=float), reg: float, L: wp.array(dtype=float),
                     b: wp.array(dtype=float), x: wp.array(dtype=float), y: wp.array(dtype=float)):
    wp.dense_chol(n, A, reg, L)
    wp.dense_solve(n, A, L, b, x)
    wp.dense_subs(n, L, b, y)


def _random(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("t1, t2", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_dense_gemm_transposes_and_its_gradient(t1, t2):
    A, B, G = _random((3, 4), 1), _random((4, 2), 2), _random((3, 2), 3)
    stored_a = A.T.copy() if t1 else A
    stored_b = B.T.copy() if t2 else B
    a = wp.array(stored_a.ravel(), requires_grad=True)
    b = wp.array(stored_b.ravel(), requires_grad=True)
    c = wp.zeros(6, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(gemm, 1, inputs=[3, 2, 4, t1, t2, a, b, c])
    A64, B64, G64 = (x.astype(np.float64) for x in (A, B, G))
    np.testing.assert_allclose(c.numpy().reshape(3, 2), A64 @ B64, atol=1e-5)
    tape.backward(grads={c: wp.array(G.ravel())})
    grad_a, grad_b = G64 @ B64.T, A64.T @ G64  # d<G, A B>/dA and /dB
    np.testing.assert_allclose(a.grad.numpy(), (grad_a.T if t1 else grad_a).ravel(), atol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), (grad_b.T if t2 else grad_b).ravel(), atol=1e-5)


def test_dense_gemm_other_transpose_flags_write_nothing():
    c = wp.full(4, 7.0, dtype=float)
    wp.launch(gemm, 1, inputs=[2, 2, 2, 2, 0, wp.ones(4, dtype=float), wp.ones(4, dtype=float), c])
    np.testing.assert_array_equal(c.numpy(), 7.0)


def test_dense_cholesky_and_solves():
    M = _random((5, 5), 4).astype(np.float64)
    S = M @ M.T + np.eye(5)
    rhs = _random(5, 5)
    reg = 0.5
    L, x, y = wp.zeros(25), wp.zeros(5), wp.zeros(5)
    wp.launch(factor_and_solve, 1, inputs=[5, wp.array(S.ravel().astype(np.float32)), reg, L,
                                           wp.array(rhs), x, y])
    factor = np.tril(L.numpy().reshape(5, 5)).astype(np.float64)
    np.testing.assert_allclose(factor, np.linalg.cholesky(S + reg * np.eye(5)), atol=1e-4)
    expected = np.linalg.solve(S + reg * np.eye(5), rhs.astype(np.float64))
    np.testing.assert_allclose(x.numpy(), expected, atol=1e-4)
    np.testing.assert_allclose(y.numpy(), expected, atol=1e-4)


def test_dense_builtins_name_a_wrong_argument():
    @wp.kernel(module="unique")
    def wrong(A: wp.array(dtype=wp.float64), C: wp.array(dtype=float)):
        wp.dense_gemm(1, 1, 1, 0, 0, A, C, C)

    with pytest.raises(wp.CompileError, match=r"dense_gemm\(\): A must be a 1-D array of float32"):
        wp.launch(wrong, 1, inputs=[wp.zeros(1, dtype=wp.float64), wp.zeros(1)])
