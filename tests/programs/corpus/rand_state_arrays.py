"""RNG state kept in an array across launches and in a struct field (drawn from a local copy
written back, and drawn from the field itself, which Warp advances in a temporary only), 2D/3D
launches with offsets built from several thread indices, draws in float64 and integer arithmetic,
wp.uint32 seeds, and dice statistics accumulated with atomics."""

import numpy as np
import warp as wp


@wp.kernel
def init_states(seed: int, states: wp.array(dtype=wp.uint32)):
    tid = wp.tid()
    states[tid] = wp.rand_init(seed, tid)


@wp.kernel
def step(states: wp.array(dtype=wp.uint32), walk: wp.array(dtype=wp.float64), last: wp.array(dtype=float)):
    tid = wp.tid()
    s = states[tid]
    u = wp.randf(s)
    walk[tid] = walk[tid] + wp.float64(u) - wp.float64(0.5)
    last[tid] = wp.randn(s)
    states[tid] = s


@wp.kernel
def grid2d(seed: int, out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    s = wp.rand_init(seed, i * out.shape[1] + j)
    out[i, j] = wp.randf(s, 0.0, 10.0)


@wp.kernel
def grid3d(seed: int, out: wp.array3d(dtype=int)):
    i, j, k = wp.tid()
    s = wp.rand_init(seed + k, i * 1000 + j)
    out[i, j, k] = wp.randi(s) % 1000


@wp.kernel
def dice(seed: wp.uint32, rolls: int, faces: wp.array(dtype=int), sums: wp.array(dtype=wp.int64)):
    tid = wp.tid()
    s = wp.rand_init(int(seed), tid)
    total = wp.int64(0)
    for _ in range(rolls):
        d = wp.randi(s, 1, 7)
        wp.atomic_add(faces, d - 1, 1)
        total += wp.int64(d)
    sums[tid] = total


@wp.kernel
def shuffle_keys(seed: int, keys: wp.array(dtype=wp.uint32), bits: wp.array(dtype=wp.uint32)):
    tid = wp.tid()
    s = wp.rand_init(seed, tid)
    r = wp.randu(s)
    keys[tid] = r
    bits[tid] = (r >> wp.uint32(28)) ^ (r & wp.uint32(15))


@wp.struct
class Walker:
    rng: wp.uint32
    pos: wp.vec2


@wp.kernel
def walk_walkers(walkers: wp.array(dtype=Walker), direct: wp.array2d(dtype=float)):
    tid = wp.tid()
    w = walkers[tid]
    direct[tid, 0] = wp.randf(w.rng)
    direct[tid, 1] = wp.randf(walkers[tid].rng)
    direct[tid, 2] = wp.sample_unit_disk(w.rng)[0]
    s = w.rng
    w.pos = w.pos + wp.sample_unit_disk(s)
    w.rng = s
    walkers[tid] = w


def run():
    n = 100
    states = wp.zeros(n, dtype=wp.uint32)
    wp.launch(init_states, dim=n, inputs=[1234, states])
    first_states = states.numpy().copy()
    walk = wp.zeros(n, dtype=wp.float64)
    last = wp.zeros(n, dtype=float)
    for _ in range(20):
        wp.launch(step, dim=n, inputs=[states, walk, last])
    g2 = wp.zeros((7, 9), dtype=float)
    wp.launch(grid2d, dim=g2.shape, inputs=[3, g2])
    g3 = wp.zeros((3, 4, 5), dtype=int)
    wp.launch(grid3d, dim=g3.shape, inputs=[-8, g3])
    faces = wp.zeros(6, dtype=int)
    sums = wp.zeros(50, dtype=wp.int64)
    wp.launch(dice, dim=50, inputs=[wp.uint32(77), 30, faces, sums])
    keys = wp.zeros(n, dtype=wp.uint32)
    bits = wp.zeros(n, dtype=wp.uint32)
    wp.launch(shuffle_keys, dim=n, inputs=[5, keys, bits])
    host = []
    for i in range(16):
        w = Walker()
        w.rng = wp.rand_init(9, i)
        w.pos = wp.vec2(0.0, 0.0)
        host.append(w)
    walkers = wp.array(host, dtype=Walker)
    direct = wp.zeros((16, 3), dtype=float)
    for _ in range(5):
        wp.launch(walk_walkers, dim=16, inputs=[walkers, direct])
    return {
        "walker_pos": walkers.numpy()["pos"],
        "walker_rng": walkers.numpy()["rng"],
        "walker_direct": direct.numpy(),
        "first_states": first_states,
        "final_states": states.numpy(),
        "walk": walk.numpy(),
        "last_normal": last.numpy(),
        "grid2d": g2.numpy(),
        "grid3d": g3.numpy(),
        "dice_faces": faces.numpy(),
        "dice_sums": sums.numpy(),
        "permutation": np.argsort(keys.numpy(), kind="stable"),
        "bits": bits.numpy(),
    }


TOLERANCE = {"walk": (1e-12, 1e-12)}
