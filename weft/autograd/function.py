"""`weft.autograd.Function`: a differentiable step with a hand-written backward, as
`torch.autograd.Function` is for PyTorch.

    class Scale(weft.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            y = wp.empty_like(x)
            wp.launch(scale, dim=x.shape, inputs=[x, factor], outputs=[y])
            ctx.factor = factor
            return y

        @staticmethod
        def backward(ctx, adj_y):
            adj_x = wp.empty_like(adj_y)
            wp.launch(scale, dim=adj_y.shape, inputs=[adj_y, ctx.factor], outputs=[adj_x])
            return adj_x, None          # one gradient per forward argument

    with wp.Tape() as tape:
        y = Scale.apply(x, 3.0)
        ...
    tape.backward(loss)                 # calls Scale.backward, adds adj_x into x.grad

Under a recording Tape, `apply` records one step: the launches inside `forward` are not
recorded, and `Tape.backward` calls `backward` with the adjoints of the outputs (their
`.grad`; zeros where none reached them, unless `ctx.set_materialize_grads(False)`). The
outputs' adjoints are consumed (zeroed afterwards, unless an output has `retain_grad`), as
a kernel's are, and the gradients `backward` returns are added into the inputs' `.grad`.
Arrays saved with `ctx.save_for_backward` are read at backward time: if one is overwritten
in between, the Tape keeps a snapshot of it, as it does for the arrays kernels read, so
`ctx.saved_arrays` holds the values of forward time.
"""

from __future__ import annotations

import numpy as np

from .. import tape as tape_module
from .problem import is_float_array


class FunctionCtx:
    """The `ctx` of a Function's forward and backward: what forward leaves for backward.
    Any other attribute may be set on it for non-array state."""

    def __init__(self, needs_input_grad: tuple):
        #: per forward argument: whether it is an array whose gradient is wanted
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = True
        self._saved: list = []
        self._non_differentiable: set[int] = set()

    def save_for_backward(self, *arrays):
        """Keep `arrays` (weft arrays, or None) for backward, as `ctx.saved_arrays`."""
        from ..runtime.array import array
        for k, a in enumerate(arrays):
            if a is not None and not isinstance(a, array):
                raise TypeError(f"save_for_backward: argument {k} is a {type(a).__name__}, not a weft "
                                "array; keep other values as attributes of ctx (ctx.name = value)")
        self._saved = list(arrays)

    @property
    def saved_arrays(self) -> tuple:
        """The arrays given to `save_for_backward`, as they were when forward returned."""
        return tuple(self._saved)

    saved_tensors = saved_arrays  # PyTorch's name

    def mark_non_differentiable(self, *outputs):
        """These outputs get no gradient: backward receives None for them."""
        self._non_differentiable.update(id(a) for a in outputs)

    def set_materialize_grads(self, value: bool):
        """With False, backward receives None (not zeros) for outputs no gradient reached."""
        self.materialize_grads = bool(value)


class Function:
    """Subclass with static `forward(ctx, *args, **kwargs)` (returns an array or a tuple of arrays)
    and `backward(ctx, *output_grads)` (returns one gradient per forward argument: a weft
    array or numpy array of that argument's shape, or None); call `Function.apply(*args)`."""

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("a weft.autograd.Function must define forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("a weft.autograd.Function must define backward(ctx, *grad_outputs)")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward; under a recording Tape, record the step for backward. Keyword
        arguments are passed to forward and get no gradient (pass arrays that need one
        positionally)."""
        from ..runtime.array import array
        needs = tuple(isinstance(a, array) and a.requires_grad for a in args)
        ctx = FunctionCtx(needs)
        tape = tape_module.recording_tape()
        with tape_module.paused():  # the launches inside are this step's, not the Tape's
            result = cls.forward(ctx, *args, **kwargs)
        outputs = result if isinstance(result, tuple) else (result,)
        for k, out in enumerate(outputs):
            if not isinstance(out, array):
                raise TypeError(f"{cls.__name__}.forward returned a {type(out).__name__} as output {k}; "
                                "a Function returns weft arrays")
        if tape is not None and any(needs):
            for out in outputs:
                if id(out) not in ctx._non_differentiable and is_float_array(out) and not out.requires_grad:
                    out.requires_grad = True
            step = _FunctionStep(cls, ctx, args, outputs)
            tape.record_step(step, step.inputs, outputs, saved=[a for a in ctx._saved if a is not None])
        return result


class _FunctionStep:
    """A Function call as a Tape records it."""

    def __init__(self, function, ctx: FunctionCtx, args: tuple, outputs: tuple):
        from ..runtime.array import array
        self.function, self.ctx, self.args, self.outputs = function, ctx, args, outputs
        self.inputs = [a for a in args if isinstance(a, array)]
        self.arrays = [*self.inputs, *outputs]
        self.params = [a for a in ctx._saved if a is not None]  # snapshots replace these

    @property
    def name(self) -> str:
        return self.function.__name__

    def backward(self):
        ctx = self.ctx
        saved = iter(self.params)
        ctx._saved = [None if a is None else next(saved) for a in ctx._saved]
        grads = [self._output_grad(out) for out in self.outputs]
        result = self.function.backward(ctx, *grads)
        result = result if isinstance(result, tuple) else (result,)
        if len(result) != len(self.args):
            raise RuntimeError(f"{self.name}.backward returned {len(result)} gradients, but forward took "
                               f"{len(self.args)} arguments (return None for those without one)")
        # read them all before consuming the outputs' adjoints: a gradient may be one of them
        values = [self._gradient_value(k, g) for k, g in enumerate(result)]
        for out in self.outputs:
            if out.grad is not None and not out.retain_grad:
                out.grad.zero_()
        for arg, g in zip(self.args, values):
            if g is not None and arg.grad is not None:
                target = arg.grad.numpy()
                target += g.astype(target.dtype, copy=False)

    def _output_grad(self, out):
        if id(out) in self.ctx._non_differentiable:
            return None
        if out.grad is None:
            if not self.ctx.materialize_grads:
                return None
            from ..runtime.array_create import zeros
            return zeros(out.shape, dtype=out.dtype, device=out.device)
        if not self.ctx.materialize_grads and not out.grad.numpy().any():
            return None
        return out.grad

    def _gradient_value(self, k: int, g):
        """Gradient `g` returned for forward argument k, as a numpy copy (None: none)."""
        from ..runtime.array import array
        if g is None:
            return None
        arg = self.args[k]
        if not isinstance(arg, array):
            raise RuntimeError(f"{self.name}.backward returned a gradient for argument {k}, which is a "
                               f"{type(arg).__name__}, not an array; return None there")
        value = g.numpy() if isinstance(g, array) else np.asarray(g)
        expected = arg.grad.numpy().shape if arg.grad is not None else arg.numpy().shape
        if value.shape != expected:
            raise RuntimeError(f"{self.name}.backward returned a gradient of shape {value.shape} for "
                               f"argument {k}, which has shape {expected}")
        return np.array(value, copy=True)
