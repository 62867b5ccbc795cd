"""weft.math: norms and quaternion helpers (funcs), from Python and in kernels."""

import numpy as np
import pytest

import weft as wp


def test_norms():
    v = wp.vec3(3.0, -4.0, 0.0)
    assert wp.norm_l1(v) == 7.0 and wp.norm_l2(v) == 5.0
    assert wp.norm_huber(v) == 4.5                       # |v| > delta: delta * (|v| - delta / 2)
    assert wp.norm_huber(v, 10.0) == 12.5                # |v| <= delta: |v|^2 / 2
    assert wp.norm_pseudo_huber(v) == pytest.approx(np.sqrt(26.0))
    np.testing.assert_allclose(wp.smooth_normalize(v).numpy(), np.array([3.0, -4.0, 0.0]) / np.sqrt(26.0), rtol=1e-6)
    assert wp.norm_l1(wp.vec2d(1.0, -2.0)) == 3.0 and type(wp.norm_l1(wp.vec2d(1.0, -2.0))) is type(wp.float64())


def test_twist():
    axis = wp.vec3(0.0, 0.0, 1.0)
    swing = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), 0.4)
    twist = wp.quat_from_axis_angle(axis, -0.7)
    q = swing * twist
    np.testing.assert_allclose(wp.quat_twist(axis, q).numpy(), twist.numpy(), atol=1e-6)
    assert wp.quat_twist_angle_signed(axis, twist) == pytest.approx(-0.7)
    assert wp.quat_twist_angle(axis, twist) == pytest.approx(0.7)


def test_in_kernels_with_gradients():
    @wp.kernel
    def k(x: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
        out[0] = wp.norm_pseudo_huber(x[0], delta=2.0) + wp.norm_l1(x[0])

    x = wp.array([[0.5, -1.0, 2.0]], dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(k, 1, inputs=[x, out])
    tape.backward(loss=out)
    v = np.array([0.5, -1.0, 2.0])
    expected = v / (2.0 * np.sqrt(1.0 + v @ v / 4.0)) + np.sign(v)
    np.testing.assert_allclose(x.grad.numpy()[0], expected, rtol=1e-5)


def test_constants():
    import math
    assert (wp.pi, wp.PI, wp.HALF_PI, wp.TAU, wp.e) == (math.pi, math.pi, math.pi / 2, math.tau, math.e)
    assert wp.LOG2E == 1 / math.log(2) and wp.LOG10E == math.log10(math.e) and wp.LN10 == math.log(10)
    assert wp.PHI == (1 + math.sqrt(5)) / 2 and wp.inf == math.inf and math.isnan(wp.NAN)

    @wp.kernel
    def k(out: wp.array(dtype=wp.float64)):
        out[0] = wp.float64(2.0) * wp.half_pi  # a weak constant: float64 here

    out = wp.zeros(1, dtype=wp.float64)
    wp.launch(k, 1, inputs=[out])
    assert out.numpy()[0] == math.pi


def _quat_distance(a, b):
    """Distance between two rotations (q and -q are the same rotation)."""
    a, b = np.asarray(a), np.asarray(b)
    return min(np.linalg.norm(a - b), np.linalg.norm(a + b))


def _axis_rotation(axis, angle):
    return wp.quat_from_axis_angle(wp.vec3(*np.eye(3)[axis]), angle)


SEQUENCES = [(i, j, k) for i in range(3) for j in range(3) for k in range(3) if i != j and j != k]


@pytest.mark.parametrize("seq", SEQUENCES)
def test_euler_round_trip(seq):
    i, j, k = seq
    half_pi = wp.HALF_PI
    for angles in [(0.31, -0.27, 0.41), (0.6, 0.2, -0.9), (0.3, 0.0, 0.5)]:
        for second in (angles[1], half_pi - 1e-4, -half_pi + 1e-4, half_pi, 2.0):
            e = wp.vec3(angles[0], angles[1], angles[2])
            e[j] = second
            q = wp.quat_from_euler(e, i, j, k)
            expected = _axis_rotation(k, e[k]) * _axis_rotation(j, e[j]) * _axis_rotation(i, e[i])
            assert _quat_distance(q, expected) < 1e-6
            back = wp.quat_to_euler(q, i, j, k)
            third = back[k] if i != k else back[3 - i - j]
            rebuilt = _axis_rotation(k, third) * _axis_rotation(j, back[j]) * _axis_rotation(i, back[i])
            assert _quat_distance(rebuilt, q) < 1e-5, (e, back)


def test_euler_conventions():
    np.testing.assert_allclose(wp.quat_from_euler(wp.vec3(0.2, -0.1, 0.3), 0, 1, 2).numpy(),
                               wp.quat_rpy(0.2, -0.1, 0.3).numpy(), atol=1e-7)
    # a rotation about x decomposed in the sequence z, y, x: all of it is the x angle
    e = wp.quat_to_euler(wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), 0.2), 2, 1, 0)
    np.testing.assert_allclose(e.numpy(), [0.2, 0.0, 0.0], atol=1e-7)
    # at gimbal lock the first angle is 0 and the third takes the rest, as in Warp
    e = wp.quat_to_euler(wp.quat_rpy(0.3, wp.HALF_PI, 0.2), 0, 1, 2)
    np.testing.assert_allclose(e.numpy(), [0.0, wp.HALF_PI, -0.1], atol=1e-5)
    e = wp.quat_to_euler(wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), wp.PI), 2, 0, 2)
    np.testing.assert_allclose(e.numpy(), [wp.PI, wp.PI, 0.0], atol=1e-5)


@wp.kernel
def _transform_matrices(p: wp.vec3d, q: wp.quatd, s: wp.vec3d, m_out: wp.array(dtype=wp.mat44d),
                        t_out: wp.array(dtype=wp.transformd), v_out: wp.array(dtype=wp.vec3d),
                        q_out: wp.array(dtype=wp.quatd)):
    m = wp.transform_compose(p, q, s)
    m_out[0] = m
    m_out[1] = wp.transform_to_matrix(wp.transformd(p, q))
    t_out[0] = wp.transform_from_matrix(m_out[1])
    pp, qq, ss = wp.transform_decompose(m)
    v_out[0] = pp
    v_out[1] = ss
    q_out[0] = qq


def test_transform_compose_decompose_and_matrices():
    q = np.array([0.1, 0.2, 0.3, 0.9])
    q /= np.linalg.norm(q)
    p, s = np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0])
    m_out, t_out = wp.zeros(2, dtype=wp.mat44d), wp.zeros(1, dtype=wp.transformd)
    v_out, q_out = wp.zeros(2, dtype=wp.vec3d), wp.zeros(1, dtype=wp.quatd)
    wp.launch(_transform_matrices, 1, inputs=[wp.vec3d(*p), wp.quatd(*q), wp.vec3d(*s), m_out, t_out, v_out, q_out])
    x, y, z, w = q
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    want = np.eye(4)
    want[:3, :3], want[:3, 3] = r * s, p
    np.testing.assert_allclose(m_out.numpy()[0], want, atol=1e-12)
    want[:3, :3] = r
    np.testing.assert_allclose(m_out.numpy()[1], want, atol=1e-12)
    np.testing.assert_allclose(t_out.numpy()[0], np.concatenate([p, q]), atol=1e-12)
    np.testing.assert_allclose(v_out.numpy(), [p, s], atol=1e-12)
    np.testing.assert_allclose(q_out.numpy()[0], q, atol=1e-12)
    # from Python scope (weft's own funcs run compiled there, as Warp's builtins do)
    np.testing.assert_allclose(np.array(wp.transform_to_matrix(wp.transformd(p, q))), want, atol=1e-12)
    pp, qq, ss = wp.transform_decompose(wp.transform_compose(wp.vec3d(*p), wp.quatd(*q), wp.vec3d(*s)))
    for got, expected in ((pp, p), (qq, q), (ss, s)):
        np.testing.assert_allclose(np.array(got), expected, atol=1e-12)


def _spatial_numpy(q, p, top, bottom, wrench):
    """(R top + p x R bottom, R bottom) for a wrench, (R top, R bottom + p x R top) for a twist."""
    x, y, z, w = q
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    a, b = r @ top, r @ bottom
    return np.concatenate([a + np.cross(p, b), b]) if wrench else np.concatenate([a, b + np.cross(p, a)])


def test_spatial_transforms_in_kernels_and_python():
    rng = np.random.default_rng(7)
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    p, x, r = rng.normal(size=3), rng.normal(size=6), rng.normal(size=3)

    @wp.kernel
    def k(t: wp.transformd, x: wp.spatial_vectord, r: wp.vec3d, out: wp.array(dtype=wp.spatial_vectord),
          vel: wp.array(dtype=wp.vec3d)):
        out[0] = wp.transform_twist(t, x)
        out[1] = wp.transform_wrench(t, x)
        out[2] = wp.transform_twist(wp.transform_inverse(t), wp.transform_twist(t, x))
        vel[0] = wp.velocity_at_point(x, r)

    t = wp.transformd(wp.vec3d(*p), wp.quatd(*q))
    out = wp.zeros(3, dtype=wp.spatial_vectord)
    vel = wp.zeros(1, dtype=wp.vec3d)
    wp.launch(k, 1, inputs=[t, wp.spatial_vectord(*x), wp.vec3d(*r), out, vel])
    np.testing.assert_allclose(out.numpy()[0], _spatial_numpy(q, p, x[:3], x[3:], wrench=False), atol=1e-14)
    np.testing.assert_allclose(out.numpy()[1], _spatial_numpy(q, p, x[:3], x[3:], wrench=True), atol=1e-14)
    np.testing.assert_allclose(out.numpy()[2], x, atol=1e-14)  # the inverse transform undoes it
    np.testing.assert_allclose(vel.numpy()[0], x[3:] + np.cross(x[:3], r), atol=1e-14)
    from_python = wp.transform_wrench(t, wp.spatial_vectord(*x))
    np.testing.assert_allclose(np.array(from_python), out.numpy()[1], atol=1e-14)
