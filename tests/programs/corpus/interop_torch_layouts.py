"""PyTorch tensors of every common layout: transposed (strided) tensors and slices wrapped
without copies, (N, 3, 3) tensors as mat33 arrays, float16/int8/bool tensors, Warp views
exported to torch, and Warp gradients seen through wp.to_torch."""

import numpy as np
import torch
import warp as wp

REQUIRES = ["torch"]

wp.init()


@wp.kernel
def scale_2d(a: wp.array2d(dtype=float), s: float):
    i, j = wp.tid()
    a[i, j] = a[i, j] * s + float(i)


@wp.kernel
def apply_mats(m: wp.array(dtype=wp.mat33), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = m[i] @ v[i] + wp.transpose(m[i]) @ v[i]


@wp.kernel
def mixed(h: wp.array(dtype=wp.float16), b: wp.array(dtype=wp.int8), flag: wp.array(dtype=wp.bool),
          out: wp.array(dtype=float)):
    i = wp.tid()
    v = float(h[i]) * float(b[i])
    if flag[i]:
        v = -v
    out[i] = v


@wp.kernel
def cube(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i] * x[i]


def run():
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t = base.t()  # (4, 3) with strides (1, 4)
    a = wp.from_torch(t)
    wp.launch(scale_2d, dim=a.shape, inputs=[a, 2.0])
    strided_shape = np.array(a.shape)
    strided_strides = np.array(a.strides)

    cols = torch.arange(20, dtype=torch.float32).reshape(5, 4)[:, 1:3]
    c = wp.from_torch(cols)
    wp.launch(scale_2d, dim=c.shape, inputs=[c, -1.0])

    m_t = torch.arange(27, dtype=torch.float32).reshape(3, 3, 3) / 10.0
    v_t = torch.tensor([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5], [2.0, -1.0, 0.0]])
    m = wp.from_torch(m_t, dtype=wp.mat33)
    out = wp.zeros(3, dtype=wp.vec3)
    wp.launch(apply_mats, dim=3, inputs=[m, wp.from_torch(v_t, dtype=wp.vec3)], outputs=[out])
    out_t = wp.to_torch(out)

    h = wp.from_torch(torch.tensor([0.5, 1.25, -2.0, 3.0], dtype=torch.float16))
    b = wp.from_torch(torch.tensor([3, -4, 5, 127], dtype=torch.int8))
    flag = wp.from_torch(torch.tensor([True, False, True, False]))
    mixed_out = wp.zeros(4, dtype=float)
    wp.launch(mixed, dim=4, inputs=[h, b, flag], outputs=[mixed_out])

    w = wp.array(np.arange(10, dtype=np.float32))
    view_t = wp.to_torch(w[2:8])
    view_t *= 10.0

    x = wp.array(np.linspace(-1.0, 1.0, 5, dtype=np.float32), requires_grad=True)
    y = wp.zeros(5, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(cube, dim=5, inputs=[x], outputs=[y])
    y.grad = wp.from_torch(torch.full((5,), 2.0))
    tape.backward()
    x_t = wp.to_torch(x)

    return {
        "base": base.numpy(),
        "strided_shape": strided_shape,
        "strided_strides": strided_strides,
        "cols": cols.numpy(),
        "cols_source_strides": np.array(c.strides),
        "out_t": out_t.numpy(),
        "out_t_shape": np.array(out_t.shape),
        "m_numpy_shape": np.array(m.numpy().shape),
        "mixed": mixed_out.numpy(),
        "h_dtype": str(wp.to_torch(h).dtype),
        "w": w.numpy(),
        "view_t_shape": np.array(view_t.shape),
        "x_t_grad": x_t.grad.numpy(),
        "x_t_requires_grad": x_t.requires_grad,
    }
