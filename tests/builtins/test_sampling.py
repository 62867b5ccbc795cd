"""sample_* random builtins: Warp's formulas and draw order on Warp's PCG stream, checked
against a float32 reference built from the C library (what Warp's CPU code calls), and
their geometric properties."""

import ctypes
import ctypes.util

import numpy as np
import pytest

import weft as wp
from weft.builtins.random import pcg_numpy

N = 2000
_libm = ctypes.CDLL(ctypes.util.find_library("m"))
for _name in ("cosf", "sinf", "acosf"):
    getattr(_libm, _name).restype = ctypes.c_float
    getattr(_libm, _name).argtypes = [ctypes.c_float]
f32 = np.float32
TWO_PI = f32(2.0 * np.pi)


@wp.kernel
def draw_sphere_surface(seed: int, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    state = wp.rand_init(seed, i)
    out[i] = wp.sample_unit_sphere_surface(state)


@wp.kernel
def draw_all(seed: int, v2: wp.array2d(dtype=wp.vec2), v3: wp.array2d(dtype=wp.vec3)):
    i = wp.tid()
    state = wp.rand_init(seed, i)
    v2[0, i] = wp.sample_triangle(state)
    v2[1, i] = wp.sample_unit_ring(state)
    v2[2, i] = wp.sample_unit_disk(state)
    v2[3, i] = wp.sample_unit_square(state)
    v3[0, i] = wp.sample_unit_sphere(state)
    v3[1, i] = wp.sample_unit_hemisphere_surface(state)
    v3[2, i] = wp.sample_unit_hemisphere(state)
    v3[3, i] = wp.sample_unit_cube(state)


def _uniform(state):
    state = pcg_numpy(state)
    return state, f32(state >> 8) * f32(1.0 / 16777216.0)


def test_sphere_surface_matches_the_float32_reference_bit_for_bit():
    out = wp.zeros(N, dtype=wp.vec3)
    wp.launch(draw_sphere_surface, dim=N, inputs=[7, out])
    for i in range(0, N, 97):
        state = pcg_numpy((7 + pcg_numpy(i)) & 0xFFFFFFFF)
        state, u1 = _uniform(state)
        state, u2 = _uniform(state)
        phi = f32(_libm.acosf(f32(1.0) - f32(2.0) * u1))
        theta = TWO_PI * u2
        sin_phi = f32(_libm.sinf(phi))
        expected = [f32(_libm.cosf(theta)) * sin_phi, f32(_libm.sinf(theta)) * sin_phi, f32(_libm.cosf(phi))]
        np.testing.assert_array_equal(out.numpy()[i], np.array(expected, dtype=f32))


def test_shapes_of_the_samples():
    v2 = wp.zeros((4, N), dtype=wp.vec2)
    v3 = wp.zeros((4, N), dtype=wp.vec3)
    wp.launch(draw_all, dim=N, inputs=[3, v2, v3])
    tri, ring, disk, square = v2.numpy()
    ball, hemi_surface, half_ball, cube = v3.numpy()
    assert (tri >= 0).all() and (tri.sum(axis=1) <= 1 + 1e-6).all()
    np.testing.assert_allclose(np.linalg.norm(ring, axis=1), 1.0, atol=1e-6)
    assert (np.linalg.norm(disk, axis=1) <= 1 + 1e-6).all()
    assert (square >= -0.5).all() and (square < 0.5).all()
    assert (np.linalg.norm(ball, axis=1) <= 1 + 1e-6).all()
    np.testing.assert_allclose(np.linalg.norm(hemi_surface, axis=1), 1.0, atol=1e-6)
    assert (hemi_surface[:, 2] >= 0).all() and (half_ball[:, 2] >= 0).all()
    assert (cube >= -0.5).all() and (cube < 0.5).all()
    # uniform in the disk: a quarter of the points within radius 1/2
    assert abs(np.mean(np.linalg.norm(disk, axis=1) < 0.5) - 0.25) < 0.04
    # uniform in the ball: an eighth within radius 1/2
    assert abs(np.mean(np.linalg.norm(ball, axis=1) < 0.5) - 0.125) < 0.03


def test_sampler_needs_a_state():
    @wp.kernel
    def bad(out: wp.array(dtype=wp.vec2)):
        out[0] = wp.sample_unit_disk(1.0)

    with pytest.raises(Exception, match="needs a random state"):
        wp.launch(bad, dim=1, inputs=[wp.zeros(1, dtype=wp.vec2)])


def test_sample_cdf_draws_indices_by_their_weights():
    @wp.kernel
    def pick(cdf: wp.array(dtype=float), out: wp.array(dtype=int)):
        i = wp.tid()
        state = wp.rand_init(3, i)
        out[i] = wp.sample_cdf(state, cdf)

    weights = np.array([0.1, 0.2, 0.3, 0.4])
    cdf_values = np.cumsum(weights).astype(np.float32)
    n = 20000
    out = wp.zeros(n, dtype=int)
    wp.launch(pick, n, inputs=[wp.array(cdf_values), out])
    draws = [_uniform(pcg_numpy((3 + pcg_numpy(i)) & 0xFFFFFFFF))[1] for i in range(n)]
    np.testing.assert_array_equal(out.numpy(), np.searchsorted(cdf_values, draws))
    np.testing.assert_allclose(np.bincount(out.numpy(), minlength=4) / n, weights, atol=0.015)
