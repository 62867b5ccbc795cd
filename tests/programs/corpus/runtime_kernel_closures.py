"""Kernels defined inside functions, closing over Python constants and @wp.func objects; module options."""

import numpy as np
import warp as wp

wp.set_module_options({"enable_backward": True})

GAIN = 2.0


@wp.kernel
def use_gain(a: wp.array(dtype=float)):
    a[wp.tid()] = GAIN


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


def make_late():
    v = 1.0

    @wp.kernel
    def late(a: wp.array(dtype=float)):
        a[wp.tid()] = v

    v = 9.0  # (a closure reads the cell's value when the kernel is built)
    return late


def make_static(pair, flag, offset):
    @wp.kernel
    def branchy(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        if wp.static(flag):
            a[i] = wp.static(pair[0]) + wp.static(pair[1])
        else:
            a[i] = -1.0
        v[i] = offset * float(i)

    return branchy


def run():
    global GAIN
    r = {}
    g = wp.zeros(2, dtype=float)
    wp.launch(use_gain, dim=2, inputs=[g])
    r["gain_first"] = g.numpy().copy()
    GAIN = 5.0  # (a module's globals are read when it is built: the launch keeps 2.0)
    wp.launch(use_gain, dim=2, inputs=[g])
    r["gain_after_change"] = g.numpy().copy()
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
    loop_kernels = []
    for s in (1.0, 2.0, 3.0):
        @wp.kernel
        def from_loop(a: wp.array(dtype=float)):
            a[wp.tid()] = s

        loop_kernels.append(from_loop)
    loop_results = []
    for k in loop_kernels:
        wp.launch(k, dim=6, inputs=[out])
        loop_results.append(out.numpy()[0])
    r["loop_closures"] = np.array(loop_results)
    wp.launch(make_late(), dim=6, inputs=[out])
    r["late_binding"] = out.numpy().copy()
    vs = wp.zeros(6, dtype=wp.vec3)
    for flag in (True, False):
        wp.launch(make_static((1.5, 2.5), flag, wp.vec3(1.0, 2.0, 3.0)), dim=6, inputs=[out, vs])
        r["static_" + str(flag)] = out.numpy().copy()
    r["vec_closure"] = vs.numpy().copy()
    opts = wp.get_module_options()
    r["enable_backward_opt"] = bool(opts["enable_backward"])
    return r
