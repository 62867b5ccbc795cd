"""Noise as a differentiable field: gradients of noise in 1-4D, of periodic pnoise and of every
curlnoise overload through a Tape; curl noise with zero octaves; large and negative coordinates;
period-1 pnoise; noise used to displace a height field and advect particles over several steps."""

import numpy as np
import warp as wp


@wp.kernel
def scalar_noise(seed: int, xs: wp.array(dtype=wp.vec4), out: wp.array(dtype=float)):
    tid = wp.tid()
    s = wp.rand_init(seed)
    p = xs[tid]
    v = wp.noise(s, p[0]) + 0.5 * wp.noise(s, wp.vec2(p[1], p[2]))
    v += 0.25 * wp.noise(s, wp.vec3(p[0], p[2], p[3])) + 0.125 * wp.noise(s, p)
    v += wp.pnoise(s, p[0], 3) * wp.pnoise(s, wp.vec2(p[1], p[3]), 2, 5)
    v += wp.pnoise(s, wp.vec3(p[0], p[1], p[2]), 4, 4, 4) - wp.pnoise(s, p, 3, 3, 3, 3)
    out[tid] = v


@wp.kernel
def curl_sum(seed: int, xs: wp.array(dtype=wp.vec4), out: wp.array(dtype=float)):
    tid = wp.tid()
    s = wp.rand_init(seed)
    p = xs[tid]
    c2 = wp.curlnoise(s, wp.vec2(p[0], p[1]), wp.uint32(2))
    c3 = wp.curlnoise(s, wp.vec3(p[0], p[1], p[2]))
    c4 = wp.curlnoise(s, p, wp.uint32(2), 3.0, 0.25)
    out[tid] = wp.dot(c2, wp.vec2(1.0, -0.5)) + wp.dot(c3, wp.vec3(0.3, 0.2, 0.1)) + wp.length_sq(c4)


@wp.kernel
def specials(seed: int, out: wp.array(dtype=float), curl0: wp.array(dtype=wp.vec3)):
    s = wp.rand_init(seed)
    out[0] = wp.noise(s, 12345.678)
    out[1] = wp.noise(s, -987.25)
    out[2] = wp.noise(s, wp.vec3(-1.0e3, 2.5e3, 0.125))
    out[3] = wp.pnoise(s, 0.3, 1)
    out[4] = wp.pnoise(s, 1.3, 1)
    out[5] = wp.noise(s, wp.vec2(0.0, 0.0))
    out[6] = wp.noise(s, wp.vec4(3.0, -2.0, 1.0, 0.0))
    curl0[0] = wp.curlnoise(s, wp.vec3(0.3, 0.4, 0.5), wp.uint32(0))


@wp.kernel
def displace(seed: int, heights: wp.array2d(dtype=float)):
    i, j = wp.tid()
    s = wp.rand_init(seed)
    p = wp.vec2(float(i), float(j)) * 0.15
    heights[i, j] = wp.noise(s, p) + 0.5 * wp.noise(s, p * 2.0) + 0.25 * wp.pnoise(s, p * 4.0, 6, 6)


@wp.kernel
def advect(seed: int, x: wp.array(dtype=wp.vec3), t: float, dt: float):
    tid = wp.tid()
    s = wp.rand_init(seed)
    p = x[tid]
    v = wp.curlnoise(s, wp.vec4(p[0], p[1], p[2], t), wp.uint32(2))
    x[tid] = p + v * dt


def run():
    rng = np.random.default_rng(41)
    n = 64
    xs_np = rng.uniform(-2.0, 2.0, (n, 4)).astype(np.float32)
    xs = wp.array(xs_np, dtype=wp.vec4, requires_grad=True)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scalar_noise, dim=n, inputs=[9, xs, out])
    tape.backward(grads={out: wp.ones(n, dtype=float)})
    res = {"scalar": out.numpy(), "scalar_grad": xs.grad.numpy()}

    xs2 = wp.array(xs_np * 0.7, dtype=wp.vec4, requires_grad=True)
    out2 = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(curl_sum, dim=n, inputs=[4, xs2, out2])
    tape.backward(grads={out2: wp.ones(n, dtype=float)})
    res.update({"curl": out2.numpy(), "curl_grad": xs2.grad.numpy()})

    sp = wp.zeros(7, dtype=float)
    c0 = wp.zeros(1, dtype=wp.vec3)
    wp.launch(specials, dim=1, inputs=[2, sp, c0])
    res["specials"] = sp.numpy()
    res["curl_zero_octaves"] = c0.numpy()

    h = wp.zeros((24, 24), dtype=float)
    wp.launch(displace, dim=h.shape, inputs=[77, h])
    res["heights"] = h.numpy()

    x = wp.array(rng.uniform(0.0, 1.0, (32, 3)).astype(np.float32), dtype=wp.vec3)
    for step in range(10):
        wp.launch(advect, dim=32, inputs=[5, x, 0.1 * step, 0.05])
    res["advected"] = x.numpy()
    return res


TOLERANCE = {"scalar_grad": (1e-4, 1e-4), "curl": (1e-5, 1e-5), "curl_grad": (1e-4, 1e-4),
             "specials": (1e-5, 1e-5), "advected": (1e-5, 1e-5)}
