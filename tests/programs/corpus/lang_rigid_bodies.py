"""A small rigid-body integrator in the style of Warp's examples: body state in arrays of
transforms and spatial vectors, a struct of model parameters, inertia matrices, quaternion
integration of the angular velocity, a ground contact as a penalty force with wp.where, a
helper @wp.func with defaults, several steps recorded on a Tape, and the gradient of the
final height with respect to the initial velocities."""

import numpy as np
import warp as wp


@wp.struct
class Model:
    gravity: wp.vec3
    ke: float
    kd: float
    dt: float


@wp.func
def integrate_quat(q: wp.quat, w: wp.vec3, dt: float):
    dq = wp.quat(w[0], w[1], w[2], 0.0) * q * 0.5
    return wp.normalize(q + dq * dt)


@wp.func
def contact_force(p: wp.vec3, v: wp.vec3, ke: float, kd: float = 10.0, radius: float = 0.25):
    depth = p[1] - radius
    fn = wp.where(depth < 0.0, -depth * ke - v[1] * kd, 0.0)
    return wp.vec3(0.0, fn, 0.0)


@wp.kernel
def step(model: Model, body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
         inv_mass: wp.array(dtype=float), inertia: wp.array(dtype=wp.mat33),
         out_q: wp.array(dtype=wp.transform), out_qd: wp.array(dtype=wp.spatial_vector)):
    i = wp.tid()
    tf = body_q[i]
    qd = body_qd[i]
    w = wp.spatial_top(qd)
    v = wp.spatial_bottom(qd)
    p = wp.transform_get_translation(tf)
    q = wp.transform_get_rotation(tf)
    f = model.gravity / inv_mass[i] + contact_force(p, v, model.ke, kd=model.kd)
    v_new = v + f * inv_mass[i] * model.dt
    # gyroscopic torque in the body frame: -w x (I w)
    wb = wp.quat_rotate_inv(q, w)
    I = inertia[i]
    tb = -wp.cross(wb, I @ wb)
    wb_new = wb + wp.inverse(I) @ tb * model.dt
    w_new = wp.quat_rotate(q, wb_new)
    out_q[i] = wp.transformation(p + v_new * model.dt, integrate_quat(q, w_new, model.dt))
    out_qd[i] = wp.spatial_vector(w_new, v_new)


@wp.kernel
def height(body_q: wp.array(dtype=wp.transform), loss: wp.array(dtype=float)):
    i = wp.tid()
    p = wp.transform_point(body_q[i], wp.vec3(0.1, 0.2, 0.3))
    wp.atomic_add(loss, 0, p[1] + 0.1 * p[0])


def run():
    n = 4
    steps = 12
    rng = np.random.default_rng(5)
    model = Model()
    model.gravity = wp.vec3(0.0, -9.81, 0.0)
    model.ke = 2000.0
    model.kd = 20.0
    model.dt = 0.01
    q0 = [wp.transform(wp.vec3(float(i), 0.3 + 0.1 * i, 0.0), wp.quat_rpy(0.1 * i, 0.2, 0.0)) for i in range(n)]
    states_q = [wp.array(q0, dtype=wp.transform, requires_grad=True)]
    qd0 = rng.uniform(-1.0, 1.0, (n, 6)).astype(np.float32)
    states_qd = [wp.array(qd0, dtype=wp.spatial_vector, requires_grad=True)]
    for _ in range(steps):
        states_q.append(wp.zeros(n, dtype=wp.transform, requires_grad=True))
        states_qd.append(wp.zeros(n, dtype=wp.spatial_vector, requires_grad=True))
    inv_mass = wp.array(np.array([1.0, 0.5, 2.0, 1.0], dtype=np.float32), dtype=float)
    inertia = wp.array(np.array([np.diag([1.0, 2.0, 3.0]) * (k + 1) for k in range(n)], dtype=np.float32),
                       dtype=wp.mat33)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        for s in range(steps):
            wp.launch(step, dim=n, inputs=[model, states_q[s], states_qd[s], inv_mass, inertia],
                      outputs=[states_q[s + 1], states_qd[s + 1]])
        wp.launch(height, dim=n, inputs=[states_q[-1]], outputs=[loss])
    tape.backward(loss)
    return {"final_q": states_q[-1].numpy(), "final_qd": states_qd[-1].numpy(), "loss": loss.numpy(),
            "grad_qd0": states_qd[0].grad.numpy(), "grad_q0": states_q[0].grad.numpy()}


TOLERANCE = {"final_q": (1e-4, 1e-5), "final_qd": (1e-4, 1e-4), "loss": (1e-5, 1e-5), "grad_qd0": (1e-3, 1e-4),
             "grad_q0": (1e-3, 1e-4)}
