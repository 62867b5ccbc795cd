"""Quaternions and transforms: quat constructors (components, from axis-angle, rpy, matrix,
identity, ijk+real), quat_rotate/quat_rotate_inv, products, inverse, slerp, to_matrix,
to_axis_angle; transforms built with wp.transformation/wp.transform, their p/q accessors,
transform_point/vector, multiply, inverse, get/set translation and rotation; float64
variants; and gradients of a chain of rigid transforms."""

import numpy as np
import warp as wp


@wp.kernel
def quats(axis: wp.array(dtype=wp.vec3), angle: wp.array(dtype=float), qs: wp.array(dtype=wp.quat, ndim=2),
          vs: wp.array(dtype=wp.vec3, ndim=2), s: wp.array(dtype=float, ndim=2), ms: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    ax = wp.normalize(axis[i])
    q = wp.quat_from_axis_angle(ax, angle[i])
    r = wp.quat_rpy(0.1 * float(i), 0.2, -0.3)
    qs[i, 0] = q
    qs[i, 1] = r
    qs[i, 2] = q * r
    qs[i, 3] = wp.quat_inverse(q)
    qs[i, 4] = wp.quat_slerp(q, r, 0.3)
    qs[i, 5] = wp.quat_from_matrix(wp.quat_to_matrix(r))
    qs[i, 6] = wp.quat(ax * wp.sin(0.25), wp.cos(0.25))
    qs[i, 7] = wp.quat_identity() + wp.quat(1.0, 2.0, 3.0, 4.0) * 0.5
    qs[i, 8] = wp.normalize(wp.quat(0.1, -0.2, 0.3, float(i)))
    p = wp.vec3(1.0, -2.0, 0.5)
    vs[i, 0] = wp.quat_rotate(q, p)
    vs[i, 1] = wp.quat_rotate_inv(q, p)
    vs[i, 2] = wp.quat_to_matrix(q) @ p
    a = wp.vec3()
    t = float(0.0)
    wp.quat_to_axis_angle(q, a, t)
    vs[i, 3] = a * t
    s[i, 0] = q.x + 2.0 * q.y + 3.0 * q.z + 4.0 * q.w
    s[i, 1] = q[3] - r[0]
    s[i, 2] = wp.length(q * r)
    s[i, 3] = wp.dot(q, r)
    ms[i] = wp.quat_to_matrix(q * r)


@wp.kernel
def transforms(pos: wp.array(dtype=wp.vec3), rot: wp.array(dtype=wp.quat), ts: wp.array(dtype=wp.transform, ndim=2),
               pts: wp.array(dtype=wp.vec3, ndim=2)):
    i = wp.tid()
    a = wp.transformation(pos[i], rot[i])
    b = wp.transform(wp.vec3(0.0, 1.0, 0.0), wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), 0.5))
    c = wp.transformation(pos[i])
    ts[i, 0] = a
    ts[i, 1] = wp.transform_multiply(a, b)
    ts[i, 2] = wp.transform_inverse(a)
    ts[i, 3] = a * b
    ts[i, 4] = c
    d = wp.transform_identity()
    wp.transform_set_translation(d, wp.vec3(3.0, 2.0, 1.0))
    wp.transform_set_rotation(d, wp.transform_get_rotation(a))
    ts[i, 5] = d
    e = a
    e.p = wp.vec3(0.0, 0.0, float(i))
    ts[i, 6] = e
    x = wp.vec3(0.5, -1.0, 2.0)
    pts[i, 0] = wp.transform_point(a, x)
    pts[i, 1] = wp.transform_vector(a, x)
    pts[i, 2] = wp.transform_point(wp.transform_inverse(a), wp.transform_point(a, x))
    pts[i, 3] = wp.transform_get_translation(a * b) + a.p
    pts[i, 4] = wp.quat_rotate(a.q, x) + wp.transform_get_translation(a)
    pts[i, 5] = wp.transform_point(wp.transform_to_matrix(a), x)


@wp.kernel
def doubles(pos: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec3d), outq: wp.array(dtype=wp.quatd)):
    i = wp.tid()
    q = wp.quat_from_axis_angle(wp.vec3d(0.0, 0.0, 1.0), wp.float64(0.7))
    t = wp.transformation(pos[i], q, dtype=wp.float64)
    out[i] = wp.transform_point(t, wp.vec3d(1.0, 0.0, 0.0))
    outq[i] = q * wp.quat_identity(dtype=wp.float64)


@wp.kernel
def chain(angles: wp.array(dtype=float), lengths: wp.array(dtype=float), tip: wp.array(dtype=wp.vec3)):
    # forward kinematics of a planar 4-link arm: the tip's position
    x = wp.transform_identity()
    for j in range(4):
        q = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), angles[j])
        x = x * wp.transform(wp.vec3(0.0), q)
        x = x * wp.transform(wp.vec3(lengths[j], 0.0, 0.0), wp.quat_identity())
    tip[0] = wp.transform_point(x, wp.vec3(0.0))


@wp.kernel
def tip_loss(tip: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    d = tip[0] - wp.vec3(1.0, 2.0, 0.0)
    loss[0] = wp.dot(d, d)


def run():
    n = 6
    rng = np.random.default_rng(21)
    axis = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3)
    angle = wp.array(rng.uniform(-3.0, 3.0, n).astype(np.float32), dtype=float)
    qs = wp.zeros((n, 9), dtype=wp.quat)
    vs = wp.zeros((n, 4), dtype=wp.vec3)
    s = wp.zeros((n, 4), dtype=float)
    ms = wp.zeros(n, dtype=wp.mat33)
    wp.launch(quats, dim=n, inputs=[axis, angle], outputs=[qs, vs, s, ms])

    pos = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3)
    rot = wp.array(qs.numpy()[:, 0], dtype=wp.quat)
    ts = wp.zeros((n, 7), dtype=wp.transform)
    pts = wp.zeros((n, 6), dtype=wp.vec3)
    wp.launch(transforms, dim=n, inputs=[pos, rot], outputs=[ts, pts])

    posd = wp.array(pos.numpy().astype(np.float64), dtype=wp.vec3d)
    outd = wp.zeros(n, dtype=wp.vec3d)
    outq = wp.zeros(n, dtype=wp.quatd)
    wp.launch(doubles, dim=n, inputs=[posd], outputs=[outd, outq])

    angles = wp.array([0.3, -0.5, 0.8, 0.1], dtype=float, requires_grad=True)
    lengths = wp.array([1.0, 0.8, 0.6, 0.4], dtype=float, requires_grad=True)
    tip = wp.zeros(1, dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(chain, dim=1, inputs=[angles, lengths], outputs=[tip])
        wp.launch(tip_loss, dim=1, inputs=[tip], outputs=[loss])
    tape.backward(loss)
    return {"quats": qs.numpy(), "qvecs": vs.numpy(), "qscalars": s.numpy(), "qmats": ms.numpy(),
            "xforms": ts.numpy(), "points": pts.numpy(), "f64": outd.numpy(), "quatd": outq.numpy(),
            "tip": tip.numpy(), "loss": loss.numpy(), "grad_angles": angles.grad.numpy(),
            "grad_lengths": lengths.grad.numpy()}


TOLERANCE = {"quats": (1e-5, 1e-5), "qvecs": (1e-5, 1e-5), "qscalars": (1e-5, 1e-5), "qmats": (1e-5, 1e-5),
             "xforms": (1e-5, 1e-5), "points": (1e-5, 1e-5), "tip": (1e-5, 1e-5), "loss": (1e-5, 1e-5),
             "grad_angles": (1e-4, 1e-5), "grad_lengths": (1e-4, 1e-5)}
