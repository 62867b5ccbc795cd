"""Arrays of structs with requires_grad: the gradient is an array of the same struct whose
float/vector fields hold the adjoints; a struct of parameters with an array member that
receives gradients too."""

import numpy as np
import warp as wp


@wp.struct
class Body:
    pos: wp.vec3
    vel: wp.vec3
    mass: float


@wp.struct
class Field:
    weights: wp.array(dtype=float)
    scale: float


@wp.kernel
def energy(bodies: wp.array(dtype=Body), field: Field, out: wp.array(dtype=float)):
    i = wp.tid()
    b = bodies[i]
    ke = 0.5 * b.mass * wp.dot(b.vel, b.vel)
    pe = b.mass * field.scale * b.pos[1] * field.weights[i]
    wp.atomic_add(out, 0, ke + pe + wp.length_sq(b.pos) * field.weights[i])


def run():
    n = 10
    rng = np.random.default_rng(8)
    host = []
    for i in range(n):
        b = Body()
        b.pos = wp.vec3(*rng.uniform(-1.0, 1.0, 3))
        b.vel = wp.vec3(*rng.uniform(-1.0, 1.0, 3))
        b.mass = float(1.0 + 0.25 * i)
        host.append(b)
    bodies = wp.array(host, dtype=Body, requires_grad=True)
    field = Field()
    field.weights = wp.array(rng.uniform(0.5, 1.5, n).astype(np.float32), requires_grad=True)
    field.scale = 9.8
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(energy, dim=n, inputs=[bodies, field], outputs=[out])
    tape.backward(out)
    g = bodies.grad.numpy().copy()
    return {
        "energy": out.numpy().copy(),
        "pos_grad": g["pos"],
        "vel_grad": g["vel"],
        "mass_grad": g["mass"],
        "weights_grad": field.weights.grad.numpy().copy(),
    }


TOLERANCE = {"energy": (1e-5, 1e-5), "weights_grad": (1e-5, 1e-5)}
