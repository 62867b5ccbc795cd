"""In-place array updates under a tape as Warp handles them: `a[i] += ...` / `-=` in a kernel,
a linear in-place rescale `b[i] = b[i] * s` after the kernel that wrote b, two kernels
writing the same output (the last write wins and the earlier one gets no gradient), an
array written by one launch and accumulated by the next, and a vec3 array updated in place."""

import numpy as np
import warp as wp


@wp.kernel
def produce(x: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] = wp.sin(x[i]) + x[i] * x[i]


@wp.kernel
def rescale(b: wp.array(dtype=float), s: float):
    i = wp.tid()
    b[i] = b[i] * s


@wp.kernel
def accumulate(x: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] += 2.0 * x[i]
    b[i] -= 0.5 * x[(i + 1) % x.shape[0]]


@wp.kernel
def overwrite(x: wp.array(dtype=float), c: wp.array(dtype=float)):
    i = wp.tid()
    c[i] = 4.0 * x[i]


@wp.kernel
def advect(p: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), dt: float):
    i = wp.tid()
    p[i] = p[i] + v[i] * dt


@wp.kernel
def loss_kernel(b: wp.array(dtype=float), c: wp.array(dtype=float), p: wp.array(dtype=wp.vec3),
                loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, b[i] * float(i + 1) + c[i] * c[i] + wp.dot(p[i], wp.vec3(1.0, -2.0, 0.5)))


def run():
    n = 7
    rng = np.random.default_rng(19)
    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    z = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    b = wp.zeros(n, dtype=float, requires_grad=True)
    c = wp.zeros(n, dtype=float, requires_grad=True)
    p = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    v = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(produce, dim=n, inputs=[x], outputs=[b])
        wp.launch(rescale, dim=n, inputs=[b, 3.0])
        wp.launch(accumulate, dim=n, inputs=[x], outputs=[b])
        wp.launch(overwrite, dim=n, inputs=[z], outputs=[c])
        wp.launch(overwrite, dim=n, inputs=[x], outputs=[c])
        for _ in range(3):
            wp.launch(advect, dim=n, inputs=[p, v, 0.1])
        wp.launch(loss_kernel, dim=n, inputs=[b, c, p], outputs=[loss])
    tape.backward(loss)
    return {
        "b": b.numpy().copy(), "c": c.numpy().copy(), "p": p.numpy().copy(), "loss": loss.numpy().copy(),
        "x_grad": x.grad.numpy().copy(), "z_grad": z.grad.numpy().copy(),
        "p_grad": p.grad.numpy().copy(), "v_grad": v.grad.numpy().copy(),
        "b_grad_after": b.grad.numpy().copy(), "c_grad_after": c.grad.numpy().copy(),
    }


TOLERANCE = {"loss": (1e-5, 1e-5)}
