"""noise, pnoise, curlnoise: Warp's fields bit for bit, their lattice and period properties,
and gradients through them (reverse pass) against analytic values and finite differences."""

import numpy as np
import pytest

import weft as wp

# Produced with warp-lang 1.19.0 on the CPU (x86-64): the kernel `fields` below, run by
# `import warp as wp` on the same inputs, seed 42; the float32 results as their bits.
P = np.array([[0.3, -1.7, 2.25, 5.5], [-3.1, 0.45, -0.8, 1.2], [10.6, 7.3, -4.4, 0.05],
              [-0.5, -0.5, 0.5, 8.75]], np.float32)
NOISE_BITS = [  # per row: noise 1-4 D, then pnoise 1-4 D
    [0x3e1b144c, 0x3eb0ff26, 0x3e841c78, 0x3e99944b, 0x3e1b144c, 0x3eb0ff26, 0x3e841c78, 0x3e0b77fc],
    [0x3d801c04, 0x3ef9d586, 0xbe904682, 0xbe78901e, 0xbcb3ee40, 0x3d941614, 0xbd2dc577, 0xbe42d9b8],
    [0xbd7fdb18, 0x3e12a70e, 0xbec28cca, 0x3e064bef, 0xbdd2f540, 0xbb57a5d0, 0xbdfded04, 0x3eb049c0],
    [0x3e2c9bf4, 0x3c8bdf90, 0xbd97aa3e, 0xbcd91772, 0x3e2c9bf4, 0x3c8bdf90, 0xbd97aa3e, 0x3d6e5508]]
CURL2_BITS = [[0x3ed9e787, 0x3e5c6066], [0xbe13cc50, 0x3e8a8dd9], [0x3c684110, 0x3f786bd2],
              [0x3f2a49de, 0xbf901b0b]]
CURL3_BITS = [[0x3f07ec40, 0xbe4eebe2, 0x3f2f1f30], [0x3d9d858c, 0xbf05d2d3, 0xbe1bb4dc],
              [0x3f09d09a, 0xbf33693e, 0x3f4fb1d9], [0xbe53b798, 0xbf67d940, 0x3e0a0958]]
CURL4_BITS = [[0x3e775a3c, 0xbf7c138a, 0xbf00399d], [0xbfbc6806, 0x3f151688, 0xbd14515c],
              [0x3f17b76f, 0x3f0ac016, 0xbf860480], [0x3f613cbd, 0xbe0d0738, 0xbe362446]]


def _bits(rows):
    return np.array(rows, dtype=np.uint32)


@wp.kernel
def fields(seed: int, p: wp.array(dtype=wp.vec4), f: wp.array2d(dtype=float), c2: wp.array(dtype=wp.vec2),
           c3: wp.array(dtype=wp.vec3), c4: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    s = wp.rand_init(seed)
    q = p[i]
    f[i, 0] = wp.noise(s, q[0])
    f[i, 1] = wp.noise(s, wp.vec2(q[0], q[1]))
    f[i, 2] = wp.noise(s, wp.vec3(q[0], q[1], q[2]))
    f[i, 3] = wp.noise(s, q)
    f[i, 4] = wp.pnoise(s, q[0], 3)
    f[i, 5] = wp.pnoise(s, wp.vec2(q[0], q[1]), 4, 5)
    f[i, 6] = wp.pnoise(s, wp.vec3(q[0], q[1], q[2]), 2, 3, 7)
    f[i, 7] = wp.pnoise(s, q, 3, 4, 5, 6)
    c2[i] = wp.curlnoise(s, wp.vec2(q[0], q[1]), wp.uint32(2), 2.0, 0.5)
    c3[i] = wp.curlnoise(s, wp.vec3(q[0], q[1], q[2]))
    c4[i] = wp.curlnoise(s, q, wp.uint32(3), 1.9, 0.6)


def test_values_are_warps_bit_for_bit():
    f = wp.zeros((4, 8), dtype=float)
    c2, c3, c4 = wp.zeros(4, dtype=wp.vec2), wp.zeros(4, dtype=wp.vec3), wp.zeros(4, dtype=wp.vec3)
    wp.launch(fields, 4, inputs=[42, wp.array(P, dtype=wp.vec4), f, c2, c3, c4])
    np.testing.assert_array_equal(f.numpy().view(np.uint32), _bits(NOISE_BITS))
    np.testing.assert_array_equal(c2.numpy().view(np.uint32), _bits(CURL2_BITS))
    np.testing.assert_array_equal(c3.numpy().view(np.uint32), _bits(CURL3_BITS))
    np.testing.assert_array_equal(c4.numpy().view(np.uint32), _bits(CURL4_BITS))


@wp.kernel
def lattice_and_period(seed: int, p: wp.array(dtype=wp.vec4), out: wp.array2d(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    q = p[i]
    c = wp.vec4(wp.floor(q[0]), wp.floor(q[1]), wp.floor(q[2]), wp.floor(q[3]))
    out[i, 0] = wp.noise(s, c[0])  # zero on the lattice: every corner's offset is zero there
    out[i, 1] = wp.noise(s, wp.vec3(c[0], c[1], c[2]))
    out[i, 2] = wp.noise(s, c)
    out[i, 3] = wp.pnoise(s, wp.vec2(q[0], q[1]), 3, 5) - wp.pnoise(s, wp.vec2(q[0] + 6.0, q[1] + 5.0), 3, 5)
    out[i, 4] = wp.pnoise(s, q, 2, 3, 4, 5) - wp.pnoise(s, q + wp.vec4(2.0, 3.0, 4.0, 5.0), 2, 3, 4, 5)


def test_zero_on_the_lattice_and_periodic():
    rng = np.random.default_rng(3)
    # non-negative and a multiple of 1/64: adding a period keeps the fraction exact
    p = np.round(rng.random((64, 4)) * 20.0 * 64.0).astype(np.float32) / 64.0
    out = wp.zeros((64, 5), dtype=float)
    wp.launch(lattice_and_period, 64, inputs=[5, wp.array(p, dtype=wp.vec4), out])
    np.testing.assert_array_equal(out.numpy(), 0.0)


@wp.kernel
def noise2_sum(seed: int, p: wp.array(dtype=wp.vec2), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.noise(wp.rand_init(seed), p[i]))


@wp.kernel
def curl2_single_octave(seed: int, p: wp.array(dtype=wp.vec2), out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    out[i] = wp.curlnoise(wp.rand_init(seed), p[i])


def test_noise_gradient_is_the_analytic_gradient():
    """curlnoise in 2-D with one octave is Warp's analytic gradient (-dN/dy, dN/dx): the
    reverse pass through the interpolation must agree with it."""
    rng = np.random.default_rng(1)
    p = wp.array((rng.random((50, 2)) * 8.0 - 4.0).astype(np.float32), dtype=wp.vec2, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(noise2_sum, 50, inputs=[11, p, loss])
    tape.backward(loss=loss)
    curl = wp.zeros(50, dtype=wp.vec2)
    wp.launch(curl2_single_octave, 50, inputs=[11, p, curl])
    analytic = np.stack([curl.numpy()[:, 1], -curl.numpy()[:, 0]], axis=1)
    np.testing.assert_allclose(p.grad.numpy(), analytic, rtol=1e-5, atol=1e-5)


@wp.kernel
def field_loss(seed: int, p: wp.array(dtype=wp.vec4), w: wp.vec3, loss: wp.array(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seed)
    q = p[i]
    n3 = wp.noise(s, wp.vec3(q[0], q[1], q[2]))
    n4 = wp.pnoise(s, q, 4, 4, 4, 4)
    c3 = wp.curlnoise(s, wp.vec3(q[0], q[1], q[2]), wp.uint32(2), 2.0, 0.5)
    c4 = wp.curlnoise(s, q)
    wp.atomic_add(loss, i, 0.7 * n3 - 0.4 * n4 + wp.dot(c3, w) + wp.dot(c4, w))


def test_gradients_match_central_differences():
    rng = np.random.default_rng(2)
    n = 12
    x = (rng.random((n, 4)) * 6.0 + 0.13).astype(np.float32)
    w = wp.vec3(1.0, -0.5, 0.25)
    p = wp.array(x, dtype=wp.vec4, requires_grad=True)
    loss = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(field_loss, n, inputs=[9, p, w, loss])
    tape.backward(grads={loss: wp.ones(n, dtype=float)})
    grad = p.grad.numpy()

    eps = 1e-3
    fd = np.zeros_like(grad)
    for k in range(4):
        values = []
        for sign in (1.0, -1.0):
            shifted = x.astype(np.float64)
            shifted[:, k] += sign * eps
            out = wp.zeros(n, dtype=float)
            wp.launch(field_loss, n, inputs=[9, wp.array(shifted.astype(np.float32), dtype=wp.vec4), w, out])
            values.append(out.numpy().astype(np.float64))
        fd[:, k] = (values[0] - values[1]) / (2 * eps)
    np.testing.assert_allclose(grad, fd, atol=2e-2, rtol=1e-2)


@wp.kernel
def bad_int_position(out: wp.array(dtype=float)):
    s = wp.rand_init(1)
    i = wp.tid()
    out[0] = wp.noise(s, i)


@wp.kernel
def bad_double_position(out: wp.array(dtype=float)):
    s = wp.rand_init(1)
    out[0] = wp.noise(s, wp.vec3d(1.0, 2.0, 3.0))


@wp.kernel
def bad_period_count(out: wp.array(dtype=float)):
    s = wp.rand_init(1)
    out[0] = wp.pnoise(s, wp.vec2(1.0, 2.0), 3)


@wp.kernel
def bad_curl_position(out: wp.array(dtype=float)):
    s = wp.rand_init(1)
    out[0] = wp.curlnoise(s, 1.0)[0]


@wp.kernel
def bad_state(out: wp.array(dtype=float)):
    out[0] = wp.noise(1, 1.0)


@pytest.mark.parametrize("kernel, message", [
    (bad_int_position, "position"),
    (bad_double_position, "vec2f/vec3f/vec4f"),
    (bad_period_count, "takes 2 period"),
    (bad_curl_position, "vec2f, vec3f or vec4f"),
    (bad_state, "random state"),
])
def test_bad_arguments_are_compile_errors(kernel, message):
    with pytest.raises(wp.CompileError, match=message):
        wp.launch(kernel, 1, inputs=[wp.zeros(1)])
