"""C++ snippets (`wp.func_native`) as Warp's documentation writes them, on the CPU: a scalar
snippet with its adjoint, an array snippet (saxpy) whose adjoint writes the adjoint arrays,
a `wp.ref` parameter, a vector result and `wp.address_of` a local."""

import numpy as np
import warp as wp

REQUIRES = ["c++"]  # (weft compiles snippets with the system's C++ compiler; Warp with its own)


@wp.func_native("return a * a * b;", adj_snippet="adj_a += 2.0f * a * b * adj_ret;\nadj_b += a * a * adj_ret;")
def sq_times(a: float, b: float) -> float: ...


@wp.func_native("out[tid] = a * x[tid] + y[tid];",
                adj_snippet="adj_a += x[tid] * adj_out[tid];\n"
                            "adj_x[tid] += a * adj_out[tid];\nadj_y[tid] += adj_out[tid];")
def saxpy(a: wp.float32, x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32),
          out: wp.array(dtype=wp.float32), tid: int): ...


@wp.func_native("x = x + y;", adj_snippet="adj_y += adj_x;")
def accumulate(x: wp.ref[wp.float32], y: wp.float32): ...


@wp.func_native("return wp::vec_t<3, wp::float32>(x, 2.0f * x, x * x);")
def spread(x: wp.float32) -> wp.vec3: ...


@wp.func_native("*(int32_t*)ptr = 7 * k;")
def store_seven_times(ptr: wp.uint64, k: int): ...


@wp.kernel
def scalar_kernel(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = sq_times(a[i], b[i]) + wp.sin(a[i])


@wp.kernel
def saxpy_kernel(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float)):
    tid = wp.tid()
    saxpy(a, x, y, out, tid)


@wp.kernel(enable_backward=False)
def misc_kernel(x: wp.array(dtype=float), total: wp.array(dtype=float), vs: wp.array(dtype=wp.vec3),
                ks: wp.array(dtype=wp.int32)):
    i = wp.tid()
    acc = wp.float32(1.0)
    accumulate(acc, x[i])
    accumulate(acc, x[i])
    total[i] = acc
    vs[i] = spread(x[i])
    k = wp.int32(0)
    store_seven_times(wp.address_of(k), i)
    ks[i] = k


def run():
    n = 6
    rng = np.random.default_rng(5)
    a = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    b = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scalar_kernel, dim=n, inputs=[a, b], outputs=[out])
    tape.backward(grads={out: wp.ones(n, dtype=float)})
    result = {"out": out.numpy().copy(), "adj_a": a.grad.numpy().copy(), "adj_b": b.grad.numpy().copy()}

    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    y = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    z = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(saxpy_kernel, dim=n, inputs=[2.5, x, y], outputs=[z])
    tape.backward(grads={z: wp.array(np.linspace(0.5, 1.5, n).astype(np.float32))})
    result.update({"z": z.numpy().copy(), "adj_x": x.grad.numpy().copy(), "adj_y": y.grad.numpy().copy()})

    total = wp.zeros(n, dtype=float)
    vs = wp.zeros(n, dtype=wp.vec3)
    ks = wp.zeros(n, dtype=wp.int32)
    wp.launch(misc_kernel, dim=n, inputs=[x], outputs=[total, vs, ks])
    result.update({"total": total.numpy().copy(), "vs": vs.numpy().copy(), "ks": ks.numpy().copy()})
    return result
