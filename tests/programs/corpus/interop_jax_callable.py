"""JAX calling Warp on the CPU: wp.jax_callable around a Python function that launches
several kernels (with output_dims and a static scalar), jax_kernel with vector arrays,
2-D launches, vmap of a pointwise kernel over a batch and a jitted pipeline mixing JAX and
Warp ops. (vmap of the blur stencil is left out: Warp folds the batch into the first
dimension, so neighbouring batch elements bleed into each other; weft's test_jax_kernel.py
covers it.)"""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import warp as wp  # noqa: E402

REQUIRES = ["jax"]


@wp.kernel
def blur(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float)):
    i, j = wp.tid()
    n = src.shape[0]
    m = src.shape[1]
    s = float(0.0)  # noqa: UP018 - a variable (a literal would be a constant)
    c = float(0.0)  # noqa: UP018 - a variable (a literal would be a constant)
    for di in range(-1, 2):
        for dj in range(-1, 2):
            ii = i + di
            jj = j + dj
            if ii >= 0 and ii < n and jj >= 0 and jj < m:
                s += src[ii, jj]
                c += 1.0
    dst[i, j] = s / c


@wp.kernel
def threshold(src: wp.array2d(dtype=float), level: float, mask: wp.array2d(dtype=wp.int32)):
    i, j = wp.tid()
    mask[i, j] = wp.where(src[i, j] > level, 1, 0)


def blur_and_mask(src: wp.array2d(dtype=float), level: float, blurred: wp.array2d(dtype=float),
                  mask: wp.array2d(dtype=wp.int32)):
    wp.launch(blur, dim=src.shape, inputs=[src], outputs=[blurred])
    wp.launch(threshold, dim=src.shape, inputs=[blurred, level], outputs=[mask])


@wp.kernel
def cross_all(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), c: wp.array(dtype=wp.vec3),
              d: wp.array(dtype=float)):
    i = wp.tid()
    c[i] = wp.cross(a[i], b[i])
    d[i] = wp.dot(a[i], b[i])


jax_blur_mask = wp.jax_callable(blur_and_mask, num_outputs=2)
jax_cross = wp.jax_kernel(cross_all, num_outputs=2)


@jax.jit
def pipeline(img):
    blurred, mask = jax_blur_mask(img, 0.5)
    return blurred * 2.0 - 1.0, jnp.sum(mask)


def run():
    img = jnp.asarray((np.arange(42).reshape(6, 7) % 5) / 4.0, dtype=jnp.float32)
    scaled, count = pipeline(img)
    blurred, mask = jax_blur_mask(img, 0.25, output_dims={"blurred": (6, 7), "mask": (6, 7)})

    a = jnp.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 2.0, 3.0]], dtype=jnp.float32)
    b = jnp.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.5, 2.0]], dtype=jnp.float32)
    c, d = jax.jit(jax_cross)(a, b)

    a_batch = jnp.stack([a, 2.0 * a, a - 1.0, -a])
    vc, vd = jax.vmap(jax_cross, in_axes=(0, None))(a_batch, b)

    return {
        "scaled": np.asarray(scaled),
        "count": np.asarray(count),
        "blurred": np.asarray(blurred),
        "mask": np.asarray(mask),
        "c": np.asarray(c),
        "d": np.asarray(d),
        "vmapped_c": np.asarray(vc),
        "vmapped_d": np.asarray(vd),
        "vmapped_shape": np.array(vc.shape),
    }
