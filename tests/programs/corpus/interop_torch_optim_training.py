"""Training with torch.optim through a Warp kernel: a torch.autograd.Function wraps a Warp
forward and its Tape backward; Adam and SGD fit a small model for a few fixed steps."""

import numpy as np
import torch
import warp as wp

REQUIRES = ["torch"]

wp.init()


@wp.kernel
def predict(params: wp.array(dtype=float), xs: wp.array(dtype=float), ys: wp.array(dtype=float)):
    i = wp.tid()
    x = xs[i]
    ys[i] = params[0] * wp.sin(params[1] * x) + params[2] * x


@wp.kernel
def mse(pred: wp.array(dtype=float), target: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = pred[i] - target[i]
    wp.atomic_add(loss, 0, d * d / float(pred.shape[0]))


class WarpLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, params, xs, target):
        ctx.params = wp.from_torch(params, requires_grad=True)
        xs_w = wp.from_torch(xs)
        target_w = wp.from_torch(target)
        pred = wp.zeros(xs.shape[0], dtype=float, requires_grad=True)
        ctx.loss = wp.zeros(1, dtype=float, requires_grad=True)
        ctx.tape = wp.Tape()
        with ctx.tape:
            wp.launch(predict, dim=xs.shape[0], inputs=[ctx.params, xs_w], outputs=[pred])
            wp.launch(mse, dim=xs.shape[0], inputs=[pred, target_w], outputs=[ctx.loss])
        return wp.to_torch(ctx.loss)

    @staticmethod
    def backward(ctx, grad_loss):
        ctx.tape.backward(grads={ctx.loss: wp.from_torch(grad_loss.contiguous())})
        g = wp.to_torch(ctx.params.grad).clone()
        ctx.tape.zero()
        return g, None, None


def fit(optimizer_cls, steps, **kwargs):
    xs = torch.linspace(-2.0, 2.0, 32)
    target = 1.5 * torch.sin(0.8 * xs) - 0.3 * xs
    params = torch.tensor([1.0, 1.0, 0.0], requires_grad=True)
    opt = optimizer_cls([params], **kwargs)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = WarpLoss.apply(params, xs, target)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return params.detach().numpy(), np.array(losses, dtype=np.float32)


def run():
    adam_params, adam_losses = fit(torch.optim.Adam, 25, lr=0.05)
    sgd_params, sgd_losses = fit(torch.optim.SGD, 25, lr=0.1, momentum=0.5)
    return {
        "adam_params": adam_params,
        "adam_losses": adam_losses,
        "sgd_params": sgd_params,
        "sgd_losses": sgd_losses,
        "adam_improved": bool(adam_losses[-1] < 0.5 * adam_losses[0]),
    }


TOLERANCE = {"adam_params": (1e-4, 1e-5), "adam_losses": (1e-4, 1e-6), "sgd_params": (1e-4, 1e-5),
             "sgd_losses": (1e-4, 1e-6)}
