"""Scalar math builtins on float32 and float64 and ints: min/max/clamp/abs/sign, the rounding
family (floor, ceil, round, rint, trunc, frac), step, lerp, smoothstep, isnan/isinf/isfinite,
with gradients through the differentiable ones."""

import numpy as np
import warp as wp


@wp.kernel
def rounding(x: wp.array(dtype=float), out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    v = x[i]
    out[i, 0] = wp.floor(v)
    out[i, 1] = wp.ceil(v)
    out[i, 2] = wp.round(v)
    out[i, 3] = wp.rint(v)
    out[i, 4] = wp.trunc(v)
    out[i, 5] = wp.frac(v)
    out[i, 6] = wp.sign(v)
    out[i, 7] = wp.step(v)
    out[i, 8] = wp.abs(v)
    out[i, 9] = wp.clamp(v, -1.0, 1.5)
    out[i, 10] = wp.min(v, 0.25)
    out[i, 11] = wp.max(v, -0.75)
    out[i, 12] = wp.lerp(-2.0, 6.0, v)
    out[i, 13] = wp.smoothstep(-1.0, 2.0, v)
    out[i, 14] = wp.nonzero(v)


@wp.kernel
def rounding64(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64, ndim=2)):
    i = wp.tid()
    v = x[i]
    out[i, 0] = wp.floor(v)
    out[i, 1] = wp.round(v)
    out[i, 2] = wp.rint(v)
    out[i, 3] = wp.frac(v)
    out[i, 4] = wp.clamp(v, wp.float64(-1.0), wp.float64(1.5))
    out[i, 5] = wp.smoothstep(wp.float64(-1.0), wp.float64(2.0), v)
    out[i, 6] = wp.sign(v)


@wp.kernel
def int_math(a: wp.array(dtype=int), out: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    v = a[i]
    out[i, 0] = wp.abs(v)
    out[i, 1] = wp.sign(v)
    out[i, 2] = wp.min(v, 3)
    out[i, 3] = wp.max(v, -2)
    out[i, 4] = wp.clamp(v, -4, 4)
    out[i, 5] = wp.min(wp.max(v, 0), 2) * 10 + wp.abs(v - 1)


@wp.kernel
def classify(x: wp.array(dtype=float), flags: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    v = x[i]
    flags[i, 0] = int(wp.isnan(v))
    flags[i, 1] = int(wp.isinf(v))
    flags[i, 2] = int(wp.isfinite(v))
    flags[i, 3] = wp.where(v > 0.0, 1, 0)
    w = wp.vec3(v, 1.0, 2.0)
    flags[i, 4] = int(wp.isnan(w))
    flags[i, 5] = int(wp.isfinite(w))


@wp.kernel
def smooth_loss(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    y = wp.smoothstep(-1.0, 2.0, v) + wp.lerp(v, 2.0 * v, 0.3) + wp.clamp(v, -1.0, 1.5) * v
    y += wp.abs(v) * wp.max(v, 0.5) + wp.min(v * v, 1.0)
    wp.atomic_add(loss, 0, y)


def run():
    xs = np.array([-2.5, -1.5, -0.7, -0.5, -0.2, 0.0, 0.2, 0.5, 0.7, 1.5, 2.5, 3.49, 0.49999997, -3.5, 1.2, 4.0],
                  dtype=np.float32)
    x = wp.array(xs, dtype=float, requires_grad=True)
    out = wp.zeros((16, 15), dtype=float)
    wp.launch(rounding, dim=16, inputs=[x], outputs=[out])
    x64 = wp.array(xs.astype(np.float64), dtype=wp.float64)
    out64 = wp.zeros((16, 7), dtype=wp.float64)
    wp.launch(rounding64, dim=16, inputs=[x64], outputs=[out64])
    ia = wp.array(np.arange(-6, 7, dtype=np.int32), dtype=int)
    iout = wp.zeros((13, 6), dtype=int)
    wp.launch(int_math, dim=13, inputs=[ia], outputs=[iout])
    special = wp.array(np.array([0.0, np.nan, np.inf, -np.inf, -1.0, 3.0e38], dtype=np.float32), dtype=float)
    flags = wp.zeros((6, 6), dtype=int)
    wp.launch(classify, dim=6, inputs=[special], outputs=[flags])

    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(smooth_loss, dim=16, inputs=[x], outputs=[loss])
    tape.backward(loss=loss)
    return {"rounding": out.numpy(), "rounding64": out64.numpy(), "ints": iout.numpy(), "flags": flags.numpy(),
            "loss": loss.numpy(), "grad": x.grad.numpy()}


TOLERANCE = {"loss": (1e-5, 1e-5)}
