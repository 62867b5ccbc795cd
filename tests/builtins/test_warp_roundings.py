"""Builtins that round as Warp's do, bit for bit (a chaotic simulation then follows Warp's
trajectory): matrix products and ddot accumulate with fused multiply-adds (Warp's muladd is
fmaf), quaternion products, rotations and normalisation take Warp's order of operations,
and 4x4 determinants and inverses Warp's sequence (2x2 minors in float32, cofactors in
float64). The expected values are computed here in numpy, step by step in that order."""

from fractions import Fraction

import numpy as np

import weft as wp

F32 = np.float32


def _fma32(a, b, c):
    """a * b + c rounded once to float32 (ties to even), exactly."""
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    guess = F32(float(exact))  # (within one ulp: pick the nearest of it and its neighbours)
    candidates = [np.nextafter(guess, F32(-np.inf)), guess, np.nextafter(guess, F32(np.inf))]
    errors = [abs(Fraction(float(x)) - exact) for x in candidates]
    best = min(errors)
    near = [x for x, e in zip(candidates, errors) if e == best]
    return near[0] if len(near) == 1 else next(x for x in near if int(x.view(np.int32)) % 2 == 0)


@wp.kernel
def products(a: wp.array(dtype=wp.mat33), b: wp.array(dtype=wp.mat33), q: wp.array(dtype=wp.quat),
             p: wp.array(dtype=wp.quat), v: wp.array(dtype=wp.vec3), ab: wp.array(dtype=wp.mat33),
             dd: wp.array(dtype=float), qp: wp.array(dtype=wp.quat), rot: wp.array(dtype=wp.vec3),
             inv_rot: wp.array(dtype=wp.vec3), unit: wp.array(dtype=wp.quat)):
    i = wp.tid()
    ab[i] = a[i] @ b[i]
    dd[i] = wp.ddot(a[i], b[i])
    qp[i] = q[i] * p[i]
    rot[i] = wp.quat_rotate(q[i], v[i])
    inv_rot[i] = wp.quat_rotate_inv(q[i], v[i])
    unit[i] = wp.normalize(p[i])


def test_products_rotations_and_normalisation_round_as_warps():
    rng = np.random.default_rng(5)
    n = 64
    a, b = rng.standard_normal((2, n, 3, 3)).astype(F32)
    q = rng.standard_normal((n, 4)).astype(F32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    p = rng.standard_normal((n, 4)).astype(F32)
    v = rng.standard_normal((n, 3)).astype(F32)
    outs = [wp.zeros(n, dtype=t) for t in (wp.mat33, float, wp.quat, wp.vec3, wp.vec3, wp.quat)]
    wp.launch(products, n, [wp.array(a, dtype=wp.mat33), wp.array(b, dtype=wp.mat33), wp.array(q, dtype=wp.quat),
                            wp.array(p, dtype=wp.quat), wp.array(v, dtype=wp.vec3), *outs])
    ab, dd, qp, rot, inv_rot, unit = (o.numpy() for o in outs)
    for k in range(n):
        for r in range(3):
            for c in range(3):
                s = F32(0.0)
                for j in range(3):
                    s = _fma32(a[k, r, j], b[k, j, c], s)
                assert ab[k, r, c] == s
        s = F32(0.0)
        for x, y in zip(a[k].ravel(), b[k].ravel()):
            s = _fma32(x, y, s)
        assert dd[k] == s
        (ax, ay, az, aw), (bx, by, bz, bw) = q[k], p[k]
        expected = [aw * bx + bw * ax + ay * bz - by * az, aw * by + bw * ay + az * bx - bz * ax,
                    aw * bz + bw * az + ax * by - bx * ay, aw * bw - ax * bx - ay * by - az * bz]
        assert qp[k].tobytes() == np.array(expected, F32).tobytes()
        x = v[k]
        c = F32(2.0) * aw * aw - F32(1.0)
        d = F32(2.0) * (ax * x[0] + ay * x[1] + az * x[2])
        cross = [ay * x[2] - az * x[1], az * x[0] - ax * x[2], ax * x[1] - ay * x[0]]
        turn = [cr * aw * F32(2.0) for cr in cross]
        assert rot[k].tobytes() == np.array([x[i] * c + (ax, ay, az)[i] * d + turn[i] for i in range(3)], F32).tobytes()
        assert inv_rot[k].tobytes() == np.array([x[i] * c + (ax, ay, az)[i] * d - turn[i] for i in range(3)],
                                                F32).tobytes()
        length = np.sqrt(bx * bx + by * by + bz * bz + bw * bw, dtype=F32)
        assert unit[k].tobytes() == (p[k] * (F32(1.0) / length)).tobytes()


@wp.kernel
def det_inv44(m: wp.array(dtype=wp.mat44), det: wp.array(dtype=float), inv: wp.array(dtype=wp.mat44)):
    i = wp.tid()
    det[i] = wp.determinant(m[i])
    inv[i] = wp.inverse(m[i])


def _warp_det_inv44(x):
    """Warp's mat.h sequence (after USD), in numpy: float32 2x2 minors, float64 cofactors."""
    def minors(c0, c1):
        return {f"{r0}{r1}": np.float64(x[r0, c0] * x[r1, c1] - x[r1, c0] * x[r0, c1])
                for r0, r1 in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))}

    def z(terms, y):
        acc = None
        for sign, r, c, pair in terms:
            t = np.float64(x[r, c]) * y[pair]
            acc = t if acc is None else (acc + t if sign > 0 else acc - t)
        return acc
    y = minors(0, 1)
    hi = {"33": z([(1, 0, 2, "12"), (-1, 1, 2, "02"), (1, 2, 2, "01")], y),
          "23": z([(1, 1, 2, "03"), (-1, 3, 2, "01"), (-1, 0, 2, "13")], y),
          "13": z([(1, 0, 2, "23"), (-1, 2, 2, "03"), (1, 3, 2, "02")], y),
          "03": z([(1, 2, 2, "13"), (-1, 3, 2, "12"), (-1, 1, 2, "23")], y),
          "32": z([(1, 1, 3, "02"), (-1, 2, 3, "01"), (-1, 0, 3, "12")], y),
          "22": z([(1, 0, 3, "13"), (-1, 1, 3, "03"), (1, 3, 3, "01")], y),
          "12": z([(1, 2, 3, "03"), (-1, 3, 3, "02"), (-1, 0, 3, "23")], y),
          "02": z([(1, 1, 3, "23"), (-1, 2, 3, "13"), (1, 3, 3, "12")], y)}
    y = minors(2, 3)
    lo = {"30": z([(1, 1, 1, "02"), (-1, 2, 1, "01"), (-1, 0, 1, "12")], y),
          "20": z([(1, 0, 1, "13"), (-1, 1, 1, "03"), (1, 3, 1, "01")], y),
          "10": z([(1, 2, 1, "03"), (-1, 3, 1, "02"), (-1, 0, 1, "23")], y),
          "00": z([(1, 1, 1, "23"), (-1, 2, 1, "13"), (1, 3, 1, "12")], y),
          "31": z([(1, 0, 0, "12"), (-1, 1, 0, "02"), (1, 2, 0, "01")], y),
          "21": z([(1, 1, 0, "03"), (-1, 3, 0, "01"), (-1, 0, 0, "13")], y),
          "11": z([(1, 0, 0, "23"), (-1, 2, 0, "03"), (1, 3, 0, "02")], y),
          "01": z([(1, 2, 0, "13"), (-1, 3, 0, "12"), (-1, 1, 0, "23")], y)}
    lo = {k: F32(val) for k, val in lo.items()}
    det = x[3, 0] * lo["30"] + x[2, 0] * lo["20"] + x[1, 0] * lo["10"] + x[0, 0] * lo["00"]
    if not abs(det) > 0:
        return det, np.zeros((4, 4), F32)
    rcp = 1.0 / np.float64(det)
    zs = {**hi, **{k: np.float64(val) for k, val in lo.items()}}
    return det, np.array([[F32(zs[f"{j}{i}"] * rcp) for j in range(4)] for i in range(4)], F32)


def test_4x4_determinant_and_inverse_follow_warps_sequence():
    """An exactly singular matrix (a row twice another) has determinant 0 and the zero
    inverse, as in Warp; random ones match Warp's roundings bit for bit."""
    rng = np.random.default_rng(9)
    m = rng.standard_normal((40, 4, 4)).astype(F32)
    m[:8, 3] = 2 * m[:8, 0]
    det, inv = wp.zeros(40), wp.zeros(40, dtype=wp.mat44)
    wp.launch(det_inv44, 40, [wp.array(m, dtype=wp.mat44), det, inv])
    for k in range(40):
        d, i = _warp_det_inv44(m[k])
        assert det.numpy()[k] == d and inv.numpy()[k].tobytes() == i.tobytes()
    assert (det.numpy()[:8] == 0).all() and (inv.numpy()[:8] == 0).all()
