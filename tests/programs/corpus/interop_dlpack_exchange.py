"""DLPack: wp.from_dlpack on torch tensors and numpy arrays, wp.to_dlpack consumed by torch,
the __dlpack__ protocol used by numpy, all sharing memory."""

import numpy as np
import torch
import torch.utils.dlpack
import warp as wp

REQUIRES = ["torch"]

wp.init()


@wp.kernel
def square(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * a[i]


@wp.kernel
def rotate(v: wp.array(dtype=wp.vec2), angle: float):
    i = wp.tid()
    c = wp.cos(angle)
    s = wp.sin(angle)
    p = v[i]
    v[i] = wp.vec2(c * p[0] - s * p[1], s * p[0] + c * p[1])


@wp.kernel
def mark(m: wp.array2d(dtype=wp.int32)):
    i, j = wp.tid()
    m[i, j] = m[i, j] + i - j


def run():
    t = torch.arange(6, dtype=torch.float32) - 2.0
    a = wp.from_dlpack(t)
    wp.launch(square, dim=6, inputs=[a])
    t_after = t.numpy().copy()

    v_t = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 4.0]])
    v = wp.from_dlpack(v_t, dtype=wp.vec2)
    wp.launch(rotate, dim=3, inputs=[v, 0.5])

    w = wp.array(np.arange(12, dtype=np.int32).reshape(3, 4))
    w_t = torch.utils.dlpack.from_dlpack(wp.to_dlpack(w))
    w_t += 100
    wp.launch(mark, dim=w.shape, inputs=[w])

    n = np.from_dlpack(wp.array(np.linspace(0.0, 1.0, 5, dtype=np.float64)))
    from_np = wp.from_dlpack(np.arange(4, dtype=np.float32))
    wp.launch(square, dim=4, inputs=[from_np])

    return {
        "t_after": t_after,
        "v_t": v_t.numpy(),
        "v_dtype_is_vec2": v.dtype == wp.vec2,
        "w": w.numpy(),
        "w_t": w_t.numpy(),
        "w_t_dtype": str(w_t.dtype),
        "n": n,
        "from_np": from_np.numpy(),
        "from_np_dtype": str(from_np.numpy().dtype),
    }
