"""The Differentiability page's workaround for loops that overwrite a carried local: give the
loop constant bounds so Warp unrolls it (module option max_unroll raised to 32 for a
20-step loop), iterate a damped map x <- x * a + sin(x) * b, and compare the gradient
with the closed-form chain computed in numpy from the recorded trajectory."""

import numpy as np
import warp as wp

wp.set_module_options({"max_unroll": 32})

STEPS = 20


@wp.kernel
def iterate(x0: wp.array(dtype=float), a: wp.array(dtype=float), b: float, out: wp.array(dtype=float)):
    i = wp.tid()
    x = x0[i]
    for _k in range(20):
        x = x * a[0] + wp.sin(x) * b
    out[i] = x


@wp.kernel
def iterate_vec(v0: wp.array(dtype=wp.vec2), out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    v = v0[i]
    for k in range(6):
        c = wp.cos(0.3 * float(k))
        s = wp.sin(0.3 * float(k))
        v = wp.vec2(c * v[0] - s * v[1], s * v[0] + c * v[1]) * 0.9 + wp.vec2(v[1] * v[1], 0.0) * 0.1
    out[i] = v


def reference(x0, a, b):
    """x_{k+1} = a x_k + b sin x_k; d x_N / d x_0 and d x_N / d a by the chain rule."""
    x = x0.astype(np.float64)
    dx0 = np.ones_like(x)
    da = np.zeros_like(x)
    for _ in range(STEPS):
        d = a + b * np.cos(x)
        da = da * d + x
        dx0 = dx0 * d
        x = a * x + b * np.sin(x)
    return x, dx0, da


def run():
    x0 = np.linspace(-0.5, 1.2, 8).astype(np.float32)
    x = wp.array(x0, requires_grad=True)
    a = wp.array([0.8], dtype=float, requires_grad=True)
    out = wp.zeros(8, dtype=float, requires_grad=True)
    v0 = wp.array(np.linspace(-1.0, 1.0, 8).reshape(4, 2).astype(np.float32), dtype=wp.vec2, requires_grad=True)
    vout = wp.zeros(4, dtype=wp.vec2, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(iterate, dim=8, inputs=[x, a, 0.15], outputs=[out])
        wp.launch(iterate_vec, dim=4, inputs=[v0], outputs=[vout])
    tape.backward(grads={out: wp.ones(8, dtype=float), vout: wp.full(4, wp.vec2(1.0, -1.0), dtype=wp.vec2)})
    ref_x, ref_dx0, ref_da = reference(x0, 0.8, 0.15)
    return {
        "out": out.numpy().copy(), "x_grad": x.grad.numpy().copy(), "a_grad": a.grad.numpy().copy(),
        "v_out": vout.numpy().copy(), "v_grad": v0.grad.numpy().copy(),
        "x_grad_matches_chain": bool(np.allclose(x.grad.numpy(), ref_dx0, rtol=1e-4, atol=1e-6)),
        "a_grad_matches_chain": bool(np.allclose(a.grad.numpy()[0], ref_da.sum(), rtol=1e-4)),
        "max_unroll": wp.get_module_options()["max_unroll"],
    }


TOLERANCE = {"out": (1e-5, 1e-6), "x_grad": (1e-4, 1e-6), "a_grad": (1e-4, 1e-5), "v_grad": (1e-5, 1e-6)}
