"""Structs: nested structs, array fields, arrays of structs with nested fields, structs built
in kernels (default and positional constructors), returned from and passed to @wp.func,
field and nested-field assignment, Python-side construction, and gradients through arrays
held in a struct."""

import numpy as np
import warp as wp


@wp.struct
class Material:
    color: wp.vec3
    roughness: float
    layers: int


@wp.struct
class Body:
    com: wp.vec3
    mass: float
    mat: Material
    inertia: wp.mat33


@wp.struct
class Scene:
    bodies: wp.array(dtype=Body)
    offsets: wp.array(dtype=wp.vec3)
    scale: float
    ground: Material


@wp.struct
class State:
    x: wp.array(dtype=wp.vec3)
    v: wp.array(dtype=wp.vec3)


@wp.func
def make_material(k: int) -> Material:
    m = Material()
    m.color = wp.vec3(float(k) * 0.1, 0.5, 1.0 - float(k) * 0.1)
    m.roughness = 0.25 * float(k % 4)
    m.layers = k // 2
    return m


@wp.func
def blend(a: Material, b: Material, t: float):
    return Material(wp.lerp(a.color, b.color, t), wp.lerp(a.roughness, b.roughness, t), wp.max(a.layers, b.layers))


@wp.kernel
def fill(scene: Scene):
    i = wp.tid()
    b = Body()
    b.com = scene.offsets[i] * scene.scale
    b.mass = 1.0 + float(i)
    b.mat = blend(make_material(i), scene.ground, 0.5)
    b.inertia = wp.identity(n=3, dtype=float) * b.mass
    b.inertia[0, 1] = 0.1 * float(i)
    b.mat.color.y = -b.mat.color.y
    scene.bodies[i] = b


@wp.kernel
def summarize(scene: Scene, out: wp.array(dtype=float, ndim=2), colors: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    b = scene.bodies[i]
    out[i, 0] = b.mass * wp.length(b.com)
    out[i, 1] = b.mat.roughness + float(b.mat.layers)
    out[i, 2] = wp.determinant(b.inertia)
    out[i, 3] = scene.bodies[i].mat.color[2]
    empty = Material()
    out[i, 4] = empty.roughness + float(empty.layers) + wp.length(empty.color)
    colors[i] = scene.bodies[i].mat.color + scene.ground.color


@wp.kernel
def step(state: State, dt: float, out: State):
    i = wp.tid()
    v = state.v[i] + wp.vec3(0.0, -9.8, 0.0) * dt
    out.v[i] = v
    out.x[i] = state.x[i] + v * dt


@wp.kernel
def height_loss(state: State, loss: wp.array(dtype=float)):
    i = wp.tid()
    p = state.x[i]
    wp.atomic_add(loss, 0, p[1] * p[1] + 0.1 * wp.dot(p, p))


def run():
    n = 6
    rng = np.random.default_rng(2)
    scene = Scene()
    scene.bodies = wp.zeros(n, dtype=Body)
    scene.offsets = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3)
    scene.scale = 2.0
    scene.ground = Material()
    scene.ground.color = wp.vec3(0.2, 0.3, 0.4)
    scene.ground.roughness = 0.9
    scene.ground.layers = 3
    wp.launch(fill, dim=n, inputs=[scene])
    out = wp.zeros((n, 5), dtype=float)
    colors = wp.zeros(n, dtype=wp.vec3)
    wp.launch(summarize, dim=n, inputs=[scene], outputs=[out, colors])
    data = scene.bodies.numpy()

    states = []
    for _ in range(4):
        s = State()
        s.x = wp.zeros(n, dtype=wp.vec3, requires_grad=True)
        s.v = wp.zeros(n, dtype=wp.vec3, requires_grad=True)
        states.append(s)
    states[0].x.assign(rng.uniform(0.0, 2.0, (n, 3)).astype(np.float32))
    states[0].v.assign(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32))
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        for k in range(3):
            wp.launch(step, dim=n, inputs=[states[k], 0.05], outputs=[states[k + 1]])
        wp.launch(height_loss, dim=n, inputs=[states[3]], outputs=[loss])
    tape.backward(loss)
    return {"summary": out.numpy(), "colors": colors.numpy(), "com": data["com"], "mass": data["mass"],
            "mat_color": data["mat"]["color"], "layers": data["mat"]["layers"], "inertia": data["inertia"],
            "x_final": states[3].x.numpy(), "loss": loss.numpy(), "grad_x0": states[0].x.grad.numpy(),
            "grad_v0": states[0].v.grad.numpy()}


TOLERANCE = {"loss": (1e-5, 1e-5)}
