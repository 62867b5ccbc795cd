"""Spatial (6D) algebra: spatial_vector constructors, spatial_top/bottom, spatial_cross and
its dual, spatial_dot, spatial_adjoint from R and S, spatial matrices (mat66) products and
transpose, plus a rigid-body style velocity propagation with gradients."""

import numpy as np
import warp as wp


@wp.kernel
def spatial(w: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.spatial_vector, ndim=2),
            parts: wp.array(dtype=wp.vec3, ndim=2), s: wp.array(dtype=float), mats: wp.array(dtype=wp.spatial_matrix)):
    i = wp.tid()
    a = wp.spatial_vector(w[i], v[i])
    b = wp.spatial_vector(1.0, 2.0, 3.0, float(i), -1.0, 0.5)
    c = wp.spatial_vector()
    out[i, 0] = a
    out[i, 1] = wp.spatial_cross(a, b)
    out[i, 2] = wp.spatial_cross_dual(a, b)
    out[i, 3] = a * 2.0 + b - c
    r = wp.quat_to_matrix(wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), 0.4 * float(i)))
    m = wp.spatial_adjoint(r, wp.skew(v[i]))
    mats[i] = m
    out[i, 4] = m @ b
    out[i, 5] = wp.transpose(m) @ a
    parts[i, 0] = wp.spatial_top(a)
    parts[i, 1] = wp.spatial_bottom(b)
    s[i] = wp.spatial_dot(a, b) + a[4] * b[5]


@wp.kernel
def propagate(qd: wp.array(dtype=float), axes: wp.array(dtype=wp.spatial_vector),
              out: wp.array(dtype=wp.spatial_vector)):
    # joint velocities accumulate along a chain; each body adds a bias term from the cross product
    # (a constant trip count, so Warp unrolls the loop: its gradient through a dynamic loop
    # with a carried value is wrong)
    vel = wp.spatial_vector()
    for j in range(5):
        s = axes[j] * qd[j]
        vel = vel + s + wp.spatial_cross(vel, s) * 0.5
        out[j] = vel


@wp.kernel
def energy(vel: wp.array(dtype=wp.spatial_vector), loss: wp.array(dtype=float)):
    j = wp.tid()
    v = vel[j]
    wp.atomic_add(loss, 0, 0.5 * wp.spatial_dot(v, v) + wp.length_sq(wp.spatial_top(v)))


def run():
    n = 5
    rng = np.random.default_rng(8)
    w = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3)
    v = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3)
    out = wp.zeros((n, 6), dtype=wp.spatial_vector)
    parts = wp.zeros((n, 2), dtype=wp.vec3)
    s = wp.zeros(n, dtype=float)
    mats = wp.zeros(n, dtype=wp.spatial_matrix)
    wp.launch(spatial, dim=n, inputs=[w, v], outputs=[out, parts, s, mats])

    qd = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), dtype=float, requires_grad=True)
    axes = wp.array(rng.uniform(-1.0, 1.0, (n, 6)).astype(np.float32), dtype=wp.spatial_vector, requires_grad=True)
    vel = wp.zeros(n, dtype=wp.spatial_vector, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(propagate, dim=1, inputs=[qd, axes], outputs=[vel])
        wp.launch(energy, dim=n, inputs=[vel], outputs=[loss])
    tape.backward(loss)
    return {"spatial": out.numpy(), "parts": parts.numpy(), "dots": s.numpy(), "adjoint": mats.numpy(),
            "vel": vel.numpy(), "loss": loss.numpy(), "grad_qd": qd.grad.numpy(), "grad_axes": axes.grad.numpy()}


TOLERANCE = {"loss": (1e-5, 1e-5), "grad_qd": (1e-4, 1e-5), "grad_axes": (1e-4, 1e-5)}
