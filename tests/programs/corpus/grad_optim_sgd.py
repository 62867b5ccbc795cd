"""warp.optim.SGD fitting a line and a vec3 target: plain steps, momentum, Nesterov and weight
decay; the parameter values after a fixed number of steps, with tape.zero() between steps."""

import numpy as np
import warp as wp
import warp.optim


@wp.kernel
def line_loss(w: wp.array(dtype=float), xs: wp.array(dtype=float), ys: wp.array(dtype=float),
              loss: wp.array(dtype=float)):
    i = wp.tid()
    r = w[0] * xs[i] + w[1] - ys[i]
    wp.atomic_add(loss, 0, r * r / float(xs.shape[0]))


@wp.kernel
def point_loss(p: wp.array(dtype=wp.vec3), target: wp.vec3, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = p[i] - target
    wp.atomic_add(loss, 0, wp.dot(d, d) + 0.1 * wp.length(p[i]))


def fit_line(**options):
    xs_np = np.linspace(-1.0, 1.0, 16).astype(np.float32)
    xs = wp.array(xs_np)
    ys = wp.array((2.5 * xs_np - 0.75).astype(np.float32))
    w = wp.zeros(2, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    opt = warp.optim.SGD([w], **options)
    tape = wp.Tape()
    losses = []
    for _ in range(25):
        loss.zero_()
        with tape:
            wp.launch(line_loss, dim=16, inputs=[w, xs, ys], outputs=[loss])
        tape.backward(loss)
        losses.append(float(loss.numpy()[0]))
        opt.step([w.grad])
        tape.zero()
        tape.reset()
    return w.numpy().copy(), np.array(losses, dtype=np.float32)


def run():
    out = {}
    out["w_plain"], out["loss_plain"] = fit_line(lr=0.3)
    out["w_momentum"], out["loss_momentum"] = fit_line(lr=0.1, momentum=0.8, dampening=0.1)
    out["w_nesterov"], out["loss_nesterov"] = fit_line(lr=0.1, momentum=0.5, nesterov=True)
    out["w_decay"], _ = fit_line(lr=0.2, weight_decay=0.05)

    p = wp.array(np.array([[0.0, 0.0, 0.0], [1.0, -1.0, 2.0], [3.0, 0.5, -0.5]], np.float32),
                 dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    opt = warp.optim.SGD([p], lr=0.05, momentum=0.9)
    for _ in range(10):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(point_loss, dim=3, inputs=[p, wp.vec3(1.0, 2.0, 3.0)], outputs=[loss])
        tape.backward(loss)
        opt.step([p.grad])
        tape.zero()
    out["points"] = p.numpy().copy()
    out["steps"] = opt.t
    opt.reset_internal_state()
    out["buffer_after_reset"] = opt.b[0].numpy().copy()
    return out


TOLERANCE = {"loss_plain": (1e-4, 1e-5), "loss_momentum": (1e-4, 1e-5), "loss_nesterov": (1e-4, 1e-5),
             "w_plain": (1e-4, 1e-5), "w_momentum": (1e-4, 1e-5), "w_nesterov": (1e-4, 1e-5),
             "w_decay": (1e-4, 1e-5), "points": (1e-4, 1e-5)}
