"""Nested structs in differentiable kernels: an array of structs holding a struct, a mat22
and a vec2, gradients into every float field, a struct argument (not an array) whose float
fields are constants, and a struct built inside a kernel and passed to a function."""

import numpy as np
import warp as wp


@wp.struct
class Material:
    stiffness: float
    damping: wp.vec2


@wp.struct
class Element:
    F: wp.mat22
    rest: wp.vec2
    mat: Material
    tag: int


@wp.struct
class Settings:
    scale: float
    bias: wp.vec2


@wp.func
def element_energy(e: Element, s: Settings):
    C = wp.transpose(e.F) * e.F - wp.identity(n=2, dtype=float)
    d = e.rest + s.bias
    return e.mat.stiffness * wp.ddot(C, C) * s.scale + wp.dot(e.mat.damping, d) + float(e.tag) * 0.01


@wp.kernel
def energies(elems: wp.array(dtype=Element), s: Settings, out: wp.array(dtype=float)):
    i = wp.tid()
    e = elems[i]
    local = Element()
    local.F = e.F * 2.0
    local.rest = e.rest
    local.mat = e.mat
    local.tag = e.tag
    wp.atomic_add(out, 0, element_energy(e, s) + 0.1 * element_energy(local, s))


def run():
    rng = np.random.default_rng(61)
    n = 6
    host = []
    for i in range(n):
        e = Element()
        e.F = wp.mat22(*(np.eye(2) + 0.2 * rng.normal(size=(2, 2))).ravel())
        e.rest = wp.vec2(*rng.uniform(-1.0, 1.0, 2))
        m = Material()
        m.stiffness = float(1.0 + i)
        m.damping = wp.vec2(*rng.uniform(0.0, 1.0, 2))
        e.mat = m
        e.tag = i
        host.append(e)
    elems = wp.array(host, dtype=Element, requires_grad=True)
    s = Settings()
    s.scale = 0.5
    s.bias = wp.vec2(0.1, -0.2)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(energies, dim=n, inputs=[elems, s], outputs=[out])
    tape.backward(out)
    g = elems.grad.numpy()
    return {"energy": out.numpy().copy(), "F_grad": g["F"].copy(), "rest_grad": g["rest"].copy(),
            "stiffness_grad": g["mat"]["stiffness"].copy(), "damping_grad": g["mat"]["damping"].copy(),
            "tag_grad": g["tag"].copy()}


TOLERANCE = {"energy": (1e-5, 1e-5), "F_grad": (1e-5, 1e-5)}
