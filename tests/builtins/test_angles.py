"""degrees, radians and quat_rpy."""

import math

import numpy as np
import pytest

import weft as wp


def test_degrees_and_radians():
    assert wp.degrees(math.pi) == pytest.approx(180.0)
    assert wp.radians(90.0) == pytest.approx(math.pi / 2)
    assert type(wp.degrees(wp.float64(1.0))) is type(wp.float64())  # a weft float64, not a float
    assert wp.degrees(wp.float64(1.0)) == 180.0 / math.pi


@pytest.mark.parametrize("rpy", [(0.3, -0.5, 1.2), (0.0, 0.0, 0.0), (-2.0, 1.4, 3.0)])
def test_quat_rpy_is_yaw_pitch_roll_product(rpy):
    roll, pitch, yaw = rpy
    axes = (wp.vec3(1.0, 0.0, 0.0), wp.vec3(0.0, 1.0, 0.0), wp.vec3(0.0, 0.0, 1.0))
    qx, qy, qz = (wp.quat_from_axis_angle(a, t) for a, t in zip(axes, rpy))
    np.testing.assert_allclose(wp.quat_rpy(roll, pitch, yaw).numpy(), (qz * qy * qx).numpy(), atol=1e-6)
    np.testing.assert_allclose(wp.quat_to_rpy(wp.quat_rpy(roll, pitch, yaw)).numpy(), rpy, atol=2e-6)


def test_quat_rpy_in_kernels_and_types():
    @wp.kernel
    def k(angles: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.quatd)):
        out[0] = wp.quat_rpy(angles[0], angles[1], 0.5)

    out = wp.zeros(1, dtype=wp.quatd)
    wp.launch(k, 1, inputs=[wp.array([0.1, 0.2], dtype=wp.float64), out])
    expected = wp.quat_rpy(wp.float64(0.1), wp.float64(0.2), wp.float64(0.5))
    assert out.numpy()[0].tolist() == expected.numpy().tolist()

    @wp.kernel
    def mixed(a: wp.array(dtype=wp.float64), b: wp.array(dtype=float), out: wp.array(dtype=wp.quatd)):
        out[0] = wp.quat_rpy(a[0], b[0], 0.0)

    with pytest.raises(wp.CompileError, match="different types"):
        wp.launch(mixed, 1, inputs=[wp.zeros(1, dtype=wp.float64), wp.zeros(1), out])


@wp.kernel
def axis_angle_both_forms(qs: wp.array(dtype=wp.quat), axes: wp.array(dtype=wp.vec3),
                          angles: wp.array(dtype=float), returned: wp.array(dtype=float)):
    i = wp.tid()
    axis = wp.vec3()
    angle = 0.0
    wp.quat_to_axis_angle(qs[i], axis, angle)  # Warp's form: writes into the locals
    axes[i] = axis
    angles[i] = angle
    ax, an = wp.quat_to_axis_angle(qs[i])
    returned[i] = an * ax[2]


def test_quat_to_axis_angle_into_locals_matches_the_returning_form_and_its_gradient():
    theta = 0.5
    q = wp.array([wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), theta)], dtype=wp.quat, requires_grad=True)
    axes, angles, returned = wp.zeros(1, dtype=wp.vec3), wp.zeros(1, requires_grad=True), wp.zeros(1)
    tape = wp.Tape()
    with tape:
        wp.launch(axis_angle_both_forms, 1, inputs=[q, axes, angles, returned])
    np.testing.assert_allclose(axes.numpy(), [[0.0, 0.0, 1.0]], atol=1e-7)
    np.testing.assert_allclose(angles.numpy(), [theta], rtol=1e-6)
    np.testing.assert_allclose(returned.numpy(), [theta], rtol=1e-6)
    tape.backward(grads={angles: wp.ones(1)})
    # angle = 2 atan2(|xyz|, w): d/dz = 2 w / (s^2 + w^2), d/dw = -2 s / (s^2 + w^2), |q| = 1
    s, w = math.sin(theta / 2), math.cos(theta / 2)
    np.testing.assert_allclose(q.grad.numpy(), [[0.0, 0.0, 2 * w, -2 * s]], rtol=1e-5, atol=1e-7)


def test_quat_to_axis_angle_outputs_must_be_locals_of_their_types():
    @wp.kernel
    def wrong(qs: wp.array(dtype=wp.quat)):
        axis = wp.vec3()
        angle = 0
        wp.quat_to_axis_angle(qs[0], axis, angle)

    with pytest.raises(wp.CompileError, match=r"output argument 'angle' must be a float32 .*got int32"):
        wp.launch(wrong, 1, inputs=[wp.zeros(1, dtype=wp.quat)])


def test_quat_to_axis_angle_of_the_identity_has_a_zero_axis_as_in_warp():
    @wp.kernel
    def identity(out: wp.array(dtype=wp.vec4)):
        axis, angle = wp.quat_to_axis_angle(wp.quat_identity())
        out[0] = wp.vec4(axis[0], axis[1], axis[2], angle)

    out = wp.zeros(1, dtype=wp.vec4)
    wp.launch(identity, 1, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [[0.0, 0.0, 0.0, 0.0]])


@wp.kernel
def slerp_both_ways(q0: wp.array(dtype=wp.quatd), q1: wp.array(dtype=wp.quatd), t: wp.array(dtype=wp.float64),
                    builtin: wp.array(dtype=wp.quatd), composed: wp.array(dtype=wp.quatd)):
    i = wp.tid()
    builtin[i] = wp.quat_slerp(q0[i], q1[i], t[i])
    axis = wp.vec3d()
    angle = wp.float64(0.0)
    wp.quat_to_axis_angle(wp.quat_inverse(q0[i]) * q1[i], axis, angle)
    composed[i] = q0[i] * wp.quat_from_axis_angle(axis, t[i] * angle)


def test_quat_slerp_is_warps_definition_also_off_the_unit_sphere():
    rng = np.random.default_rng(5)
    n = 16
    q0, q1 = rng.normal(size=(n, 4)), rng.normal(size=(n, 4))  # not unit: the definitions differ there
    t = rng.uniform(size=n)
    builtin, composed = wp.zeros(n, dtype=wp.quatd), wp.zeros(n, dtype=wp.quatd)
    wp.launch(slerp_both_ways, n, inputs=[wp.array(q0, dtype=wp.quatd), wp.array(q1, dtype=wp.quatd),
                                          wp.array(t, dtype=wp.float64), builtin, composed])
    np.testing.assert_allclose(builtin.numpy(), composed.numpy(), rtol=1e-12, atol=1e-12)
    # on the unit sphere, the usual slerp: the rotation by angle t * theta between them
    a = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), 0.2)
    b = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), 1.0)
    np.testing.assert_allclose(wp.quat_slerp(a, b, 0.25).numpy(),
                               wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), 0.4).numpy(), atol=1e-6)
