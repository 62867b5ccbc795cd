"""Random algorithms as users write them: a per-thread Fisher-Yates shuffle in a fixed-size local
array, reservoir sampling of k items from a stream, a random walk on a 2-D lattice with randi
steps, rejection sampling of a disk counted exactly, Poisson arrivals with per-thread rates,
a stratified sample_unit_square/sample_triangle/sample_unit_sphere estimate, and sample_cdf
drawing from a cdf built on the host with np.cumsum."""

import numpy as np
import warp as wp

TOLERANCE = {"estimates": (1e-5, 1e-6)}  # atomics summed in a different order


@wp.kernel
def shuffle(seed: int, out: wp.array2d(dtype=int)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    perm = wp.zeros(shape=8, dtype=int)
    for k in range(8):
        perm[k] = k
    for k in range(7, 0, -1):
        j = wp.randi(s, 0, k + 1)
        t = perm[k]
        perm[k] = perm[j]
        perm[j] = t
    for k in range(8):
        out[i, k] = perm[k]


@wp.kernel
def reservoir(seed: int, stream_len: int, out: wp.array2d(dtype=int)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    k = out.shape[1]
    for n in range(stream_len):
        if n < k:
            out[i, n] = n * 3
        else:
            j = wp.randi(s, 0, n + 1)
            if j < k:
                out[i, j] = n * 3


@wp.kernel
def walk(seed: int, steps: int, pos: wp.array(dtype=wp.vec2i), hits: wp.array(dtype=int)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    p = wp.vec2i(0, 0)
    for _ in range(steps):
        d = wp.randi(s, 0, 4)
        if d == 0:
            p = p + wp.vec2i(1, 0)
        elif d == 1:
            p = p - wp.vec2i(1, 0)
        elif d == 2:
            p = p + wp.vec2i(0, 1)
        else:
            p = p - wp.vec2i(0, 1)
        if p[0] == 0 and p[1] == 0:
            wp.atomic_add(hits, i, 1)
    pos[i] = p


@wp.kernel
def disk(seed: int, tries: wp.array(dtype=int), inside: wp.array(dtype=int)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    n = int(0)
    while True:
        n += 1
        x = wp.randf(s, -1.0, 1.0)
        y = wp.randf(s, -1.0, 1.0)
        if x * x + y * y <= 1.0:
            break
    tries[i] = n
    if n == 1:
        wp.atomic_add(inside, 0, 1)


@wp.kernel
def arrivals(seed: int, rates: wp.array(dtype=float), counts: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    counts[i] = wp.poisson(s, rates[i])


@wp.kernel
def estimates(seed: int, acc: wp.array(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    q = wp.sample_unit_square(s)
    wp.atomic_add(acc, 0, q[0] * q[1])
    t = wp.sample_triangle(s)
    wp.atomic_add(acc, 1, t[0] + 2.0 * t[1])
    v = wp.sample_unit_sphere(s)
    wp.atomic_add(acc, 2, wp.dot(v, v))
    h = wp.sample_unit_hemisphere_surface(s)
    wp.atomic_add(acc, 3, h[2])


@wp.kernel
def from_cdf(seed: int, cdf: wp.array(dtype=float), bins: wp.array(dtype=int), picks: wp.array(dtype=int)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    b = wp.sample_cdf(s, cdf)
    picks[i] = b
    wp.atomic_add(bins, b, 1)


def run():
    r = {}
    perms = wp.zeros((16, 8), dtype=int)
    wp.launch(shuffle, dim=16, inputs=[3, perms])
    r["perms"] = perms.numpy().copy()
    r["perms_valid"] = bool((np.sort(perms.numpy(), axis=1) == np.arange(8)).all())
    res = wp.zeros((6, 4), dtype=int)
    wp.launch(reservoir, dim=6, inputs=[8, 50, res])
    r["reservoir"] = res.numpy().copy()
    pos = wp.zeros(32, dtype=wp.vec2i)
    hits = wp.zeros(32, dtype=int)
    wp.launch(walk, dim=32, inputs=[21, 200, pos, hits])
    r["walk_end"] = pos.numpy().copy()
    r["walk_returns"] = hits.numpy().copy()
    tries = wp.zeros(1000, dtype=int)
    inside = wp.zeros(1, dtype=int)
    wp.launch(disk, dim=1000, inputs=[4, tries, inside])
    r["disk_tries"] = tries.numpy().copy()
    r["disk_first_try"] = inside.numpy().copy()
    rates = wp.array(np.array([0.5, 1.0, 4.0, 9.5, 20.0, 75.0, 300.0, 0.01], dtype=np.float32))
    counts = wp.zeros(8, dtype=wp.uint32)
    wp.launch(arrivals, dim=8, inputs=[17, rates, counts])
    r["poisson_counts"] = counts.numpy().copy()
    acc = wp.zeros(4, dtype=float)
    wp.launch(estimates, dim=2048, inputs=[6, acc])
    r["estimates"] = acc.numpy() / 2048.0
    weights = np.array([1.0, 0.0, 3.0, 2.0, 0.0, 4.0], dtype=np.float32)
    cdf = wp.array(np.cumsum(weights) / weights.sum())
    bins = wp.zeros(6, dtype=int)
    picks = wp.zeros(500, dtype=int)
    wp.launch(from_cdf, dim=500, inputs=[31, cdf, bins, picks])
    r["cdf_bins"] = bins.numpy().copy()
    r["cdf_picks_head"] = picks.numpy()[:40].copy()
    return r
