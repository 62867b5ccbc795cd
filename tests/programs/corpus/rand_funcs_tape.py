"""Random state passed through @wp.func helpers, rejection sampling in a while loop, Python-scope
calls of the RNG builtins, and the reparameterisation trick differentiated with a Tape."""

import numpy as np
import warp as wp


@wp.func
def jitter(state: wp.uint32, p: wp.vec3, scale: float):
    # the state parameter is a copy: drawing here does not advance the caller's state
    return p + scale * wp.vec3(wp.randf(state, -1.0, 1.0), wp.randf(state, -1.0, 1.0), wp.randf(state, -1.0, 1.0))


@wp.kernel
def jitter_points(seed: int, pts: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), after: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    out[tid] = jitter(state, pts[tid], 0.1)
    after[tid] = wp.randf(state)


@wp.kernel
def rejection_disk(seed: int, out: wp.array(dtype=wp.vec2), tries: wp.array(dtype=int)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    count = 0
    p = wp.vec2(2.0, 2.0)
    while wp.length_sq(p) > 1.0:
        p = wp.vec2(wp.randf(state, -1.0, 1.0), wp.randf(state, -1.0, 1.0))
        count += 1
    out[tid] = p
    tries[tid] = count


@wp.kernel
def reparam(seed: int, mu: wp.array(dtype=float), sigma: wp.array(dtype=float),
            samples: wp.array2d(dtype=float), loss: wp.array(dtype=float)):
    i, j = wp.tid()
    state = wp.rand_init(seed, i * samples.shape[1] + j)
    eps = wp.randn(state)
    y = mu[i] + sigma[i] * eps
    samples[i, j] = y
    wp.atomic_add(loss, 0, (y - 1.0) * (y - 1.0) / float(samples.shape[1]))


@wp.kernel
def random_walk(seed: int, steps: int, pos: wp.array(dtype=wp.vec2)):
    tid = wp.tid()
    rng = wp.rand_init(seed, tid)
    p = wp.vec2()
    for _ in range(steps):
        angle = wp.randf(rng) * 2.0 * wp.pi
        p += wp.vec2(wp.cos(angle), wp.sin(angle))
    pos[tid] = p


def run():
    n = 64
    pts = wp.array(np.linspace(0.0, 1.0, n * 3, dtype=np.float32).reshape(n, 3), dtype=wp.vec3)
    out = wp.zeros_like(pts)
    after = wp.zeros(n, dtype=float)
    wp.launch(jitter_points, dim=n, inputs=[8, pts], outputs=[out, after])

    disk = wp.zeros(n, dtype=wp.vec2)
    tries = wp.zeros(n, dtype=int)
    wp.launch(rejection_disk, dim=n, inputs=[31, disk, tries])

    m = 4
    mu = wp.array([0.0, 1.0, -2.0, 0.5], dtype=float, requires_grad=True)
    sigma = wp.array([1.0, 0.5, 2.0, 0.1], dtype=float, requires_grad=True)
    samples = wp.zeros((m, 50), dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(reparam, dim=(m, 50), inputs=[77, mu, sigma], outputs=[samples, loss])
    tape.backward(loss)

    walk = wp.zeros(32, dtype=wp.vec2)
    wp.launch(random_walk, dim=32, inputs=[5, 25, walk])

    state = wp.rand_init(42)
    state2 = wp.rand_init(42, 3)
    py_vals = np.array([wp.randf(state), wp.randf(state), wp.randf(state2, 1.0, 2.0)], dtype=np.float32)
    return {
        "jittered": out.numpy(),
        "after": after.numpy(),
        "disk": disk.numpy(),
        "tries": tries.numpy(),
        "samples": samples.numpy(),
        "loss": loss.numpy(),
        "mu_grad": mu.grad.numpy(),
        "sigma_grad": sigma.grad.numpy(),
        "walk": walk.numpy(),
        "py_state": np.uint32(state),
        "py_state2": np.uint32(state2),
        "py_vals": py_vals,
        "py_randi": int(wp.randi(state, 0, 100)),
    }


TOLERANCE = {"loss": (1e-5, 1e-5), "mu_grad": (1e-5, 1e-5), "sigma_grad": (1e-5, 1e-5), "walk": (1e-5, 1e-5)}
