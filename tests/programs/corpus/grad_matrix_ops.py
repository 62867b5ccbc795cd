"""Matrix and rotation gradients: inverse, outer, skew, diag, ddot, transpose, mat-mat
products, cw_mul/cw_div, quat_from_matrix/quat_to_matrix, quat_slerp, quat_from_axis_angle,
transform_multiply/transform_inverse, and svd3 of a well-conditioned matrix."""

import numpy as np
import warp as wp


@wp.kernel
def mats(a: wp.array(dtype=wp.mat33), u: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    m = a[i]
    inv = wp.inverse(m)
    o = wp.outer(u[i], wp.vec3(1.0, 2.0, 3.0))
    s = wp.skew(u[i])
    d = wp.diag(u[i])
    r = wp.ddot(inv, o) + wp.ddot(m * s, wp.transpose(m)) + wp.trace(d * m)
    r += wp.dot(wp.cw_mul(u[i], wp.vec3(2.0, 3.0, 4.0)), wp.cw_div(u[i], wp.vec3(1.5, 2.5, 3.5)))
    U = wp.mat33()
    sigma = wp.vec3()
    V = wp.mat33()
    wp.svd3(m, U, sigma, V)
    r += sigma[0] * 1.0 + sigma[1] * 2.0 + sigma[2] * 3.0
    out[i] = r


@wp.kernel
def rotations(q0: wp.array(dtype=wp.quat), axis: wp.array(dtype=wp.vec3), angle: wp.array(dtype=float),
              xf: wp.array(dtype=wp.transform), out: wp.array(dtype=float)):
    i = wp.tid()
    qa = wp.quat_from_axis_angle(wp.normalize(axis[i]), angle[i])
    qb = wp.normalize(q0[i])
    qs = wp.quat_slerp(qa, qb, 0.3)
    R = wp.quat_to_matrix(qs)
    qm = wp.quat_from_matrix(R)
    t2 = wp.transform_multiply(xf[i], wp.transform(wp.vec3(1.0, 0.0, 0.5), qs))
    ti = wp.transform_inverse(t2)
    p = wp.transform_point(ti, wp.vec3(0.3, -0.2, 1.0))
    out[i] = wp.dot(p, wp.vec3(1.0, 2.0, -1.0)) + R[0, 1] + wp.abs(qm[3]) * 0.5


def run():
    rng = np.random.default_rng(47)
    n = 5
    a = wp.array((np.eye(3) * 2.0 + 0.3 * rng.normal(size=(n, 3, 3))).astype(np.float32), dtype=wp.mat33,
                 requires_grad=True)
    u = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    o1 = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(mats, dim=n, inputs=[a, u], outputs=[o1])
    tape.backward(grads={o1: wp.ones(n, dtype=float)})
    out = {"o1": o1.numpy().copy(), "a_grad": a.grad.numpy().copy(), "u_grad": u.grad.numpy().copy()}

    q0 = wp.array(rng.normal(size=(n, 4)).astype(np.float32), dtype=wp.quat, requires_grad=True)
    axis = wp.array(rng.normal(size=(n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    angle = wp.array(rng.uniform(0.2, 1.2, n).astype(np.float32), requires_grad=True)
    rq = rng.normal(size=(n, 4))
    rq /= np.linalg.norm(rq, axis=1, keepdims=True)
    xf = wp.array(np.concatenate([rng.normal(size=(n, 3)), rq], axis=1).astype(np.float32), dtype=wp.transform,
                  requires_grad=True)
    o2 = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(rotations, dim=n, inputs=[q0, axis, angle, xf], outputs=[o2])
    tape.backward(grads={o2: wp.ones(n, dtype=float)})
    out.update({"o2": o2.numpy().copy(), "q0_grad": q0.grad.numpy().copy(), "axis_grad": axis.grad.numpy().copy(),
                "angle_grad": angle.grad.numpy().copy(), "xf_grad": xf.grad.numpy().copy()})
    return out


TOLERANCE = {"o1": (1e-5, 1e-5), "a_grad": (1e-4, 1e-4), "u_grad": (1e-4, 1e-4), "o2": (1e-5, 1e-5),
             "q0_grad": (1e-4, 1e-4), "axis_grad": (1e-4, 1e-4), "angle_grad": (1e-4, 1e-4), "xf_grad": (1e-4, 1e-4)}
