"""Control flow in kernels: ranges with start/stop/step (negative too), while, break/continue,
early return, nested loops and conditional expressions, on integer and float data."""

import numpy as np
import warp as wp


@wp.func
def collatz_steps(n: int):
    steps = int(0)
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
        if steps > 500:
            break
    return steps


@wp.func
def first_negative(values: wp.array(dtype=float), start: int, stop: int):
    for j in range(start, stop):
        if values[j] < 0.0:
            return j
    return -1


@wp.kernel
def ranges(n_arr: wp.array(dtype=int), out: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    n = n_arr[i]
    # forward with start/stop
    s = int(0)
    for k in range(2, n):
        s += k
    out[i, 0] = s
    # negative step with runtime bounds
    s = int(0)
    for k in range(n, -3, -2):
        s = s * 3 + k
    out[i, 1] = s
    # positive step > 1
    c = int(0)
    for _k in range(1, n * 3, 4):
        c += 1
    out[i, 2] = c
    # empty ranges
    e = int(7)
    for _k in range(n, 0):
        e += 100
    for _k in range(0, n, -1):
        e += 1000
    out[i, 3] = e
    # continue / break inside nested loops
    t = int(0)
    for a in range(n):
        if a == 1:
            continue
        for b in range(n):
            if b > a:
                break
            if (a + b) % 3 == 0:
                continue
            t += a * 10 + b
    out[i, 4] = t
    # while with break and continue
    w = int(0)
    k = int(0)
    while True:
        k += 1
        if k % 2 == 0:
            continue
        w += k
        if k > n:
            break
    out[i, 5] = w
    out[i, 6] = collatz_steps(n + 1)
    # single-arg range with a negative count runs zero times
    z = int(0)
    for _k in range(n - 6):
        z += 1
    out[i, 7] = z


@wp.kernel
def early_exit(values: wp.array(dtype=float), found: wp.array(dtype=int), scaled: wp.array(dtype=float)):
    i = wp.tid()
    found[i] = first_negative(values, i, values.shape[0])
    v = values[i]
    if v > 2.0:
        scaled[i] = 2.0
        return
    elif v < -2.0:
        scaled[i] = -2.0
        return
    scaled[i] = v * v if v > 0.0 else -v * 0.5


@wp.kernel
def conditional_expr(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    a = x[i]
    b = 1.0 if a > 0.5 else (0.0 if a > -0.5 else -1.0)
    c = a if (a > 0.0 and a < 1.0) else 0.25
    d = a > 0.0 or b < 0.0
    e = not d
    f = 0.0
    if e:
        f = 3.0
    y[i] = wp.vec2(b + c, f)


def run():
    n_arr = wp.array(np.arange(10, dtype=np.int32), dtype=int)
    out = wp.zeros((10, 8), dtype=int)
    wp.launch(ranges, dim=10, inputs=[n_arr], outputs=[out])

    rng = np.random.default_rng(5)
    vals = rng.uniform(-3.0, 3.0, 32).astype(np.float32)
    values = wp.array(vals, dtype=float)
    found = wp.zeros(32, dtype=int)
    scaled = wp.zeros(32, dtype=float)
    wp.launch(early_exit, dim=32, inputs=[values], outputs=[found, scaled])

    x = wp.array(np.linspace(-1.5, 1.5, 13, dtype=np.float32), dtype=float)
    y = wp.zeros(13, dtype=wp.vec2)
    wp.launch(conditional_expr, dim=13, inputs=[x], outputs=[y])
    return {"ranges": out.numpy(), "found": found.numpy(), "scaled": scaled.numpy(), "cond": y.numpy()}
