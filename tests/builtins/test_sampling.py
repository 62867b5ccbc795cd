"""sample_unit_* / sample_triangle / sample_cdf: Warp's draws, in Warp's order, and Warp's
formulas. A numpy model replays the same PCG stream (random.pcg_numpy) in float64; the
kernel's points must equal the model's within float32 rounding, and the shapes' defining
properties hold."""

import math

import numpy as np
import pytest

import weft as wp
from weft.builtins.random import pcg_numpy

N = 257
SEED = 42


def uniforms(seed, offset, count):
    """The floats randf would draw after rand_init(seed, offset)."""
    state = (seed + pcg_numpy(offset)) & 0xFFFFFFFF
    state = pcg_numpy(state)
    out = []
    for _ in range(count):
        state = pcg_numpy(state)
        out.append((state >> 8) / 16777216.0)
    return out


def sphere(us, hemisphere, solid):
    phi = math.acos(1.0 - (us[0] if hemisphere else 2.0 * us[0]))
    theta = 2.0 * math.pi * us[1]
    r = us[2] ** (1.0 / 3.0) if solid else 1.0
    return [r * math.cos(theta) * math.sin(phi), r * math.sin(theta) * math.sin(phi), r * math.cos(phi)]


MODELS = {  # name: (number of draws, point from the draws)
    "sample_unit_ring": (1, lambda u: [math.cos(2 * math.pi * u[0]), math.sin(2 * math.pi * u[0])]),
    "sample_unit_disk": (2, lambda u: [math.sqrt(u[0]) * math.cos(2 * math.pi * u[1]),
                                       math.sqrt(u[0]) * math.sin(2 * math.pi * u[1])]),
    "sample_unit_sphere_surface": (2, lambda u: sphere(u, False, False)),
    "sample_unit_sphere": (3, lambda u: sphere(u, False, True)),
    "sample_unit_hemisphere_surface": (2, lambda u: sphere(u, True, False)),
    "sample_unit_hemisphere": (3, lambda u: sphere(u, True, True)),
    "sample_unit_square": (2, lambda u: [x - 0.5 for x in u]),
    "sample_unit_cube": (3, lambda u: [x - 0.5 for x in u]),
    "sample_triangle": (2, lambda u: [1.0 - math.sqrt(u[0]), u[1] * math.sqrt(u[0])]),
}


def kernel_for(name):
    draws, model = MODELS[name]
    length = len(model([0.5] * draws))
    vec = wp.vec2 if length == 2 else wp.vec3
    sample = getattr(wp, name)

    @wp.kernel(module="unique")
    def draw(seed: int, out: wp.array(dtype=vec), after: wp.array(dtype=float)):
        i = wp.tid()
        state = wp.rand_init(seed, i)
        out[i] = sample(state)
        after[i] = wp.randf(state)  # the state advanced by exactly the draws used

    return draw, vec


@pytest.mark.parametrize("name", list(MODELS))
def test_points_follow_warps_draws_and_formulas(name):
    draws, model = MODELS[name]
    draw, vec = kernel_for(name)
    out, after = wp.zeros(N, dtype=vec), wp.zeros(N)
    wp.launch(draw, N, inputs=[SEED, out, after])
    expected = np.array([model(uniforms(SEED, i, draws)) for i in range(N)])
    np.testing.assert_allclose(out.numpy(), expected, atol=5e-7)
    np.testing.assert_allclose(after.numpy(), [uniforms(SEED, i, draws + 1)[-1] for i in range(N)], rtol=0, atol=0)


def test_shapes():
    @wp.kernel
    def shapes(out: wp.array2d(dtype=wp.vec3)):
        i = wp.tid()
        state = wp.rand_init(7, i)
        out[0, i] = wp.sample_unit_sphere_surface(state)
        out[1, i] = wp.sample_unit_hemisphere_surface(state)
        out[2, i] = wp.sample_unit_sphere(state)
        out[3, i] = wp.sample_unit_hemisphere(state)

    n = 20000
    out = wp.zeros((4, n), dtype=wp.vec3)
    wp.launch(shapes, n, inputs=[out])
    surface, half_surface, ball, half_ball = out.numpy()
    np.testing.assert_allclose(np.linalg.norm(surface, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(half_surface, axis=1), 1.0, atol=1e-6)
    assert half_surface[:, 2].min() >= 0.0 and half_ball[:, 2].min() >= 0.0
    assert np.abs(surface.mean(axis=0)).max() < 0.03  # uniform on the sphere: centred
    radii = np.linalg.norm(ball, axis=1)
    assert radii.max() <= 1.0 and abs((radii ** 3).mean() - 0.5) < 0.02  # r^3 is uniform in a ball


def test_sample_cdf_draws_indices_by_their_weights():
    @wp.kernel
    def pick(cdf: wp.array(dtype=float), out: wp.array(dtype=int)):
        i = wp.tid()
        state = wp.rand_init(3, i)
        out[i] = wp.sample_cdf(state, cdf)

    weights = np.array([0.1, 0.2, 0.3, 0.4])
    cdf = wp.array(np.cumsum(weights).astype(np.float32))
    n = 40000
    out = wp.zeros(n, dtype=int)
    wp.launch(pick, n, inputs=[cdf, out])
    picks = out.numpy()
    expected = np.searchsorted(np.cumsum(weights).astype(np.float32), [uniforms(3, i, 1)[0] for i in range(n)])
    np.testing.assert_array_equal(picks, expected)
    np.testing.assert_allclose(np.bincount(picks, minlength=4) / n, weights, atol=0.01)


def test_the_state_must_be_a_random_state():
    @wp.kernel
    def wrong(out: wp.array(dtype=wp.vec3)):
        out[0] = wp.sample_unit_sphere(1.0)

    with pytest.raises(wp.WarpCodegenError, match=r"sample_unit_sphere\(\) needs a random state"):
        wp.launch(wrong, 1, inputs=[wp.zeros(1, dtype=wp.vec3)])
