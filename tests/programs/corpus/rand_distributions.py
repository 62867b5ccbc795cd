"""Distribution corner cases users meet: poisson with lam 0 (no state consumed), tiny and very
large rates; sample_cdf on a cdf with zero-weight bins and one with a single bin; randi over a
range wider than 2^31 and a width-one range; randf with low > high; randn tails; and a
Box-Muller pair from two randf draws versus randn."""

import numpy as np
import warp as wp


@wp.kernel
def poisson_rates(seed: int, lams: wp.array(dtype=float), counts: wp.array2d(dtype=wp.uint32),
                  after: wp.array2d(dtype=float)):
    i, j = wp.tid()
    s = wp.rand_init(seed, j)
    counts[i, j] = wp.poisson(s, lams[i])
    after[i, j] = wp.randf(s)


@wp.kernel
def cdf_draws(seed: int, cdf: wp.array(dtype=float), single: wp.array(dtype=float), out: wp.array2d(dtype=int)):
    tid = wp.tid()
    s = wp.rand_init(seed, tid)
    out[tid, 0] = wp.sample_cdf(s, cdf)
    out[tid, 1] = wp.sample_cdf(s, single)
    out[tid, 2] = wp.sample_cdf(s, cdf)


@wp.kernel
def ranges(seed: int, out_i: wp.array2d(dtype=int), out_f: wp.array2d(dtype=float)):
    tid = wp.tid()
    s = wp.rand_init(seed, tid)
    out_i[tid, 0] = wp.randi(s, -2000000000, 2000000000)
    out_i[tid, 1] = wp.randi(s, 5, 6)
    out_i[tid, 2] = wp.randi(s, -7, -2)
    out_f[tid, 0] = wp.randf(s, 3.0, 1.0)
    out_f[tid, 1] = wp.randf(s, -1.0e-3, 1.0e-3)
    out_f[tid, 2] = wp.randn(s) * 2.0 + 5.0


@wp.kernel
def box_muller(seed: int, out: wp.array(dtype=wp.vec2), normals: wp.array(dtype=float)):
    tid = wp.tid()
    s = wp.rand_init(seed, tid)
    u1 = wp.max(wp.randf(s), 1.0e-7)
    u2 = wp.randf(s)
    r = wp.sqrt(-2.0 * wp.log(u1))
    out[tid] = wp.vec2(r * wp.cos(2.0 * wp.pi * u2), r * wp.sin(2.0 * wp.pi * u2))
    normals[tid] = wp.randn(s)


def run():
    lams = wp.array([0.0, 1.0e-3, 0.7, 9.5, 15.0, 250.0, 1.0e4], dtype=float)
    counts = wp.zeros((7, 40), dtype=wp.uint32)
    after = wp.zeros((7, 40), dtype=float)
    wp.launch(poisson_rates, dim=counts.shape, inputs=[3, lams, counts, after])
    res = {"poisson": counts.numpy(), "after_poisson": after.numpy()}

    w = np.array([0.0, 0.3, 0.0, 0.0, 0.5, 0.2, 0.0], dtype=np.float32)
    cdf = wp.array(np.cumsum(w) / w.sum(), dtype=float)
    single = wp.array([1.0], dtype=float)
    picks = wp.zeros((256, 3), dtype=int)
    wp.launch(cdf_draws, dim=256, inputs=[8, cdf, single, picks])
    res["cdf"] = picks.numpy()
    res["cdf_hist"] = np.bincount(picks.numpy()[:, 0], minlength=7)

    oi = wp.zeros((128, 3), dtype=int)
    of = wp.zeros((128, 3), dtype=float)
    wp.launch(ranges, dim=128, inputs=[12, oi, of])
    res["randi"] = oi.numpy()
    res["randf"] = of.numpy()

    bm = wp.zeros(200, dtype=wp.vec2)
    rn = wp.zeros(200, dtype=float)
    wp.launch(box_muller, dim=200, inputs=[1, bm, rn])
    res["box_muller"] = bm.numpy()
    res["randn"] = rn.numpy()
    res["randn_tail_count"] = int((np.abs(rn.numpy()) > 2.0).sum())
    return res


TOLERANCE = {"box_muller": (1e-5, 1e-5)}
