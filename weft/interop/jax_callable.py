"""`jax_callable`: a Python function that launches weft kernels, as a JAX operation (see
`jax_ffi.py` for the mechanism).

The function is annotated like a kernel (`a: weft.array(dtype=float)`, `s: float`) and
returns nothing; its last `num_outputs` parameters are outputs, which it fills. When the
op runs, the function is called with weft arrays viewing XLA's input buffers (to be read
only: they are XLA's own) and its output buffers (zeroed; an in-out argument's holds its
input's contents).
"""

from __future__ import annotations

import threading

from ..lang.function import signature_types
from . import xla_ffi
from .jax import _jax, check_device_support
from .jax_ffi import (
    JAX_CALLABLE_DEFAULT_GRAPH_CACHE_MAX,
    Arg,
    HostCall,
    JaxCallableGraphMode,
    JaxModulePreloadMode,
    call_host,
    check_vmap_method,
    output_types,
    split_in_out,
    split_inputs,
)

_REGISTRY: dict = {}
_REGISTRY_LOCK = threading.Lock()


class FfiCallable:
    """`jax_callable(func)`: call it with `func`'s inputs (JAX arrays and static values);
    it returns the outputs as a tuple. `output_dims` and `vmap_method` given to a call
    override the wrapper's defaults."""

    def __init__(self, func, num_outputs=1, graph_mode=JaxCallableGraphMode.JAX, vmap_method="broadcast_all",
                 output_dims=None, in_out_argnames=None, stage_in_argnames=None, stage_out_argnames=None,
                 graph_cache_max=JAX_CALLABLE_DEFAULT_GRAPH_CACHE_MAX,
                 module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE, has_side_effect=False):
        name = getattr(func, "__qualname__", repr(func))
        self.what = what = f"jax_callable({name})"
        if not callable(func):
            raise TypeError(f"{what}: expected a function, got {type(func).__name__}")
        ret = getattr(func, "__annotations__", {}).get("return", None)
        if ret is not None and ret != "None":
            raise TypeError(f"{what}: the function must not return a value (it fills its output arguments)")
        self.func = func
        params = signature_types(func, "kernel")
        names = list(params)
        self.num_inputs, in_out = split_in_out(names, in_out_argnames, num_outputs, what)
        self.inputs = [Arg(n, params[n], n in in_out, what) for n in names[:self.num_inputs]]
        self.outputs = [Arg(n, params[n], False, what) for n in names[self.num_inputs:]]
        for arg in self.outputs:
            if not arg.is_array:
                raise TypeError(f"{what}: output argument '{arg.name}' must be an array, not {arg.type!r}")
        self.array_inputs = [k for k, a in enumerate(self.inputs) if a.is_array]
        self.in_out = [k for k, a in enumerate(self.inputs) if a.in_out]
        self.num_outputs = num_outputs
        self.graph_mode = JaxCallableGraphMode(graph_mode)
        self.vmap_method = check_vmap_method(vmap_method, what)
        self.output_dims = output_dims
        self.stage_in_argnames = set(stage_in_argnames) if stage_in_argnames else None
        self.stage_out_argnames = set(stage_out_argnames) if stage_out_argnames else None
        self.module_preload_mode = JaxModulePreloadMode(module_preload_mode)
        self.has_side_effect = has_side_effect
        self.graph_cache_max = graph_cache_max

    @property
    def graph_cache_size(self) -> int:
        """CUDA graphs this callable keeps: none on the CPU, which captures no graphs."""
        return 0

    def __call__(self, *args, output_dims=None, vmap_method=None):
        jax = _jax()
        what = self.what
        if self.graph_mode not in (JaxCallableGraphMode.NONE, JaxCallableGraphMode.JAX):
            raise RuntimeError(f"{what}: graph mode {self.graph_mode.name} captures a CUDA graph, which the "
                               "CPU cannot: use JaxCallableGraphMode.NONE or JAX on the CPU")
        arrays, statics = split_inputs(self.inputs, args, what)
        output_dims = self.output_dims if output_dims is None else output_dims
        vmap_method = self.vmap_method if vmap_method is None else check_vmap_method(vmap_method, what)

        outs = [(self.inputs[k], self.inputs[k].warp_shape(args[k].shape)) for k in self.in_out]
        for arg in self.outputs:
            if isinstance(output_dims, dict):
                if arg.name not in output_dims:
                    raise ValueError(f"{what}: missing output dimensions for argument '{arg.name}'")
                dims = output_dims[arg.name]
            elif output_dims is not None:
                dims = output_dims
            elif self.array_inputs:  # the shape of the first input array
                first = self.array_inputs[0]
                dims = self.inputs[first].warp_shape(args[first].shape)
            else:
                raise ValueError(f"{what}: output_dims are needed: the function has no input array to take "
                                 "them from")
            outs.append((arg, dims))
        out_types = output_types(jax, outs)
        position = {k: j for j, k in enumerate(self.array_inputs)}
        specs = [(a, t.shape, position[k]) for (a, _), t, k in zip(outs, out_types, self.in_out)]
        specs += [(a, t.shape, None) for (a, _), t in zip(outs[len(self.in_out):], out_types[len(self.in_out):])]
        host = HostCall(self._runner(statics), [self.inputs[k] for k in self.array_inputs], specs,
                        check=check_device_support)
        # a list of the outputs, as Warp returns
        return list(call_host(jax, host, arrays, out_types, vmap_method, self.has_side_effect))

    def _runner(self, statics):
        in_out_slot = {k: j for j, k in enumerate(self.in_out)}

        def run(buffers, outputs):
            values = iter(buffers)
            call_args = []
            for k, arg in enumerate(self.inputs):
                if not arg.is_array:
                    call_args.append(statics[k])
                    continue
                buffer = next(values)
                call_args.append(arg.view(outputs[in_out_slot[k]] if arg.in_out else buffer))
            call_args += [arg.view(o) for arg, o in zip(self.outputs, outputs[len(self.in_out):])]
            self.func(*call_args)

        return run


def jax_callable(func, num_outputs=1, graph_mode=JaxCallableGraphMode.JAX, vmap_method="broadcast_all",
                 output_dims=None, in_out_argnames=None, stage_in_argnames=None, stage_out_argnames=None,
                 graph_cache_max=JAX_CALLABLE_DEFAULT_GRAPH_CACHE_MAX,
                 module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE, has_side_effect=False):
    """A JAX operation that calls `func`, a Python function launching weft kernels (Warp's
    `jax_callable`; see the module docstring). `output_dims` (one shape, or a dict by
    argument name) default to the first input array's shape. `graph_mode`: on the CPU,
    NONE and JAX run the function directly and the CUDA-graph modes are refused when the
    op runs. Wrappers are cached: the same arguments give the same wrapper."""
    _jax()
    graph_mode = JaxCallableGraphMode(graph_mode)
    module_preload_mode = JaxModulePreloadMode(module_preload_mode)

    def names(selection):
        return tuple(selection) if selection else None

    dims_key = tuple(sorted(output_dims.items())) if isinstance(output_dims, dict) else (
        tuple(output_dims) if hasattr(output_dims, "__len__") else output_dims)
    key = (func, num_outputs, graph_mode, vmap_method, dims_key, names(in_out_argnames), names(stage_in_argnames),
           names(stage_out_argnames), graph_cache_max, module_preload_mode, has_side_effect)
    with _REGISTRY_LOCK:
        wrapper = _REGISTRY.get(key)
        if wrapper is None:
            wrapper = _REGISTRY[key] = FfiCallable(func, num_outputs, graph_mode, vmap_method, output_dims,
                                                   in_out_argnames, stage_in_argnames, stage_out_argnames,
                                                   graph_cache_max, module_preload_mode, has_side_effect)
    return wrapper


def clear_jax_callable_graph_cache(callable=None):  # noqa: A002 - Warp's name
    """Forget the CUDA graphs captured by `callable` (None: by every callable). The CPU
    captures none, so there is nothing to free; the argument is checked."""
    if callable is not None and not isinstance(callable, FfiCallable):
        raise TypeError(f"clear_jax_callable_graph_cache: expected a jax_callable, got {type(callable).__name__}")


def register_ffi_callback(name, func, graph_compatible=True):
    """Register `func(inputs, outputs, attrs, ctx)` as the XLA FFI target `name` (Warp's raw
    callbacks; call it with `jax.ffi.ffi_call(name, output_types)(*arrays, **attrs)`).
    `inputs` and `outputs` are numpy views of XLA's CPU buffers, which kernels can be
    launched on directly (vector dtypes take their components from the trailing
    dimension); `attrs` holds the call's attributes; `ctx.stream` is None on the CPU.
    `graph_compatible` concerns CUDA graphs and has no effect on the CPU."""
    jax = _jax()
    if not xla_ffi.available(jax):
        raise RuntimeError("register_ffi_callback needs jax.ffi (JAX 0.4.36 or later)")
    if not callable(func):
        raise TypeError(f"register_ffi_callback({name!r}): expected a function, got {type(func).__name__}")
    xla_ffi.register_callback(jax, name, func)
