"""Kernels defined inside functions, closing over Python constants and @wp.func objects; module options."""

import numpy as np
import warp as wp

wp.set_module_options({"enable_backward": True})


def make_scaler(factor, offset):
    @wp.kernel
    def scale(a: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = a[i] * factor + offset

    return scale


def make_mapper(fn):
    @wp.kernel
    def apply(a: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = fn(a[i])

    return apply


@wp.func
def cube(x: float):
    return x * x * x


@wp.func
def halve(x: float):
    return x * 0.5


def make_int_kernel(n):
    @wp.kernel(enable_backward=False)
    def tile_mod(out: wp.array(dtype=int)):
        i = wp.tid()
        out[i] = i % n - n // 2

    return tile_mod


def run():
    r = {}
    a = wp.array(np.arange(6, dtype=np.float32) - 2.0)
    out = wp.zeros(6, dtype=float)
    k1 = make_scaler(2.0, 1.0)
    k2 = make_scaler(-3.0, 0.5)
    wp.launch(k1, dim=6, inputs=[a, out])
    r["k1"] = out.numpy().copy()
    wp.launch(k2, dim=6, inputs=[a, out])
    r["k2"] = out.numpy().copy()
    wp.launch(k1, dim=6, inputs=[a, out])
    r["k1_again"] = out.numpy().copy()
    wp.launch(make_mapper(cube), dim=6, inputs=[a, out])
    r["cube"] = out.numpy().copy()
    wp.launch(make_mapper(halve), dim=6, inputs=[a, out])
    r["halve"] = out.numpy().copy()
    o = wp.zeros(10, dtype=int)
    wp.launch(make_int_kernel(4), dim=10, inputs=[o])
    r["mod4"] = o.numpy().copy()
    wp.launch(make_int_kernel(3), dim=10, inputs=[o])
    r["mod3"] = o.numpy().copy()
    opts = wp.get_module_options()
    r["enable_backward_opt"] = bool(opts["enable_backward"])
    return r
