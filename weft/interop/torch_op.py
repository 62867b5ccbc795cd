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

import ctypes
import functools
import numbers
import operator
import struct

from .. import config
from ..lang.kernel import Kernel
from ..runtime.array import packed_strides
from ..runtime.device import CPU
from ..runtime.launch import run_block, run_locked
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


class _Plan:
    """What calls with one layout of input tensors share: an argument block with every shape
    and stride written (data pointers and plain values are filled in per call)."""

    __slots__ = ("spec", "dims", "template", "outputs", "input_pointers", "output_pointers", "plain_fields",
                 "compiled", "settings")

    def __init__(self, spec, dims, template, outputs, input_pointers, output_pointers, plain_fields):
        self.spec = spec  # which array parameters are contiguous: picks the compiled kernel
        self.dims = dims  # the launch shape
        self.template = template  # the argument block (bytes), data pointers zero, plain values unset
        self.outputs = outputs  # (tensor shape, torch dtype) of each output
        self.input_pointers = input_pointers  # (input position, byte offset of its data pointer)
        self.output_pointers = output_pointers  # byte offset of each output's data pointer
        self.plain_fields = plain_fields  # (input position, field name, packer) of each plain input
        self.compiled = None  # the kernel for `spec`, compiled under config.changes == settings
        self.settings = -1


class TorchOp:
    """A kernel as a function of tensors (see the module docstring); made by `wrap`."""

    def __init__(self, kernel: Kernel, outputs, dim=None):
        if not isinstance(kernel, Kernel):
            raise TypeError(f"weft.torch.wrap: expected a @weft.kernel, got {type(kernel).__name__}")
        self.kernel = kernel
        self.name = kernel.name
        self._torch = _torch()  # the module
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
        self.array_positions = [p.position for p in self.array_inputs]
        self.float_positions = [p.position for p in self.array_inputs if p.is_float]  # with gradients
        # the array inputs among the op's arguments, as a tuple (itemgetter is the fastest way)
        positions = self.array_positions
        self.array_values = operator.itemgetter(*positions) if len(positions) > 1 else \
            (lambda values, k=positions[0]: (values[k],)) if positions else (lambda values: ())
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
        self.dynamic_shapes = callable(dim) or any(callable(p.shape) for p in self.outputs)
        self._plans: dict = {}  # per layout of the input tensors (and shapes, if dynamic)
        self.__name__ = self.name
        self.__doc__ = kernel.__doc__

    def __repr__(self):
        return f"<weft.torch op {self.name}({', '.join(p.name for p in self.inputs)}) -> " \
               f"{', '.join(p.name for p in self.outputs)}>"

    def __call__(self, *args, **kwargs):
        """Run the op on tensors (array inputs) and Python values (the other inputs), in the
        kernel's parameter order without the outputs. Returns the output tensor(s)."""
        torch = self._torch  # (a function call costs more, here)
        values = args if not kwargs and len(args) == len(self.inputs) else self._bind(args, kwargs)
        graph = False  # whether torch records the call: some float input needs a gradient
        if torch.is_grad_enabled():
            for k in self.float_positions:
                if getattr(values[k], "requires_grad", False):  # not a tensor: forward says so
                    graph = True
                    break
        try:
            if not graph:
                outs = self.forward(values)[0]
            elif _FUNCTION_APPLY is not None and not torch._C._are_functorch_transforms_active():
                outs = _FUNCTION_APPLY(self, *values)
            else:  # torch.func transforms need the Python-level apply
                outs = _function().apply(self, *values)
        except _DeadWrapper:
            # a tensor left over from a finished torch.func transform: unwrap them all, as
            # torch.autograd.Function.apply does (checked only when one is met: it is rare)
            unwrap = torch._C._functorch.unwrap_if_dead
            return self(*[unwrap(v) if isinstance(v, torch.Tensor) else v for v in values])
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _bind(self, args, kwargs) -> list:
        if len(args) > len(self.inputs):
            raise TypeError(f"op '{self.name}' takes {len(self.inputs)} inputs "
                            f"({', '.join(p.name for p in self.inputs)}), got {len(args)}")
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
    # Tensors go straight into the kernel's argument block: making weft arrays of them would
    # cost more than the launch itself. Calls with the same tensor layouts share a _Plan, so
    # a call only writes data pointers and plain values into a copy of the plan's block.
    def forward(self, values):
        """Launch the kernel: (output tensors, the argument block, the plan)."""
        torch = self._torch
        key = []
        try:
            for k in self.array_positions:
                t = values[k]
                key += (t.dtype, t.is_cpu, t.shape, t.stride())
            key = tuple(key)
        except (AttributeError, RuntimeError):  # not a tensor, or no strides (sparse): the plan says why
            key = None
        if self.dynamic_shapes and key is not None:  # shapes from the user's callables
            dims = self._dims(values)
            key = (key, dims, tuple([self._output_shape(p, values, dims) for p in self.outputs]))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._make_plan(values, key)
        outs = []  # a loop, not a comprehension: no function call on this path (Python 3.11)
        for shape, dtype in plan.outputs:
            outs.append(torch.zeros(*shape, dtype=dtype))
        ck = plan.compiled
        if plan.settings != config.changes:
            ck = plan.compiled = self.kernel.compiled(plan.spec).for_dims(plan.dims)[0]
            plan.settings = config.changes
        args = ck.args_type.from_buffer_copy(plan.template)
        try:
            for position, offset in plan.input_pointers:
                _POINTER.pack_into(args, offset, values[position].data_ptr())
        except RuntimeError:  # no storage: a tensor wrapped by torch.func?
            self._check_not_wrapped(values)
            raise
        for t, offset in zip(outs, plan.output_pointers):
            _POINTER.pack_into(args, offset, t.data_ptr())
        for position, field, packer in plan.plain_fields:
            value = values[position]
            setattr(args, field, packer(value if type(value) in _NUMBERS else _plain(value)))
        synchronize_with_torch(CPU)
        with ck.lock:  # the kernel's context (launch shape, error report) is shared
            run_locked(ck, plan.dims, args, ctypes.addressof(args))
        return outs, args, plan

    def _make_plan(self, values, key) -> _Plan:
        """Check the tensors in `values` (raising errors that name the input) and lay out
        calls like this one."""
        torch = _torch()
        for p in self.array_inputs:
            t = values[p.position]
            if not isinstance(t, torch.Tensor) or not _fits(t, p):
                self._check_tensor(p, t)
        self._check_not_wrapped(values)
        dims = self._dims(values)
        shapes = [self._output_shape(p, values, dims) + p.components for p in self.outputs]
        spec = [False] * len(self.params)  # plain values are not arrays
        for p in self.array_inputs:
            spec[p.index] = values[p.position].is_contiguous()
        for p in self.outputs:
            spec[p.index] = True  # fresh zeros
        spec = tuple(spec)
        ck = self.kernel.compiled(spec)
        ck, dims = ck.for_dims(dims)
        args = ck.args_type()
        offsets = _field_offsets(ck.args_type)
        for p in self.array_inputs:
            t = values[p.position]
            _pack_descriptor(args, offsets[p.index], 0, t.shape[:p.ndim], t.stride()[:p.ndim], t.element_size())
        for p, shape in zip(self.outputs, shapes):
            _pack_descriptor(args, offsets[p.index], 0, shape[:p.ndim], packed_strides(shape, 1)[:p.ndim],
                             p.torch_dtype.itemsize)
        plan = _Plan(
            spec=spec, dims=dims,
            template=bytes(args), outputs=[(shape, p.torch_dtype) for p, shape in zip(self.outputs, shapes)],
            input_pointers=[(p.position, offsets[p.index]) for p in self.array_inputs],
            output_pointers=[offsets[p.index] for p in self.outputs],
            plain_fields=[(p.position, ck.field_names[p.index], ck.packers[p.index]) for p in self.plain_inputs])
        if key is not None:
            if len(self._plans) >= _MAX_PLANS:
                self._plans.clear()
            self._plans[key] = plan
        return plan

    def backward(self, args, plan, inputs, grads, needs_grad) -> list:
        """Launch the adjoint with `grads` (one per output, None where torch has none) as the
        outputs' adjoints; returns the gradient tensor of each input (None where none).
        `args`, `plan`: the forward's; `inputs`: its array inputs.

        The outputs' memory need not be alive: the adjoint never touches an array the
        kernel only writes (its replay skips stores), and outputs the kernel reads are
        replayed from fresh zeros."""
        torch = _torch()
        n = len(self.params)
        adj = [None] * n
        result = [None] * len(self.inputs)
        wanted = False
        for p, t in zip(self.array_inputs, inputs):
            if p.is_float and needs_grad[p.position]:
                result[p.position] = adj[p.index] = torch.zeros(*t.shape, dtype=p.torch_dtype)  # *: faster
                wanted = True
        if not wanted:
            return result
        replayed = []  # outputs the forward read: zeros again, as it started
        for p, g, (shape, dtype) in zip(self.outputs, grads, plan.outputs):
            if not p.is_float:
                continue
            if p.index in self.read_outputs:
                replayed.append((p, torch.zeros(*shape, dtype=dtype)))
                # the adjoint writes this gradient: its own copy
                g = torch.zeros(*shape, dtype=dtype) if g is None else g.clone(memory_format=torch.contiguous_format)
            elif g is not None and p.components and not _components_packed(g, p):
                g = g.contiguous()  # a broadcast gradient (of a sum): vectors need their components
            adj[p.index] = g
        spec = list(plan.spec)
        for k in self.kernel.adjoint_param_indices:
            spec.append(None if adj[k] is None else adj[k].is_contiguous())
        ck = self.kernel.compiled(tuple(spec), adjoint=True)
        adj_args = ck.args_type()
        offsets = _field_offsets(ck.args_type)
        # the primal arguments are the block's first fields, laid out as in the forward's
        ctypes.memmove(ctypes.addressof(adj_args), ctypes.addressof(args), offsets[n])
        for p, t in replayed:
            _pack_tensor(adj_args, offsets[p.index], t, p)
        for at, k in enumerate(self.kernel.adjoint_param_indices):
            if adj[k] is not None:
                _pack_tensor(adj_args, offsets[n + at], adj[k], self.params[k])
        synchronize_with_torch(CPU)
        run_block(ck, plan.dims, adj_args)
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

    def _check_not_wrapped(self, values):
        """Raise _DeadWrapper for a tensor left over from a finished torch.func transform, or
        a clear error for one inside a transform running now (they have no memory to pass)."""
        functorch = self._torch._C._functorch
        for p in self.array_inputs:
            t = values[p.position]
            if functorch.is_dead_tensor_wrapper(t):
                raise _DeadWrapper
            if functorch.is_functorch_wrapped_tensor(t):
                raise TypeError(f"op '{self.name}', input '{p.name}': torch.func transforms (vmap, grad, jacrev, "
                                "...) are not supported by weft.torch ops")

    def _dims(self, values) -> tuple:
        """The launch shape for the inputs `values` (their tensors checked)."""
        if self.dim is None:
            if not self.array_inputs:
                raise ValueError(f"op '{self.name}' has no array input to take its launch shape from: "
                                 "pass dim= to weft.torch.wrap")
            first = self.array_inputs[0]
            return tuple(values[first.position].shape[:first.ndim])
        dims = self.dim(*values) if callable(self.dim) else self.dim
        return (int(dims),) if isinstance(dims, numbers.Integral) else tuple(int(d) for d in dims)

    def _output_shape(self, p: _Param, values, dims) -> tuple:
        """The shape of output `p` (without its components) for the inputs `values`."""
        shape = p.shape
        if shape is None:
            shape = dims
        elif isinstance(shape, str):
            source = next((q for q in self.inputs if q.name == shape and q.is_array), None)
            if source is None:
                raise ValueError(f"op '{self.name}': output '{p.name}' is shaped like '{shape}', "
                                 "which is not an array input")
            shape = tuple(values[source.position].shape[:source.ndim])
        elif callable(shape):
            shape = shape(*values)
        shape = (int(shape),) if isinstance(shape, numbers.Integral) else tuple(int(s) for s in shape)
        if len(shape) != p.ndim:
            raise ValueError(f"op '{self.name}': output '{p.name}' has {p.ndim} dimension(s), but "
                             f"its shape would be {shape}; give its shape in outputs={{'{p.name}': ...}}")
        return shape


def _fits(t, p: _Param) -> bool:
    """Whether tensor `t` can be passed as array parameter `p` as it is."""
    return t.dtype is p.torch_dtype and t.is_cpu and t.layout is _torch().strided and t.dim() == p.tensor_ndim and \
        (not p.components or _components_packed(t, p))


def _components_packed(t, p: _Param) -> bool:
    """Whether tensor `t` holds the components of each element of `p` next to each other."""
    k = len(p.components)
    return tuple(t.shape[-k:]) == p.components and t.stride()[-k:] == p.component_strides


# an array descriptor (types/layout.py): data pointer, shape[ndim], byte strides[ndim]
_DESCRIPTOR = {ndim: struct.Struct(f"=Q{2 * ndim}q") for ndim in range(1, 5)}


_POINTER = struct.Struct("=Q")  # a descriptor's first field
_NUMBERS = (float, int, bool)  # plain values the packers take as they are
_MAX_PLANS = 64  # per op; more layouts than this start the cache afresh


def _pack_tensor(args, offset: int, t, p: _Param):
    """Write tensor `t`'s memory as array argument `p` at `offset` in argument block `args`."""
    ndim = p.ndim
    _pack_descriptor(args, offset, t.data_ptr(), t.shape[:ndim], t.stride()[:ndim], t.element_size())


def _pack_descriptor(args, offset: int, pointer: int, shape, strides, itemsize: int):
    """Write an array descriptor at `offset` in `args`; `strides` in elements, as torch's."""
    _DESCRIPTOR[len(shape)].pack_into(args, offset, pointer, *shape, *map(itemsize.__mul__, strides))


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


class _DeadWrapper(Exception):
    """An input is a tensor left over from a finished torch.func transform."""


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()
_FUNCTION = None
_FUNCTION_APPLY = None


def _function():
    """The torch.autograd.Function running TorchOps (made once torch is imported)."""
    global _FUNCTION, _FUNCTION_APPLY
    if _FUNCTION is None:
        torch = _torch()

        def kernel_backward(ctx, *grads):
            op, args, plan = ctx.state
            needs = ctx.needs_input_grad[1:]
            return (None, *op.backward(args, plan, ctx.saved_tensors, grads, needs))

        def backward_without_second_derivatives(ctx, *grads):
            """Under create_graph=True: the gradients, made to raise an error where a second
            derivative reaches them (the adjoint kernel is not differentiable)."""
            with torch.no_grad():
                result = kernel_backward(ctx, *grads)
            # Each gradient passes through a node that raises when reached, linked to every
            # tensor it depends on (the inputs and incoming gradients that require grad) by
            # adding t[:0].sum(), an exact zero. torch's once_differentiable links to the
            # incoming gradients only, so a second derivative w.r.t. an input goes silently
            # missing where those are constants (the gradient of a sum).
            anchor = 0.0
            for t in (*ctx.saved_tensors, *grads):
                if t is not None and t.requires_grad:
                    anchor = anchor + t.reshape(-1)[:0].sum()
            message = f"weft.torch.wrap op '{ctx.state[0].name}': second derivatives are not supported " \
                "(the adjoint kernel is not differentiable)"
            refuse = torch._C._functions.DelayedError(message.encode(), len(result))
            marked = refuse(*[None if g is None else g + anchor for g in result])
            return marked if isinstance(marked, tuple) else (marked,)

        class KernelFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, op, *values):
                outs, args, plan = op.forward(values)
                ctx.state = (op, args, plan)
                if len(outs) > 1:
                    ctx.set_materialize_grads(False)  # backward takes None for an unused output
                # the array inputs stay alive for `args`, and torch raises if one is changed
                # in place before backward
                ctx.save_for_backward(*op.array_values(values))
                if op.has_integer_outputs:
                    ctx.mark_non_differentiable(*[t for t, p in zip(outs, op.outputs) if not p.is_float])
                return tuple(outs)

            @staticmethod
            def backward(ctx, *grads):
                if torch.is_grad_enabled():  # create_graph=True
                    return backward_without_second_derivatives(ctx, *grads)
                return kernel_backward(ctx, *grads)

        _FUNCTION = KernelFunction
        # Function.apply is a Python wrapper (3 us a call) around this C entry point. Its other
        # work only matters under torch.func transforms (TorchOp.__call__ checks for them)
        # and for tensors left over from one (TorchOp.__call__ unwraps those when met).
        _FUNCTION_APPLY = getattr(torch._C, "_FunctionBase", None)
        if _FUNCTION_APPLY is not None and "apply" in vars(_FUNCTION_APPLY):
            _FUNCTION_APPLY = vars(_FUNCTION_APPLY)["apply"].__get__(None, KernelFunction)
        else:
            _FUNCTION_APPLY = KernelFunction.apply
    return _FUNCTION


def wrap(kernel: Kernel, outputs=None, dim=None, dtypes=None):
    """Turn `kernel` into a differentiable function of tensors (or a `weft.autograd.Function`
    subclass: see `torch_function.wrap_function`, which takes `dtypes`).

    outputs: names of the array parameters the op allocates and returns (the others are its
        inputs, in the kernel's order); or a dict from those names to their shapes: a
        tuple, the name of an array input to copy the shape of, or a callable of the
        inputs. Default shape: the launch shape. Vector/matrix outputs get their components
        as trailing tensor dimensions.
    dim: the launch shape: None for the shape of the first array input, an int or tuple,
        or a callable of the inputs.
    """
    if isinstance(kernel, type):
        from .torch_function import wrap_function
        return wrap_function(kernel, dtypes)
    if outputs is None:
        raise TypeError(f"wrap: kernel '{getattr(kernel, 'name', kernel)}' needs outputs= (the names of the "
                        "array parameters the op returns)")
    return TorchOp(kernel, outputs, dim)
