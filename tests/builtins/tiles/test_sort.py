"""tile_sort(keys, values): in place on both, stable, any length; gradients follow each
element back to where it came from."""

import numpy as np
import pytest

import weft as wp


def _sort_kernel(key_dtype, value_dtype, n):
    @wp.kernel
    def sort_pairs(keys: wp.array(dtype=key_dtype), values: wp.array(dtype=value_dtype)):
        k = wp.tile_load(keys, shape=n)
        v = wp.tile_load(values, shape=n)
        wp.tile_sort(k, v)
        wp.tile_store(keys, k)
        wp.tile_store(values, v)
    return sort_pairs


@pytest.mark.parametrize("n", [1, 2, 3, 8, 33, 1025])
@pytest.mark.parametrize("dtype,np_dtype", [(wp.float32, np.float32), (wp.int32, np.int32),
                                            (wp.uint32, np.uint32), (wp.int64, np.int64)])
def test_sort_matches_a_stable_argsort(n, dtype, np_dtype):
    rng = np.random.default_rng(n)
    info = np.finfo(np_dtype) if np.issubdtype(np_dtype, np.floating) else np.iinfo(np_dtype)
    keys = rng.uniform(max(info.min, -1e9), min(info.max, 1e9), n).astype(np_dtype)
    keys[: n // 3] = keys[0]  # repeated keys: their payloads keep their order
    ka, va = wp.array(keys, dtype=dtype), wp.array(np.arange(n, dtype=np.int32))
    wp.launch_tiled(_sort_kernel(dtype, wp.int32, n), dim=[1], inputs=[ka, va], block_dim=1)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(ka.numpy(), keys[order])
    np.testing.assert_array_equal(va.numpy(), order)


def test_vector_payloads_and_the_same_tile_as_keys_and_values():
    n = 10
    keys = np.random.default_rng(0).permutation(n).astype(np.int32)
    payload = np.stack([keys * 1.0, keys * 2.0, keys * 3.0], axis=1).astype(np.float32)
    ka, va = wp.array(keys), wp.array(payload, dtype=wp.vec3)
    wp.launch_tiled(_sort_kernel(wp.int32, wp.vec3, n), dim=[1], inputs=[ka, va], block_dim=1)
    np.testing.assert_array_equal(va.numpy(), payload[np.argsort(keys)])

    @wp.kernel
    def sort_self(keys: wp.array(dtype=int)):
        k = wp.tile_load(keys, shape=n)
        wp.tile_sort(k, k)
        wp.tile_store(keys, k)

    ka = wp.array(keys)
    wp.launch_tiled(sort_self, dim=[1], inputs=[ka], block_dim=1)
    np.testing.assert_array_equal(ka.numpy(), np.sort(keys))


def test_a_2d_tile_sorts_as_its_row_major_sequence():
    @wp.kernel
    def sort2d(keys: wp.array2d(dtype=float), values: wp.array2d(dtype=int)):
        k = wp.tile_load(keys, shape=(3, 4))
        v = wp.tile_load(values, shape=(3, 4))
        wp.tile_sort(k, v)
        wp.tile_store(keys, k)
        wp.tile_store(values, v)

    keys = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    ka, va = wp.array(keys), wp.array(np.arange(12, dtype=np.int32).reshape(3, 4))
    wp.launch_tiled(sort2d, dim=[1], inputs=[ka, va], block_dim=1)
    order = np.argsort(keys.ravel(), kind="stable")
    np.testing.assert_array_equal(ka.numpy().ravel(), keys.ravel()[order])
    np.testing.assert_array_equal(va.numpy().ravel(), order)


@wp.kernel
def _sorted_loss(keys: wp.array2d(dtype=wp.float64), values: wp.array2d(dtype=wp.float64),
                 w: wp.array2d(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    k = wp.tile_load(keys, shape=(2, 3))
    v = wp.tile_load(values, shape=(2, 3))
    wp.tile_sort(k, v)
    wk = wp.tile_load(w, shape=(2, 3))
    # the sorted keys and values, each weighted by the position it lands in
    wp.tile_atomic_add(loss, wp.tile_sum(k * wk + v * v * wk))


def test_sort_gradients_follow_each_element_to_its_origin():
    rng = np.random.default_rng(7)
    keys = rng.standard_normal((2, 3))
    values = rng.standard_normal((2, 3))
    w = rng.standard_normal((2, 3))

    def loss_of(k, v):
        order = np.argsort(k.ravel(), kind="stable")
        return float(np.sum(k.ravel()[order] * w.ravel() + v.ravel()[order] ** 2 * w.ravel()))

    ka = wp.array(keys, dtype=wp.float64, requires_grad=True)
    va = wp.array(values, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(_sorted_loss, dim=[1], inputs=[ka, va, wp.array(w, dtype=wp.float64), loss], block_dim=1)
    assert loss.numpy()[0] == pytest.approx(loss_of(keys, values), rel=1e-12)
    tape.backward(loss)
    h = 1e-6
    for arr, grad, is_key in ((keys, ka.grad.numpy(), True), (values, va.grad.numpy(), False)):
        fd = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            plus, minus = arr.copy(), arr.copy()
            plus[idx] += h
            minus[idx] -= h
            fd[idx] = ((loss_of(plus, values) - loss_of(minus, values)) if is_key else
                       (loss_of(keys, plus) - loss_of(keys, minus))) / (2 * h)
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def test_sort_rejects_mismatched_shapes_and_vector_keys():
    @wp.kernel
    def bad_shapes(a: wp.array(dtype=float), b: wp.array(dtype=int)):
        k = wp.tile_load(a, shape=4)
        v = wp.tile_load(b, shape=5)
        wp.tile_sort(k, v)

    with pytest.raises(Exception, match="keys and values must have one shape"):
        wp.launch_tiled(bad_shapes, dim=[1], inputs=[wp.zeros(4), wp.zeros(5, dtype=int)], block_dim=1)

    @wp.kernel
    def bad_keys(a: wp.array(dtype=wp.vec2)):
        k = wp.tile_load(a, shape=4)
        wp.tile_sort(k, k)

    with pytest.raises(Exception, match="keys must be float or integer scalars"):
        wp.launch_tiled(bad_keys, dim=[1], inputs=[wp.zeros(4, dtype=wp.vec2)], block_dim=1)


def test_float_keys_sort_in_a_total_order_with_signed_zeros_infinities_and_nan():
    keys = np.array([np.nan, 1.0, -0.0, np.inf, 0.0, -np.inf, -2.5, np.nan, 0.0, -0.0], dtype=np.float32)
    n = len(keys)
    ka, va = wp.array(keys), wp.array(np.arange(n, dtype=np.int32))
    wp.launch_tiled(_sort_kernel(wp.float32, wp.int32, n), dim=[1], inputs=[ka, va], block_dim=1)
    np.testing.assert_array_equal(va.numpy(), [5, 6, 2, 9, 4, 8, 1, 3, 0, 7])
    np.testing.assert_array_equal(np.signbit(ka.numpy()[2:6]), [True, True, False, False])


@pytest.mark.parametrize("dtype,np_dtype", [(wp.float32, np.float32), (wp.float16, np.float16),
                                            (wp.float64, np.float64), (wp.int8, np.int8), (wp.uint8, np.uint8),
                                            (wp.int16, np.int16), (wp.uint64, np.uint64), (wp.int64, np.int64)])
def test_radix_and_merge_paths_give_one_order(dtype, np_dtype):
    # tiles of RADIX_FROM elements or more sort by radix, smaller ones by merging: both are
    # stable and order keys alike (special floats included), so both give a stable argsort
    from weft.builtins.tiles.sort import RADIX_FROM
    rng = np.random.default_rng(7)
    for n in (RADIX_FROM - 1, RADIX_FROM, 300):
        if np.issubdtype(np_dtype, np.floating):
            keys = rng.choice(np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.5, -2.5, 3.0], np_dtype), n)
            keys[::7] = rng.standard_normal(len(keys[::7])).astype(np_dtype)
            order = np.argsort(np.where(np.isnan(keys), np.inf, keys), kind="stable")
            nan_last = np.concatenate([order[~np.isnan(keys[order])], np.flatnonzero(np.isnan(keys))])
            zeros = keys[nan_last] == 0  # (-0.0 sorts before +0.0)
            block = nan_last[zeros]
            nan_last[zeros] = block[np.argsort(~np.signbit(keys[block]), kind="stable")]
            expected = nan_last
        else:
            info = np.iinfo(np_dtype)
            keys = rng.integers(info.min, info.max, n, dtype=np_dtype, endpoint=True)
            keys[::5] = keys[0]
            expected = np.argsort(keys, kind="stable")
        ka, va = wp.array(keys, dtype=dtype), wp.array(np.arange(n, dtype=np.int32))
        wp.launch_tiled(_sort_kernel(dtype, wp.int32, n), dim=[1], inputs=[ka, va], block_dim=1)
        np.testing.assert_array_equal(va.numpy(), expected, err_msg=f"n={n}")
