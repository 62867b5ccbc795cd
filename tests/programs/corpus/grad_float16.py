"""Half-precision gradients: float16 arrays with requires_grad, a kernel computing in float32
from half inputs and writing half outputs, vec3h arrays, and the float16 adjoints."""

import numpy as np
import warp as wp


@wp.kernel
def half_kernel(x: wp.array(dtype=wp.float16), v: wp.array(dtype=wp.vec3h), y: wp.array(dtype=wp.float16)):
    i = wp.tid()
    a = float(x[i])
    w = v[i]
    s = a * a + wp.sin(a) + float(wp.dot(w, w)) * 0.5
    y[i] = wp.float16(s) + x[i] * wp.float16(2.0)


@wp.kernel
def half_loss(y: wp.array(dtype=wp.float16), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, float(y[i]) * float(i + 1))


def run():
    n = 8
    xs = np.linspace(-1.0, 1.0, n).astype(np.float16)
    vs = np.linspace(-0.5, 0.5, n * 3).reshape(n, 3).astype(np.float16)
    x = wp.array(xs, dtype=wp.float16, requires_grad=True)
    v = wp.array(vs, dtype=wp.vec3h, requires_grad=True)
    y = wp.zeros(n, dtype=wp.float16, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(half_kernel, dim=n, inputs=[x, v], outputs=[y])
        wp.launch(half_loss, dim=n, inputs=[y], outputs=[loss])
    tape.backward(loss)
    return {"y": y.numpy().copy(), "loss": loss.numpy().copy(), "x_grad": x.grad.numpy().copy(),
            "v_grad": v.grad.numpy().copy()}


TOLERANCE = {"y": (1e-3, 1e-3), "loss": (1e-3, 1e-3), "x_grad": (2e-3, 2e-3), "v_grad": (2e-3, 2e-3)}
