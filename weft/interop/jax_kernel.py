"""`jax_kernel`: a weft kernel as a JAX operation (see `jax_ffi.py` for the mechanism).

The kernel's parameters are split as in Warp: the first ones are inputs, the last
`num_outputs` are outputs (in-out arguments, named by `in_out_argnames`, are inputs whose
buffer is also returned, after the kernel changed it). The op takes the inputs and returns
the outputs, in order, as a tuple.
"""

from __future__ import annotations

import operator
import threading

from ..ir.core import walk
from ..lang.kernel import Kernel
from ..runtime.launch import launch
from .jax import _jax, check_device_support
from .jax_ffi import (
    Arg,
    HostCall,
    JaxModulePreloadMode,
    call_host,
    check_tid_extents,
    check_vmap_method,
    normalize_dims,
    output_types,
    split_in_out,
    split_inputs,
)

_REGISTRY: dict = {}
_REGISTRY_LOCK = threading.Lock()
_MISSING = object()


def _check_block_dim(block_dim):
    if block_dim is None:
        return None
    if isinstance(block_dim, bool):
        raise TypeError("jax_kernel(): block_dim must be an integer or None, got a bool")
    try:
        block_dim = operator.index(block_dim)
    except TypeError:
        raise TypeError(f"jax_kernel(): block_dim must be an integer or None, got {block_dim!r}") from None
    if block_dim <= 0:
        raise ValueError(f"jax_kernel(): block_dim must be positive, got {block_dim}")
    return block_dim


def _hashable(dims):
    if isinstance(dims, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in dims.items()))
    if hasattr(dims, "__len__"):
        return tuple(dims)
    return dims


class _KernelSignature:
    """A kernel's parameters as JAX sees them: Args for inputs and outputs."""

    def __init__(self, kernel, num_outputs, in_out_argnames, what="jax_kernel()"):
        if not isinstance(kernel, Kernel):
            raise TypeError(f"{what}: expected a @weft.kernel, got {type(kernel).__name__}")
        self.kernel = kernel
        params = kernel.params
        names = list(params)
        self.num_inputs, in_out = split_in_out(names, in_out_argnames, num_outputs, what)
        self.inputs = [Arg(n, params[n], n in in_out, what) for n in names[:self.num_inputs]]
        self.outputs = [Arg(n, params[n], False, what) for n in names[self.num_inputs:]]
        for arg in self.outputs:
            if not arg.is_array:
                raise TypeError(f"{what}: output argument '{arg.name}' must be an array, not {arg.type!r}")
        self.array_inputs = [k for k, a in enumerate(self.inputs) if a.is_array]
        self.in_out = [k for k, a in enumerate(self.inputs) if a.in_out]
        reads, writes = kernel.array_effects()
        # inputs the kernel writes (not in-out): XLA's buffers must not change, so they are copied
        self.written_inputs = {k for k in self.array_inputs if k in writes and not self.inputs[k].in_out}
        self.uses_tid = any(op.name == "tid" for op in walk(kernel.ir().body))

    def infer_launch_dims(self, args, what):
        if not self.array_inputs:
            raise ValueError(f"{what}: launch_dims are needed: kernel '{self.kernel.name}' has no input array "
                             "to take them from")
        k = self.array_inputs[0]
        return self.inputs[k].warp_shape(args[k].shape)

    def preload(self, mode):
        """Compile the kernel now (at trace time, for contiguous arrays, as XLA's buffers
        are) unless `mode` is NONE; the callback then only launches it."""
        if mode == JaxModulePreloadMode.NONE:
            return
        kernel = self.kernel
        arrays = kernel._init_params()
        kernel.compiled(tuple(k in arrays for k in range(len(kernel.arg_names))))


class FfiKernel:
    """`jax_kernel(kernel)` without gradients: call it with the kernel's inputs (JAX arrays
    and static scalars); it returns the outputs as a tuple. `launch_dims`, `output_dims`
    and `vmap_method` given to a call override the wrapper's defaults."""

    def __init__(self, kernel, num_outputs=1, vmap_method="broadcast_all", launch_dims=None, output_dims=None,
                 in_out_argnames=None, module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE,
                 has_side_effect=False, block_dim=None):
        self.what = f"jax_kernel({getattr(kernel, 'name', kernel)!s})"
        self.signature = _KernelSignature(kernel, num_outputs, in_out_argnames, self.what)
        self.kernel = kernel
        self.num_outputs = num_outputs
        self.vmap_method = check_vmap_method(vmap_method, self.what)
        self.launch_dims = normalize_dims(launch_dims, self.what, "launch_dims")
        self.output_dims = output_dims
        self.module_preload_mode = JaxModulePreloadMode(module_preload_mode)
        self.has_side_effect = has_side_effect
        self.block_dim = block_dim

    def __call__(self, *args, output_dims=None, launch_dims=None, vmap_method=None):
        jax = _jax()
        sig, what = self.signature, self.what
        arrays, statics = split_inputs(sig.inputs, args, what)
        dims = normalize_dims(launch_dims, what, "launch_dims") if launch_dims is not None else self.launch_dims
        if dims is None:
            dims = sig.infer_launch_dims(args, what)
        check_tid_extents(self.kernel, dims, sig.uses_tid)
        output_dims = self.output_dims if output_dims is None else output_dims
        vmap_method = self.vmap_method if vmap_method is None else check_vmap_method(vmap_method, what)

        outs = [(sig.inputs[k], sig.inputs[k].warp_shape(args[k].shape)) for k in sig.in_out]
        for arg in sig.outputs:
            if isinstance(output_dims, dict):
                if arg.name not in output_dims:
                    raise ValueError(f"{what}: missing output dimensions for argument '{arg.name}'")
                outs.append((arg, output_dims[arg.name]))
            else:
                outs.append((arg, dims if output_dims is None else output_dims))
        out_types = output_types(jax, outs)
        array_position = {k: j for j, k in enumerate(sig.array_inputs)}
        out_specs = [(a, t.shape, array_position[k]) for (a, _), t, k in zip(outs, out_types, sig.in_out)]
        out_specs += [(a, t.shape, None) for (a, _), t in zip(outs[len(sig.in_out):], out_types[len(sig.in_out):])]

        sig.preload(self.module_preload_mode)
        host = HostCall(self._runner(dims, statics), [sig.inputs[k] for k in sig.array_inputs], out_specs,
                        check=check_device_support)
        # a list of the outputs, as Warp returns
        return list(call_host(jax, host, arrays, out_types, vmap_method, self.has_side_effect))

    def _runner(self, dims, statics):
        """The launch of one call: `run(input buffers, output buffers)` (numpy, unbatched)."""
        sig, kernel, block_dim = self.signature, self.kernel, self.block_dim
        in_out_slot = {k: j for j, k in enumerate(sig.in_out)}

        def run(buffers, outputs):
            values = iter(buffers)
            inputs = []
            for k, arg in enumerate(sig.inputs):
                if not arg.is_array:
                    inputs.append(statics[k])
                    continue
                buffer = next(values)
                if arg.in_out:
                    buffer = outputs[in_out_slot[k]]
                elif k in sig.written_inputs:
                    buffer = buffer.copy()
                inputs.append(arg.view(buffer))
            out_arrays = [arg.view(o) for arg, o in zip(sig.outputs, outputs[len(sig.in_out):])]
            launch(kernel, dims, inputs=inputs, outputs=out_arrays, block_dim=block_dim)

        return run


def jax_kernel(kernel, num_outputs=1, vmap_method="broadcast_all", launch_dims=None, output_dims=None,
               in_out_argnames=None, module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE,
               enable_backward=False, has_side_effect=False, block_dim=None):
    """A JAX operation that launches weft `kernel` (Warp's `jax_kernel`).

    The last `num_outputs` parameters are outputs (including the `in_out_argnames`, which
    are also inputs and must come before the output-only ones); the op takes the other
    parameters and returns the outputs as a tuple. Array arguments are JAX arrays (vector
    and matrix components as trailing dimensions); scalars are static Python values.
    `launch_dims` default to the first input array's shape; `output_dims` (one shape, or a
    dict by name) default to the launch dims. With `enable_backward=True` the op has a VJP
    from the kernel's adjoint (`jax.grad` works); its launch dims are fixed here and its
    outputs take the shape of the first input array. Wrappers are cached: the same
    arguments give the same wrapper."""
    _jax()
    block_dim = _check_block_dim(block_dim)
    in_out_key = tuple(in_out_argnames) if in_out_argnames else None
    module_preload_mode = JaxModulePreloadMode(module_preload_mode)
    if enable_backward:
        from .jax_grad import differentiable_kernel
        if in_out_argnames:
            raise NotImplementedError("jax_kernel(): in_out_argnames are not supported with enable_backward=True")
        if output_dims is not None:
            raise NotImplementedError("jax_kernel(): output_dims is not supported with enable_backward=True "
                                      "(the outputs take the shape of the first input array)")
        key = ("grad", kernel, num_outputs, vmap_method, _hashable(launch_dims), module_preload_mode,
               has_side_effect, block_dim)
        maker = lambda: differentiable_kernel(kernel, num_outputs, vmap_method, launch_dims,  # noqa: E731
                                              module_preload_mode, block_dim)
    else:
        key = (kernel, num_outputs, vmap_method, _hashable(launch_dims), _hashable(output_dims), in_out_key,
               module_preload_mode, has_side_effect, block_dim)
        maker = lambda: FfiKernel(kernel, num_outputs, vmap_method, launch_dims, output_dims,  # noqa: E731
                                  in_out_key, module_preload_mode, has_side_effect, block_dim)
    with _REGISTRY_LOCK:
        wrapper = _REGISTRY.get(key)
        if wrapper is None:
            wrapper = _REGISTRY[key] = maker()
    return wrapper
