"""JAX interop on the CPU: wp.from_jax / wp.to_jax, dtype mapping, vector dtypes from
(N, 3) JAX arrays, results that come back to JAX and are used there, an output buffer made
with jnp.zeros and filled by a kernel, and to_jax sharing the array's memory."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import warp as wp  # noqa: E402

REQUIRES = ["jax"]

wp.init()


@wp.kernel
def normalize(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), lens: wp.array(dtype=float)):
    i = wp.tid()
    lens[i] = wp.length(v[i])
    out[i] = wp.normalize(v[i])


@wp.kernel
def cumulative(a: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    s = wp.int32(0)
    for j in range(i + 1):
        s += a[j]
    out[i] = s


def run():
    v_j = jnp.arange(15, dtype=jnp.float32).reshape(5, 3) - 7.0
    v = wp.from_jax(v_j, dtype=wp.vec3)
    out = wp.zeros(5, dtype=wp.vec3)
    lens = wp.zeros(5, dtype=float)
    wp.launch(normalize, dim=5, inputs=[v], outputs=[out, lens])
    out_j = wp.to_jax(out)
    lens_j = wp.to_jax(lens)
    recombined = out_j * lens_j[:, None]

    a = wp.from_jax(jnp.array([3, -1, 4, 1, -5, 9], dtype=jnp.int32))
    c = wp.empty_like(a)
    wp.launch(cumulative, dim=6, inputs=[a], outputs=[c])

    # a kernel writes into the JAX buffer (Warp's arrays over JAX memory are writable)
    out_j = jnp.zeros(6, dtype=jnp.int32)
    wp.launch(cumulative, dim=6, inputs=[a], outputs=[wp.from_jax(out_j)])
    # to_jax shares memory: a later launch into the Warp array shows in the JAX array
    shared = wp.zeros(6, dtype=wp.int32)
    shared_j = wp.to_jax(shared)
    wp.launch(cumulative, dim=6, inputs=[a], outputs=[shared])

    dtypes = [str(wp.dtype_to_jax(t).dtype if hasattr(wp.dtype_to_jax(t), "dtype") else wp.dtype_to_jax(t))
              for t in (wp.float32, wp.int32, wp.uint8, wp.float16)]
    back = [wp.dtype_from_jax(t).__name__ for t in (jnp.float32, jnp.int32, jnp.int8, jnp.float16)]

    return {
        "v_shape": np.array(v.shape),
        "out": np.asarray(out_j),
        "out_j_shape": np.array(out_j.shape),
        "lens": np.asarray(lens_j),
        "recombined": np.asarray(recombined),
        "cumulative": np.asarray(wp.to_jax(c)),
        "out_j": np.asarray(out_j),
        "shared_j": np.asarray(shared_j),
        "jax_dtypes": np.array(dtypes),
        "warp_dtypes": np.array(back),
        "device": str(wp.device_from_jax(v_j.devices().pop() if hasattr(v_j, "devices") else None)),
    }
