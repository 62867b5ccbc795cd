"""RNG ranges and offsets at their edges: randi over negative-only ranges, ranges at the int32 limits and
the full int32 span; randu over the top half of uint32 and the widest range; randf with low == high and
huge bounds; rand_init with negative, large and wrapping offsets (which pairs of (seed, offset) give the
same stream); the state value after each kind of draw; and exact first values of randn, with sign
counts and moments summarised over many threads."""

import numpy as np
import warp as wp

TOLERANCE = {"randn_moments": (1e-4, 1e-5)}  # float sums accumulated in a different order


@wp.kernel
def int_ranges(seed: int, out: wp.array2d(dtype=wp.int32)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    out[i, 0] = wp.randi(s, -10, -3)
    out[i, 1] = wp.randi(s, -1, 0)
    out[i, 2] = wp.randi(s, 2147483640, 2147483647)
    out[i, 3] = wp.randi(s, -2147483647, -2147483640)
    out[i, 4] = wp.randi(s, -2147483647, 2147483647)
    out[i, 5] = wp.randi(s, -3, 4)


@wp.kernel
def uint_ranges(seed: int, out: wp.array2d(dtype=wp.uint32)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    out[i, 0] = wp.randu(s, wp.uint32(2147483648), wp.uint32(4294967295))
    out[i, 1] = wp.randu(s, wp.uint32(0), wp.uint32(4294967295))
    out[i, 2] = wp.randu(s, wp.uint32(7), wp.uint32(8))
    out[i, 3] = wp.randu(s)


@wp.kernel
def float_ranges(seed: int, out: wp.array2d(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    out[i, 0] = wp.randf(s, 2.5, 2.5)
    out[i, 1] = wp.randf(s, -1.0e30, 1.0e30)
    out[i, 2] = wp.randf(s, -1.0e-3, 0.0)
    out[i, 3] = wp.randf(s, 0.0, 1.0)


@wp.kernel
def by_offset(seed: int, offsets: wp.array(dtype=wp.int32), out: wp.array2d(dtype=wp.uint32)):
    i = wp.tid()
    s = wp.rand_init(seed, offsets[i])
    out[i, 0] = s
    out[i, 1] = wp.randu(s)
    out[i, 2] = wp.randu(s)


@wp.kernel
def states_after(seed: int, out: wp.array2d(dtype=wp.uint32)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    out[i, 0] = s
    wp.randf(s)
    out[i, 1] = s
    wp.randn(s)
    out[i, 2] = s
    wp.randi(s, 0, 10)
    out[i, 3] = s
    wp.poisson(s, 3.0)
    out[i, 4] = s


@wp.kernel
def normals(seed: int, first: wp.array2d(dtype=float), stats: wp.array(dtype=float), signs: wp.array(dtype=int)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    for j in range(8):
        z = wp.randn(s)
        if i < first.shape[0]:
            first[i, j] = z
        wp.atomic_add(stats, 0, z)
        wp.atomic_add(stats, 1, z * z)
        if z > 0.0:
            wp.atomic_add(signs, 0, 1)
        if wp.abs(z) > 3.0:
            wp.atomic_add(signs, 1, 1)


def run():
    r = {}
    n = 64
    ints = wp.zeros((n, 6), dtype=wp.int32)
    wp.launch(int_ranges, dim=n, inputs=[11, ints])
    r["int_ranges"] = ints.numpy().copy()
    i = ints.numpy()
    r["int_bounds_ok"] = bool((i[:, 0] >= -10).all() and (i[:, 0] < -3).all() and (i[:, 1] == -1).all())
    uints = wp.zeros((n, 4), dtype=wp.uint32)
    wp.launch(uint_ranges, dim=n, inputs=[12, uints])
    r["uint_ranges"] = uints.numpy().copy()
    floats = wp.zeros((n, 4), dtype=float)
    wp.launch(float_ranges, dim=n, inputs=[13, floats])
    r["float_ranges"] = floats.numpy().copy()
    offsets = wp.array(np.array([0, 1, -1, 1000, -1000, 2147483647, -2147483648, 5, 3], dtype=np.int32))
    st = wp.zeros((9, 3), dtype=wp.uint32)
    wp.launch(by_offset, dim=9, inputs=[2, offsets, st])
    r["by_offset_seed2"] = st.numpy().copy()
    st2 = wp.zeros((9, 3), dtype=wp.uint32)
    wp.launch(by_offset, dim=9, inputs=[4, offsets, st2])
    r["by_offset_seed4"] = st2.numpy().copy()
    r["seed_offset_pairs_equal"] = st.numpy()[:, 0][None, :] == st2.numpy()[:, 0][:, None]
    sa = wp.zeros((8, 5), dtype=wp.uint32)
    wp.launch(states_after, dim=8, inputs=[99, sa])
    r["states_after"] = sa.numpy().copy()
    m = 4096
    first = wp.zeros((4, 8), dtype=float)
    stats = wp.zeros(2, dtype=float)
    signs = wp.zeros(2, dtype=int)
    wp.launch(normals, dim=m, inputs=[5, first, stats, signs])
    r["randn_first"] = first.numpy().copy()
    r["randn_moments"] = stats.numpy() / (m * 8)
    r["randn_sign_counts"] = signs.numpy().copy()
    return r
