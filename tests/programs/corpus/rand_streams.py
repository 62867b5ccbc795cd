"""Per-thread random streams: rand_init(seed, offset), randi/randu/randf/randn with and without ranges."""

import numpy as np
import warp as wp


@wp.kernel
def draw(seed: int,
         ints: wp.array(dtype=int),
         ints_range: wp.array(dtype=int),
         uints: wp.array(dtype=wp.uint32),
         uints_range: wp.array(dtype=wp.uint32),
         floats: wp.array(dtype=float),
         floats_range: wp.array(dtype=float),
         normals: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    ints[tid] = wp.randi(state)
    ints_range[tid] = wp.randi(state, -5, 17)
    uints[tid] = wp.randu(state)
    uints_range[tid] = wp.randu(state, wp.uint32(3), wp.uint32(1000))
    floats[tid] = wp.randf(state)
    floats_range[tid] = wp.randf(state, -2.5, 4.0)
    normals[tid] = wp.randn(state)


@wp.kernel
def sequence(seed: int, out: wp.array2d(dtype=float)):
    # one seed, no offset: every row is the same stream, columns advance it
    i = wp.tid()
    state = wp.rand_init(seed)
    for j in range(out.shape[1]):
        out[i, j] = wp.randf(state)


@wp.kernel
def state_values(seed: int, out: wp.array(dtype=wp.uint32)):
    tid = wp.tid()
    out[tid] = wp.rand_init(seed, tid * 7 + 1)


@wp.kernel
def histogram(seed: int, bins: wp.array(dtype=int)):
    tid = wp.tid()
    rng = wp.rand_init(seed, tid)
    for _ in range(8):
        b = wp.randi(rng, 0, bins.shape[0])
        wp.atomic_add(bins, b, 1)


def run():
    n = 256
    ints = wp.zeros(n, dtype=int)
    ints_range = wp.zeros(n, dtype=int)
    uints = wp.zeros(n, dtype=wp.uint32)
    uints_range = wp.zeros(n, dtype=wp.uint32)
    floats = wp.zeros(n, dtype=float)
    floats_range = wp.zeros(n, dtype=float)
    normals = wp.zeros(n, dtype=float)
    wp.launch(draw, dim=n, inputs=[42],
              outputs=[ints, ints_range, uints, uints_range, floats, floats_range, normals])
    seq = wp.empty((3, 12), dtype=float)
    wp.launch(sequence, dim=3, inputs=[7, seq])
    states = wp.zeros(16, dtype=wp.uint32)
    wp.launch(state_values, dim=16, inputs=[123456789, states])
    bins = wp.zeros(10, dtype=int)
    wp.launch(histogram, dim=500, inputs=[2024, bins])
    # a negative seed and a large one
    neg = wp.zeros(n, dtype=float)
    big = wp.zeros(n, dtype=float)
    wp.launch(draw, dim=n, inputs=[-3], outputs=[ints, ints_range, uints, uints_range, neg, floats_range, normals])
    wp.launch(draw, dim=n, inputs=[2**31 - 1],
              outputs=[ints, ints_range, uints, uints_range, big, floats_range, normals])
    return {
        "ints_last": ints.numpy(),
        "ints_range": ints_range.numpy(),
        "uints": uints.numpy(),
        "uints_range": uints_range.numpy(),
        "floats": floats.numpy(),
        "floats_range": floats_range.numpy(),
        "normals": normals.numpy(),
        "sequence": seq.numpy(),
        "states": states.numpy(),
        "bins": bins.numpy(),
        "neg_seed": neg.numpy(),
        "big_seed": big.numpy(),
        "range_ok": bool(np.all((ints_range.numpy() >= -5) & (ints_range.numpy() < 17))),
    }
