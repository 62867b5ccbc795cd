"""Warp kernels called from JAX on the CPU with wp.jax_kernel: jitted calls, several outputs,
scalar static arguments, launch_dims and output_dims, an in-out argument, and gradients
through enable_backward."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from functools import partial  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import warp as wp  # noqa: E402

REQUIRES = ["jax"]


@wp.kernel
def scale_add(a: wp.array(dtype=float), b: wp.array(dtype=float), s: float, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = s * a[i] + b[i]


@wp.kernel
def polar(p: wp.array(dtype=wp.vec2), r: wp.array(dtype=float), theta: wp.array(dtype=float)):
    i = wp.tid()
    r[i] = wp.length(p[i])
    theta[i] = wp.atan2(p[i][1], p[i][0])


@wp.kernel
def outer_table(x: wp.array(dtype=float), table: wp.array2d(dtype=float)):
    i, j = wp.tid()
    table[i, j] = x[i] * float(j + 1)


@wp.kernel
def accumulate(x: wp.array(dtype=float), acc: wp.array(dtype=float)):
    i = wp.tid()
    acc[i] = acc[i] + x[i] * x[i]


@wp.kernel
def smooth_energy(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.sin(x[i]) * x[i]


jax_scale_add = wp.jax_kernel(scale_add)
jax_polar = wp.jax_kernel(polar, num_outputs=2)
jax_table = wp.jax_kernel(outer_table)
jax_accumulate = wp.jax_kernel(accumulate, in_out_argnames=["acc"])
jax_energy = wp.jax_kernel(smooth_energy, enable_backward=True)


@partial(jax.jit, static_argnames=["s"])
def f(a, b, s):
    (out,) = jax_scale_add(a, b, s)
    return out * 2.0


@jax.jit
def table_of(x):
    (t,) = jax_table(x, launch_dims=(x.shape[0], 4), output_dims={"table": (x.shape[0], 4)})
    return t


def energy_sum(x):
    (y,) = jax_energy(x)
    return jnp.sum(y)


def run():
    a = jnp.arange(8, dtype=jnp.float32)
    b = jnp.full(8, 0.25, dtype=jnp.float32)
    out = f(a, b, 1.5)

    pts = jnp.array([[1.0, 0.0], [0.0, 2.0], [-3.0, 4.0], [-1.0, -1.0]], dtype=jnp.float32)
    r, theta = jax.jit(jax_polar)(pts)

    t = table_of(jnp.array([1.0, -2.0, 0.5], dtype=jnp.float32))

    acc0 = jnp.ones(5, dtype=jnp.float32)
    (acc,) = jax.jit(jax_accumulate)(jnp.arange(5, dtype=jnp.float32), acc0)

    x = jnp.linspace(-2.0, 2.0, 9, dtype=jnp.float32)
    value, grad = jax.value_and_grad(energy_sum)(x)

    outputs = jax_polar(pts)
    return {
        "outputs_kind": type(outputs).__name__,
        "out": np.asarray(out),
        "r": np.asarray(r),
        "theta": np.asarray(theta),
        "table": np.asarray(t),
        "acc": np.asarray(acc),
        "energy": np.asarray(value),
        "energy_grad": np.asarray(grad),
        "energy_grad_ref": np.asarray(jnp.sin(x) + x * jnp.cos(x)),
    }
