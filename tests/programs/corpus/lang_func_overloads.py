"""@wp.func overloads by argument type (same name, several signatures), generic functions with
typing.Any parameters, generic kernels with wp.overload (list and dict forms) and with
auto-generated overloads at launch, funcs with default arguments and keyword arguments,
multiple return values unpacked into tuples."""

from typing import Any

import numpy as np
import warp as wp


@wp.func
def weight(x: float):
    return x * 2.0


@wp.func
def weight(x: int):  # noqa: F811  (an overload, as Warp allows)
    return x * 3


@wp.func
def weight(x: wp.vec3):  # noqa: F811
    return wp.length(x)


@wp.func
def weight(x: float, y: float):  # noqa: F811
    return x * y


@wp.func
def square_any(x: Any):
    return x * x


@wp.func
def sum3(a: Any, b: Any, c: Any):
    return a + b + c


@wp.func
def falloff(d: float, radius: float = 1.0, power: int = 2, sharp: bool = False):
    t = wp.clamp(1.0 - d / radius, 0.0, 1.0)
    r = wp.pow(t, float(power))
    if sharp:
        r = r * r
    return r


@wp.func
def stats(a: float, b: float, c: float):
    lo = wp.min(wp.min(a, b), c)
    hi = wp.max(wp.max(a, b), c)
    return lo, hi, (a + b + c) / 3.0


@wp.func
def split_int(n: int):
    return n // 10, n % 10


@wp.kernel
def use_overloads(xs: wp.array(dtype=float), ns: wp.array(dtype=int), vs: wp.array(dtype=wp.vec3),
                  out: wp.array(dtype=float, ndim=2), iout: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    x = xs[i]
    out[i, 0] = weight(x)
    iout[i, 0] = weight(ns[i])
    out[i, 1] = weight(vs[i])
    out[i, 2] = weight(x, 0.5)
    out[i, 3] = square_any(x)
    iout[i, 1] = square_any(ns[i])
    out[i, 4] = wp.length(square_any(2.0) * vs[i])
    d = square_any(wp.float64(x))
    out[i, 5] = float(d)
    out[i, 6] = sum3(x, 1.0, 2.0)
    iout[i, 2] = sum3(ns[i], 1, -ns[i] * 2)
    out[i, 7] = wp.length(sum3(vs[i], vs[i], wp.vec3(1.0)))
    out[i, 8] = falloff(wp.abs(x))
    out[i, 9] = falloff(wp.abs(x), 2.0)
    out[i, 10] = falloff(wp.abs(x), power=3)
    out[i, 11] = falloff(wp.abs(x), sharp=True, radius=1.5)
    lo, hi, mean = stats(x, 0.25, -x)
    out[i, 12] = lo + 10.0 * hi + 100.0 * mean
    tens, ones = split_int(ns[i])
    iout[i, 3] = tens * 100 + ones
    r = stats(x, x * x, 1.0)
    out[i, 13] = r[0] + r[1] - r[2]


@wp.kernel
def scale_generic(a: wp.array(dtype=Any), s: Any, out: wp.array(dtype=Any)):
    i = wp.tid()
    out[i] = a[i] * s + a[i]


wp.overload(scale_generic, [wp.array(dtype=wp.float64), wp.float64, wp.array(dtype=wp.float64)])
wp.overload(scale_generic, {"a": wp.array(dtype=wp.vec2), "s": float, "out": wp.array(dtype=wp.vec2)})


@wp.kernel
def accumulate(a: wp.array(dtype=Any), total: wp.array(dtype=Any)):
    i = wp.tid()
    wp.atomic_add(total, 0, a[i])


def run():
    n = 10
    rng = np.random.default_rng(17)
    xs = wp.array(rng.uniform(-2.0, 2.0, n).astype(np.float32), dtype=float)
    ns = wp.array(rng.integers(-50, 50, n).astype(np.int32), dtype=int)
    vs = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3)
    out = wp.zeros((n, 14), dtype=float)
    iout = wp.zeros((n, 4), dtype=int)
    wp.launch(use_overloads, dim=n, inputs=[xs, ns, vs], outputs=[out, iout])

    ad = wp.array(np.linspace(0.0, 1.0, n), dtype=wp.float64)
    od = wp.zeros(n, dtype=wp.float64)
    wp.launch(scale_generic, dim=n, inputs=[ad, wp.float64(3.0)], outputs=[od])
    a2 = wp.array(rng.uniform(-1.0, 1.0, (n, 2)).astype(np.float32), dtype=wp.vec2)
    o2 = wp.zeros(n, dtype=wp.vec2)
    wp.launch(scale_generic, dim=n, inputs=[a2, 0.5], outputs=[o2])
    ai = wp.array(np.arange(n, dtype=np.int32), dtype=wp.int32)
    ti = wp.zeros(1, dtype=wp.int32)
    wp.launch(accumulate, dim=n, inputs=[ai], outputs=[ti])
    tv = wp.zeros(1, dtype=wp.vec2)
    wp.launch(accumulate, dim=n, inputs=[a2], outputs=[tv])
    return {"floats": out.numpy(), "ints": iout.numpy(), "f64": od.numpy(), "vec2": o2.numpy(),
            "int_total": ti.numpy(), "vec_total": tv.numpy()}


TOLERANCE = {"vec_total": (1e-5, 1e-5)}
