"""tile_randf/tile_randi: the stream Warp draws on the CPU (element k of the row-major
order is draw k+1 from pcg(rng)), with and without bounds."""

import numpy as np
import pytest

import weft as wp
from weft.builtins.random import pcg_numpy


@wp.kernel
def _rand(seed: int, x: wp.array2d(dtype=int), y: wp.array2d(dtype=float)):
    i, j = wp.tid()
    rng = wp.rand_init(seed, i * 2 + j)
    ti = wp.tile_randi(shape=(2, 2), rng=rng)
    tf = wp.tile_randf(shape=(2, 2), rng=rng)
    wp.tile_store(x, ti, offset=(i * 2, j * 2))
    wp.tile_store(y, tf, offset=(i * 2, j * 2))


@wp.kernel
def _rand_range(seed: int, x: wp.array2d(dtype=int), y: wp.array2d(dtype=float)):
    i, j = wp.tid()
    rng = wp.rand_init(seed, i * 2 + j)
    ti = wp.tile_randi((2, 2), rng, -5, 5)
    tf = wp.tile_randf(shape=(2, 2), rng=rng, min=-5.0, max=5.0)
    wp.tile_store(x, ti, offset=(i * 2, j * 2))
    wp.tile_store(y, tf, offset=(i * 2, j * 2))


def _streams(seed, n_blocks=4, n=4):
    """Each block's draws: rand_init(seed, block), hashed once, then n draws."""
    out = []
    for block in range(n_blocks):
        state = pcg_numpy((seed + pcg_numpy(block)) & 0xFFFFFFFF)  # rand_init(seed, block)
        state = pcg_numpy(state)  # the per-thread stream of thread 0
        draws = []
        for _ in range(n):
            state = pcg_numpy(state)
            draws.append(state)
        out.append(draws)
    return np.array(out, dtype=np.uint64)


def _as_tiles(per_block):
    """(block i*2+j, element r*2+c) -> array [i*2+r, j*2+c]."""
    out = np.zeros((4, 4), dtype=per_block.dtype)
    for i in range(2):
        for j in range(2):
            out[i * 2:i * 2 + 2, j * 2:j * 2 + 2] = per_block[i * 2 + j].reshape(2, 2)
    return out


def test_random_tiles_follow_warps_cpu_stream():
    x, y = wp.zeros((4, 4), dtype=int), wp.zeros((4, 4), dtype=float)
    wp.launch_tiled(_rand, dim=[2, 2], inputs=[42, x, y], block_dim=1)
    draws = _as_tiles(_streams(42))
    np.testing.assert_array_equal(x.numpy(), draws.astype(np.uint32).view(np.int32))
    np.testing.assert_array_equal(y.numpy(), ((draws >> 8).astype(np.float32) * np.float32(1.0 / 16777216.0)))
    # Warp 1.19's own CPU values for this kernel (its test_tile.py), first row
    np.testing.assert_array_equal(x.numpy()[0], [798497746, -1161279442, -955788638, -592663987])


def test_bounded_random_tiles():
    x, y = wp.zeros((4, 4), dtype=int), wp.zeros((4, 4), dtype=float)
    wp.launch_tiled(_rand_range, dim=[2, 2], inputs=[7, x, y], block_dim=1)
    draws = _as_tiles(_streams(7))
    np.testing.assert_array_equal(x.numpy(), ((draws % np.uint64(10)).astype(np.int64) - 5))
    u = (draws >> 8).astype(np.float32) * np.float32(1.0 / 16777216.0)
    np.testing.assert_allclose(y.numpy(), np.float32(10.0) * u - np.float32(5.0), rtol=0, atol=1e-6)
    assert x.numpy().min() >= -5 and x.numpy().max() < 5


def test_random_tile_arguments_are_checked():
    @wp.kernel
    def bad(x: wp.array(dtype=float)):
        t = wp.tile_randf(shape=4, rng=3)
        wp.tile_store(x, t)

    with pytest.raises(TypeError, match="rng must be a random state"):
        wp.launch_tiled(bad, dim=[1], inputs=[wp.zeros(4)], block_dim=1)

    @wp.kernel
    def bad_range(x: wp.array(dtype=int)):
        t = wp.tile_randi(shape=4, rng=wp.rand_init(1), min=5, max=5)
        wp.tile_store(x, t)

    with pytest.raises(ValueError, match="must be greater than min"):
        wp.launch_tiled(bad_range, dim=[1], inputs=[wp.zeros(4, dtype=int)], block_dim=1)
