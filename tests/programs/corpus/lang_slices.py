"""Slices of vectors and matrices: sub-matrices m[1:, :3], m[::2, ::2], columns m[:, 2],
reversed vectors v[::-1], negative indices, assignment to a vector slice and to a matrix
column and row slice, and gradients through slices."""

import numpy as np
import warp as wp


@wp.kernel
def slices(ms: wp.array(dtype=wp.mat44), vs: wp.array(dtype=wp.vec4), o33: wp.array(dtype=wp.mat33, ndim=2),
           o4: wp.array(dtype=wp.vec4, ndim=2), o2: wp.array(dtype=wp.mat22, ndim=2)):
    i = wp.tid()
    m = ms[i]
    v = vs[i]
    o33[i, 0] = m[1:, :3]
    o33[i, 1] = m[:3, 1:]
    o4[i, 0] = v[::-1]
    o4[i, 1] = m[:, 2]
    w = v
    w[1:3] = wp.vec2(7.0, 8.0)
    o4[i, 2] = w
    mm = m
    mm[:, 1] = v
    o4[i, 3] = mm[1]
    mm[2, 1:] = wp.vec3(-1.0, -2.0, -3.0)
    o4[i, 4] = mm[2]
    o2[i, 0] = m[::2, ::2]
    o2[i, 1] = m[2:, 2:] * 2.0
    o4[i, 5] = wp.vec4(v[-1], v[-2], m[-1, -1], m[-1][0])


@wp.kernel
def loss(ms: wp.array(dtype=wp.mat44), vs: wp.array(dtype=wp.vec4), total: wp.array(dtype=float)):
    i = wp.tid()
    m = ms[i]
    v = vs[i]
    sub = m[1:, :3]
    col = m[:, 2]
    rev = v[::-1]
    wp.atomic_add(total, 0, wp.determinant(sub) + wp.dot(col, rev) + wp.length_sq(v[1:3]) + wp.trace(m[::2, ::2]))


def run():
    rng = np.random.default_rng(0)
    ms = wp.array(rng.standard_normal((3, 4, 4)).astype(np.float32), dtype=wp.mat44, requires_grad=True)
    vs = wp.array(rng.standard_normal((3, 4)).astype(np.float32), dtype=wp.vec4, requires_grad=True)
    o33 = wp.zeros((3, 2), dtype=wp.mat33)
    o4 = wp.zeros((3, 6), dtype=wp.vec4)
    o2 = wp.zeros((3, 2), dtype=wp.mat22)
    wp.launch(slices, dim=3, inputs=[ms, vs], outputs=[o33, o4, o2])
    total = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(loss, dim=3, inputs=[ms, vs], outputs=[total])
    tape.backward(total)
    return {"sub33": o33.numpy(), "vec4": o4.numpy(), "sub22": o2.numpy(), "loss": total.numpy(),
            "grad_m": ms.grad.numpy(), "grad_v": vs.grad.numpy()}


TOLERANCE = {"loss": (1e-5, 1e-5)}
