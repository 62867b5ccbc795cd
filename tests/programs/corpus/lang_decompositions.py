"""Matrix decompositions and rotation helpers with their gradients: svd3 and svd2 (both the
tuple-returning and the output-argument forms), qr3, eig3 of symmetric matrices, polar
rotation from the SVD, inverse_approx, quat_from_matrix/quat_to_matrix round trips and
quat_slerp; a loss built from sign-invariant quantities (singular values, U diag(s) V^T,
eigenvalues' symmetric functions) is differentiated with a Tape."""

import numpy as np
import warp as wp


@wp.kernel
def decompose(a: wp.array(dtype=wp.mat33), sig: wp.array(dtype=wp.vec3), recon: wp.array(dtype=wp.mat33),
              polar: wp.array(dtype=wp.mat33), qr: wp.array(dtype=wp.mat33), evals: wp.array(dtype=wp.vec3),
              det_r: wp.array(dtype=float)):
    i = wp.tid()
    m = a[i]
    U, s, V = wp.svd3(m)
    sig[i] = s
    recon[i] = U @ wp.diag(s) @ wp.transpose(V)
    U2 = wp.mat33()
    s2 = wp.vec3()
    V2 = wp.mat33()
    wp.svd3(m, U2, s2, V2)
    polar[i] = U2 @ wp.transpose(V2)
    Q, R = wp.qr3(m)
    qr[i] = Q @ R
    det_r[i] = wp.abs(wp.determinant(Q)) + wp.abs(R[0, 0] * R[1, 1] * R[2, 2])
    sym = m + wp.transpose(m)
    E, lam = wp.eig3(sym)
    evals[i] = lam
    det_r[i] += wp.length(sym @ E[:, 0] - lam[0] * E[:, 0])


@wp.kernel
def small(a: wp.array(dtype=wp.mat22), sig: wp.array(dtype=wp.vec2), recon: wp.array(dtype=wp.mat22),
          inv: wp.array(dtype=wp.mat33), rot: wp.array(dtype=wp.mat33), sl: wp.array(dtype=wp.quat)):
    i = wp.tid()
    m = a[i]
    U, s, V = wp.svd2(m)
    sig[i] = s
    recon[i] = U @ wp.diag(s) @ wp.transpose(V)
    b = wp.mat33(m[0, 0] + 3.0, m[0, 1], 0.5, m[1, 0], m[1, 1] + 3.0, 0.0, 0.25, 0.0, 2.0)
    inv[i] = wp.inverse_approx(b) @ b
    q = wp.quat_from_axis_angle(wp.normalize(wp.vec3(1.0, float(i), 0.5)), 0.3 + float(i))
    rot[i] = wp.quat_to_matrix(wp.quat_from_matrix(wp.quat_to_matrix(q)))
    sl[i] = wp.quat_slerp(q, wp.quat_identity(), 0.25)


@wp.kernel
def loss_fn(a: wp.array(dtype=wp.mat33), loss: wp.array(dtype=float)):
    i = wp.tid()
    m = a[i]
    U, s, V = wp.svd3(m)
    sym = m + wp.transpose(m)
    E, lam = wp.eig3(sym)
    r = U @ wp.transpose(V)
    spectrum = wp.dot(lam, lam) + lam[0] + lam[1] + lam[2]
    wp.atomic_add(loss, 0, s[0] + 2.0 * s[1] + 3.0 * s[2] + wp.ddot(r, m) + 0.1 * spectrum)


def run():
    n = 8
    rng = np.random.default_rng(31)
    # well separated singular values and eigenvalues keep the derivatives stable
    base = np.diag([3.0, 2.0, 1.0])
    mats = []
    for _ in range(n):
        q, _r = np.linalg.qr(rng.standard_normal((3, 3)))
        p, _r = np.linalg.qr(rng.standard_normal((3, 3)))
        mats.append(q @ base @ p + 0.05 * rng.standard_normal((3, 3)))
    a = wp.array(np.array(mats, dtype=np.float32), dtype=wp.mat33, requires_grad=True)
    outs = [wp.zeros(n, dtype=t) for t in (wp.vec3, wp.mat33, wp.mat33, wp.mat33, wp.vec3, float)]
    wp.launch(decompose, dim=n, inputs=[a], outputs=outs)
    a2 = wp.array(rng.uniform(-1.0, 1.0, (n, 2, 2)).astype(np.float32), dtype=wp.mat22)
    small_outs = [wp.zeros(n, dtype=t) for t in (wp.vec2, wp.mat22, wp.mat33, wp.mat33, wp.quat)]
    wp.launch(small, dim=n, inputs=[a2], outputs=small_outs)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(loss_fn, dim=n, inputs=[a], outputs=[loss])
    tape.backward(loss)
    res = {name: arr.numpy() for name, arr in zip(("sigma", "recon", "polar", "qr", "evals", "checks"), outs)}
    res["evals"] = np.sort(res["evals"], axis=1)  # (eig3 promises no order)
    # |determinants| and the eigenvector residual: values independent of sign conventions
    res.update({name: arr.numpy() for name, arr in zip(("sigma2", "recon2", "inv_approx", "rot", "slerp"), small_outs)})
    res["loss"] = loss.numpy()
    res["grad"] = a.grad.numpy()
    return res


TOLERANCE = {"sigma": (1e-4, 1e-5), "recon": (1e-4, 1e-5), "polar": (1e-4, 1e-5), "qr": (1e-4, 1e-5),
             "evals": (1e-4, 1e-5), "checks": (1e-4, 1e-4), "sigma2": (1e-4, 1e-5), "recon2": (1e-4, 1e-5),
             "inv_approx": (1e-5, 1e-5), "rot": (1e-5, 1e-5), "slerp": (1e-5, 1e-5), "loss": (1e-5, 1e-5),
             "grad": (1e-3, 1e-4)}
