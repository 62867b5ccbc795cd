"""`weft.torch.wrap(MyFunction)`: a `weft.autograd.Function` as a differentiable PyTorch
function.

    op = weft.torch.wrap(Cube)
    y = op(x_tensor)                 # runs Cube.forward on weft arrays viewing the tensors
    y.sum().backward()               # runs Cube.backward; x_tensor.grad gets its result

Tensors become weft arrays viewing their memory (`from_torch`, of the tensor's scalar
type, or of `dtypes[k]` for argument k, e.g. `wp.vec3` for an (n, 3) tensor); other
arguments pass through. Outputs come back as tensors that share the arrays' memory. The
call is recorded on a private Tape, so the Function's backward (and kernels it launches)
run when torch asks for the gradient; the gradients are fresh tensors, never the inputs'
own `.grad`.
"""

from __future__ import annotations

import numpy as np

from .. import tape as tape_module
from ..runtime.array import array
from .torch import _torch, from_torch, to_torch


def wrap_function(function, dtypes=None):
    """A torch-callable `op(*args)` running `function` (a `weft.autograd.Function`
    subclass); `dtypes`: per positional argument, the weft dtype to view a tensor as (None:
    its scalar type)."""
    torch = _torch()
    from ..autograd.function import Function
    if not (isinstance(function, type) and issubclass(function, Function)):
        raise TypeError(f"wrap_function: expected a weft.autograd.Function subclass, got {function!r}")

    class TorchFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            arrays = [_as_array(t, None if dtypes is None or k >= len(dtypes) else dtypes[k])
                      for k, t in enumerate(args)]
            tape = tape_module.Tape()
            with tape_module.recording_on(tape):
                result = function.apply(*arrays)
            outputs = result if isinstance(result, tuple) else (result,)
            ctx.tape, ctx.arrays, ctx.outputs = tape, arrays, outputs
            tensors = tuple(to_torch(out, requires_grad=False) for out in outputs)
            return tensors if isinstance(result, tuple) else tensors[0]

        @staticmethod
        def backward(ctx, *grad_outputs):
            seeds = {out: g.detach().cpu().numpy().reshape(out.grad.numpy().shape)
                     for out, g in zip(ctx.outputs, grad_outputs) if g is not None and out.grad is not None}
            arrays = [a if isinstance(a, array) else None for a in ctx.arrays]
            for a in arrays:
                if a is not None and a.grad is not None:
                    a.grad.zero_()
            ctx.tape.backward(grads=seeds)
            grads = []
            for a, needed in zip(arrays, ctx.needs_input_grad):
                if needed and a is not None and a.grad is not None:
                    grads.append(torch.from_numpy(np.array(a.grad.numpy(), copy=True)))
                else:
                    grads.append(None)
            return tuple(grads)

    def op(*args):
        return TorchFunction.apply(*args)

    op.__name__ = function.__name__
    op.__doc__ = f"{function.__name__} (a weft.autograd.Function) as a torch function"
    return op


def _as_array(value, dtype):
    """A tensor as a weft array viewing it (with a gradient if it needs one); other values
    pass through unchanged."""
    torch = _torch()
    if not isinstance(value, torch.Tensor):
        return value
    a = from_torch(value.detach(), dtype=dtype, requires_grad=False)
    if value.requires_grad:
        a.requires_grad = True  # (a fresh gradient array, not the tensor's .grad)
    return a
