"""Stochastic gradient descent with momentum, dampening, weight decay and Nesterov momentum,
as Warp and PyTorch define them."""


import functools

from ..builtins.registry import BUILTINS
from ..lang.decorators import kernel
from ..runtime.array import array
from ..runtime.launch import launch
from ._flat import check_contiguous, check_grads, flat, scalar_type, state_fits, state_like

_tid = BUILTINS["tid"]


@functools.cache
def _step_kernel(t):
    """The SGD update of flat arrays of float type `t` (the momentum buffer `b` and the
    hyperparameters too, so float64 parameters get float64 arithmetic throughout)."""

    @kernel(enable_backward=False)
    def sgd_step(g: array(dtype=t), b: array(dtype=t), lr: t, momentum: t, dampening: t,
                 weight_decay: t, nesterov: int, step: int, params: array(dtype=t)):
        i = _tid()
        gi = g[i]
        if weight_decay != t(0.0):
            gi = gi + weight_decay * params[i]
        if momentum != t(0.0):
            bi = gi
            if step > 0:
                bi = momentum * b[i] + (t(1.0) - dampening) * gi
            b[i] = bi
            if nesterov != 0:
                gi = gi + momentum * bi
            else:
                gi = bi
        params[i] = params[i] - lr * gi

    return sgd_step


class SGD:
    """SGD over a list of weft arrays.

    `params`: float arrays (float16/32/64, or vectors and matrices of them), contiguous;
    `lr`, `momentum`, `dampening`, `weight_decay`, `nesterov` as in PyTorch (which refuses
    Nesterov momentum with dampening; Warp applies it, and so does weft). `step(grads)`
    takes one gradient array per parameter and updates the parameters in place.
    """

    def __init__(self, params=None, lr=0.001, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False):
        self.b = []
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.t = 0
        self.set_params(params)

    def set_params(self, params):
        """Set the arrays to optimise; momentum buffers are (re)allocated where needed."""
        self.params = params
        if not params:
            return
        old = self.b
        self.b = []
        for k, p in enumerate(params):
            t = scalar_type(p, f"SGD parameter {k}")
            check_contiguous(p, f"SGD parameter {k}")
            b = old[k] if k < len(old) else None
            self.b.append(b if state_fits(b, p, t) else state_like(p, t))

    def reset_internal_state(self):
        """Zero the momentum buffers and the step count."""
        for b in self.b:
            b.zero_()
        self.t = 0

    def step(self, grad):
        """One SGD step: `grad[k]` is the gradient of `params[k]`."""
        check_grads(self.params, grad, "SGD")
        for k, (p, g) in enumerate(zip(self.params, grad)):
            self.step_detail(g, self.b[k], self.lr, self.momentum, self.dampening,
                             self.weight_decay, self.nesterov, self.t, p)
        self.t += 1

    @staticmethod
    def step_detail(g, b, lr, momentum, dampening, weight_decay, nesterov, t, params):
        """One update of one parameter array (`t`: the step index, from 0)."""
        fp, fg = flat(params, "SGD parameter"), flat(g, "SGD gradient")
        launch(_step_kernel(fp.dtype), dim=fp.size,
               inputs=[fg, flat(b, "SGD momentum buffer"), float(lr), float(momentum),
                       float(dampening), float(weight_decay), int(bool(nesterov)), int(t), fp])
