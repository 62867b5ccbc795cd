"""The factors themselves of svd3, eig3 and qr3 (not only sign-invariant quantities): a
program that reads a column of U or the first eigenvalue gets Warp's, so weft computes them
by Warp's algorithms. Random, symmetric, singular, rank-1, zero and diagonal matrices, in
float32 and float64."""

import numpy as np
import warp as wp


def _kernel(mat33, vec3):
    @wp.kernel
    def factors(a: wp.array(dtype=mat33), u: wp.array(dtype=mat33), s: wp.array(dtype=vec3),
                v: wp.array(dtype=mat33), q: wp.array(dtype=mat33), d: wp.array(dtype=vec3),
                qq: wp.array(dtype=mat33), r: wp.array(dtype=mat33)):
        i = wp.tid()
        uu, ss, vv = wp.svd3(a[i])
        u[i] = uu
        s[i] = ss
        v[i] = vv
        e, lam = wp.eig3(a[i] + wp.transpose(a[i]))
        q[i] = e
        d[i] = lam
        q2, r2 = wp.qr3(a[i])
        qq[i] = q2
        r[i] = r2
    return factors


def _matrices(dtype):
    rng = np.random.default_rng(17)
    mats = rng.normal(size=(24, 3, 3))
    mats[0] = np.arange(1.0, 10.0).reshape(3, 3)
    mats[1] = np.outer([1.0, 2.0, 3.0], [4.0, -5.0, 6.0])
    mats[2] = 0.0
    mats[3] = np.diag([3.0, 0.0, -2.0])
    mats[4] = np.eye(3)
    mats[5] = mats[5] + mats[5].T
    return mats.astype(dtype)


def run():
    out = {}
    for name, dtype, mat33, vec3 in (("f32", np.float32, wp.mat33, wp.vec3), ("f64", np.float64, wp.mat33d, wp.vec3d)):
        a = wp.array(_matrices(dtype), dtype=mat33)
        n = a.shape[0]
        results = [wp.zeros(n, dtype=t) for t in (mat33, vec3, mat33, mat33, vec3, mat33, mat33)]
        wp.launch(_kernel(mat33, vec3), n, inputs=[a, *results])
        for key, arr in zip(("U", "sigma", "V", "Q", "d", "qr_Q", "qr_R"), results):
            out[f"{key}_{name}"] = arr.numpy()
    return out
