"""Adam (Kingma and Ba), as Warp and PyTorch define it: bias-corrected first and second
moments, `p -= lr * m_hat / (sqrt(v_hat) + eps)`."""


import functools

from ..builtins.registry import BUILTINS
from ..lang.decorators import kernel
from ..runtime.array import array
from ..runtime.launch import launch
from ..types import float16, float32
from ._flat import check_contiguous, check_grads, flat, scalar_type, state_fits, state_like

_sqrt, _pow, _tid = BUILTINS["sqrt"], BUILTINS["pow"], BUILTINS["tid"]


@functools.cache
def _step_kernel(param_t, moment_t):
    """The Adam update of flat arrays: parameters and gradients of `param_t`, moments of
    `moment_t` (float32 for float16 parameters, as Warp keeps them), hyperparameters too.
    """

    @kernel(enable_backward=False)
    def adam_step(g: array(dtype=param_t), m: array(dtype=moment_t), v: array(dtype=moment_t),
                  lr: moment_t, beta1: moment_t, beta2: moment_t, t: moment_t, eps: moment_t,
                  params: array(dtype=param_t)):
        i = _tid()
        gi = moment_t(g[i])
        mi = beta1 * m[i] + (moment_t(1.0) - beta1) * gi
        vi = beta2 * v[i] + (moment_t(1.0) - beta2) * gi * gi
        m[i] = mi
        v[i] = vi
        m_hat = mi / (moment_t(1.0) - _pow(beta1, t + moment_t(1.0)))
        v_hat = vi / (moment_t(1.0) - _pow(beta2, t + moment_t(1.0)))
        # (the step rounded to the parameters' type first, as Warp's float16 update does)
        step = param_t(lr * m_hat / (_sqrt(v_hat) + eps))
        params[i] = param_t(moment_t(params[i]) - moment_t(step))

    return adam_step


class Adam:
    """Adam over a list of weft arrays.

    `params`: float arrays (float16/32/64, or vectors and matrices of them), contiguous;
    `lr`, `betas=(beta1, beta2)`, `eps` as in PyTorch. `step(grads)` takes one gradient
    array per parameter (same dtype and shape) and updates the parameters in place.
    """

    def __init__(self, params=None, lr=0.001, betas=(0.9, 0.999), eps=1e-08):
        self.m, self.v = [], []
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.t = 0
        self.set_params(params)

    def set_params(self, params):
        """Set the arrays to optimise; moments are (re)allocated where shapes or dtypes changed."""
        self.params = params
        if not params:
            return
        old = list(zip(self.m, self.v))
        self.m, self.v = [], []
        for k, p in enumerate(params):
            t = scalar_type(p, f"Adam parameter {k}")
            check_contiguous(p, f"Adam parameter {k}")
            moment_t = float32 if t is float16 else t
            m, v = old[k] if k < len(old) else (None, None)
            if not (state_fits(m, p, moment_t) and state_fits(v, p, moment_t)):
                m, v = state_like(p, moment_t), state_like(p, moment_t)
            self.m.append(m)
            self.v.append(v)

    def reset_internal_state(self):
        """Zero the moments and the step count."""
        for m, v in zip(self.m, self.v):
            m.zero_()
            v.zero_()
        self.t = 0

    def step(self, grad):
        """One Adam step: `grad[k]` is the gradient of `params[k]`."""
        check_grads(self.params, grad, "Adam")
        for k, (p, g) in enumerate(zip(self.params, grad)):
            self.step_detail(g, self.m[k], self.v[k], self.lr, self.beta1, self.beta2, self.t,
                             self.eps, p)
        self.t += 1

    @staticmethod
    def step_detail(g, m, v, lr, beta1, beta2, t, eps, params):
        """One update of one parameter array (`t`: the step index, from 0)."""
        fp, fg = flat(params, "Adam parameter"), flat(g, "Adam gradient")
        fm, fv = flat(m, "Adam first moment"), flat(v, "Adam second moment")
        kern = _step_kernel(fp.dtype, fm.dtype)
        launch(kern, dim=fp.size, inputs=[fg, fm, fv, float(lr), float(beta1), float(beta2),
                                          float(t), float(eps), fp])
