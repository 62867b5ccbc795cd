"""The fast paths behind tiled reductions: tile_load/tile_store check a tile's bounds once
and then run unchecked (vectorised) accesses, falling back to per-element checks (zero
padding, clipped stores) for a tile that reaches outside its array; tile_sum adds with
reassociation (a fixed tree of partial sums); and a tiled launch whose blocks do much
work is counted as such when deciding the split over threads."""


import numpy as np
import pytest

import weft as wp
from weft import config
from weft.lang.compiled import work_per_thread

TILE = 256


@wp.kernel
def block_sums(x: wp.array(dtype=float), sums: wp.array(dtype=float), total: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    s = wp.tile_sum(t)
    wp.tile_store(sums, s, offset=i)
    wp.tile_atomic_add(total, s)


@pytest.mark.parametrize("n", [4 * TILE, 4 * TILE - 37, 3 * TILE + 1])
def test_block_sums_in_and_out_of_bounds(n):
    """Whole tiles take the unchecked path; the last, partial tile pads with zeros."""
    x = np.random.default_rng(n).uniform(-1, 1, n).astype(np.float32)
    blocks = -(-n // TILE)
    sums, total = wp.zeros(blocks, dtype=float), wp.zeros(1, dtype=float)
    wp.launch_tiled(block_sums, dim=blocks, inputs=[wp.array(x), sums, total], block_dim=64)
    padded = np.zeros(blocks * TILE, dtype=np.float64)
    padded[:n] = x
    ref = padded.reshape(blocks, TILE).sum(axis=1)
    np.testing.assert_allclose(sums.numpy(), ref, rtol=0, atol=1e-5)
    np.testing.assert_allclose(total.numpy()[0], ref.sum(), rtol=0, atol=1e-4)


def test_sum_is_deterministic_and_accurate():
    x = np.random.default_rng(1).uniform(0, 1, 64 * TILE).astype(np.float32)
    xa = wp.array(x)
    results = []
    for _ in range(3):
        sums, total = wp.zeros(64, dtype=float), wp.zeros(1, dtype=float)
        wp.launch_tiled(block_sums, dim=64, inputs=[xa, sums, total], block_dim=64)
        results.append(sums.numpy())
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])
    ref = x.astype(np.float64).reshape(64, TILE).sum(axis=1)
    np.testing.assert_allclose(results[0], ref, rtol=1e-6)


@wp.kernel
def copy_2d(a: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64)):
    i, j = wp.tid()
    t = wp.tile_load(a, shape=(4, 8), offset=(i * 4 - 2, j * 8 + 3))
    wp.tile_store(out, t * 2.0, offset=(i * 4 - 2, j * 8 + 3))


def test_2d_tiles_at_every_edge():
    """Offsets that put tiles across each edge (negative offsets included): loads pad
    with zeros, stores write only the elements inside the array."""
    a = np.random.default_rng(2).uniform(-1, 1, (10, 21))
    out = wp.full((10, 21), 7.0, dtype=wp.float64)
    wp.launch_tiled(copy_2d, dim=(4, 3), inputs=[wp.array(a, dtype=wp.float64), out], block_dim=8)
    ref = np.full((10, 21), 7.0)
    for i in range(4):
        for j in range(3):
            r0, c0 = i * 4 - 2, j * 8 + 3
            rs, cs = slice(max(r0, 0), min(r0 + 4, 10)), slice(max(c0, 0), min(c0 + 8, 21))
            ref[rs, cs] = 2.0 * a[rs, cs]
    np.testing.assert_array_equal(out.numpy(), ref)


@wp.kernel
def tiled_gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
    i, j = wp.tid()
    s = wp.tile_zeros(shape=(64, 64), dtype=float)
    for k in range(0, int(a.shape[1] / 8)):
        wp.tile_matmul(wp.tile_load(a, shape=(64, 8), offset=(i * 64, k * 8)),
                       wp.tile_load(b, shape=(8, 64), offset=(k * 8, j * 64)), s)
    wp.tile_store(c, s, offset=(i * 64, j * 64))


@wp.kernel
def small(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0


def test_tile_work_counts_toward_the_thread_split():
    """A 16 x 16 grid of GEMM blocks and 4096 blocks summing 4096-element tiles are worth
    spreading over threads; a 1000-thread elementwise kernel is not."""
    assert 256 * work_per_thread(tiled_gemm.ir().body) >= config.parallel_threshold
    assert 4096 * work_per_thread(block_sums.ir().body) >= config.parallel_threshold
    assert 1000 * work_per_thread(small.ir().body) < config.parallel_threshold
    # the product counts m * k * n multiply-adds, not one op
    assert work_per_thread(tiled_gemm.ir().body) >= 64 * 64 * 8 * 256 / 2
    assert TILE <= work_per_thread(block_sums.ir().body)


@wp.kernel
def scale_by_ints(k: wp.array(dtype=int), x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    ks = wp.tile_load(k, shape=8, offset=i * 8)  # an integer tile: no adjoint
    xs = wp.tile_load(x, shape=8, offset=i * 8)
    wp.tile_store(out, xs * xs * wp.tile_astype(ks, wp.float64), offset=i * 8)


def test_gradient_through_checked_loads_next_to_an_integer_tile():
    """Both bounds paths of both loads are reversed; the integer tile's gets no adjoint."""
    n = 20  # the third block is partly outside the arrays
    k = np.arange(n, dtype=np.int32) - 5
    x = np.linspace(-1.0, 1.0, n)
    xa = wp.array(x, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch_tiled(scale_by_ints, dim=3, inputs=[wp.array(k, dtype=int), xa, out], block_dim=8)
    out.grad = wp.ones(n, dtype=wp.float64)
    tape.backward()
    np.testing.assert_allclose(out.numpy(), x * x * k, rtol=1e-14)
    np.testing.assert_allclose(xa.grad.numpy(), 2.0 * x * k, rtol=1e-14)
