"""Perlin noise in 1-4D, periodic pnoise, curl noise with octaves, and gradients of noise through a Tape."""

import numpy as np
import warp as wp


@wp.kernel
def noise_fields(seed: int, xs: wp.array(dtype=wp.vec4),
                 n1: wp.array(dtype=float), n2: wp.array(dtype=float),
                 n3: wp.array(dtype=float), n4: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed)
    p = xs[tid]
    n1[tid] = wp.noise(state, p[0])
    n2[tid] = wp.noise(state, wp.vec2(p[0], p[1]))
    n3[tid] = wp.noise(state, wp.vec3(p[0], p[1], p[2]))
    n4[tid] = wp.noise(state, p)


@wp.kernel
def periodic(seed: int, xs: wp.array(dtype=wp.vec4),
             p1: wp.array(dtype=float), p2: wp.array(dtype=float),
             p3: wp.array(dtype=float), p4: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed)
    p = xs[tid]
    p1[tid] = wp.pnoise(state, p[0], 4)
    p2[tid] = wp.pnoise(state, wp.vec2(p[0], p[1]), 4, 3)
    p3[tid] = wp.pnoise(state, wp.vec3(p[0], p[1], p[2]), 2, 3, 5)
    p4[tid] = wp.pnoise(state, p, 2, 2, 3, 4)


@wp.kernel
def curl(seed: int, xs: wp.array(dtype=wp.vec4),
         c2: wp.array(dtype=wp.vec2), c3: wp.array(dtype=wp.vec3),
         c4: wp.array(dtype=wp.vec3), c3_oct: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    state = wp.rand_init(seed)
    p = xs[tid]
    c2[tid] = wp.curlnoise(state, wp.vec2(p[0], p[1]))
    c3[tid] = wp.curlnoise(state, wp.vec3(p[0], p[1], p[2]))
    c4[tid] = wp.curlnoise(state, p, octaves=wp.uint32(3))
    c3_oct[tid] = wp.curlnoise(state, wp.vec3(p[0], p[1], p[2]), wp.uint32(4), 2.5, 0.4)


@wp.kernel
def fbm(seed: int, xs: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed)
    p = xs[tid]
    total = 0.0
    amp = 1.0
    for _ in range(5):
        total += amp * wp.noise(state, p)
        p = p * 2.0
        amp *= 0.5
    out[tid] = total * total


def run():
    rng = np.random.default_rng(1)
    n = 128
    pts = rng.uniform(-3.0, 3.0, size=(n, 4)).astype(np.float32)
    # include integer lattice points and period boundaries
    pts[:8] = np.array([[0, 0, 0, 0], [1, 2, 3, 4], [4, 3, 5, 4], [-1, -2, 0, 2],
                        [0.5, 0.5, 0.5, 0.5], [2, 0, 0, 0], [-4, 3, 2, 1], [8, 6, 10, 8]], dtype=np.float32)
    xs = wp.array(pts, dtype=wp.vec4)
    outs = [wp.zeros(n, dtype=float) for _ in range(4)]
    wp.launch(noise_fields, dim=n, inputs=[17, xs], outputs=outs)
    res = {f"noise{d + 1}": o.numpy() for d, o in enumerate(outs)}
    outs = [wp.zeros(n, dtype=float) for _ in range(4)]
    wp.launch(periodic, dim=n, inputs=[17, xs], outputs=outs)
    res.update({f"pnoise{d + 1}": o.numpy() for d, o in enumerate(outs)})
    shifted = wp.array(pts + np.array([4, 3, 2, 4], dtype=np.float32), dtype=wp.vec4)
    outs2 = [wp.zeros(n, dtype=float) for _ in range(4)]
    wp.launch(periodic, dim=n, inputs=[17, shifted], outputs=outs2)
    res["pnoise1_period"] = np.abs(outs[0].numpy() - outs2[0].numpy()).max() < 1e-4
    c = [wp.zeros(n, dtype=wp.vec2), wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3)]
    wp.launch(curl, dim=n, inputs=[5, xs], outputs=c)
    res.update({k: a.numpy() for k, a in zip(["curl2", "curl3", "curl4_oct3", "curl3_oct4"], c)})

    x3 = wp.array(pts[:, :3] * 0.37, dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(fbm, dim=n, inputs=[23, x3], outputs=[out])
    tape.backward(grads={out: wp.ones(n, dtype=float)})
    res["fbm"] = out.numpy()
    res["fbm_grad"] = x3.grad.numpy()
    return res


TOLERANCE = {"fbm_grad": (1e-4, 1e-5), "curl3_oct4": (1e-5, 1e-5), "curl4_oct3": (1e-5, 1e-5)}
