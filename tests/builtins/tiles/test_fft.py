"""tile_fft / tile_ifft: results against numpy.fft (power-of-two and other sizes, batches
over leading dimensions, vec2f and vec2d), Warp's normalisation, gradients against float64
finite differences and the adjoint transform, errors."""

import numpy as np
import pytest

import weft as wp


def complex_of(a):
    return a[..., 0] + 1j * a[..., 1]


def pairs_of(c):
    return np.stack([c.real, c.imag], axis=-1)


@wp.kernel
def fft_2d(gx: wp.array2d[wp.vec2d], gy: wp.array2d[wp.vec2d]):
    t = wp.tile_load(gx, shape=(3, 16))
    wp.tile_fft(t)
    wp.tile_store(gy, t)


@wp.kernel
def ifft_npo2(gx: wp.array2d[wp.vec2d], gy: wp.array2d[wp.vec2d]):
    t = wp.tile_load(gx, shape=(2, 12))
    wp.tile_ifft(t)
    wp.tile_store(gy, t)


@wp.kernel
def fft_3d_f32(gx: wp.array3d[wp.vec2f], gy: wp.array3d[wp.vec2f]):
    t = wp.tile_load(gx, shape=(2, 3, 8))
    wp.tile_fft(t)
    wp.tile_store(gy, t)


@wp.kernel
def round_trip(gx: wp.array2d[wp.vec2d], gy: wp.array2d[wp.vec2d]):
    t = wp.tile_load(gx, shape=(2, 5))
    wp.tile_fft(t)
    wp.tile_ifft(t)
    wp.tile_store(gy, t)


@pytest.mark.parametrize("kernel, shape, dtype, inverse, tol", [
    (fft_2d, (3, 16), wp.vec2d, False, 1e-12),
    (ifft_npo2, (2, 12), wp.vec2d, True, 1e-12),
    (fft_3d_f32, (2, 3, 8), wp.vec2f, False, 2e-6),
])
def test_matches_numpy(kernel, shape, dtype, inverse, tol):
    x = np.random.default_rng(sum(shape)).standard_normal((*shape, 2))
    gx = wp.array(x, dtype=dtype)
    gy = wp.zeros(shape, dtype=dtype)
    wp.launch_tiled(kernel, dim=1, inputs=[gx, gy], block_dim=16)
    xc = complex_of(gx.numpy().astype(np.float64))
    ref = np.fft.ifft(xc, axis=-1) * shape[-1] if inverse else np.fft.fft(xc, axis=-1)
    np.testing.assert_allclose(complex_of(gy.numpy()), ref, rtol=tol, atol=tol * shape[-1])


def test_forward_then_inverse_multiplies_by_n():
    x = np.random.default_rng(1).standard_normal((2, 5, 2))
    gy = wp.zeros((2, 5), dtype=wp.vec2d)
    wp.launch_tiled(round_trip, dim=1, inputs=[wp.array(x, dtype=wp.vec2d), gy], block_dim=16)
    np.testing.assert_allclose(gy.numpy(), 5 * x, rtol=1e-12, atol=1e-12)


@wp.kernel
def fft_then_square(gx: wp.array2d[wp.vec2d], gy: wp.array2d[wp.vec2d]):
    t = wp.tile_load(gx, shape=(2, 8))
    wp.tile_fft(t)
    wp.tile_store(gy, wp.tile_map(wp.cw_mul, t, t))


@wp.kernel
def ifft_only(gx: wp.array2d[wp.vec2d], gy: wp.array2d[wp.vec2d]):
    t = wp.tile_load(gx, shape=(2, 6))
    wp.tile_ifft(t)
    wp.tile_store(gy, t)


@pytest.mark.parametrize("kernel, shape", [(fft_then_square, (2, 8)), (ifft_only, (2, 6))])
def test_gradient_matches_finite_differences(kernel, shape):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((*shape, 2))
    w = rng.standard_normal((*shape, 2))
    gx = wp.array(x, dtype=wp.vec2d, requires_grad=True)
    gy = wp.zeros(shape, dtype=wp.vec2d, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(kernel, dim=1, inputs=[gx, gy], block_dim=16)
    tape.backward(grads={gy: wp.array(w, dtype=wp.vec2d)})

    def loss(v):
        out = wp.zeros(shape, dtype=wp.vec2d)
        wp.launch_tiled(kernel, dim=1, inputs=[wp.array(v, dtype=wp.vec2d), out], block_dim=16)
        return float(np.sum(w * out.numpy()))

    eps = 1e-6
    fd = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[idx] += eps
        m[idx] -= eps
        fd[idx] = (loss(p) - loss(m)) / (2 * eps)
    np.testing.assert_allclose(gx.grad.numpy(), fd, rtol=1e-6, atol=1e-7)
    if kernel is ifft_only:  # the adjoint of the inverse transform is the forward one
        np.testing.assert_allclose(complex_of(gx.grad.numpy()), np.fft.fft(complex_of(w), axis=-1), rtol=1e-12)


@wp.kernel
def fft_1d(gx: wp.array[wp.vec2d]):
    t = wp.tile_load(gx, shape=8)
    wp.tile_fft(t)
    wp.tile_store(gx, t)


@wp.kernel
def fft_real(gx: wp.array2d[float]):
    t = wp.tile_load(gx, shape=(2, 8))
    wp.tile_fft(t)
    wp.tile_store(gx, t)


@wp.kernel
def fft_too_long(gx: wp.array2d[wp.vec2f]):
    t = wp.tile_load(gx, shape=(1, 4097))
    wp.tile_fft(t)
    wp.tile_store(gx, t)


@pytest.mark.parametrize("kernel, array, kind, message", [
    (fft_1d, lambda: wp.zeros(8, dtype=wp.vec2d), ValueError, "at least 2 dimensions, got 1D"),
    (fft_real, lambda: wp.zeros((2, 8), dtype=float), TypeError, "vec2f or vec2d"),
    (fft_too_long, lambda: wp.zeros((1, 4097), dtype=wp.vec2f), ValueError, "at most 4096"),
])
def test_bad_tiles_are_compile_errors(kernel, array, kind, message):
    with pytest.raises(kind, match=message):
        wp.launch_tiled(kernel, dim=1, inputs=[array()], block_dim=16)
