"""tile_randf / tile_randi with per-block seeds (the docs example), ranges, and a Monte Carlo estimate."""

import numpy as np
import warp as wp

TILE_M = 2
TILE_N = 4


@wp.kernel
def generate_random_floats(seed: int, x: wp.array2d(dtype=float)):
    i, j = wp.tid()
    rng = wp.rand_init(seed, i * 3 + j)
    t = wp.tile_randf(shape=(TILE_M, TILE_N), rng=rng)
    wp.tile_store(x, t, offset=(i * TILE_M, j * TILE_N))


@wp.kernel
def ranges(seed: int, f: wp.array(dtype=float), n: wp.array(dtype=wp.int32), same: wp.array(dtype=float)):
    rng = wp.rand_init(seed)
    a = wp.tile_randf(16, rng, -2.0, 3.0)
    b = wp.tile_randi(shape=16, rng=rng, min=-5, max=5)
    c = wp.tile_randf(16, rng, -2.0, 3.0)
    wp.tile_store(f, a)
    wp.tile_store(n, b)
    # same rng, same draws
    wp.tile_store(same, a - c)


@wp.kernel
def monte_carlo_pi(seed: int, hits: wp.array(dtype=float)):
    b = wp.tid()
    rng_x = wp.rand_init(seed, 2 * b)
    rng_y = wp.rand_init(seed, 2 * b + 1)
    x = wp.tile_randf(64, rng_x)
    y = wp.tile_randf(64, rng_y)
    r2 = wp.tile_map(wp.add, wp.tile_map(wp.mul, x, x), wp.tile_map(wp.mul, y, y))
    inside = wp.tile_map(wp.step, r2 - wp.tile_ones(64, dtype=float))
    wp.tile_atomic_add(hits, wp.tile_sum(inside))


@wp.kernel
def int_bits(seed: int, out: wp.array2d(dtype=wp.int32)):
    i = wp.tid()
    t = wp.tile_randi(shape=(2, 8), rng=wp.rand_init(seed, i))
    wp.tile_store(out, t, offset=(2 * i, 0))


def run():
    x = wp.zeros((2 * TILE_M, 3 * TILE_N), dtype=float)
    wp.launch_tiled(generate_random_floats, dim=[2, 3], inputs=[42], outputs=[x], block_dim=32)
    f = wp.zeros(16, dtype=float)
    n = wp.zeros(16, dtype=wp.int32)
    same = wp.ones(16, dtype=float)
    wp.launch_tiled(ranges, dim=1, inputs=[7, f, n, same], block_dim=64)
    hits = wp.zeros(1, dtype=float)
    wp.launch_tiled(monte_carlo_pi, dim=16, inputs=[123, hits], block_dim=128)
    bits = wp.zeros((6, 8), dtype=wp.int32)
    wp.launch_tiled(int_bits, dim=3, inputs=[99, bits], block_dim=32)
    pi = 4.0 * hits.numpy()[0] / (16 * 64)
    return {"x": x.numpy(), "f": f.numpy(), "n": n.numpy(), "same": same.numpy(), "hits": hits.numpy(),
            "pi": np.float64(pi), "bits": bits.numpy()}
