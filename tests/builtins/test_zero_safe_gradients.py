"""Gradients at the points where Warp's adjoints guard against a division by zero: length and
normalize of the zero vector, quat_to_axis_angle of the identity rotation. Elsewhere the
gradients are compared with analytic values and float64 central differences."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def _length_and_normalize(x: wp.array(dtype=wp.vec3d), length: wp.array(dtype=wp.float64),
                          unit: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    length[i] = wp.length(x[i])
    unit[i] = wp.normalize(x[i])


def _grads(points, seed_length, seed_unit):
    x = wp.array(points, dtype=wp.vec3d, requires_grad=True)
    length = wp.zeros(len(points), dtype=wp.float64, requires_grad=True)
    unit = wp.zeros(len(points), dtype=wp.vec3d, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_length_and_normalize, len(points), inputs=[x], outputs=[length, unit])
    tape.backward(grads={length: wp.array(seed_length, dtype=wp.float64),
                         unit: wp.array(seed_unit, dtype=wp.vec3d)})
    return length.numpy(), unit.numpy(), x.grad.numpy()


def test_zero_vector_has_zero_length_unit_and_gradient():
    length, unit, grad = _grads(np.zeros((1, 3)), np.ones(1), np.ones((1, 3)))
    assert length[0] == 0.0
    assert (unit[0] == 0.0).all()
    assert (grad[0] == 0.0).all()  # as Warp's adj_length / adj_normalize (no NaN)


def test_gradients_away_from_zero_are_analytic():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 3))
    a, c = rng.normal(size=8), rng.normal(size=(8, 3))
    _, _, grad = _grads(x, a, c)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    u = x / n
    # d|x| = u; d(x/|x|)^T c = (c - u (u . c)) / |x|
    expected = a[:, None] * u + (c - u * np.sum(u * c, axis=1, keepdims=True)) / n
    np.testing.assert_allclose(grad, expected, rtol=1e-13, atol=1e-13)


def test_nan_stays_nan():
    length, _, _ = _grads(np.array([[np.nan, 0.0, 0.0]]), np.ones(1), np.zeros((1, 3)))
    assert np.isnan(length[0])


@wp.kernel
def _axis_angle_forms(q: wp.array(dtype=wp.quatd), out: wp.array(dtype=wp.float64, ndim=2)):
    i = wp.tid()
    axis = wp.vec3d()
    angle = wp.float64(0.0)
    wp.quat_to_axis_angle(q[i], axis, angle)  # Warp's form: writes the local variables
    axis2, angle2 = wp.quat_to_axis_angle(q[i])
    for k in range(3):
        out[i, k] = axis[k]
        out[i, 4 + k] = axis2[k]
    out[i, 3] = angle
    out[i, 7] = angle2


def _axis_angle(quats):
    q = wp.array(quats, dtype=wp.quatd, requires_grad=True)
    out = wp.zeros((len(quats), 8), dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_axis_angle_forms, len(quats), inputs=[q], outputs=[out])
    return q, out, tape


def test_quat_to_axis_angle_forms_agree_and_match_warp_formula():
    rng = np.random.default_rng(1)
    quats = rng.normal(size=(16, 4))
    _, out, _ = _axis_angle(quats)
    out = out.numpy()
    np.testing.assert_array_equal(out[:, :4], out[:, 4:])
    v, w = quats[:, :3], quats[:, 3:]
    axis = np.where(w < 0, -1.0, 1.0) * v / np.linalg.norm(v, axis=1, keepdims=True)
    angle = 2.0 * np.arctan2(np.linalg.norm(v, axis=1), np.abs(w[:, 0]))
    np.testing.assert_allclose(out[:, :3], axis, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(out[:, 3], angle, rtol=1e-14, atol=1e-14)


def test_quat_to_axis_angle_gradient():
    rng = np.random.default_rng(2)
    quats = np.concatenate([rng.normal(size=(6, 4)), [[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, -2.0]]])
    seed = rng.normal(size=(len(quats), 8))
    q, out, tape = _axis_angle(quats)
    tape.backward(grads={out: wp.array(seed, dtype=wp.float64)})
    grad = q.grad.numpy()
    assert (grad[-2:] == 0.0).all()  # the identity rotation: zero axis, no gradient (not NaN)
    h = 1e-6
    for k in range(4):
        d = np.zeros(4)
        d[k] = h
        plus = _axis_angle(quats[:-2] + d)[1].numpy()
        minus = _axis_angle(quats[:-2] - d)[1].numpy()
        fd = np.sum((plus - minus) / (2 * h) * seed[:-2], axis=1)
        np.testing.assert_allclose(grad[:-2, k], fd, rtol=1e-6, atol=1e-7)


def test_quat_to_axis_angle_output_type_is_checked():
    @wp.kernel
    def wrong(q: wp.array(dtype=wp.quatd)):
        axis = wp.vec3()  # float32, the quaternion is float64
        angle = wp.float64(0.0)
        wp.quat_to_axis_angle(q[0], axis, angle)

    with pytest.raises(wp.WarpCodegenError, match="output argument 'axis' must be a vec3d"):
        wp.launch(wrong, 1, inputs=[wp.zeros(1, dtype=wp.quatd)])


@pytest.mark.parametrize("dtype", [wp.int8, wp.int32, wp.int64, wp.uint16])
def test_step_of_integers(dtype):
    @wp.kernel
    def steps(x: wp.array(dtype=dtype), out: wp.array(dtype=dtype)):
        i = wp.tid()
        out[i] = wp.step(x[i])

    values = np.array([-3, -1, 0, 1, 5]) if dtype.is_signed else np.array([0, 1, 5])
    x = wp.array(values, dtype=dtype)
    out = wp.zeros(len(values), dtype=dtype)
    wp.launch(steps, len(values), inputs=[x, out])
    np.testing.assert_array_equal(out.numpy(), (values < 0).astype(int))
