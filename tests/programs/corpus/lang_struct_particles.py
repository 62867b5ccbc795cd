"""Particles in an array of structs, a struct of parameters, a @wp.func with two results."""

import numpy as np
import warp as wp


@wp.struct
class Particle:
    pos: wp.vec3
    vel: wp.vec3
    mass: float
    alive: int


@wp.struct
class Params:
    gravity: wp.vec3
    dt: float
    floor: float


@wp.func
def bounce(p: wp.vec3, v: wp.vec3, floor: float):
    if p[1] < floor:
        return wp.vec3(p[0], floor, p[2]), wp.vec3(v[0], -0.5 * v[1], v[2])
    return p, v


@wp.kernel
def integrate(particles: wp.array(dtype=Particle), params: Params):
    i = wp.tid()
    p = particles[i]
    if p.alive == 0:
        return
    v = p.vel + params.gravity * params.dt
    x = p.pos + v * params.dt
    x, v = bounce(x, v, params.floor)
    particles[i].pos = x
    particles[i].vel = v


@wp.kernel
def kinetic_energy(particles: wp.array(dtype=Particle), total: wp.array(dtype=float)):
    i = wp.tid()
    p = particles[i]
    wp.atomic_add(total, 0, 0.5 * p.mass * wp.dot(p.vel, p.vel))


def run():
    n = 64
    rng = np.random.default_rng(3)
    host = []
    for i in range(n):
        p = Particle()
        p.pos = wp.vec3(*rng.uniform(0.0, 2.0, 3))
        p.vel = wp.vec3(*rng.uniform(-1.0, 1.0, 3))
        p.mass = float(1.0 + i % 3)
        p.alive = int(i % 7 != 0)
        host.append(p)
    particles = wp.array(host, dtype=Particle)
    params = Params()
    params.gravity = wp.vec3(0.0, -9.8, 0.0)
    params.dt = 0.01
    params.floor = 0.0
    for _ in range(100):
        wp.launch(integrate, dim=n, inputs=[particles, params])
    total = wp.zeros(1, dtype=float)
    wp.launch(kinetic_energy, dim=n, inputs=[particles], outputs=[total])
    data = particles.numpy()
    return {"pos": data["pos"], "vel": data["vel"], "energy": total.numpy()}


TOLERANCE = {"energy": (1e-5, 1e-5)}
