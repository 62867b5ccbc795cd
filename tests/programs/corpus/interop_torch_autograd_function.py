"""A torch.autograd.Function that runs a Warp kernel forward and a Tape backward, checked
against torch's own autograd and used inside a larger torch graph."""

import numpy as np
import torch
import warp as wp

REQUIRES = ["torch"]

wp.init()


@wp.kernel
def soft_clamp(x: wp.array(dtype=float), scale: float, y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = scale * wp.tanh(x[i] / scale) + 0.1 * x[i] * x[i]


@wp.kernel
def pair_dist(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), d: wp.array(dtype=float)):
    i = wp.tid()
    d[i] = wp.length(a[i] - b[i])


class SoftClamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.tape = wp.Tape()
        ctx.x = wp.from_torch(x, requires_grad=True)
        ctx.y = wp.zeros_like(ctx.x, requires_grad=True)
        with ctx.tape:
            wp.launch(soft_clamp, dim=len(x), inputs=[ctx.x, scale], outputs=[ctx.y])
        return wp.to_torch(ctx.y)

    @staticmethod
    def backward(ctx, grad_y):
        ctx.y.grad = wp.from_torch(grad_y.contiguous())
        ctx.tape.backward()
        grad_x = wp.to_torch(ctx.x.grad).clone()
        ctx.tape.zero()
        return grad_x, None


class PairDist(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.a = wp.from_torch(a, dtype=wp.vec3, requires_grad=True)
        ctx.b = wp.from_torch(b, dtype=wp.vec3, requires_grad=True)
        ctx.d = wp.zeros(a.shape[0], dtype=float, requires_grad=True)
        ctx.tape = wp.Tape()
        with ctx.tape:
            wp.launch(pair_dist, dim=a.shape[0], inputs=[ctx.a, ctx.b], outputs=[ctx.d])
        return wp.to_torch(ctx.d)

    @staticmethod
    def backward(ctx, grad_d):
        ctx.tape.backward(grads={ctx.d: wp.from_torch(grad_d.contiguous())})
        return wp.to_torch(ctx.a.grad).clone(), wp.to_torch(ctx.b.grad).clone()


def run():
    torch.manual_seed(2)
    x = torch.linspace(-3.0, 3.0, 13, requires_grad=True)
    y = SoftClamp.apply(x, 2.0)
    loss = (y * torch.cos(x.detach())).sum()
    loss.backward()

    x_ref = x.detach().clone().requires_grad_(True)
    y_ref = 2.0 * torch.tanh(x_ref / 2.0) + 0.1 * x_ref * x_ref
    (y_ref * torch.cos(x_ref.detach())).sum().backward()

    a = torch.randn(7, 3, requires_grad=True)
    b = torch.randn(7, 3, requires_grad=True)
    d = PairDist.apply(a, b)
    # no tape.zero() here: from_torch made a.grad the adjoint's memory, so the tape already wrote
    # into a.grad and torch then adds the returned gradient on top (twice torch's value)
    (d * d.detach() + 2.0 * d).sum().backward()
    a_ref = a.detach().clone().requires_grad_(True)
    b_ref = b.detach().clone().requires_grad_(True)
    d_ref = (a_ref - b_ref).norm(dim=1)
    (d_ref * d_ref.detach() + 2.0 * d_ref).sum().backward()

    return {
        "y": y.detach().numpy(),
        "x_grad": x.grad.numpy(),
        "x_grad_matches_torch": bool(np.allclose(x.grad.numpy(), x_ref.grad.numpy(), atol=1e-5)),
        "d": d.detach().numpy(),
        "a_grad": a.grad.numpy(),
        "b_grad": b.grad.numpy(),
        "a_grad_matches_torch": bool(np.allclose(a.grad.numpy(), a_ref.grad.numpy(), atol=1e-5)),
    }
