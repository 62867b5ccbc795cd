"""tile_scan_inclusive/exclusive/max_inclusive/min_inclusive: values against numpy, and
gradients (Warp's are zero; weft's are the suffix sums and the selected elements')."""

import numpy as np
import pytest

import weft as wp

N = 9


def _scan_kernel(dtype, shape):
    @wp.kernel
    def scans(x: wp.array2d(dtype=dtype), out: wp.array3d(dtype=dtype)):
        i = wp.tid()
        t = wp.tile_load(x[i], shape=shape[0] * shape[1])
        t2 = wp.tile_reshape(t, shape=shape)
        wp.tile_store(out[0, i], wp.tile_reshape(wp.tile_scan_inclusive(t2), shape=shape[0] * shape[1]))
        wp.tile_store(out[1, i], wp.tile_reshape(wp.tile_scan_exclusive(t2), shape=shape[0] * shape[1]))
        wp.tile_store(out[2, i], wp.tile_reshape(wp.tile_scan_max_inclusive(t2), shape=shape[0] * shape[1]))
        wp.tile_store(out[3, i], wp.tile_reshape(wp.tile_scan_min_inclusive(t2), shape=shape[0] * shape[1]))
    return scans


def _run(x, dtype, shape):
    xa = wp.array(x, dtype=dtype)
    out = wp.zeros((4, *x.shape), dtype=dtype)
    wp.launch_tiled(_scan_kernel(dtype, shape), dim=[x.shape[0]], inputs=[xa, out], block_dim=1)
    return out.numpy()


def _expected(x):
    exclusive = np.zeros_like(x)
    exclusive[:, 1:] = np.cumsum(x, axis=1, dtype=x.dtype)[:, :-1]
    return [np.cumsum(x, axis=1, dtype=x.dtype), exclusive, np.fmax.accumulate(x, axis=1),
            np.fmin.accumulate(x, axis=1)]


def test_float_scans_over_a_2d_tile_follow_the_row_major_order():
    x = np.random.default_rng(1).standard_normal((3, 12)).astype(np.float32)
    got = _run(x, wp.float32, (3, 4))
    for g, e in zip(got, _expected(x)):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype,np_dtype", [(wp.int32, np.int32), (wp.uint32, np.uint32)])
def test_integer_scans_wrap_and_compare_with_the_type_signedness(dtype, np_dtype):
    info = np.iinfo(np_dtype)
    x = np.random.default_rng(2).integers(info.min, info.max, (2, 12), dtype=np_dtype, endpoint=True)
    got = _run(x, dtype, (2, 6))
    with np.errstate(over="ignore"):
        expected = _expected(x)
    expected[2] = np.maximum.accumulate(x, axis=1)
    expected[3] = np.minimum.accumulate(x, axis=1)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_max_and_min_scans_skip_nan_as_fmax_and_fmin_do():
    x = np.array([[np.nan, np.nan, 2.0, np.nan, -1.0, 5.0],
                  [1.0, np.nan, -np.inf, np.inf, np.nan, 0.0]], dtype=np.float32)
    got = _run(x, wp.float32, (2, 3))
    np.testing.assert_array_equal(got[2], np.fmax.accumulate(x, axis=1))
    np.testing.assert_array_equal(got[3], np.fmin.accumulate(x, axis=1))


@wp.kernel
def _weighted_scans(x: wp.array2d(dtype=wp.float64), w: wp.array3d(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = wp.tile_reshape(wp.tile_load(x[i], shape=N), shape=(3, 3))
    parts = wp.tile_zeros(shape=(3, 3), dtype=wp.float64)
    parts = parts + wp.tile_scan_inclusive(t) * wp.tile_reshape(wp.tile_load(w[0, i], shape=N), shape=(3, 3))
    parts = parts + wp.tile_scan_exclusive(t) * wp.tile_reshape(wp.tile_load(w[1, i], shape=N), shape=(3, 3))
    parts = parts + wp.tile_scan_max_inclusive(t) * wp.tile_reshape(wp.tile_load(w[2, i], shape=N), shape=(3, 3))
    parts = parts + wp.tile_scan_min_inclusive(t) * wp.tile_reshape(wp.tile_load(w[3, i], shape=N), shape=(3, 3))
    wp.tile_atomic_add(loss, wp.tile_sum(parts))


def _loss(x, w):
    out = 0.0
    for row, ws in zip(x, w.transpose(1, 0, 2)):
        exclusive = np.concatenate([[0.0], np.cumsum(row)[:-1]])
        scans = [np.cumsum(row), exclusive, np.maximum.accumulate(row), np.minimum.accumulate(row)]
        out += sum(float(np.dot(s, wk)) for s, wk in zip(scans, ws))
    return out


def test_scan_gradients_match_finite_differences_in_float64():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, N))
    w = rng.standard_normal((4, 2, N))
    xa = wp.array(x, dtype=wp.float64, requires_grad=True)
    wa = wp.array(w, dtype=wp.float64)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(_weighted_scans, dim=[2], inputs=[xa, wa, loss], block_dim=1)
    assert loss.numpy()[0] == pytest.approx(_loss(x, w), rel=1e-12)
    tape.backward(loss)
    grad = xa.grad.numpy()
    fd = np.zeros_like(x)
    h = 1e-6
    for idx in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += h
        xm[idx] -= h
        fd[idx] = (_loss(xp, w) - _loss(xm, w)) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7)


def test_sum_scan_gradient_is_the_suffix_count():
    # d/dx_i of sum(inclusive) is the number of positions at or after i; of sum(exclusive), after i
    @wp.kernel
    def sums(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
        t = wp.tile_load(x, shape=N)
        wp.tile_atomic_add(loss, wp.tile_sum(wp.tile_scan_inclusive(t) + 10.0 * wp.tile_scan_exclusive(t)))

    xa = wp.array(np.ones(N, np.float32), requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(sums, dim=[1], inputs=[xa, loss], block_dim=1)
    tape.backward(loss)
    k = np.arange(N)
    np.testing.assert_array_equal(xa.grad.numpy(), (N - k) + 10.0 * (N - 1 - k))


def test_a_scan_of_a_vector_tile_is_refused():
    @wp.kernel
    def bad(x: wp.array(dtype=wp.vec3)):
        t = wp.tile_load(x, shape=4)
        wp.tile_store(x, wp.tile_scan_inclusive(t))

    with pytest.raises(Exception, match="tile_scan_inclusive needs a tile of float or integer scalars"):
        wp.launch_tiled(bad, dim=[1], inputs=[wp.zeros(4, dtype=wp.vec3)], block_dim=1)


@pytest.mark.parametrize("dtype", [wp.float16, wp.bfloat16])
def test_scan_gradients_in_half_precision(dtype):
    @wp.kernel
    def half_scans(x: wp.array(dtype=dtype), loss: wp.array(dtype=dtype)):
        t = wp.tile_load(x, shape=5)
        wp.tile_atomic_add(loss, wp.tile_sum(wp.tile_scan_max_inclusive(t) + wp.tile_scan_inclusive(t)))

    x = wp.array(np.array([1, 3, 2, 5, 4], np.float32), dtype=dtype, requires_grad=True)
    loss = wp.zeros(1, dtype=dtype, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(half_scans, dim=[1], inputs=[x, loss], block_dim=1)
    assert float(loss.numpy()[0]) == 54.0  # (1+3+3+5+5) + (1+4+6+11+15)
    tape.backward(loss)
    # suffix counts 5..1, plus the positions each running max selected: x0 once, x1 twice, x3 twice
    np.testing.assert_array_equal(x.grad.numpy().astype(np.float32), [6, 6, 3, 4, 1])


@wp.kernel
def _max_and_scan(x: wp.array(dtype=float), m: wp.array(dtype=float), s: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=10)
    wp.tile_store(m, wp.tile_max(t))
    wp.tile_store(s, wp.tile_scan_inclusive(t * t))


def test_adjoints_of_a_stored_max_and_a_stored_scan():
    # Warp 1.19 (CPU) returns x.grad == 0 for this kernel; the adjoint is 2 x_i times the sum of
    # the scan's seeds from i on, plus the max's seed at the argmax
    xn = np.array([0.3, -1.2, 2.5, 0.7, 2.1, -0.4, 1.9, 0.0, -2.2, 1.1], dtype=np.float32)
    x = wp.array(xn, dtype=float, requires_grad=True)
    m = wp.zeros(1, dtype=float, requires_grad=True)
    s = wp.zeros(10, dtype=float, requires_grad=True)
    seeds = np.linspace(0, 1, 10, dtype=np.float32)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(_max_and_scan, dim=1, inputs=[x, m, s], block_dim=128)
    tape.backward(grads={m: wp.array([2.0], dtype=float), s: wp.array(seeds)})
    expected = 2.0 * xn.astype(np.float64) * np.cumsum(seeds[::-1])[::-1]
    expected[np.argmax(xn)] += 2.0
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-6)
