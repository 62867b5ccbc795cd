"""erfc, erfinv, erfcinv: values across their domains, edges, and types."""

import math

import numpy as np
import pytest

import weft as wp

F64_POINTS = [-0.999999999999, -0.75, -0.5, -1e-8, 0.0, 1e-300, 0.123, 0.5, 0.9, 1 - 1e-16]


@pytest.mark.parametrize("x", F64_POINTS)
def test_erfinv_inverts_erf_in_float64(x):
    r = wp.erfinv(wp.float64(x))
    assert type(r) is type(wp.float64())
    # erf is flat in the tails: compare in erfc there, relative to the distance from 1
    if abs(x) > 0.5:
        assert math.erfc(abs(r)) == pytest.approx(1 - abs(x), rel=1e-13)
    else:
        assert math.erf(r) == pytest.approx(x, rel=1e-15, abs=1e-300)


@pytest.mark.parametrize("y", [1e-300, 1e-100, 1e-20, 1e-10, 0.123, 0.5, 1 - 1e-9, 1.0, 1.5, 1.9, 2 - 1e-12])
def test_erfcinv_inverts_erfc_in_float64(y):
    r = wp.erfcinv(wp.float64(y))
    if y <= 1:
        assert math.erfc(r) == pytest.approx(y, rel=1e-13)
    else:
        assert math.erfc(-r) == pytest.approx(2 - y, rel=1e-12)


def test_known_values():
    # reference values from mpmath at 40 digits
    assert wp.erfinv(wp.float64(0.123)) == pytest.approx(0.10944128679118488, rel=1e-15)
    assert wp.erfcinv(wp.float64(0.999999999)) == pytest.approx(8.862269003885488e-10, rel=1e-14)
    assert wp.erfcinv(wp.float64(1e-10)) == pytest.approx(4.572824967389485, rel=1e-14)
    assert wp.erfinv(0.123) == pytest.approx(0.10944128679118488, rel=2e-7)   # float32
    assert wp.erfcinv(1e-30) == pytest.approx(8.148615927, rel=2e-7)
    assert wp.erfc(5.0) == pytest.approx(math.erfc(5.0), rel=1e-6)             # no 1 - erf cancellation
    assert wp.erfc(wp.float64(10.0)) == pytest.approx(math.erfc(10.0), rel=1e-14)
    assert abs(float(wp.erfinv(wp.float16(0.123))) - 0.10944) < 1e-3


def test_edges():
    assert wp.erfinv(1.0) == math.inf and wp.erfinv(-1.0) == -math.inf
    assert math.isnan(wp.erfinv(1.5)) and math.isnan(wp.erfinv(math.nan))
    assert wp.erfcinv(0.0) == math.inf and wp.erfcinv(2.0) == -math.inf
    assert math.isnan(wp.erfcinv(-0.5)) and math.isnan(wp.erfcinv(2.5))


def test_in_kernels_with_gradients():
    @wp.kernel
    def k(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
        out[0] = wp.erfinv(x[0]) + wp.erfcinv(x[1]) + wp.erfc(x[2])

    x = wp.array([0.3, 0.4, 0.7], dtype=wp.float64, requires_grad=True)
    out = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(k, 1, inputs=[x, out])
    tape.backward(loss=out)
    half_sqrt_pi = math.sqrt(math.pi) / 2
    expected = [half_sqrt_pi * math.exp(wp.erfinv(wp.float64(0.3)) ** 2),
                -half_sqrt_pi * math.exp(wp.erfcinv(wp.float64(0.4)) ** 2),
                -math.exp(-0.49) / half_sqrt_pi]
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
