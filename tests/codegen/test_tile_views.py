"""Tile loads read in place by a tile product (weft/codegen/tile_views.py): which loads
become views, and that a view computes what the copy would have (strided and transposed
arrays, tiles across the array's edge, float64, the returning form), while a write to the
array between the load and the product is still not seen."""

import numpy as np
import pytest

import weft as wp
from weft.codegen.tile_views import view_loads

TM, TN, TK = 16, 32, 8


@wp.kernel
def gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TM, TN), dtype=float)
    for k in range(0, (A.shape[1] + TK - 1) // TK):
        a = wp.tile_load(A, shape=(TM, TK), offset=(i * TM, k * TK))
        b = wp.tile_load(B, shape=(TK, TN), offset=(k * TK, j * TN))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * TM, j * TN))


@wp.kernel
def product64(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64), C: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(TM, TK), offset=(i * TM, 0))
    b = wp.tile_load(B, shape=(TK, TN))
    wp.tile_store(C, wp.tile_matmul(a, b), offset=(i * TM, 0))


@wp.kernel
def write_between(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(TM, TK))
    b = wp.tile_load(B, shape=(TK, TN))
    A[0, 0] = 1000.0  # the tile holds the old element
    wp.tile_store(C, wp.tile_matmul(a, b))


@wp.kernel
def store_between(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(TM, TK))
    b = wp.tile_load(B, shape=(TK, TN))
    wp.tile_store(A, wp.tile_ones(shape=(TM, TK), dtype=float))
    wp.tile_store(C, wp.tile_matmul(a, b))


@wp.kernel
def used_twice(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float),
               D: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(TM, TK))
    b = wp.tile_load(B, shape=(TK, TN))
    wp.tile_store(C, wp.tile_matmul(a, b))
    wp.tile_store(D, a)


def _data(rng, shape, dtype=np.float32):
    return rng.uniform(-1.0, 1.0, shape).astype(dtype)


def _padded_product(a, b, m, n):
    """A @ B where A and B are zero-padded to whole tiles (as tile_load pads)."""
    return (a.astype(np.float64) @ b.astype(np.float64))[:m, :n]


def _sides(kernel):
    return sorted(view[3] for view in view_loads(kernel.ir()).values())


def test_only_product_operands_loaded_in_bounds_become_views():
    assert _sides(gemm) == [0, 1]
    assert _sides(product64) == [0, 1]
    assert _sides(write_between) == []
    assert _sides(store_between) == []
    assert _sides(used_twice) == [1]  # a is stored too


@pytest.mark.parametrize("m,k,n", [(64, 32, 64), (50, 27, 45)], ids=["whole-tiles", "across-edges"])
def test_gemm_with_views_matches_numpy(m, k, n):
    rng = np.random.default_rng(m + k + n)
    a, b = _data(rng, (m, k)), _data(rng, (k, n))
    c = wp.zeros((m, n), dtype=float)
    wp.launch_tiled(gemm, dim=(-(-m // TM), -(-n // TN)), inputs=[wp.array(a), wp.array(b), c], block_dim=8)
    np.testing.assert_allclose(c.numpy(), _padded_product(a, b, m, n), rtol=0, atol=1e-5)


def _strided_and_transposed(big, m, k):
    """[(array, its numpy values)]: every other row of `big` (m x k), and a transposed one."""
    rows = wp.array(big)[::2, 3:3 + k]  # a row stride of two rows
    assert rows.strides == (2 * big.shape[1] * 4, 4) and rows.shape == (m, k)
    transposed = wp.array(big[:k, :m].copy()).transpose()  # its columns m elements apart
    assert transposed.strides == (4, m * 4)
    return [(rows, big[::2, 3:3 + k]), (transposed, big[:k, :m].T)]


def test_views_of_strided_and_transposed_arrays():
    rng = np.random.default_rng(3)
    a_cases = _strided_and_transposed(_data(rng, (96, 80)), 48, 40)
    b_cases = _strided_and_transposed(_data(rng, (80, 100)), 40, 64)
    for a, a_ref in a_cases + [(wp.array(a_cases[0][1].copy()), a_cases[0][1])]:
        for b, b_ref in b_cases + [(wp.array(b_cases[1][1].copy()), b_cases[1][1])]:
            c = wp.zeros((48, 64), dtype=float)
            wp.launch_tiled(gemm, dim=(3, 2), inputs=[a, b, c], block_dim=8)
            np.testing.assert_allclose(c.numpy(), _padded_product(a_ref, b_ref, 48, 64), rtol=0, atol=1e-5)


def test_float64_returning_form():
    rng = np.random.default_rng(4)
    a, b = _data(rng, (2 * TM, TK), np.float64), _data(rng, (TK, TN), np.float64)
    c = wp.zeros((2 * TM, TN), dtype=wp.float64)
    wp.launch_tiled(product64, dim=2, inputs=[wp.array(a, dtype=wp.float64), wp.array(b, dtype=wp.float64), c],
                    block_dim=8)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=0, atol=1e-13)


@pytest.mark.parametrize("kernel", [write_between, store_between], ids=["store", "tile_store"])
def test_a_write_after_the_load_is_not_seen(kernel):
    rng = np.random.default_rng(5)
    a, b = _data(rng, (TM, TK)), _data(rng, (TK, TN))
    c = wp.zeros((TM, TN), dtype=float)
    arr = wp.array(a)
    wp.launch_tiled(kernel, dim=1, inputs=[arr, wp.array(b), c], block_dim=8)
    assert not np.array_equal(arr.numpy(), a)  # the kernel did write A
    np.testing.assert_allclose(c.numpy(), a.astype(np.float64) @ b, rtol=0, atol=1e-5)


def test_a_tile_with_another_use_is_still_a_value():
    rng = np.random.default_rng(6)
    a, b = _data(rng, (TM, TK)), _data(rng, (TK, TN))
    c, d = wp.zeros((TM, TN), dtype=float), wp.zeros((TM, TK), dtype=float)
    wp.launch_tiled(used_twice, dim=1, inputs=[wp.array(a), wp.array(b), c, d], block_dim=8)
    np.testing.assert_allclose(c.numpy(), a.astype(np.float64) @ b, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(d.numpy(), a)


# 1-D tiles a tile_map reads (tile_views.PACKED): read where they lie in a contiguous array
T1 = 64


@wp.kernel
def block_sums(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=T1, offset=i * T1)
    wp.tile_atomic_add(out, wp.tile_sum(t))


@wp.kernel
def doubled(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=T1, offset=i * T1)
    wp.tile_store(y, t * 2.0, offset=i * T1)


@wp.kernel
def sum_after_write(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=T1, offset=i * T1)
    x[i * T1] = 100.0
    wp.tile_atomic_add(out, wp.tile_sum(t))


def test_one_dimensional_tiles_a_map_reads_become_packed_views():
    from weft.codegen.tile_views import PACKED
    assert _sides(block_sums) == [PACKED]
    assert _sides(doubled) == [PACKED]
    assert _sides(sum_after_write) == []  # a write between the load and the sum


@pytest.mark.parametrize("n", [4 * T1, 4 * T1 + 17], ids=["whole-tiles", "across-the-edge"])
def test_sums_and_maps_of_views_match_numpy(n):
    x = _data(np.random.default_rng(7), n)
    blocks = -(-n // T1)
    out = wp.zeros(1, dtype=float)
    wp.launch_tiled(block_sums, dim=blocks, inputs=[wp.array(x), out], block_dim=16)
    np.testing.assert_allclose(out.numpy()[0], x.astype(np.float64).sum(), rtol=1e-5)
    y = wp.zeros(n, dtype=float)
    wp.launch_tiled(doubled, dim=blocks, inputs=[wp.array(x), y], block_dim=16)
    np.testing.assert_array_equal(y.numpy(), 2.0 * x)
    # in place: each block reads its own elements before its store writes them
    xa = wp.array(x)
    wp.launch_tiled(doubled, dim=blocks, inputs=[xa, xa], block_dim=16)
    np.testing.assert_array_equal(xa.numpy(), 2.0 * x)


def test_strided_arrays_and_writes_before_the_sum():
    x = _data(np.random.default_rng(8), 8 * T1)
    strided = wp.array(x)[::2]  # (not contiguous: copied, as before)
    out = wp.zeros(1, dtype=float)
    wp.launch_tiled(block_sums, dim=4, inputs=[strided, out], block_dim=16)
    np.testing.assert_allclose(out.numpy()[0], x[::2].astype(np.float64).sum(), rtol=1e-5)
    out.zero_()
    xa = wp.array(x[: 4 * T1])
    wp.launch_tiled(sum_after_write, dim=4, inputs=[xa, out], block_dim=16)
    assert xa.numpy()[0] == 100.0  # written after the load: the sum holds the old value
    np.testing.assert_allclose(out.numpy()[0], x[: 4 * T1].astype(np.float64).sum(), rtol=1e-5)


def test_gradient_through_a_summed_view():
    x = wp.array(_data(np.random.default_rng(9), 4 * T1 + 5), requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch_tiled(block_sums, dim=5, inputs=[x, out], block_dim=16)
    tape.backward(grads={out: wp.array([3.0], dtype=float)})
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4 * T1 + 5, 3.0, np.float32))
