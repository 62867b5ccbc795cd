"""Vector, matrix, quaternion and transform builtins against numpy (and against Warp, where
it is installed, on the same inputs)."""

import functools

import numpy as np
import pytest

import weft as wp

RNG = np.random.default_rng(42)
N = 16


@functools.cache
def kernel1(name, t_in, t_out):
    fn = getattr(wp, name)

    @wp.kernel
    def apply(x: wp.array(dtype=t_in), out: wp.array(dtype=t_out)):
        i = wp.tid()
        out[i] = fn(x[i])
    return apply


@functools.cache
def kernel2(name, t_a, t_b, t_out):
    fn = getattr(wp, name)

    @wp.kernel
    def apply(a: wp.array(dtype=t_a), b: wp.array(dtype=t_b), out: wp.array(dtype=t_out)):
        i = wp.tid()
        out[i] = fn(a[i], b[i])
    return apply


def call(kernel, out_type, *inputs):
    """Launch over len(inputs[0]); inputs are (numpy array, weft dtype) pairs."""
    arrays = [wp.array(x, dtype=t) for x, t in inputs]
    out = wp.zeros(len(inputs[0][0]), dtype=out_type)
    wp.launch(kernel, len(inputs[0][0]), inputs=[*arrays, out])
    return out.numpy()


def rand(*shape, dtype=np.float32):
    return RNG.uniform(-2.0, 2.0, (N, *shape)).astype(dtype)


VECS = [(wp.vec2, 2, np.float32), (wp.vec3, 3, np.float32), (wp.vec4, 4, np.float32),
        (wp.vec3d, 3, np.float64)]
MATS = [(wp.mat22, 2, np.float32), (wp.mat33, 3, np.float32), (wp.mat44, 4, np.float32),
        (wp.mat33d, 3, np.float64)]
TOL = {np.float32: dict(rtol=2e-6, atol=2e-6), np.float64: dict(rtol=1e-14, atol=1e-14)}
SCALAR = {np.float32: wp.float32, np.float64: wp.float64}


def vec_id(p):
    return getattr(p, "name", None)


# Vectors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("vt,n,dt", VECS, ids=[v[0].name for v in VECS])
def test_dot_length_normalize(vt, n, dt):
    a, b = rand(n, dtype=dt), rand(n, dtype=dt)
    a[0] = 0.0  # normalize keeps the zero vector zero
    st = SCALAR[dt]
    np.testing.assert_allclose(call(kernel2("dot", vt, vt, st), st, (a, vt), (b, vt)),
                               np.sum(a.astype(np.float64) * b, -1), **TOL[dt])
    norm = np.linalg.norm(a.astype(np.float64), axis=-1)
    np.testing.assert_allclose(call(kernel1("length", vt, st), st, (a, vt)), norm, **TOL[dt])
    np.testing.assert_allclose(call(kernel1("length_sq", vt, st), st, (a, vt)), norm**2, **TOL[dt])
    unit = call(kernel1("normalize", vt, vt), vt, (a, vt))
    np.testing.assert_array_equal(unit[0], np.zeros(n))
    np.testing.assert_allclose(unit[1:], a[1:] / norm[1:, None], **TOL[dt])


@pytest.mark.parametrize("vt,dt", [(wp.vec3, np.float32), (wp.vec3d, np.float64)],
                         ids=["vec3", "vec3d"])
def test_cross(vt, dt):
    a, b = rand(3, dtype=dt), rand(3, dtype=dt)
    got = call(kernel2("cross", vt, vt, vt), vt, (a, vt), (b, vt))
    np.testing.assert_allclose(got, np.cross(a.astype(np.float64), b), **TOL[dt])


@pytest.mark.parametrize("t,shape,dt", [(wp.vec3, (3,), np.float32), (wp.mat22, (2, 2), np.float32),
                                        (wp.vec4d, (4,), np.float64)], ids=["vec3", "mat22", "vec4d"])
def test_componentwise_mul_div(t, shape, dt):
    a, b = rand(*shape, dtype=dt), rand(*shape, dtype=dt) + 3.0
    np.testing.assert_allclose(call(kernel2("cw_mul", t, t, t), t, (a, t), (b, t)), a * b, **TOL[dt])
    np.testing.assert_allclose(call(kernel2("cw_div", t, t, t), t, (a, t), (b, t)), a / b, **TOL[dt])


def test_outer_and_non_square_transpose():
    a, b = rand(2), rand(3)
    m23 = wp.mat((2, 3), float)
    m32 = wp.mat((3, 2), float)
    got = call(kernel2("outer", wp.vec2, wp.vec3, m23), m23, (a, wp.vec2), (b, wp.vec3))
    np.testing.assert_allclose(got, np.einsum("ki,kj->kij", a, b), **TOL[np.float32])
    m = rand(2, 3)
    np.testing.assert_array_equal(call(kernel1("transpose", m23, m32), m32, (m, m23)),
                                  m.swapaxes(1, 2))


# Matrices ----------------------------------------------------------------------------------


def well_conditioned(n, dt):
    return (rand(n, n, dtype=dt) + 4.0 * np.eye(n, dtype=dt)).astype(dt)


@pytest.mark.parametrize("mt,n,dt", MATS, ids=[m[0].name for m in MATS])
def test_transpose_determinant_trace_inverse(mt, n, dt):
    m = well_conditioned(n, dt)
    st = SCALAR[dt]
    m64 = m.astype(np.float64)
    np.testing.assert_array_equal(call(kernel1("transpose", mt, mt), mt, (m, mt)), m.swapaxes(1, 2))
    np.testing.assert_allclose(call(kernel1("determinant", mt, st), st, (m, mt)),
                               np.linalg.det(m64), rtol=1e-5 if dt is np.float32 else 1e-13)
    np.testing.assert_allclose(call(kernel1("trace", mt, st), st, (m, mt)),
                               np.trace(m64, axis1=1, axis2=2), **TOL[dt])
    np.testing.assert_allclose(call(kernel1("inverse", mt, mt), mt, (m, mt)), np.linalg.inv(m64),
                               rtol=1e-5 if dt is np.float32 else 1e-13,
                               atol=1e-6 if dt is np.float32 else 1e-14)


@wp.kernel
def product_with_inverse(m: wp.array(dtype=wp.mat44), out: wp.array(dtype=wp.mat44)):
    i = wp.tid()
    out[i] = m[i] * wp.inverse(m[i])


def test_float32_4x4_inverse_is_computed_wide():
    """Ill-conditioned float32 4x4 matrices (test_ctypes' products of random matrices):
    m * inverse(m) stays within 1e-3 of the identity, as Warp's (float64) inverse does."""
    rng = np.random.default_rng(42)
    a, b, c = (rng.random((1024, 4, 4)) for _ in range(3))
    m = (a @ b + 2.0 * c).astype(np.float32)
    out = wp.zeros(1024, dtype=wp.mat44)
    wp.launch(product_with_inverse, 1024, inputs=[wp.array(m, dtype=wp.mat44), out])
    assert np.abs(out.numpy() - np.eye(4)).max() < 1e-3
    cond = np.linalg.cond(m.astype(np.float64)).max()
    assert cond > 1e3  # the set does hold ill-conditioned matrices


@pytest.mark.parametrize("mt,n,dt", MATS, ids=[m[0].name for m in MATS])
def test_inverse_of_a_singular_matrix_is_zero(mt, n, dt):
    """As Warp: a zero determinant gives the zero matrix (not inf/nan)."""
    m = np.ones((1, n, n), dt)
    np.testing.assert_array_equal(call(kernel1("inverse", mt, mt), mt, (m, mt)), np.zeros((1, n, n)))


@pytest.mark.parametrize("mt,n,dt", MATS, ids=[m[0].name for m in MATS])
def test_inverse_with_a_nan_determinant_follows_warp(mt, n, dt):
    """Warp tests `det > 0 or det < 0` for 2x2 and 4x4 matrices (a NaN determinant gives the
    zero matrix) and `det != 0` for 3x3 (NaN entries)."""
    m = np.eye(n, dtype=dt)[None].copy()
    m[0, 0, 0] = np.nan
    got = call(kernel1("inverse", mt, mt), mt, (m, mt))
    assert (got == 0).all() if n in (2, 4) else np.isnan(got).any()


@wp.kernel
def _inverse_loss(a: wp.array(dtype=wp.mat33d), c: wp.array(dtype=wp.mat33d), loss: wp.array(dtype=wp.float64)):
    loss[0] = wp.ddot(wp.inverse(a[0]), c[0])


def test_inverse_gradient_of_a_badly_scaled_matrix_is_exact():
    # d <inv(A), C> / dA = -inv^T C inv^T (Warp's adjoint); differentiating the adjugate lost
    # the small entries (0 where -1 is right for diag(1, 1e-100, 1))
    a = np.diag([1.0, 1e-100, 1.0])
    c = np.arange(1.0, 10.0).reshape(3, 3)
    A = wp.array([a], dtype=wp.mat33d, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_inverse_loss, 1, inputs=[A, wp.array([c], dtype=wp.mat33d), loss])
    tape.backward(loss)
    inv_t = np.linalg.inv(a).T
    np.testing.assert_allclose(A.grad.numpy()[0], -inv_t @ c @ inv_t, rtol=1e-12)


@pytest.mark.parametrize("vt,mt,n,dt", [(wp.vec2, wp.mat22, 2, np.float32),
                                        (wp.vec3, wp.mat33, 3, np.float32),
                                        (wp.vec4d, wp.mat44d, 4, np.float64)],
                         ids=["2", "3", "4d"])
def test_diag(vt, mt, n, dt):
    v = rand(n, dtype=dt)
    np.testing.assert_array_equal(call(kernel1("diag", vt, mt), mt, (v, vt)),
                                  np.einsum("ki,ij->kij", v, np.eye(n)))


@wp.kernel
def identities(out2: wp.array(dtype=wp.mat22), out3: wp.array(dtype=wp.mat33d),
               out4: wp.array(dtype=wp.mat44)):
    out2[0] = wp.identity(2, dtype=float)
    out3[0] = wp.identity(n=3, dtype=wp.float64)
    out4[0] = wp.identity(4, float) * 2.0


def test_identity(run):
    out2, out3, out4 = run(identities, 1, (np.zeros((1, 2, 2), np.float32), wp.mat22),
                           (np.zeros((1, 3, 3), np.float64), wp.mat33d),
                           (np.zeros((1, 4, 4), np.float32), wp.mat44))
    np.testing.assert_array_equal(out2[0], np.eye(2))
    np.testing.assert_array_equal(out3[0], np.eye(3))
    np.testing.assert_array_equal(out4[0], 2 * np.eye(4))


@wp.kernel
def skew_times(v: wp.array(dtype=wp.vec3), x: wp.array(dtype=wp.vec3),
               s: wp.array(dtype=wp.mat33), sx: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    s[i] = wp.skew(v[i])
    sx[i] = wp.skew(v[i]) * x[i]


def test_skew(run):
    v, x = rand(3), rand(3)
    *_, s, sx = run(skew_times, N, (v, wp.vec3), (x, wp.vec3), (np.zeros((N, 3, 3), np.float32), wp.mat33),
                    (np.zeros((N, 3), np.float32), wp.vec3))
    a, b, c = v.T
    z = np.zeros(N)
    expect = np.stack([z, -c, b, c, z, -a, -b, a, z], axis=1).reshape(N, 3, 3)
    np.testing.assert_array_equal(s, expect)
    np.testing.assert_allclose(sx, np.cross(v, x), **TOL[np.float32])


# Quaternions and transforms ------------------------------------------------------------------


def rotation_matrix(axis, angle):
    """Rodrigues' formula, one matrix per row of `axis` (unit) and `angle`."""
    k = axis / np.linalg.norm(axis, axis=1, keepdims=True)
    kx = np.zeros((len(k), 3, 3))
    kx[:, 0, 1], kx[:, 0, 2], kx[:, 1, 2] = -k[:, 2], k[:, 1], -k[:, 0]
    kx -= kx.swapaxes(1, 2)
    c, s = np.cos(angle)[:, None, None], np.sin(angle)[:, None, None]
    return c * np.eye(3) + s * kx + (1 - c) * np.einsum("ki,kj->kij", k, k)


def quat_product(p, q):
    """Hamilton product of (x, y, z, w) quaternions."""
    pv, pw, qv, qw = p[:, :3], p[:, 3:], q[:, :3], q[:, 3:]
    v = pw * qv + qw * pv + np.cross(pv, qv)
    w = pw * qw - np.sum(pv * qv, axis=1, keepdims=True)
    return np.concatenate([v, w], axis=1)


@wp.kernel
def quat_ops(axis: wp.array(dtype=wp.vec3), angle: wp.array(dtype=float),
             axis2: wp.array(dtype=wp.vec3), angle2: wp.array(dtype=float),
             v: wp.array(dtype=wp.vec3), q_out: wp.array(dtype=wp.quat),
             rotated: wp.array(dtype=wp.vec3), back: wp.array(dtype=wp.vec3),
             q_inv: wp.array(dtype=wp.quat), product: wp.array(dtype=wp.quat),
             composed: wp.array(dtype=wp.vec3), matrix: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    q = wp.quat_from_axis_angle(wp.normalize(axis[i]), angle[i])
    r = wp.quat_from_axis_angle(wp.normalize(axis2[i]), angle2[i])
    q_out[i] = q
    rotated[i] = wp.quat_rotate(q, v[i])
    back[i] = wp.quat_rotate_inv(q, v[i])
    q_inv[i] = wp.quat_inverse(q)
    product[i] = q * r
    composed[i] = wp.quat_rotate(q * r, v[i])
    matrix[i] = wp.quat_to_matrix(q)


@pytest.fixture(scope="module")
def quat_inputs():
    return dict(axis=rand(3), angle=RNG.uniform(-4, 4, N).astype(np.float32),
                axis2=rand(3), angle2=RNG.uniform(-4, 4, N).astype(np.float32), v=rand(3))


def test_quaternions(run, quat_inputs):
    d = quat_inputs
    f3, f4 = np.zeros((N, 3), np.float32), np.zeros((N, 4), np.float32)
    *_, q, rotated, back, q_inv, product, composed, matrix = run(
        quat_ops, N, (d["axis"], wp.vec3), d["angle"], (d["axis2"], wp.vec3), d["angle2"],
        (d["v"], wp.vec3), (f4, wp.quat), (f3, wp.vec3), (f3, wp.vec3), (f4, wp.quat),
        (f4, wp.quat), (f3, wp.vec3), (np.zeros((N, 3, 3), np.float32), wp.mat33))
    unit = d["axis"] / np.linalg.norm(d["axis"], axis=1, keepdims=True)
    half = d["angle"].astype(np.float64) / 2
    expect_q = np.concatenate([unit * np.sin(half)[:, None], np.cos(half)[:, None]], axis=1)
    unit2 = d["axis2"] / np.linalg.norm(d["axis2"], axis=1, keepdims=True)
    half2 = d["angle2"].astype(np.float64) / 2
    expect_r = np.concatenate([unit2 * np.sin(half2)[:, None], np.cos(half2)[:, None]], axis=1)
    rot = rotation_matrix(d["axis"].astype(np.float64), d["angle"].astype(np.float64))
    rot2 = rotation_matrix(d["axis2"].astype(np.float64), d["angle2"].astype(np.float64))
    tol = dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(q, expect_q, **tol)
    np.testing.assert_allclose(rotated, np.einsum("kij,kj->ki", rot, d["v"]), **tol)
    np.testing.assert_allclose(back, np.einsum("kji,kj->ki", rot, d["v"]), **tol)
    np.testing.assert_allclose(q_inv, expect_q * [-1, -1, -1, 1], **tol)
    np.testing.assert_allclose(product, quat_product(expect_q, expect_r), **tol)
    np.testing.assert_allclose(composed, np.einsum("kij,kjl,kl->ki", rot, rot2, d["v"]), **tol)
    np.testing.assert_allclose(matrix, rot, **tol)


@wp.kernel
def transform_ops(p: wp.array(dtype=wp.vec3), axis: wp.array(dtype=wp.vec3),
                  angle: wp.array(dtype=float), x: wp.array(dtype=wp.vec3),
                  points: wp.array(dtype=wp.vec3), vectors: wp.array(dtype=wp.vec3),
                  inverses: wp.array(dtype=wp.transform), products: wp.array(dtype=wp.transform),
                  round_trip: wp.array(dtype=wp.vec3), parts: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    t = wp.transform(p[i], wp.quat_from_axis_angle(wp.normalize(axis[i]), angle[i]))
    j = (i + 1) % p.shape[0]
    u = wp.transform(p[j], wp.quat_from_axis_angle(wp.normalize(axis[j]), angle[j]))
    points[i] = wp.transform_point(t, x[i])
    vectors[i] = wp.transform_vector(t, x[i])
    inverses[i] = wp.transform_inverse(t)
    products[i] = wp.transform_multiply(t, u)
    round_trip[i] = wp.transform_point(wp.transform_inverse(t), wp.transform_point(t, x[i]))
    parts[i] = wp.transform_get_translation(t) + wp.quat_rotate(wp.transform_get_rotation(t), x[i])


def test_transforms(run, quat_inputs):
    d = quat_inputs
    p = rand(3)
    f3, f7 = np.zeros((N, 3), np.float32), np.zeros((N, 7), np.float32)
    *_, points, vectors, inverses, products, round_trip, parts = run(
        transform_ops, N, (p, wp.vec3), (d["axis"], wp.vec3), d["angle"], (d["v"], wp.vec3),
        (f3, wp.vec3), (f3, wp.vec3), (f7, wp.transform), (f7, wp.transform), (f3, wp.vec3),
        (f3, wp.vec3))
    rot = rotation_matrix(d["axis"].astype(np.float64), d["angle"].astype(np.float64))
    x = d["v"].astype(np.float64)
    tol = dict(rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(points, np.einsum("kij,kj->ki", rot, x) + p, **tol)
    np.testing.assert_allclose(vectors, np.einsum("kij,kj->ki", rot, x), **tol)
    np.testing.assert_allclose(inverses[:, :3], -np.einsum("kji,kj->ki", rot, p), **tol)
    unit = d["axis"] / np.linalg.norm(d["axis"], axis=1, keepdims=True)
    half = d["angle"].astype(np.float64) / 2
    q = np.concatenate([unit * np.sin(half)[:, None], np.cos(half)[:, None]], axis=1)
    np.testing.assert_allclose(inverses[:, 3:], q * [-1, -1, -1, 1], **tol)
    nxt = np.roll(np.arange(N), -1)
    np.testing.assert_allclose(products[:, :3], np.einsum("kij,kj->ki", rot, p[nxt]) + p, **tol)
    np.testing.assert_allclose(products[:, 3:], quat_product(q, q[nxt]), **tol)
    np.testing.assert_allclose(round_trip, x, **tol)
    np.testing.assert_allclose(parts, points, **tol)


@wp.kernel
def quat_constructors(out: wp.array(dtype=wp.quat), tout: wp.array(dtype=wp.transform)):
    out[0] = wp.quat(1.0, 2.0, 3.0, 4.0)
    out[1] = wp.quat_identity()
    q = wp.quat(0.0, 0.0, 0.0, 1.0)
    out[2] = q * wp.quat(1.0, 2.0, 3.0, 4.0)  # the identity on the left
    tout[0] = wp.transform_identity()
    tout[1] = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity())


def test_quat_and_transform_constructors(run):
    out, tout = run(quat_constructors, 1, (np.zeros((3, 4), np.float32), wp.quat),
                    (np.zeros((2, 7), np.float32), wp.transform))
    np.testing.assert_array_equal(out, [[1, 2, 3, 4], [0, 0, 0, 1], [1, 2, 3, 4]])
    np.testing.assert_array_equal(tout, [[0, 0, 0, 0, 0, 0, 1], [1, 2, 3, 0, 0, 0, 1]])


# The same source under Warp ----------------------------------------------------------------


def test_quaternions_and_transforms_match_warp(quat_inputs):
    warp = pytest.importorskip("warp")
    warp.config.quiet = True
    d = quat_inputs
    p = d["v"][::-1].copy()
    ours = compare_kernel(wp, d, p, "weft")
    theirs = compare_kernel(warp, d, p, "warp")
    for name in ours:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-5, atol=1e-6, err_msg=name)


@functools.cache
def _compare_kernel_for(lib):
    @lib.kernel
    def compare(axis: lib.array(dtype=lib.vec3), angle: lib.array(dtype=float),
                v: lib.array(dtype=lib.vec3), p: lib.array(dtype=lib.vec3),
                out3: lib.array(dtype=lib.vec3, ndim=2), out4: lib.array(dtype=lib.quat, ndim=2),
                out7: lib.array(dtype=lib.transform, ndim=2)):
        i = lib.tid()
        j = (i + 1) % axis.shape[0]
        q = lib.quat_from_axis_angle(lib.normalize(axis[i]), angle[i])
        r = lib.quat_from_axis_angle(lib.normalize(axis[j]), angle[j])
        t = lib.transform(p[i], q)
        u = lib.transform(p[j], r)
        out4[i, 0] = q
        out4[i, 1] = q * r
        out4[i, 2] = lib.quat_inverse(q)
        out3[i, 0] = lib.quat_rotate(q, v[i])
        out3[i, 1] = lib.quat_rotate_inv(q, v[i])
        out3[i, 2] = lib.transform_point(t, v[i])
        out3[i, 3] = lib.transform_vector(t, v[i])
        out7[i, 0] = lib.transform_inverse(t)
        out7[i, 1] = lib.transform_multiply(t, u)
    return compare


def compare_kernel(lib, d, p, name):
    kw = {} if name == "weft" else {"device": "cpu"}
    arrays = [lib.array(d["axis"], dtype=lib.vec3, **kw), lib.array(d["angle"], dtype=float, **kw),
              lib.array(d["v"], dtype=lib.vec3, **kw), lib.array(p, dtype=lib.vec3, **kw)]
    out3 = lib.zeros((N, 4), dtype=lib.vec3, **kw)
    out4 = lib.zeros((N, 3), dtype=lib.quat, **kw)
    out7 = lib.zeros((N, 2), dtype=lib.transform, **kw)
    lib.launch(_compare_kernel_for(lib), N, inputs=[*arrays, out3, out4, out7], **kw)
    return {"vec3": out3.numpy(), "quat": out4.numpy(), "transform": out7.numpy()}


@wp.kernel
def _normalize_quats(qs: wp.array(dtype=wp.quat), out: wp.array(dtype=wp.quat), zero_made: wp.array(dtype=wp.quat)):
    i = wp.tid()
    out[i] = wp.normalize(qs[i])
    zero_made[i] = wp.quaternion(dtype=wp.float32) + wp.quaternion()  # Warp's zero quaternions


def test_normalize_of_a_zero_quaternion_is_the_identity():
    """As Warp documents: a quaternion of length 0 normalizes to (0, 0, 0, 1) (a vector to 0),
    in kernels and at Python scope."""
    qs = wp.array([[0.0, 0.0, 0.0, 0.0], [0.0, 3.0, 0.0, 4.0]], dtype=wp.quat)
    out, zero_made = wp.zeros(2, dtype=wp.quat), wp.ones(2, dtype=wp.quat)
    wp.launch(_normalize_quats, 2, inputs=[qs, out, zero_made])
    np.testing.assert_allclose(out.numpy(), [[0.0, 0.0, 0.0, 1.0], [0.0, 0.6, 0.0, 0.8]], rtol=1e-6)
    np.testing.assert_array_equal(zero_made.numpy(), np.zeros((2, 4)))
    assert list(wp.normalize(wp.quat(0.0, 0.0, 0.0, 0.0))) == [0.0, 0.0, 0.0, 1.0]
    assert list(wp.normalize(wp.vec3(0.0, 0.0, 0.0))) == [0.0, 0.0, 0.0]


def test_a_matrix_from_vectors_in_a_kernel_is_refused_as_in_warp():
    # Warp 1.19 refuses it; older Warp read the vectors as columns, weft read them as rows:
    # MPM codes written for old Warp (B-spline weights) would silently get the transpose
    @wp.kernel
    def from_vectors(out: wp.array(dtype=wp.mat33)):
        v = wp.vec3(1.0, 2.0, 3.0)
        out[0] = wp.mat33(v, v, v)

    with pytest.raises(wp.CompileError, match=r"use `wp.matrix_from_rows\(\)` or `wp.matrix_from_cols\(\)`"):
        wp.launch(from_vectors, 1, [wp.zeros(1, dtype=wp.mat33)])
    # in Python scope Warp 1.19 takes them as rows
    np.testing.assert_array_equal(np.array(wp.mat33(wp.vec3(1.0, 2.0, 3.0), wp.vec3(4.0, 5.0, 6.0),
                                                    wp.vec3(7.0, 8.0, 9.0))).reshape(3, 3),
                                  [[1, 2, 3], [4, 5, 6], [7, 8, 9]])
