"""tile_cholesky, tile_cholesky_solve, tile_lower_solve, tile_upper_solve and their
_inplace forms: results against numpy, gradients against float64 finite differences and
the closed forms, errors."""

import numpy as np
import pytest

import weft as wp

N = 6
R = 3


def spd(n, seed):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


def garbage_above(a, seed=7, upper=False):
    """a with the triangle that must not be read filled with noise."""
    noise = np.random.default_rng(seed).standard_normal(a.shape) * 100.0
    return np.where(np.tril(np.ones_like(a), -1) > 0, noise, a) if upper else \
        np.where(np.triu(np.ones_like(a), 1) > 0, noise, a)


@wp.kernel
def chol_kernel(ga: wp.array2d[wp.float64], gl: wp.array2d[wp.float64], gu: wp.array2d[wp.float64]):
    a = wp.tile_load(ga, shape=(N, N))
    wp.tile_store(gl, wp.tile_cholesky(a))
    wp.tile_store(gu, wp.tile_cholesky(a, fill_mode="upper"))


@wp.kernel
def chol_inplace_kernel(ga: wp.array2d[wp.float64], gu: wp.array2d[wp.float64]):
    a = wp.tile_load(ga, shape=(N, N))
    u = wp.tile_load(gu, shape=(N, N))
    wp.tile_cholesky_inplace(a)
    wp.tile_cholesky_inplace(u, fill_mode="upper")
    wp.tile_store(ga, a)
    wp.tile_store(gu, u)


def test_cholesky_reads_one_triangle_and_zeroes_the_other():
    a = spd(N, 1)
    ref = np.linalg.cholesky(a)
    gl, gu = wp.zeros((N, N), dtype=wp.float64), wp.zeros((N, N), dtype=wp.float64)
    wp.launch_tiled(chol_kernel, dim=1, inputs=[wp.array(garbage_above(a), dtype=wp.float64), gl, gu],
                    block_dim=8)
    np.testing.assert_allclose(gl.numpy(), ref, rtol=1e-12, atol=1e-12)
    assert np.all(np.triu(gl.numpy(), 1) == 0.0)
    wp.launch_tiled(chol_kernel, dim=1, inputs=[wp.array(garbage_above(a, upper=True), dtype=wp.float64), gl, gu],
                    block_dim=8)
    np.testing.assert_allclose(gu.numpy(), ref.T, rtol=1e-12, atol=1e-12)
    assert np.all(np.tril(gu.numpy(), -1) == 0.0)


def test_cholesky_inplace():
    a = spd(N, 2)
    ref = np.linalg.cholesky(a)
    ga = wp.array(garbage_above(a), dtype=wp.float64)
    gu = wp.array(garbage_above(a, upper=True), dtype=wp.float64)
    wp.launch_tiled(chol_inplace_kernel, dim=1, inputs=[ga, gu], block_dim=8)
    np.testing.assert_allclose(ga.numpy(), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gu.numpy(), ref.T, rtol=1e-12, atol=1e-12)


@wp.kernel
def solves_kernel(gl: wp.array2d[wp.float32], gy: wp.array1d[wp.float32], gz: wp.array2d[wp.float32],
                  o1: wp.array1d[wp.float32], o2: wp.array1d[wp.float32], o3: wp.array2d[wp.float32],
                  o4: wp.array2d[wp.float32]):
    m = wp.tile_load(gl, shape=(N, N))
    y = wp.tile_load(gy, shape=N)
    z = wp.tile_load(gz, shape=(N, R))
    wp.tile_store(o1, wp.tile_lower_solve(m, y))
    wp.tile_store(o2, wp.tile_upper_solve(U=m, z=y))
    wp.tile_lower_solve_inplace(m, z)
    wp.tile_store(o3, z)
    z2 = wp.tile_load(gz, shape=(N, R))
    wp.tile_upper_solve_inplace(m, z2)
    wp.tile_store(o4, z2)


def test_triangular_solves_float32():
    rng = np.random.default_rng(3)
    m = rng.standard_normal((N, N)) + 4.0 * np.eye(N)
    y, z = rng.standard_normal(N), rng.standard_normal((N, R))
    outs = [wp.zeros(N, dtype=float), wp.zeros(N, dtype=float), wp.zeros((N, R), dtype=float),
            wp.zeros((N, R), dtype=float)]
    wp.launch_tiled(solves_kernel, dim=1, inputs=[wp.array(m, dtype=float), wp.array(y, dtype=float),
                                                  wp.array(z, dtype=float), *outs], block_dim=8)
    lo, up = np.tril(m), np.triu(m)
    for out, ref in zip(outs, [np.linalg.solve(lo, y), np.linalg.solve(up, y), np.linalg.solve(lo, z),
                               np.linalg.solve(up, z)]):
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)


@wp.kernel
def chol_solve_kernel(ga: wp.array2d[wp.float64], gy: wp.array2d[wp.float64], gx: wp.array2d[wp.float64],
                      gxu: wp.array2d[wp.float64], gyi: wp.array2d[wp.float64]):
    a = wp.tile_load(ga, shape=(N, N))
    y = wp.tile_load(gy, shape=(N, R))
    wp.tile_store(gx, wp.tile_cholesky_solve(wp.tile_cholesky(a), y))
    u = wp.tile_cholesky(a, fill_mode="upper")
    wp.tile_store(gxu, wp.tile_cholesky_solve(u, y, fill_mode="upper"))
    wp.tile_cholesky_solve_inplace(u, y, fill_mode="upper")
    wp.tile_store(gyi, y)


def test_cholesky_solve_both_fill_modes():
    a = spd(N, 4)
    y = np.random.default_rng(5).standard_normal((N, R))
    outs = [wp.zeros((N, R), dtype=wp.float64) for _ in range(3)]
    wp.launch_tiled(chol_solve_kernel, dim=1, inputs=[wp.array(a, dtype=wp.float64),
                                                      wp.array(y, dtype=wp.float64), *outs], block_dim=8)
    for out in outs:
        np.testing.assert_allclose(out.numpy(), np.linalg.solve(a, y), rtol=1e-11, atol=1e-12)


# Gradients ------------------------------------------------------------------------------------
def check_gradients(kernel, inputs, out_shape, seed=0, masks=None, eps=1e-6, rtol=1e-6, atol=1e-8):
    """Tape gradients of sum(w * out) w.r.t. every input against central differences of
    the same kernel (float64). `masks`: per input, the entries expected to get a gradient
    (the others must get exactly 0)."""
    w = np.random.default_rng(seed).standard_normal(out_shape)
    arrays = [wp.array(x, dtype=wp.float64, requires_grad=True) for x in inputs]
    out = wp.zeros(out_shape, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(kernel, dim=1, inputs=[*arrays, out], block_dim=8)
    tape.backward(grads={out: wp.array(w, dtype=wp.float64)})
    grads = [a.grad.numpy() for a in arrays]

    def loss(xs):
        o = wp.zeros(out_shape, dtype=wp.float64)
        wp.launch_tiled(kernel, dim=1, inputs=[*[wp.array(x, dtype=wp.float64) for x in xs], o], block_dim=8)
        return float(np.sum(w * o.numpy()))

    for k, x in enumerate(inputs):
        fd = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            plus, minus = [v.copy() for v in inputs], [v.copy() for v in inputs]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            fd[idx] = (loss(plus) - loss(minus)) / (2 * eps)
        np.testing.assert_allclose(grads[k], fd, rtol=rtol, atol=atol)
        if masks is not None and masks[k] is not None:
            assert np.all(grads[k][~masks[k]] == 0.0)
    return grads


@wp.kernel
def lower_solve_vec(gl: wp.array2d[wp.float64], gy: wp.array1d[wp.float64], gz: wp.array1d[wp.float64]):
    wp.tile_store(gz, wp.tile_lower_solve(wp.tile_load(gl, shape=(N, N)), wp.tile_load(gy, shape=N)))


@wp.kernel
def upper_solve_mat(gl: wp.array2d[wp.float64], gy: wp.array2d[wp.float64], gz: wp.array2d[wp.float64]):
    wp.tile_store(gz, wp.tile_upper_solve(wp.tile_load(gl, shape=(N, N)), wp.tile_load(gy, shape=(N, R))))


@wp.kernel
def lower_solve_transposed(gl: wp.array2d[wp.float64], gy: wp.array2d[wp.float64], gz: wp.array2d[wp.float64]):
    m = wp.tile_transpose(wp.tile_load(gl, shape=(N, N)))
    wp.tile_store(gz, wp.tile_lower_solve(m, wp.tile_load(gy, shape=(N, R))))


def test_lower_solve_gradient_matches_closed_form_and_differences():
    rng = np.random.default_rng(8)
    m = rng.standard_normal((N, N)) + 4.0 * np.eye(N)
    y = rng.standard_normal(N)
    lower = np.tril(np.ones((N, N), bool))
    g_m, g_y = check_gradients(lower_solve_vec, [m, y], (N,), seed=9, masks=[lower, None])
    w = np.random.default_rng(9).standard_normal(N)
    z = np.linalg.solve(np.tril(m), y)
    gy_ref = np.linalg.solve(np.tril(m).T, w)
    np.testing.assert_allclose(g_y, gy_ref, rtol=1e-12)
    np.testing.assert_allclose(g_m, -np.tril(np.outer(gy_ref, z)), rtol=1e-12, atol=1e-14)


def test_upper_and_transposed_solve_gradients():
    rng = np.random.default_rng(10)
    m = rng.standard_normal((N, N)) + 4.0 * np.eye(N)
    y = rng.standard_normal((N, R))
    upper = np.triu(np.ones((N, N), bool))
    check_gradients(upper_solve_mat, [m, y], (N, R), seed=11, masks=[upper, None])
    check_gradients(lower_solve_transposed, [m, y], (N, R), seed=12, masks=[upper, None])


@wp.kernel
def chol_lower(ga: wp.array2d[wp.float64], gl: wp.array2d[wp.float64]):
    wp.tile_store(gl, wp.tile_cholesky(wp.tile_load(ga, shape=(N, N))))


@wp.kernel
def chol_upper(ga: wp.array2d[wp.float64], gl: wp.array2d[wp.float64]):
    wp.tile_store(gl, wp.tile_cholesky(wp.tile_load(ga, shape=(N, N)), fill_mode="upper"))


def test_cholesky_gradient_with_respect_to_the_triangle_read():
    a = spd(N, 13)
    lower = np.tril(np.ones((N, N), bool))
    check_gradients(chol_lower, [a], (N, N), seed=14, masks=[lower], rtol=1e-5, atol=1e-8)
    check_gradients(chol_upper, [a], (N, N), seed=15, masks=[lower.T], rtol=1e-5, atol=1e-8)


def test_cholesky_gradient_closed_form_at_a_diagonal():
    # A = diag(d): L = diag(s), s = sqrt(d); dA = dL diag(s) + diag(s) dLᵀ on the lower
    # triangle, so Ā = tril(L̄) / s[j], diagonal halved.
    d = np.linspace(1.0, 4.0, N)
    g = np.random.default_rng(16).standard_normal((N, N))
    ga = wp.array(np.diag(d), dtype=wp.float64, requires_grad=True)
    gl = wp.zeros((N, N), dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(chol_lower, dim=1, inputs=[ga, gl], block_dim=8)
    tape.backward(grads={gl: wp.array(g, dtype=wp.float64)})
    ref = np.tril(g) / np.sqrt(d)[None, :]
    ref[np.diag_indices(N)] *= 0.5
    np.testing.assert_allclose(ga.grad.numpy(), ref, rtol=1e-12, atol=1e-15)


@wp.kernel
def chol_solve_grad(ga: wp.array2d[wp.float64], gy: wp.array2d[wp.float64], gx: wp.array2d[wp.float64]):
    a = wp.tile_load(ga, shape=(N, N))
    u = wp.tile_cholesky(a, fill_mode="upper")
    wp.tile_store(gx, wp.tile_cholesky_solve(u, wp.tile_load(gy, shape=(N, R)), fill_mode="upper"))


def test_cholesky_then_solve_gradient():
    a = spd(N, 17)
    y = np.random.default_rng(18).standard_normal((N, R))
    check_gradients(chol_solve_grad, [a, y], (N, R), seed=19, masks=[np.triu(np.ones((N, N), bool)), None],
                    rtol=1e-5)


@wp.kernel
def inplace_grad_kernel(ga: wp.array2d[wp.float64], gy: wp.array2d[wp.float64], gx: wp.array2d[wp.float64]):
    a = wp.tile_load(ga, shape=(N, N))
    wp.tile_cholesky_inplace(a)
    x = wp.tile_load(gy, shape=(N, R))
    wp.tile_cholesky_solve_inplace(a, x)
    wp.tile_store(gx, x)


def test_gradients_through_the_inplace_forms():
    """The in-place forms have the gradients of the forms that return a new tile (Warp
    documents them as not differentiable; its adjoint of tile_cholesky_solve_inplace leaves
    the right-hand side's gradient unchanged: dL/dy = dL/dx instead of A⁻¹ dL/dx)."""
    a = spd(N, 20)
    y = np.random.default_rng(21).standard_normal((N, R))
    check_gradients(inplace_grad_kernel, [a, y], (N, R), seed=22, masks=[np.tril(np.ones((N, N), bool)), None],
                    rtol=1e-5)


# Errors -------------------------------------------------------------------------------------------
@wp.kernel
def not_square(ga: wp.array2d[wp.float64]):
    wp.tile_store(ga, wp.tile_cholesky(wp.tile_load(ga, shape=(N, R))))


@wp.kernel
def bad_fill_mode(ga: wp.array2d[wp.float64]):
    wp.tile_store(ga, wp.tile_cholesky(wp.tile_load(ga, shape=(N, N)), fill_mode="diagonal"))


@wp.kernel
def rows_differ(ga: wp.array2d[wp.float64]):
    y = wp.tile_load(ga, shape=(R, N))
    wp.tile_store(ga, wp.tile_lower_solve(wp.tile_load(ga, shape=(N, N)), y))


@wp.kernel
def dtypes_differ(ga: wp.array2d[wp.float64]):
    y = wp.tile_astype(wp.tile_load(ga, shape=(N, R)), wp.float32)
    wp.tile_upper_solve(wp.tile_load(ga, shape=(N, N)), y)


@pytest.mark.parametrize("kernel, kind, message", [
    (not_square, ValueError, r"tile_cholesky: 'A' must be a square 2D tile, got shape \(6, 3\)"),
    (bad_fill_mode, ValueError, "fill_mode must be the compile-time constant"),
    (rows_differ, ValueError, "tile_lower_solve: 'y' has 3 rows but the matrix has 6"),
    (dtypes_differ, TypeError, "tile_upper_solve: both tiles must have one dtype"),
])
def test_bad_arguments_are_compile_errors(kernel, kind, message):
    with pytest.raises(kind, match=message) as info:
        wp.launch_tiled(kernel, dim=1, inputs=[wp.zeros((N, N), dtype=wp.float64)], block_dim=8)
    assert "test_solve.py:" in str(info.value) and f"in {kernel.func.__name__}" in str(info.value)
