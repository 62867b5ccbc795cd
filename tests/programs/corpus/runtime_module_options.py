"""Module and kernel options: set_module_options/get_module_options, @wp.kernel(enable_backward=False),
@wp.kernel(module="unique"), and how launch converts Python and numpy scalars for parameters."""

import numpy as np
import warp as wp

wp.set_module_options({"max_unroll": 4})


@wp.kernel
def accumulate(a: wp.array(dtype=float), s: float, n: int, flip: wp.bool, d: wp.float64):
    i = wp.tid()
    v = s * float(n) + float(d)
    if flip:
        v = -v
    a[i] = a[i] + v


@wp.kernel
def unrolled(out: wp.array(dtype=int)):
    i = wp.tid()
    total = int(0)  # noqa: UP018 (a dynamic variable, as Warp requires)
    for k in range(8):
        total += k * i
    out[i] = total


def make_doubler():
    @wp.kernel(enable_backward=False, module="unique")
    def double(a: wp.array(dtype=float), b: wp.array(dtype=float)):
        i = wp.tid()
        b[i] = a[i] * 2.0

    return double


@wp.kernel
def square(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] = a[i] * a[i]


def run():
    r = {}
    r["max_unroll"] = wp.get_module_options()["max_unroll"]
    a = wp.zeros(3, dtype=float)
    wp.launch(accumulate, dim=3, inputs=[a, 2, 3, False, 0.5])
    wp.launch(accumulate, dim=3, inputs=[a, np.float64(0.25), np.int64(2), np.bool_(True), wp.float64(1.0)])
    wp.launch(accumulate, dim=3, inputs=[a, wp.float16(1.5), wp.int32(1), 0, np.float32(2.0)])
    wp.launch(accumulate, dim=3, inputs=[a, np.array(0.5), 2, True, 0])
    r["a"] = a.numpy().copy()
    o = wp.zeros(5, dtype=int)
    wp.launch(unrolled, dim=5, inputs=[o])
    r["unrolled"] = o.numpy().copy()
    x = wp.array(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    y = wp.zeros(2, dtype=float, requires_grad=True)
    z = wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square, dim=2, inputs=[x, y])
        wp.launch(make_doubler(), dim=2, inputs=[y, z])
    r["z"] = z.numpy().copy()
    y.grad.fill_(1.0)
    tape.backward(grads={z: wp.ones(2, dtype=float)})
    r["x_grad_through_no_backward"] = x.grad.numpy().copy()
    return r
