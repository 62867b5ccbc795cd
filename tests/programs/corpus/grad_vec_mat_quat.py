"""Gradients of vec3, mat33, quat and transform arrays: a rigid transform applied to points,
a matrix-vector product, quaternion rotation and normalisation, summed into a loss."""

import numpy as np
import warp as wp


@wp.kernel
def pose_points(
    xforms: wp.array(dtype=wp.transform),
    mats: wp.array(dtype=wp.mat33),
    quats: wp.array(dtype=wp.quat),
    points: wp.array(dtype=wp.vec3),
    loss: wp.array(dtype=float),
):
    i = wp.tid()
    p = points[i]
    x = wp.transform_point(xforms[i], p)
    v = wp.transform_vector(xforms[i], wp.vec3(0.0, 1.0, 0.0))
    q = wp.normalize(quats[i])
    r = wp.quat_rotate(q, mats[i] * p)
    m = mats[i]
    e = wp.length(x - r) + wp.dot(v, r) + wp.trace(m * wp.transpose(m)) * 0.1 + wp.determinant(m) * 0.05
    wp.atomic_add(loss, 0, e)


def run():
    n = 12
    rng = np.random.default_rng(21)
    pos = rng.uniform(-1.0, 1.0, (n, 3))
    rot = rng.normal(size=(n, 4))
    rot /= np.linalg.norm(rot, axis=1, keepdims=True)
    xforms = wp.array(np.concatenate([pos, rot], axis=1).astype(np.float32), dtype=wp.transform, requires_grad=True)
    m = (np.eye(3) + 0.3 * rng.normal(size=(n, 3, 3))).astype(np.float32)
    mats = wp.array(m, dtype=wp.mat33, requires_grad=True)
    quats = wp.array(rng.normal(size=(n, 4)).astype(np.float32), dtype=wp.quat, requires_grad=True)
    points = wp.array(rng.uniform(-2.0, 2.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(pose_points, dim=n, inputs=[xforms, mats, quats, points], outputs=[loss])
    tape.backward(loss=loss)
    return {
        "loss": loss.numpy().copy(),
        "xform_grad": xforms.grad.numpy().copy(),
        "mat_grad": mats.grad.numpy().copy(),
        "quat_grad": quats.grad.numpy().copy(),
        "point_grad": points.grad.numpy().copy(),
        "grad_dtype": str(mats.grad.dtype.__name__),
    }


TOLERANCE = {"loss": (1e-5, 1e-5), "xform_grad": (1e-4, 1e-5), "mat_grad": (1e-4, 1e-5),
             "quat_grad": (1e-4, 1e-5), "point_grad": (1e-4, 1e-5)}
