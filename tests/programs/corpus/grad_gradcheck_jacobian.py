"""warp.autograd: gradcheck on a kernel (passes for a smooth kernel, fails for a deliberately
wrong custom gradient), jacobian and jacobian_fd for a kernel with two inputs and two outputs
(with and without input_output_mask), and on a Python function that launches kernels."""

import numpy as np
import warp as wp
import warp.autograd


@wp.kernel
def two_by_two(
    x: wp.array(dtype=float),
    v: wp.array(dtype=wp.vec2),
    y: wp.array(dtype=float),
    w: wp.array(dtype=wp.vec2),
):
    i = wp.tid()
    y[i] = x[i] * v[i][0] + wp.sin(v[i][1])
    w[i] = wp.vec2(x[i] * x[i], v[i][0] * v[i][1])


@wp.func
def bad(x: float):
    return x * x


@wp.func_grad(bad)
def adj_bad(x: float, adj_ret: float):
    wp.adjoint[x] += 3.0 * x * adj_ret


@wp.kernel
def bad_kernel(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = bad(x[i])


@wp.kernel
def smooth(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.exp(0.3 * x[i]) * wp.cos(x[i])


@wp.kernel
def double_it(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 2.0 * x[i] + x[(i + 1) % x.shape[0]]


def python_function(x):
    y = wp.zeros_like(x)
    z = wp.zeros_like(x)
    wp.launch(smooth, dim=x.shape[0], inputs=[x], outputs=[y])
    wp.launch(double_it, dim=x.shape[0], inputs=[y], outputs=[z])
    return z


def run():
    n = 3
    rng = np.random.default_rng(12)
    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    v = wp.array(rng.uniform(-1.0, 1.0, (n, 2)).astype(np.float32), dtype=wp.vec2, requires_grad=True)
    y = wp.zeros(n, dtype=float, requires_grad=True)
    w = wp.zeros(n, dtype=wp.vec2, requires_grad=True)
    out = {}
    jac = warp.autograd.jacobian(two_by_two, dim=n, inputs=[x, v], outputs=[y, w])
    out["jac_keys"] = np.array(sorted(jac.keys()), dtype=np.int64)
    for (i, o), j in sorted(jac.items()):
        out[f"jac_{i}_{o}"] = j.numpy().copy()
    jfd = warp.autograd.jacobian_fd(two_by_two, dim=n, inputs=[x, v], outputs=[y, w], eps=1e-3)
    for (i, o), j in sorted(jfd.items()):
        out[f"jfd_{i}_{o}"] = j.numpy().copy()
    masked = warp.autograd.jacobian(two_by_two, dim=n, inputs=[x, v], outputs=[y, w],
                                    input_output_mask=[("v", "w")])
    out["masked_keys"] = np.array(sorted(masked.keys()), dtype=np.int64)

    a = wp.array(rng.uniform(-1.0, 1.0, 5).astype(np.float32), requires_grad=True)
    b = wp.zeros(5, dtype=float, requires_grad=True)
    out["gradcheck_smooth"] = warp.autograd.gradcheck(smooth, dim=5, inputs=[a], outputs=[b],
                                                      show_summary=False, raise_exception=False)
    out["gradcheck_bad"] = warp.autograd.gradcheck(bad_kernel, dim=5, inputs=[a], outputs=[b],
                                                   show_summary=False, raise_exception=False)
    out["a_restored"] = a.numpy().copy()
    jp = warp.autograd.jacobian(python_function, inputs=[a])
    out["jac_python"] = jp[(0, 0)].numpy().copy()
    jpfd = warp.autograd.jacobian_fd(python_function, inputs=[a], eps=1e-3)
    out["jacfd_python"] = jpfd[(0, 0)].numpy().copy()
    out["gradcheck_python"] = warp.autograd.gradcheck(python_function, inputs=[a], show_summary=False,
                                                      raise_exception=False)
    return out


TOLERANCE = {"jfd_0_0": (1e-3, 1e-3), "jfd_0_1": (1e-3, 1e-3), "jfd_1_0": (1e-3, 1e-3),
             "jfd_1_1": (1e-3, 1e-3), "jacfd_python": (1e-3, 1e-3)}
