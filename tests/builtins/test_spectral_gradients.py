"""eig3 and svd2's analytic adjoints (weft/linalg.py), at repeated eigenvalues and singular
matrices too; svd3 and svd2 factors of singular matrices; the widened 4x4 determinant."""

import numpy as np
import pytest

import weft as wp

ROTATION = np.array(((1.0, 2.0, 2.0), (2.0, 1.0, -2.0), (-2.0, 2.0, -1.0))) / 3.0
SYMMETRIC_CASES = {
    "repeated": np.diag([2.0, 2.0, 3.0]),
    "identity": np.eye(3),
    "zero": np.zeros((3, 3)),
    "distinct": np.diag([1.0, 2.0, 3.0]),
    "near_repeated": np.diag([2.0, 2.0 + 1.0e-5, 3.0]),
    "rotated_repeated": ROTATION @ np.diag([2.0, 2.0, 3.0]) @ ROTATION.T,
}


@wp.kernel
def _spectral_losses(a: wp.array(dtype=wp.mat33d), out: wp.array(dtype=wp.float64, ndim=2)):
    i = wp.tid()
    q, d = wp.eig3(a[i])
    out[i, 0] = d[0] + d[1] + d[2]  # trace(A)
    out[i, 1] = wp.dot(d, d)  # trace(A^2)


@pytest.mark.parametrize("name", list(SYMMETRIC_CASES))
def test_eigenvalue_gradients_at_repeated_eigenvalues(name):
    m = SYMMETRIC_CASES[name]
    a = wp.array(m[None], dtype=wp.mat33d, requires_grad=True)
    for k, expected in enumerate((np.eye(3), 2.0 * m)):  # d trace(A) = I, d trace(A^2) = 2 A
        out = wp.zeros((1, 2), dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(_spectral_losses, 1, inputs=[a], outputs=[out])
        seed = np.zeros((1, 2))
        seed[0, k] = 1.0
        tape.backward(grads={out: wp.array(seed, dtype=wp.float64)})
        np.testing.assert_allclose(a.grad.numpy()[0], expected, atol=1e-12)
        tape.zero()


@wp.kernel
def _eigenvector_loss(a: wp.array(dtype=wp.mat33d), w: wp.array(dtype=wp.mat33d), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    s = a[i] + wp.transpose(a[i])
    q, d = wp.eig3(s)
    acc = wp.float64(0.0)
    for c in range(3):  # q[:, c] q[:, c]^T does not depend on the eigenvectors' signs
        for r in range(3):
            for k in range(3):
                acc += w[i][r, k] * q[r, c] * q[k, c] * d[c]
    out[i] = acc


def _eigenvector_value(mats, weights):
    out = wp.zeros(len(mats), dtype=wp.float64)
    wp.launch(_eigenvector_loss, len(mats), inputs=[wp.array(mats, dtype=wp.mat33d),
                                                     wp.array(weights, dtype=wp.mat33d)], outputs=[out])
    return out.numpy()


def test_eigenvector_gradient_matches_finite_differences():
    rng = np.random.default_rng(3)
    mats = rng.normal(size=(4, 3, 3))
    weights = rng.normal(size=(4, 3, 3))
    a = wp.array(mats, dtype=wp.mat33d, requires_grad=True)
    out = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_eigenvector_loss, 4, inputs=[a, wp.array(weights, dtype=wp.mat33d)], outputs=[out])
    tape.backward(grads={out: wp.ones_like(out)})
    h = 1e-6
    fd = np.zeros_like(mats)
    for r in range(3):
        for c in range(3):
            d = np.zeros((3, 3))
            d[r, c] = h
            fd[:, r, c] = (_eigenvector_value(mats + d, weights) - _eigenvector_value(mats - d, weights)) / (2 * h)
    np.testing.assert_allclose(a.grad.numpy(), fd, rtol=1e-6, atol=1e-7)


@wp.kernel
def _svd2_all(a: wp.array(dtype=wp.mat22d), u: wp.array(dtype=wp.mat22d), s: wp.array(dtype=wp.vec2d),
              v: wp.array(dtype=wp.mat22d)):
    i = wp.tid()
    uu = wp.mat22d()
    ss = wp.vec2d()
    vv = wp.mat22d()
    wp.svd2(a[i], uu, ss, vv)
    u[i] = uu
    s[i] = ss
    v[i] = vv


def _svd2(mats, requires_grad=False):
    n = len(mats)
    a = wp.array(mats, dtype=wp.mat22d, requires_grad=requires_grad)
    u, s, v = (wp.zeros(n, dtype=t, requires_grad=requires_grad) for t in (wp.mat22d, wp.vec2d, wp.mat22d))
    tape = wp.Tape()
    with tape:
        wp.launch(_svd2_all, n, inputs=[a], outputs=[u, s, v])
    return a, (u, s, v), tape


SINGULAR_2X2 = [np.zeros((2, 2)), np.eye(2), 5.0 * np.eye(2), [[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 2.0]],
                [[1.0, 1.0], [-1.0, -1.0]], [[0.0, -2.0], [2.0, 0.0]], [[3.0, 4.0], [-4.0, 3.0]]]


def test_svd2_of_singular_and_conformal_matrices():
    mats = np.array(SINGULAR_2X2, dtype=np.float64)
    _, (u, s, v), _ = _svd2(mats)
    u, s, v = u.numpy(), s.numpy(), v.numpy()
    eye = np.broadcast_to(np.eye(2), mats.shape)
    np.testing.assert_allclose(u @ u.transpose(0, 2, 1), eye, atol=1e-14)
    np.testing.assert_allclose(v @ v.transpose(0, 2, 1), eye, atol=1e-14)
    np.testing.assert_allclose(u @ (s[..., None] * v.transpose(0, 2, 1)), mats, atol=1e-14)
    np.testing.assert_allclose(s, np.linalg.svd(mats)[1], atol=1e-14)


def test_svd2_gradient_matches_finite_differences():
    rng = np.random.default_rng(4)
    mats = rng.normal(size=(6, 2, 2))
    # sign-invariant seeds: sigma, and each singular vector pair through u_c v_c^T
    w = rng.normal(size=(6, 2, 2, 2))

    def loss(m):
        _, (u, s, v), _ = _svd2(m)
        u, s, v = u.numpy(), s.numpy(), v.numpy()
        pairs = np.einsum("nrc,nkc->ncrk", u, v)  # u[:, c] v[:, c]^T
        return s.sum(axis=1) + np.einsum("ncrk,ncrk->n", w, pairs)

    a, (u, s, v), tape = _svd2(mats, requires_grad=True)
    un, vn = u.numpy(), v.numpy()
    # d loss / d u[r, c] = sum_k w[c, r, k] v[k, c]; d loss / d v[k, c] = sum_r w[c, r, k] u[r, c]
    seed_u = np.einsum("ncrk,nkc->nrc", w, vn)
    seed_v = np.einsum("ncrk,nrc->nkc", w, un)
    tape.backward(grads={s: wp.array(np.ones((6, 2)), dtype=wp.vec2d), u: wp.array(seed_u, dtype=wp.mat22d),
                         v: wp.array(seed_v, dtype=wp.mat22d)})
    h = 1e-6
    fd = np.zeros_like(mats)
    for r in range(2):
        for c in range(2):
            d = np.zeros((2, 2))
            d[r, c] = h
            fd[:, r, c] = (loss(mats + d) - loss(mats - d)) / (2 * h)
    np.testing.assert_allclose(a.grad.numpy(), fd, rtol=1e-6, atol=1e-7)


def test_svd3_of_a_singular_matrix_keeps_u_orthonormal():
    a = np.arange(1.0, 10.0).reshape(3, 3)  # rank 2
    u, s, v = (np.array(x, dtype=np.float64) for x in wp.svd3(wp.mat33d(*a.ravel())))
    np.testing.assert_allclose(u.T @ u, np.eye(3), atol=1e-14)
    np.testing.assert_allclose(v.T @ v, np.eye(3), atol=1e-14)
    assert np.linalg.det(v) > 0.0  # a rotation, as Warp's V
    np.testing.assert_allclose(u @ np.diag(s) @ v.T, a, atol=1e-13)
    np.testing.assert_allclose(s, np.linalg.svd(a)[1], atol=1e-13)
    # Warp's factors of this matrix (test_codegen.test_multiple_return_values)
    np.testing.assert_allclose(u[:, 2], [-0.40824816, 0.81649637, -0.40824834], atol=1e-6)


def test_svd3_follows_warps_sign_convention():
    """U and V are rotations, |sigma| decreasing, sigma[2] of the sign of det(A) (Warp's
    documented convention: U V^T is then the rotation of a polar decomposition)."""
    rng = np.random.default_rng(9)
    mats = rng.normal(size=(32, 3, 3))

    @wp.kernel
    def svd(a: wp.array(dtype=wp.mat33d), u: wp.array(dtype=wp.mat33d), s: wp.array(dtype=wp.vec3d),
            v: wp.array(dtype=wp.mat33d)):
        i = wp.tid()
        uu, ss, vv = wp.svd3(a[i])
        u[i] = uu
        s[i] = ss
        v[i] = vv

    u, s, v = wp.zeros(32, dtype=wp.mat33d), wp.zeros(32, dtype=wp.vec3d), wp.zeros(32, dtype=wp.mat33d)
    wp.launch(svd, 32, inputs=[wp.array(mats, dtype=wp.mat33d), u, s, v])
    u, s, v = u.numpy(), s.numpy(), v.numpy()
    np.testing.assert_allclose(np.linalg.det(u), 1.0, atol=1e-13)
    np.testing.assert_allclose(np.linalg.det(v), 1.0, atol=1e-13)
    np.testing.assert_allclose(np.abs(s), np.linalg.svd(mats)[1], atol=1e-13)
    np.testing.assert_array_equal(np.sign(s[:, 2]), np.sign(np.linalg.det(mats)))
    assert (s[:, :2] >= 0).all() and (np.sign(np.linalg.det(mats)) < 0).any()
    np.testing.assert_allclose(u @ (s[..., None] * v.transpose(0, 2, 1)), mats, atol=1e-13)
