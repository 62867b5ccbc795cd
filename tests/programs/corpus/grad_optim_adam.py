"""warp.optim.Adam on float32 and vec3 parameters: a small least-squares fit and a point cloud
pulled toward targets; parameters and moments after N steps, and set_params/reset."""

import numpy as np
import warp as wp
from warp.optim import Adam


@wp.kernel
def quad_loss(w: wp.array(dtype=float), a: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    r = w[i] - a[i]
    wp.atomic_add(loss, 0, r * r * (1.0 + float(i)) + 0.5 * wp.sin(w[i]))


@wp.kernel
def cloud_loss(p: wp.array(dtype=wp.vec3), targets: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.length_sq(p[i] - targets[i]))


def run():
    n = 6
    rng = np.random.default_rng(17)
    w = wp.zeros(n, dtype=float, requires_grad=True)
    a = wp.array(rng.uniform(-2.0, 2.0, n).astype(np.float32))
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    opt = Adam([w], lr=0.1)
    history = []
    for _ in range(30):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(quad_loss, dim=n, inputs=[w, a], outputs=[loss])
        tape.backward(loss)
        opt.step([w.grad])
        history.append(loss.numpy()[0])
    out = {"w": w.numpy().copy(), "loss_history": np.array(history, np.float32),
           "m": opt.m[0].numpy().copy(), "v": opt.v[0].numpy().copy(), "t": opt.t}

    p = wp.array(rng.normal(size=(8, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    targets = wp.array(rng.normal(size=(8, 3)).astype(np.float32), dtype=wp.vec3)
    opt2 = Adam([p], lr=0.05, betas=(0.8, 0.99), eps=1e-6)
    for _ in range(20):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(cloud_loss, dim=8, inputs=[p, targets], outputs=[loss])
        tape.backward(loss)
        opt2.step([p.grad])
        p.grad.zero_()
    out["cloud"] = p.numpy().copy()
    out["cloud_loss"] = loss.numpy().copy()
    out["cloud_m"] = opt2.m[0].numpy().copy()
    opt2.reset_internal_state()
    out["t_after_reset"] = opt2.t
    out["m_after_reset"] = opt2.m[0].numpy().copy()
    return out


TOLERANCE = {"w": (1e-4, 1e-5), "loss_history": (1e-4, 1e-5), "m": (1e-4, 1e-5), "v": (1e-4, 1e-6),
             "cloud": (1e-4, 1e-5), "cloud_loss": (1e-4, 1e-5), "cloud_m": (1e-4, 1e-5)}
