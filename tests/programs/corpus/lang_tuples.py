"""Tuples in kernels: tuple values of mixed types (ints, floats, vectors, matrices, structs),
len() and constant indexing, unpacking, funcs returning tuples annotated tuple[...], tuple
parameters (fixed, variadic tuple[int, ...] and Any) iterated with static and dynamic
loops, builtins with several results used as one tuple, and gradients through a func
returning a tuple."""

from typing import Any

import numpy as np
import warp as wp


@wp.struct
class Box:
    origin: wp.vec3
    scale: float


@wp.func
def bounds(values: wp.array(dtype=float)) -> tuple[float, float, int]:
    lo = values[0]
    hi = values[0]
    arg = int(0)
    for j in range(1, values.shape[0]):
        v = values[j]
        if v < lo:
            lo = v
        if v > hi:
            hi = v
            arg = j
    return lo, hi, arg


@wp.func
def weighted(values: tuple[wp.vec3, float]) -> float:
    return wp.length(values[0]) * values[1]


@wp.func
def total_fixed(values: tuple[int, int, int]):
    out = int(0)
    for i in range(wp.static(len(values))):
        out += values[i] * (i + 1)
    return out


@wp.func
def total_variadic(values: tuple[int, ...]):
    out = int(0)
    for i in range(wp.static(len(values))):
        out += values[i]
    return out


@wp.func
def total_any(values: Any):
    out = float(0.0)
    for i in range(len(values)):
        out += float(values[i]) * 0.5
    return out


@wp.func
def frame(scale: float, offset: wp.vec3) -> tuple[float, wp.vec3f, wp.mat33f]:
    return scale * 2.0, offset * scale, wp.identity(n=3, dtype=float) * scale


@wp.kernel
def use_tuples(data: wp.array(dtype=float, ndim=2), out: wp.array(dtype=float, ndim=2),
               iout: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    b = Box(wp.vec3(1.0, 2.0, 3.0), 0.5 * float(i))
    t = (i, 2.5, wp.vec3(float(i), 1.0, 0.0), wp.mat22(1.0, 2.0, 3.0, float(i)), b)
    iout[i, 0] = len(t) * 100 + t[0]
    tv = t[2]
    tm = t[3]  # (Warp reads t[2][0] as one subscript t[2, 0], which a tuple has not)
    out[i, 0] = t[1] + tv[0] + tm[1, 1] + t[4].scale
    a, c, v, m, s = t
    out[i, 1] = float(a) + c + v[1] + wp.determinant(m) + s.origin[2]
    lo, hi, arg = bounds(data[i])
    out[i, 2] = hi - lo
    iout[i, 1] = arg
    r = bounds(data[i])
    out[i, 3] = r[0] + r[1]
    out[i, 4] = weighted((wp.vec3(1.0, 2.0, 2.0), float(i)))
    iout[i, 2] = total_fixed((i, 2 * i, 3))
    iout[i, 3] = total_variadic((i,)) + total_variadic((1, 2, 3, i))
    out[i, 5] = total_any((1, 2, i)) + total_any((i, 5))
    k, off, mat = frame(float(i), wp.vec3(1.0, -1.0, 2.0))
    out[i, 6] = k + off[2] + mat[1, 1]
    axis, angle = wp.quat_to_axis_angle(wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), 0.25 + float(i) * 0.1))
    out[i, 7] = axis[1] * angle
    q = wp.quat_to_axis_angle(wp.quat_rpy(0.1, 0.2, float(i) * 0.3))
    out[i, 8] = q[1]


@wp.kernel
def loss(data: wp.array(dtype=float, ndim=2), total: wp.array(dtype=float)):
    i = wp.tid()
    k, off, mat = frame(data[i, 0], wp.vec3(data[i, 1], data[i, 2], 1.0))
    wp.atomic_add(total, 0, k * k + wp.dot(off, off) + wp.trace(mat @ mat))


def run():
    rng = np.random.default_rng(12)
    data = wp.array(rng.uniform(-2.0, 2.0, (5, 6)).astype(np.float32), requires_grad=True)
    out = wp.zeros((5, 9), dtype=float)
    iout = wp.zeros((5, 4), dtype=int)
    wp.launch(use_tuples, dim=5, inputs=[data], outputs=[out, iout])
    total = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(loss, dim=5, inputs=[data], outputs=[total])
    tape.backward(total)
    return {"floats": out.numpy(), "ints": iout.numpy(), "loss": total.numpy(), "grad": data.grad.numpy()}


TOLERANCE = {"loss": (1e-5, 1e-5)}
