"""Double-precision gradients: float64, vec3d, mat33d and quatd arrays, casts between float32
and float64 inside a kernel (the adjoint crosses the cast), integer index arrays that
receive no gradient, and results that need float64 accuracy."""

import numpy as np
import warp as wp


@wp.kernel
def gravity_potential(
    pos: wp.array(dtype=wp.vec3d),
    mass: wp.array(dtype=wp.float64),
    pairs: wp.array(dtype=wp.vec2i),
    energy: wp.array(dtype=wp.float64),
):
    k = wp.tid()
    i = pairs[k][0]
    j = pairs[k][1]
    r = wp.length(pos[i] - pos[j])
    wp.atomic_add(energy, 0, -mass[i] * mass[j] / (r + wp.float64(1.0e-3)))


@wp.kernel
def rotate_stretch(
    q: wp.array(dtype=wp.quatd),
    m: wp.array(dtype=wp.mat33d),
    p: wp.array(dtype=wp.vec3f),
    out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    pd = wp.vec3d(p[i])
    r = wp.quat_rotate(wp.normalize(q[i]), m[i] * pd)
    s = wp.float32(wp.length_sq(r))
    out[i] = wp.float64(wp.sqrt(s)) + wp.determinant(m[i]) * wp.float64(0.25)


def run():
    rng = np.random.default_rng(41)
    n = 6
    pos = wp.array(rng.uniform(-1.0, 1.0, (n, 3)), dtype=wp.vec3d, requires_grad=True)
    mass = wp.array(rng.uniform(1.0, 2.0, n), dtype=wp.float64, requires_grad=True)
    pair_list = [(i, j) for i in range(n) for j in range(i + 1, n)]
    pairs = wp.array(np.array(pair_list, np.int32), dtype=wp.vec2i)
    energy = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(gravity_potential, dim=len(pair_list), inputs=[pos, mass, pairs], outputs=[energy])
    tape.backward(energy)
    out = {"energy": energy.numpy().copy(), "pos_grad": pos.grad.numpy().copy(),
           "mass_grad": mass.grad.numpy().copy(), "pairs_has_grad": pairs.grad is not None}

    q = wp.array(rng.normal(size=(4, 4)), dtype=wp.quatd, requires_grad=True)
    m = wp.array(np.eye(3) + 0.2 * rng.normal(size=(4, 3, 3)), dtype=wp.mat33d, requires_grad=True)
    p = wp.array(rng.uniform(-1.0, 1.0, (4, 3)).astype(np.float32), dtype=wp.vec3f, requires_grad=True)
    o = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(rotate_stretch, dim=4, inputs=[q, m, p], outputs=[o])
    tape.backward(grads={o: wp.array(np.array([1.0, -1.0, 0.5, 2.0]), dtype=wp.float64)})
    out.update({"o": o.numpy().copy(), "q_grad": q.grad.numpy().copy(), "m_grad": m.grad.numpy().copy(),
                "p_grad": p.grad.numpy().copy(), "p_grad_dtype": str(p.grad.numpy().dtype)})
    return out


TOLERANCE = {"energy": (1e-12, 1e-12), "pos_grad": (1e-10, 1e-12), "mass_grad": (1e-10, 1e-12),
             "o": (1e-6, 1e-7), "q_grad": (1e-5, 1e-6), "m_grad": (1e-5, 1e-6), "p_grad": (1e-5, 1e-6)}
