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

import functools
import numbers
import struct

from ..lang.kernel import Kernel
from ..runtime.array import packed_strides
from ..runtime.launch import run_block
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
            self.component_strides = packed_strides(self.components, 1)  # in elements, as torch
            self.ndim = t.ndim
            self.tensor_ndim = t.ndim + len(self.components)
            self.torch_dtype = dtype_to_torch(t.dtype)


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
        for position, p in enumerate(self.inputs):
            p.position = position  # where the caller passes it
        self.array_inputs = [p for p in self.inputs if p.is_array]
        self.plain_inputs = [p for p in self.inputs if not p.is_array]
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
        self.has_integer_outputs = not all(p.is_float for p in self.outputs)
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
            outs = self.forward(values)[0]
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
    # Tensors go straight into the kernel's argument block (pointer, shape, byte strides):
    # making weft arrays of them would cost more than the launch itself.
    def forward(self, values):
        """Launch the kernel: (output tensors, the packed arguments, the tensors they point
        into, dims)."""
        torch = _torch()
        tensors = [None] * len(self.params)
        for p in self.array_inputs:
            t = values[p.position]
            if type(t) is not torch.Tensor or not _fits(t, p):
                self._check_tensor(p, t)  # raises, naming what is wrong (or accepts a subclass)
            tensors[p.index] = t
        dims = self._dims(tensors, values)
        outs = []
        for p in self.outputs:
            shape = dims if p.shape is None and len(dims) == p.ndim else self._output_shape(p, dims, tensors, values)
            t = torch.zeros(shape + p.components, dtype=p.torch_dtype)
            outs.append(t)
            tensors[p.index] = t
        ck = self.kernel.compiled(tuple([t is not None and t.is_contiguous() for t in tensors]))
        args = ck.args_type()
        offsets = _field_offsets(ck.args_type)
        for p in self.plain_inputs:
            setattr(args, ck.field_names[p.index], ck.packers[p.index](_plain(values[p.position])))
        for k, t in enumerate(tensors):
            if t is not None:
                _pack_tensor(args, offsets[k], t, self.params[k])
        synchronize_with_torch("cpu")
        run_block(ck, dims, args)
        return outs, args, tensors, dims

    def backward(self, args, tensors, dims, grads, needs_grad) -> list:
        """Launch the adjoint with `grads` (one per output, None where torch has none) as the
        outputs' adjoints; returns the gradient tensor of each input (None where none)."""
        torch = _torch()
        n = len(self.params)
        adj = [None] * n
        result = [None] * len(self.inputs)
        for k, p in enumerate(self.inputs):
            if p.is_float and needs_grad[k]:
                result[k] = adj[p.index] = torch.zeros(tensors[p.index].shape, dtype=p.torch_dtype)
        if not any(r is not None for r in result):
            return result
        primal = list(tensors)
        for p, g in zip(self.outputs, grads):
            if not p.is_float:
                continue
            if p.index in self.read_outputs:
                # the forward read zeros there; the adjoint writes the gradient: own copies
                primal[p.index] = torch.zeros_like(tensors[p.index])
                g = torch.zeros_like(tensors[p.index]) if g is None else g.clone(memory_format=torch.contiguous_format)
            elif g is not None and p.components and not _components_packed(g, p):
                g = g.contiguous()  # a broadcast gradient (of a sum): vectors need their components
            adj[p.index] = g
        floats = self.kernel.adjoint_param_indices
        spec = tuple(t.is_contiguous() if t is not None else False for t in primal) + \
            tuple(None if adj[k] is None else adj[k].is_contiguous() for k in floats)
        ck = self.kernel.compiled(spec, adjoint=True)
        adj_args = ck.args_type()
        offsets = _field_offsets(ck.args_type)
        for k in range(n):
            if primal[k] is not tensors[k]:  # an output's zeros, in place of what the forward wrote
                _pack_tensor(adj_args, offsets[k], primal[k], self.params[k])
            else:
                setattr(adj_args, f"p{k}", getattr(args, f"p{k}"))
        for at, k in enumerate(floats):
            if adj[k] is not None:
                _pack_tensor(adj_args, offsets[n + at], adj[k], self.params[k])
        synchronize_with_torch("cpu")
        run_block(ck, dims, adj_args)
        return result

    # Helpers --------------------------------------------------------------------------------
    def _check_tensor(self, p: _Param, t):
        """A tensor the kernel can take as array parameter `p`, or a clear error."""
        torch = _torch()
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"op '{self.name}', input '{p.name}': expected a torch.Tensor, got "
                            f"{type(t).__name__}")
        if _fits(t, p):
            return
        try:  # from_torch explains dtype and layout problems
            from_torch(t, p.dtype, requires_grad=False)
        except (TypeError, ValueError) as e:
            raise type(e)(f"op '{self.name}', input '{p.name}': {e}") from None
        raise ValueError(f"op '{self.name}', input '{p.name}': expected a tensor with {p.tensor_ndim} "
                         f"dimension(s) for {p.type!r}, got shape {tuple(t.shape)}")

    def _dims(self, tensors, values):
        if self.dim is None:
            if not self.array_inputs:
                raise ValueError(f"op '{self.name}' has no array input to take its launch shape from: "
                                 "pass dim= to weft.torch.wrap")
            first = self.array_inputs[0]
            return tuple(tensors[first.index].shape[:first.ndim])
        dims = self.dim(*values) if callable(self.dim) else self.dim
        return (int(dims),) if isinstance(dims, numbers.Integral) else tuple(int(d) for d in dims)

    def _output_shape(self, p: _Param, dims, tensors, values) -> tuple:
        shape = p.shape
        if shape is None:
            shape = dims
        elif isinstance(shape, str):
            source = next((q for q in self.inputs if q.name == shape and q.is_array), None)
            if source is None:
                raise ValueError(f"op '{self.name}': output '{p.name}' is shaped like '{shape}', "
                                 "which is not an array input")
            shape = tuple(tensors[source.index].shape[:source.ndim])
        elif callable(shape):
            shape = shape(*values)
        shape = (int(shape),) if isinstance(shape, numbers.Integral) else tuple(int(s) for s in shape)
        if len(shape) != p.ndim:
            raise ValueError(f"op '{self.name}': output '{p.name}' has {p.ndim} dimension(s), but "
                             f"its shape would be {shape}; give its shape in outputs={{'{p.name}': ...}}")
        return shape


def _fits(t, p: _Param) -> bool:
    """Whether tensor `t` can be passed as array parameter `p` as it is."""
    return t.dtype is p.torch_dtype and t.is_cpu and t.dim() == p.tensor_ndim and \
        (not p.components or _components_packed(t, p))


def _components_packed(t, p: _Param) -> bool:
    """Whether tensor `t` holds the components of each element of `p` next to each other."""
    k = len(p.components)
    return tuple(t.shape[-k:]) == p.components and t.stride()[-k:] == p.component_strides


# an array descriptor (types/layout.py): data pointer, shape[ndim], byte strides[ndim]
_DESCRIPTOR = {ndim: struct.Struct(f"=Q{2 * ndim}q") for ndim in range(1, 5)}


def _pack_tensor(args, offset: int, t, p: _Param):
    """Write tensor `t`'s memory as an array argument at `offset` in argument block `args`."""
    ndim = p.ndim
    item = t.element_size()
    _DESCRIPTOR[ndim].pack_into(args, offset, t.data_ptr(), *t.shape[:ndim], *[s * item for s in t.stride()[:ndim]])


@functools.cache
def _field_offsets(args_type) -> list:
    """Byte offset of each argument in a compiled kernel's argument block type."""
    return [getattr(args_type, name).offset for name, _ in args_type._fields_]


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
                outs, args, tensors, dims = op.forward(values)
                ctx.op, ctx.args, ctx.tensors, ctx.dims = op, args, tensors, dims
                ctx.set_materialize_grads(False)
                # saved so that torch raises if an input is changed in place before backward
                ctx.save_for_backward(*[v for v in values if isinstance(v, torch.Tensor)])
                if op.has_integer_outputs:
                    ctx.mark_non_differentiable(*[t for t, p in zip(outs, op.outputs) if not p.is_float])
                return tuple(outs)

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, *grads):
                ctx.saved_tensors  # noqa: B018 - raises if an input was changed in place
                needs = ctx.needs_input_grad[1:]
                return (None, *ctx.op.backward(ctx.args, ctx.tensors, ctx.dims, grads, needs))

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
