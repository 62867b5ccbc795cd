"""DLPack with shapes and strides: vector arrays exported to torch as (N, 3) tensors, strided
torch tensors imported, 2-D int64 arrays round-tripped, and Warp arrays consumed through
torch.from_dlpack's protocol (`__dlpack__` / `__dlpack_device__`)."""

import numpy as np
import torch
import torch.utils.dlpack
import warp as wp

REQUIRES = ["torch"]

wp.init()


@wp.kernel
def spin(v: wp.array(dtype=wp.vec3), q: wp.quat):
    i = wp.tid()
    v[i] = wp.quat_rotate(q, v[i])


@wp.kernel
def bump(a: wp.array2d(dtype=wp.int64)):
    i, j = wp.tid()
    a[i, j] = a[i, j] * wp.int64(3) - wp.int64(j)


def run():
    v = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=wp.vec3)
    v_t = torch.from_dlpack(v)  # protocol form
    q = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), 0.25)
    wp.launch(spin, dim=4, inputs=[v, q])

    big = torch.arange(24, dtype=torch.int64).reshape(4, 6)
    sub = big[:, ::2]  # strided
    a = wp.from_dlpack(sub)
    wp.launch(bump, dim=a.shape, inputs=[a])

    r = wp.array(np.array([[1, 2], [3, 4]], dtype=np.int64))
    r_back = wp.from_dlpack(wp.to_dlpack(r))
    wp.launch(bump, dim=(2, 2), inputs=[r_back])

    dev_type, dev_id = v.__dlpack_device__()

    return {
        "v_t": v_t.numpy(),
        "v_t_shape": np.array(v_t.shape),
        "big": big.numpy(),
        "a_strides": np.array(a.strides),
        "r": r.numpy(),
        "r_back_dtype": str(r_back.dtype.__name__),
        "dev_type": int(dev_type),
        "dev_id": int(dev_id),
    }


TOLERANCE = {"v_t": (1e-5, 1e-5)}
