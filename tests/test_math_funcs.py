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
    assert wp.norm_l1(wp.vec2d(1.0, -2.0)) == 3.0 and type(wp.norm_l1(wp.vec2d(1.0, -2.0))) is np.float64


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
