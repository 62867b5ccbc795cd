"""`weft.torch.wrap`: a kernel as a differentiable PyTorch function in one call.

    step = weft.torch.wrap(integrate, outputs=["x_new"])
    x_new = step(x, v, gravity, dt)          # tensors in, tensors out
    x_new.sum().backward()                   # x.grad, v.grad from the adjoint kernel

The op allocates its outputs (zeros, shaped like the launch unless `outputs` says
otherwise), launches the kernel forward, and in backward launches its adjoint with the
incoming gradients as the outputs' adjoints. It never changes the tensors it is given:
kernels that write an array not listed in `outputs` are refused, and gradients torch
passes in are only read (a copy is made where the adjoint would write one). Arguments that
are not arrays (a `vec3`, a `float`) get no gradient.
"""

from __future__ import annotations

import numbers

from ..lang.kernel import Kernel
from ..runtime.launch import launch
from ..types import ArrayType, Matrix, Vector
from .torch import _torch, dtype_to_torch, from_torch, synchronize_with_torch


class _Param:
    """How the op handles one kernel parameter."""

    def __init__(self, index, name, t, is_output, shape=None, is_float=False):
        self.index = index
        self.name = name
        self.type = t
        self.is_array = isinstance(t, ArrayType)
        self.is_output = is_output
        self.shape = shape  # outputs: None (the launch shape), a tuple, a callable or an input name
        self.is_float = is_float  # an array of floats: it has gradients
        if self.is_array:
            self.dtype = t.dtype
            self.components = t.dtype.np_shape if isinstance(t.dtype, (Vector, Matrix)) else ()


class TorchOp:
    """A kernel as a function of tensors (see the module docstring); made by `wrap`."""

    def __init__(self, kernel: Kernel, outputs, dim=None):
        if not isinstance(kernel, Kernel):
            raise TypeError(f"weft.torch.wrap: expected a @weft.kernel, got {type(kernel).__name__}")
        self.kernel = kernel
        self.name = kernel.name
        shapes = dict(outputs) if isinstance(outputs, dict) else {name: None for name in outputs}
        params = kernel.params
        for name in shapes:
            if name not in params:
                raise ValueError(f"weft.torch.wrap: kernel '{self.name}' has no parameter '{name}' "
                                 f"(it has {', '.join(params)})")
            if not isinstance(params[name], ArrayType):
                raise TypeError(f"weft.torch.wrap: output '{name}' of kernel '{self.name}' is a "
                                f"{params[name]!r}, not an array")
        floats = set(kernel.adjoint_param_indices)
        self.params = [_Param(k, name, t, name in shapes, shapes.get(name), k in floats)
                       for k, (name, t) in enumerate(params.items())]
        self.inputs = [p for p in self.params if not p.is_output]
        self.outputs = [p for p in self.params if p.is_output]
        if not self.outputs:
            raise ValueError(f"weft.torch.wrap: kernel '{self.name}' needs at least one output")
        reads, writes = kernel.array_effects()
        for p in self.inputs:
            if p.index in writes:
                raise ValueError(f"weft.torch.wrap: kernel '{self.name}' writes '{p.name}', which is not "
                                 "in outputs: a torch op must not change its inputs (list it in outputs)")
        # outputs the kernel also reads start as zeros: backward replays from zeros, and
        # the adjoint writes their gradient, so it gets a copy of torch's
        self.read_outputs = {p.index for p in self.outputs if p.index in reads}
        self.dim = dim
        self.__name__ = self.name
        self.__doc__ = kernel.__doc__

    def __repr__(self):
        return f"<weft.torch op {self.name}({', '.join(p.name for p in self.inputs)}) -> " \
               f"{', '.join(p.name for p in self.outputs)}>"

    def __call__(self, *args, **kwargs):
        """Run the op on tensors (array inputs) and Python values (the other inputs), in the
        kernel's parameter order without the outputs. Returns the output tensor(s)."""
        torch = _torch()
        values = self._bind(args, kwargs)
        if torch.is_grad_enabled() and any(isinstance(v, torch.Tensor) and v.requires_grad for v in values):
            outs = _function().apply(self, *values)
        else:
            outs, _, _ = self.forward(values)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _bind(self, args, kwargs) -> list:
        if len(args) > len(self.inputs):
            raise TypeError(f"op '{self.name}' takes {len(self.inputs)} inputs "
                            f"({', '.join(p.name for p in self.inputs)}), got {len(args)}")
        if not kwargs and len(args) == len(self.inputs):
            return list(args)
        values = list(args) + [_MISSING] * (len(self.inputs) - len(args))
        for name, value in kwargs.items():
            at = next((k for k, p in enumerate(self.inputs) if p.name == name), None)
            if at is None:
                raise TypeError(f"op '{self.name}' has no input '{name}'")
            if values[at] is not _MISSING:
                raise TypeError(f"op '{self.name}' got input '{name}' twice")
            values[at] = value
        missing = [p.name for p, v in zip(self.inputs, values) if v is _MISSING]
        if missing:
            raise TypeError(f"op '{self.name}' is missing input(s) {', '.join(missing)}")
        return values

    # Forward and backward -------------------------------------------------------------------
    def forward(self, values):
        """Launch the kernel: (output tensors, the launch's arguments, its dims)."""
        torch = _torch()
        args = [None] * len(self.params)
        device = None
        for p, value in zip(self.inputs, values):
            if p.is_array:
                if not isinstance(value, torch.Tensor):
                    raise TypeError(f"op '{self.name}', input '{p.name}': expected a torch.Tensor, got "
                                    f"{type(value).__name__}")
                args[p.index] = self._view(p, value)
                device = value.device
            else:
                args[p.index] = _plain(value)
        dims = self._dims(args, values)
        outs = []
        for p in self.outputs:
            shape = self._output_shape(p, dims, args, values)
            t = torch.zeros(shape + p.components, dtype=dtype_to_torch(p.dtype), device=device)
            outs.append(t)
            args[p.index] = from_torch(t, p.dtype, requires_grad=False)
        synchronize_with_torch(args[self.outputs[0].index].device)
        launch(self.kernel, dims, inputs=args, record_tape=False)
        return outs, args, dims

    def backward(self, args, dims, grads, needs_grad) -> list:
        """Launch the adjoint with `grads` (one per output, None where torch has none) as the
        outputs' adjoints; returns the gradient tensor of each input (None where none)."""
        torch = _torch()
        adj = [None] * len(self.params)
        result = [None] * len(self.inputs)
        for k, p in enumerate(self.inputs):
            if p.is_array and p.is_float and needs_grad[k]:
                t = torch.zeros(args[p.index].numpy().shape, dtype=dtype_to_torch(p.dtype))
                adj[p.index] = from_torch(t, p.dtype, requires_grad=False)
                result[k] = t
        primal = list(args)
        for p, g in zip(self.outputs, grads):
            if p.index in self.read_outputs:
                zeros = torch.zeros(args[p.index].numpy().shape, dtype=dtype_to_torch(p.dtype))
                primal[p.index] = from_torch(zeros, p.dtype, requires_grad=False)
                if g is not None:
                    g = g.clone(memory_format=torch.contiguous_format)
            if g is not None and p.is_float:
                try:
                    adj[p.index] = self._view(p, g)
                except ValueError:  # components not contiguous (a broadcast gradient): copy
                    adj[p.index] = self._view(p, g.contiguous())
        if any(r is not None for r in result):
            synchronize_with_torch(args[self.outputs[0].index].device)
            launch(self.kernel, dims, inputs=primal, adj_inputs=adj, adjoint=True)
        return result

    # Helpers --------------------------------------------------------------------------------
    def _view(self, p: _Param, t):
        dtype = dtype_to_torch(p.dtype)
        if t.dtype != dtype:
            comps = f" with trailing dimensions {p.components}" if p.components else ""
            raise TypeError(f"op '{self.name}', '{p.name}': expected a tensor of {dtype}{comps} "
                            f"({p.type!r}), got {t.dtype}")
        return from_torch(t, p.dtype, requires_grad=False)

    def _dims(self, args, values):
        if self.dim is None:
            first = next((p for p in self.inputs if p.is_array), None)
            if first is None:
                raise ValueError(f"op '{self.name}' has no array input to take its launch shape from: "
                                 "pass dim= to weft.torch.wrap")
            return args[first.index].shape
        return self.dim(*values) if callable(self.dim) else self.dim

    def _output_shape(self, p: _Param, dims, args, values) -> tuple:
        shape = p.shape
        if shape is None:
            shape = dims
        elif isinstance(shape, str):
            source = next((q for q in self.inputs if q.name == shape and q.is_array), None)
            if source is None:
                raise ValueError(f"op '{self.name}': output '{p.name}' is shaped like '{shape}', "
                                 "which is not an array input")
            shape = args[source.index].shape
        elif callable(shape):
            shape = shape(*values)
        return (int(shape),) if isinstance(shape, numbers.Integral) else tuple(int(s) for s in shape)


def _plain(value):
    """A non-array argument as launch takes it: tensors become numbers or lists."""
    torch = _torch()
    if isinstance(value, torch.Tensor):
        return value.item() if value.dim() == 0 else value.detach().cpu().tolist()
    return value


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()
_FUNCTION = None


def _function():
    """The torch.autograd.Function running TorchOps (made once torch is imported)."""
    global _FUNCTION
    if _FUNCTION is None:
        torch = _torch()

        class KernelFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, op, *values):
                outs, args, dims = op.forward(values)
                ctx.op, ctx.args, ctx.dims = op, args, dims
                ctx.set_materialize_grads(False)
                # saved so that torch raises if an input is changed in place before backward
                ctx.save_for_backward(*[v for v in values if isinstance(v, torch.Tensor)])
                ctx.mark_non_differentiable(*[t for t, p in zip(outs, op.outputs) if not p.is_float])
                return tuple(outs)

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, *grads):
                ctx.saved_tensors  # noqa: B018 - raises if an input was changed in place
                needs = ctx.needs_input_grad[1:]
                return (None, *ctx.op.backward(ctx.args, ctx.dims, grads, needs))

        _FUNCTION = KernelFunction
    return _FUNCTION


def wrap(kernel: Kernel, outputs, dim=None) -> TorchOp:
    """Turn `kernel` into a differentiable function of tensors.

    outputs: names of the array parameters the op allocates and returns (the others are its
        inputs, in the kernel's order); or a dict from those names to their shapes: a
        tuple, the name of an array input to copy the shape of, or a callable of the
        inputs. Default shape: the launch shape. Vector/matrix outputs get their components
        as trailing tensor dimensions.
    dim: the launch shape: None for the shape of the first array input, an int or tuple,
        or a callable of the inputs.
    """
    return TorchOp(kernel, outputs, dim)
