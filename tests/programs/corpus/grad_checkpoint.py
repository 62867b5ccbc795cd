"""Checkpointing by re-running the forward pass: a 12-step explicit integrator split into
segments; only the segment start states are kept, each segment is re-recorded on a fresh tape
and its backward is seeded with the gradient of the next segment's start state. The result
must equal the gradient of one tape over all steps."""

import numpy as np
import warp as wp


@wp.kernel
def step(x: wp.array(dtype=wp.vec2), v: wp.array(dtype=wp.vec2), k: wp.array(dtype=float), dt: float,
         x_out: wp.array(dtype=wp.vec2), v_out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    p = x[i]
    f = -k[0] * p - 0.3 * wp.length(p) * p
    vn = v[i] + f * dt
    v_out[i] = vn
    x_out[i] = p + vn * dt


@wp.kernel
def final_loss(x: wp.array(dtype=wp.vec2), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.dot(x[i], wp.vec2(1.0, 2.0)))


STEPS, SEGMENT, N = 12, 4, 5


def alloc():
    return wp.zeros(N, dtype=wp.vec2, requires_grad=True)


def run():
    rng = np.random.default_rng(31)
    x0 = rng.uniform(-1.0, 1.0, (N, 2)).astype(np.float32)
    v0 = rng.uniform(-1.0, 1.0, (N, 2)).astype(np.float32)
    k = wp.array([2.0], dtype=float, requires_grad=True)
    dt = 0.05

    # reference: one tape over all steps
    xs = [wp.array(x0, dtype=wp.vec2, requires_grad=True)] + [alloc() for _ in range(STEPS)]
    vs = [wp.array(v0, dtype=wp.vec2, requires_grad=True)] + [alloc() for _ in range(STEPS)]
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        for s in range(STEPS):
            wp.launch(step, dim=N, inputs=[xs[s], vs[s], k, dt], outputs=[xs[s + 1], vs[s + 1]])
        wp.launch(final_loss, dim=N, inputs=[xs[-1]], outputs=[loss])
    tape.backward(loss)
    out = {"loss": loss.numpy().copy(), "k_grad_full": k.grad.numpy().copy(),
           "x0_grad_full": xs[0].grad.numpy().copy(), "v0_grad_full": vs[0].grad.numpy().copy()}
    k.grad.zero_()

    # checkpointed: keep only segment starts, forward without a tape
    starts = [(wp.array(x0, dtype=wp.vec2, requires_grad=True), wp.array(v0, dtype=wp.vec2, requires_grad=True))]
    xa, va = alloc(), alloc()
    wp.copy(xa, starts[0][0])
    wp.copy(va, starts[0][1])
    for s in range(STEPS):
        xb, vb = alloc(), alloc()
        wp.launch(step, dim=N, inputs=[xa, va, k, dt], outputs=[xb, vb])
        xa, va = xb, vb
        if (s + 1) % SEGMENT == 0 and s + 1 < STEPS:
            starts.append((wp.clone(xa, requires_grad=True), wp.clone(va, requires_grad=True)))
    loss2 = wp.zeros(1, dtype=float, requires_grad=True)
    seed_x = seed_v = None
    for seg in reversed(range(len(starts))):
        xcur, vcur = starts[seg]
        xcur.grad.zero_()
        vcur.grad.zero_()
        tape = wp.Tape()
        with tape:
            xi, vi = xcur, vcur
            for _ in range(SEGMENT):
                xn, vn = alloc(), alloc()
                wp.launch(step, dim=N, inputs=[xi, vi, k, dt], outputs=[xn, vn])
                xi, vi = xn, vn
            if seed_x is None:
                wp.launch(final_loss, dim=N, inputs=[xi], outputs=[loss2])
        if seed_x is None:
            tape.backward(loss2)
        else:
            tape.backward(grads={xi: seed_x, vi: seed_v})
        seed_x, seed_v = wp.clone(xcur.grad), wp.clone(vcur.grad)
    out["loss_ckpt"] = loss2.numpy().copy()
    out["k_grad_ckpt"] = k.grad.numpy().copy()
    out["x0_grad_ckpt"] = seed_x.numpy().copy()
    out["v0_grad_ckpt"] = seed_v.numpy().copy()
    return out


TOLERANCE = {"loss": (1e-5, 1e-5), "loss_ckpt": (1e-5, 1e-5), "k_grad_full": (1e-4, 1e-5),
             "k_grad_ckpt": (1e-4, 1e-5), "x0_grad_full": (1e-4, 1e-5), "x0_grad_ckpt": (1e-4, 1e-5),
             "v0_grad_full": (1e-4, 1e-5), "v0_grad_ckpt": (1e-4, 1e-5)}
