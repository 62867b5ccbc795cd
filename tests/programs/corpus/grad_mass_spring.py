"""A differentiable mass-spring simulation as in Warp's examples: semi-implicit Euler steps of
a small chain recorded on one tape, a loss on the final position of the last particle, and
gradients with respect to the initial velocities and the spring stiffnesses; then a few
manual gradient-descent steps on the initial velocity."""

import numpy as np
import warp as wp


@wp.kernel
def spring_forces(x: wp.array(dtype=wp.vec3), springs: wp.array(dtype=int), rest: wp.array(dtype=float),
                  ke: wp.array(dtype=float), f: wp.array(dtype=wp.vec3)):
    s = wp.tid()
    i = springs[2 * s]
    j = springs[2 * s + 1]
    d = x[j] - x[i]
    L = wp.length(d)
    fs = ke[s] * (L - rest[s]) * d / L
    wp.atomic_add(f, i, fs)
    wp.atomic_sub(f, j, fs)


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3),
              inv_mass: wp.array(dtype=float), dt: float,
              x_new: wp.array(dtype=wp.vec3), v_new: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    g = wp.vec3(0.0, -9.8, 0.0) * wp.step(-inv_mass[i])
    vn = v[i] + (f[i] * inv_mass[i] + g) * dt
    v_new[i] = vn
    x_new[i] = x[i] + vn * dt


@wp.kernel
def target_loss(x: wp.array(dtype=wp.vec3), target: wp.vec3, loss: wp.array(dtype=float)):
    d = x[x.shape[0] - 1] - target
    loss[0] = wp.dot(d, d)


@wp.kernel
def descend(v: wp.array(dtype=wp.vec3), g: wp.array(dtype=wp.vec3), lr: float):
    i = wp.tid()
    v[i] = v[i] - lr * g[i]


N, STEPS, DT = 5, 20, 0.01


def simulate(x0, v0, springs, rest, ke, inv_mass, loss, target):
    xs, vs = [x0], [v0]
    for _ in range(STEPS):
        f = wp.zeros(N, dtype=wp.vec3, requires_grad=True)
        wp.launch(spring_forces, dim=len(rest), inputs=[xs[-1], springs, rest, ke], outputs=[f])
        xn = wp.zeros(N, dtype=wp.vec3, requires_grad=True)
        vn = wp.zeros(N, dtype=wp.vec3, requires_grad=True)
        wp.launch(integrate, dim=N, inputs=[xs[-1], vs[-1], f, inv_mass, DT], outputs=[xn, vn])
        xs.append(xn)
        vs.append(vn)
    wp.launch(target_loss, dim=1, inputs=[xs[-1], target], outputs=[loss])
    return xs[-1]


def run():
    x0 = wp.array(np.array([[i * 0.5, 1.0, 0.0] for i in range(N)], np.float32), dtype=wp.vec3, requires_grad=True)
    v0 = wp.zeros(N, dtype=wp.vec3, requires_grad=True)
    springs = wp.array(np.array([[i, i + 1] for i in range(N - 1)], np.int32).ravel(), dtype=int)
    rest = wp.full(N - 1, 0.45, dtype=float, requires_grad=True)
    ke = wp.array(np.linspace(50.0, 80.0, N - 1).astype(np.float32), requires_grad=True)
    inv_mass = wp.array(np.array([0.0] + [1.0] * (N - 1), np.float32))
    target = wp.vec3(2.0, 0.8, 0.3)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        xf = simulate(x0, v0, springs, rest, ke, inv_mass, loss, target)
    tape.backward(loss)
    out = {"final": xf.numpy().copy(), "loss": loss.numpy().copy(), "v0_grad": v0.grad.numpy().copy(),
           "ke_grad": ke.grad.numpy().copy(), "rest_grad": rest.grad.numpy().copy(),
           "x0_grad": x0.grad.numpy().copy()}
    losses = []
    for _ in range(4):
        tape.zero()
        tape.reset()
        loss.zero_()
        with tape:
            simulate(x0, v0, springs, rest, ke, inv_mass, loss, target)
        tape.backward(loss)
        losses.append(loss.numpy()[0])
        wp.launch(descend, dim=N, inputs=[v0, v0.grad, 0.5])
    out["losses"] = np.array(losses, np.float32)
    out["v0_after"] = v0.numpy().copy()
    return out


TOLERANCE = {"final": (1e-4, 1e-5), "loss": (1e-4, 1e-5), "v0_grad": (1e-3, 1e-4), "ke_grad": (1e-3, 1e-5),
             "rest_grad": (1e-3, 1e-4), "x0_grad": (1e-3, 1e-4), "losses": (1e-3, 1e-5), "v0_after": (1e-3, 1e-4)}
