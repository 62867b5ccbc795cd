"""eig3, qr3, svd3, svd2 (both forms) against numpy, in float32 and float64. Their gradients
are checked against finite differences in test_derivatives.py."""

import numpy as np
import pytest

import weft as wp


def _kernel(real, mat33, vec3, mat22, vec2):
    @wp.kernel
    def decompose(a: wp.array(dtype=mat33), b: wp.array(dtype=mat22), m3: wp.array(dtype=mat33),
                  v3: wp.array(dtype=vec3), m2: wp.array(dtype=mat22), v2: wp.array(dtype=vec2)):
        u = mat33()
        s = vec3()
        v = mat33()
        wp.svd3(a[0], u, s, v)  # the form with outputs
        m3[0] = u
        v3[0] = s
        m3[1] = v
        q, d = wp.eig3(a[0] + wp.transpose(a[0]))  # the form returning the factors
        m3[2] = q
        v3[1] = d
        qr, r = wp.qr3(a[0])
        m3[3] = qr
        m3[4] = r
        u2, s2, v2_ = wp.svd2(b[0])
        m2[0] = u2
        v2[0] = s2
        m2[1] = v2_
    return decompose


@pytest.mark.parametrize("real,tol", [(wp.float32, 2e-5), (wp.float64, 1e-12)], ids=["float32", "float64"])
def test_decompositions_reproduce_the_matrix(real, tol):
    mat33, vec3 = wp.types.matrix((3, 3), real), wp.types.vector(3, real)
    mat22, vec2 = wp.types.matrix((2, 2), real), wp.types.vector(2, real)
    rng = np.random.default_rng(5)
    a_np = rng.normal(size=(3, 3)) + np.eye(3)
    b_np = rng.normal(size=(2, 2))
    a, b = wp.array(a_np[None], dtype=mat33), wp.array(b_np[None], dtype=mat22)
    m3, v3 = wp.zeros(5, dtype=mat33), wp.zeros(2, dtype=vec3)
    m2, v2 = wp.zeros(2, dtype=mat22), wp.zeros(1, dtype=vec2)
    wp.launch(_kernel(real, mat33, vec3, mat22, vec2), 1, inputs=[a, b, m3, v3, m2, v2])
    a_np, b_np = a.numpy()[0].astype(np.float64), b.numpy()[0].astype(np.float64)
    u, v, q, qr, r = (m3.numpy()[k].astype(np.float64) for k in range(5))
    s, d = v3.numpy()[0].astype(np.float64), v3.numpy()[1].astype(np.float64)
    np.testing.assert_allclose(u @ np.diag(s) @ v.T, a_np, atol=10 * tol)
    np.testing.assert_allclose(s, np.linalg.svd(a_np)[1], rtol=10 * tol)  # decreasing, as numpy's
    np.testing.assert_allclose(u.T @ u, np.eye(3), atol=10 * tol)
    sym = a_np + a_np.T
    np.testing.assert_allclose(q @ np.diag(d) @ q.T, sym, atol=10 * tol)
    np.testing.assert_allclose(np.sort(d), np.linalg.eigvalsh(sym), rtol=10 * tol, atol=10 * tol)
    np.testing.assert_allclose(qr @ r, a_np, atol=10 * tol)
    assert np.allclose(np.tril(r, -1), 0.0, atol=10 * tol) and (np.diag(r)[:2] > 0).all()
    assert np.sign(r[2, 2]) == np.sign(np.linalg.det(a_np))  # Q a rotation: R carries det's sign
    np.testing.assert_allclose(np.linalg.det(qr), 1.0, atol=10 * tol)
    u2, v2_ = m2.numpy()[0].astype(np.float64), m2.numpy()[1].astype(np.float64)
    s2 = v2.numpy()[0].astype(np.float64)
    np.testing.assert_allclose(u2 @ np.diag(s2) @ v2_.T, b_np, atol=10 * tol)
    np.testing.assert_allclose(s2, np.linalg.svd(b_np)[1], rtol=10 * tol)


def test_bad_arguments_are_compile_errors():
    @wp.kernel
    def wrong(a: wp.array(dtype=wp.mat22)):
        u, s, v = wp.svd3(a[0])

    with pytest.raises(wp.WarpCodegenError, match="svd3\\(\\) needs a float 3x3 matrix"):
        wp.launch(wrong, 1, inputs=[wp.zeros(1, dtype=wp.mat22)])


@wp.kernel
def svd3_of(a: wp.array(dtype=wp.mat33d), u: wp.array(dtype=wp.mat33d), s: wp.array(dtype=wp.vec3d),
            v: wp.array(dtype=wp.mat33d)):
    i = wp.tid()
    uu, ss, vv = wp.svd3(a[i])
    u[i] = uu
    s[i] = ss
    v[i] = vv


def test_svd3_of_singular_matrices_is_a_finite_orthonormal_decomposition():
    """Rank 2, 1 and 0: U is completed to an orthonormal basis (it was A v / 0 = inf),
    and the small singular values come from |A v| (not the square root of a rounded
    eigenvalue)."""
    mats = np.array([np.arange(1.0, 10.0).reshape(3, 3), np.outer([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]),
                     np.diag([3.0, 0.0, 0.0]), np.zeros((3, 3)), np.diag([2.0, -1.0, 0.5])])
    n = len(mats)
    u, s, v = wp.zeros(n, dtype=wp.mat33d), wp.zeros(n, dtype=wp.vec3d), wp.zeros(n, dtype=wp.mat33d)
    wp.launch(svd3_of, n, inputs=[wp.array(mats, dtype=wp.mat33d), u, s, v])
    u, s, v = u.numpy(), s.numpy(), v.numpy()
    # Warp's convention: U and V rotations, sigma[0], sigma[1] >= 0, sigma[2] of det(A)'s sign
    assert np.all(np.isfinite(u)) and np.all(s[:, :2] >= 0.0) and np.all(np.diff(np.abs(s), axis=1) <= 1e-12)
    for k in range(n):
        np.testing.assert_allclose(u[k].T @ u[k], np.eye(3), atol=1e-12)
        np.testing.assert_allclose(v[k].T @ v[k], np.eye(3), atol=1e-12)
        np.testing.assert_allclose(np.linalg.det(u[k]), 1.0, atol=1e-12)
        np.testing.assert_allclose(u[k] @ np.diag(s[k]) @ v[k].T, mats[k], atol=1e-12)
        np.testing.assert_allclose(np.abs(s[k]), np.linalg.svd(mats[k], compute_uv=False), atol=1e-12)


@wp.kernel
def svd2_of(a: wp.array(dtype=wp.mat22d), u: wp.array(dtype=wp.mat22d), s: wp.array(dtype=wp.vec2d),
            v: wp.array(dtype=wp.mat22d)):
    i = wp.tid()
    uu, ss, vv = wp.svd2(a[i])
    u[i] = uu
    s[i] = ss
    v[i] = vv


def test_svd2_of_singular_matrices_is_a_finite_orthonormal_decomposition():
    mats = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[0.0, 3.0], [0.0, 0.0]],
                     [[2.0, 1.0], [-1.0, 3.0]]])
    n = len(mats)
    u, s, v = wp.zeros(n, dtype=wp.mat22d), wp.zeros(n, dtype=wp.vec2d), wp.zeros(n, dtype=wp.mat22d)
    wp.launch(svd2_of, n, inputs=[wp.array(mats, dtype=wp.mat22d), u, s, v])
    u, s, v = u.numpy(), s.numpy(), v.numpy()
    assert np.all(np.isfinite(u)) and np.all(s >= 0.0) and np.all(s[:, 0] >= s[:, 1])
    for k in range(n):
        np.testing.assert_allclose(u[k].T @ u[k], np.eye(2), atol=1e-12)
        np.testing.assert_allclose(u[k] @ np.diag(s[k]) @ v[k].T, mats[k], atol=1e-12)
        np.testing.assert_allclose(s[k], np.linalg.svd(mats[k], compute_uv=False), atol=1e-12)


def test_svd2_of_a_matrix_holding_nan_gives_nan_singular_values():
    mats = np.array([[[np.nan, 0.0], [1.0, 0.0]], [[3.0, 1.0], [1.0, 2.0]]])
    u, s, v = wp.zeros(2, dtype=wp.mat22d), wp.zeros(2, dtype=wp.vec2d), wp.zeros(2, dtype=wp.mat22d)
    wp.launch(svd2_of, 2, inputs=[wp.array(mats, dtype=wp.mat22d), u, s, v])
    assert np.all(np.isnan(s.numpy()[0]))  # (the smaller one was clamped to 0)
    np.testing.assert_allclose(s.numpy()[1], np.linalg.svd(mats[1], compute_uv=False), atol=1e-12)


def test_svd3_and_eig3_give_warps_factors():
    """The same algorithms as Warp's (McAdams et al.'s Jacobi sweeps, Givens QR): Warp's
    order of the eigenvalues and Warp's signs of the singular vectors, not only an
    equivalent decomposition. The svd3 values are those of Warp 1.19's
    test_codegen.test_multiple_return_values (8 digits: within 2e-7 of Warp's CPU result,
    which weft's matches bit for bit); the eig3 values were recorded with Warp 1.19 on the CPU."""
    a = np.arange(1.0, 10.0).reshape(3, 3)  # rank 2
    u, s, v = (np.array(x, dtype=np.float64) for x in wp.svd3(wp.mat33(*a.ravel())))
    np.testing.assert_allclose(u, [[0.21483721, 0.88723058, -0.40824816], [0.52058744, 0.24964368, 0.81649637],
                                   [0.82633746, -0.38794267, -0.40824834]], atol=1e-6)
    np.testing.assert_allclose(s, [16.84809875, 1.06836915, 0.00000019], atol=1e-6)
    np.testing.assert_allclose(v, [[0.47967088, -0.77669406, 0.40824246], [0.57236743, -0.07568054, -0.81649727],
                                   [0.66506463, 0.62531471, 0.40825251]], atol=1e-6)
    q, d = (np.array(x, dtype=np.float64) for x in wp.eig3(wp.mat33(2.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 4.0)))
    np.testing.assert_allclose(d, [2.9999983310699463, 1.2679486274719238, 4.732049942016602], rtol=1e-7)
    np.testing.assert_allclose(q, [[0.5773505568504333, -0.7886745929718018, 0.2113250195980072],
                                   [0.5773496627807617, 0.5773506164550781, 0.5773500800132751],
                                   [-0.5773501396179199, -0.2113247513771057, 0.78867506980896]], atol=1e-7)


@wp.kernel
def _qr(a: wp.array(dtype=wp.mat33d), q: wp.array(dtype=wp.mat33d), r: wp.array(dtype=wp.mat33d)):
    i = wp.tid()
    q[i], r[i] = wp.qr3(a[i])


def test_qr3_q_is_a_rotation_as_warp_documents():
    """Warp's qr3: `Q` has determinant +1; R's last diagonal entry is negative when det(A) < 0
    (the example of Warp's docstring: diag(R) = [1.414, 1.225, -1.155])."""
    a = np.array([[[1.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]], np.eye(3) * [1.0, 2.0, 3.0]])
    q, r = wp.zeros(2, dtype=wp.mat33d), wp.zeros(2, dtype=wp.mat33d)
    wp.launch(_qr, 2, inputs=[wp.array(a, dtype=wp.mat33d), q, r])
    np.testing.assert_allclose(np.linalg.det(q.numpy()), [1.0, 1.0], rtol=1e-12)
    np.testing.assert_allclose(np.diagonal(r.numpy(), axis1=1, axis2=2),
                               [[np.sqrt(2), np.sqrt(1.5), -2 / np.sqrt(3)], [1.0, 2.0, 3.0]], rtol=1e-12)
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a, atol=1e-12)
