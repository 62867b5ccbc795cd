"""PyTorch gradients: arrays from tensors with requires_grad share `.grad` memory with the
tensors, a Tape backward fills the torch gradients, and wp.to_torch exposes Warp gradients."""

import numpy as np
import torch
import warp as wp

REQUIRES = ["torch"]

wp.init()


@wp.kernel
def energy(pos: wp.array(dtype=wp.vec2), k: float, out: wp.array(dtype=float)):
    i = wp.tid()
    p = pos[i]
    d = wp.length(p) - 1.0
    wp.atomic_add(out, 0, 0.5 * k * d * d + wp.sin(p[0]) * p[1])


@wp.kernel
def weighted(w: wp.array(dtype=float), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, w[i] * x[i] * x[i])


def run():
    torch.manual_seed(1)
    pos_t = torch.randn(10, 2, requires_grad=True)
    pos = wp.from_torch(pos_t, dtype=wp.vec2)
    shares_grad = pos.requires_grad and pos.grad is not None
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(energy, dim=10, inputs=[pos, 3.0], outputs=[out])
    tape.backward(loss=out)
    # the adjoint landed in the torch tensor's .grad
    pos_grad = pos_t.grad.numpy().copy()

    # torch computes the same energy: its autograd gradient is the reference
    ref_pos = pos_t.detach().clone().requires_grad_(True)
    d = ref_pos.norm(dim=1) - 1.0
    ref_e = (0.5 * 3.0 * d * d + torch.sin(ref_pos[:, 0]) * ref_pos[:, 1]).sum()
    ref_e.backward()

    # Warp-owned arrays exposed to torch: the tensor's grad is the Warp grad
    w = wp.array(np.linspace(0.5, 2.0, 6, dtype=np.float32), requires_grad=True)
    x = wp.array(np.arange(6, dtype=np.float32) - 2.0, requires_grad=True)
    total = wp.zeros(1, dtype=float, requires_grad=True)
    tape2 = wp.Tape()
    with tape2:
        wp.launch(weighted, dim=6, inputs=[w, x], outputs=[total])
    tape2.backward(loss=total)
    x_t = wp.to_torch(x)
    w_t = wp.to_torch(w, requires_grad=False)
    tape2.zero()
    zeroed = x_t.grad.numpy().copy()
    tape2.backward(grads={total: wp.array([2.0], dtype=float)})

    return {
        "energy": out.numpy(),
        "shares_grad": shares_grad,
        "pos_grad": pos_grad,
        "torch_pos_grad": ref_pos.grad.numpy(),
        "x_t_requires_grad": x_t.requires_grad,
        "w_t_requires_grad": w_t.requires_grad,
        "x_t_grad_after_zero": zeroed,
        "x_t_grad": x_t.grad.numpy(),
        "w_grad": w.grad.numpy(),
        "total": total.numpy(),
    }


TOLERANCE = {"energy": (1e-5, 1e-5), "total": (1e-5, 1e-5), "torch_pos_grad": (1e-5, 1e-5)}
