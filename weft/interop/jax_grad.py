"""`jax_kernel(..., enable_backward=True)`: a kernel as a JAX op with a VJP (jax.grad).

The forward pass launches the kernel; the VJP launches its adjoint with the primal inputs,
the forward's outputs (what weft's Tape uses too: the arrays as the forward left them),
the output cotangents as output adjoints, and zeroed input adjoints, which it returns.
Integer arrays get no gradient (a zero cotangent); scalars are static (`nondiff_argnums`).
Launch dims are fixed when the wrapper is made (or taken from the first input array),
so the adjoint runs over exactly the forward's threads; the outputs take the shape of the
first input array (Warp's rule for these wrappers).
"""

from __future__ import annotations

import functools

from ..runtime.launch import launch
from .jax import _jax, check_device_support
from .jax_ffi import (
    HostCall,
    call_host,
    check_tid_extents,
    check_vmap_method,
    normalize_dims,
    output_types,
    split_inputs,
)
from .jax_kernel import _KernelSignature

_MISSING = object()


def differentiable_kernel(kernel, num_outputs, vmap_method, launch_dims, preload_mode, block_dim):
    """The wrapper that `jax_kernel(..., enable_backward=True)` returns (see the module
    docstring)."""
    jax = _jax()
    what = f"jax_kernel({getattr(kernel, 'name', kernel)!s}, enable_backward=True)"
    sig = _KernelSignature(kernel, num_outputs, None, what)
    if not kernel.enable_backward:
        raise ValueError(f"{what}: the kernel was built with enable_backward=False, so it has no adjoint")
    check_vmap_method(vmap_method, what)
    fixed_dims = normalize_dims(launch_dims, what, "launch_dims")
    statics_at = tuple(k for k, a in enumerate(sig.inputs) if not a.is_array)
    array_args = [sig.inputs[k] for k in sig.array_inputs]
    float_inputs = [k for k in sig.array_inputs if k in kernel.adjoint_param_indices]
    launch_block = block_dim

    def dims_of(args):
        dims = fixed_dims if fixed_dims is not None else sig.infer_launch_dims(args, what)
        check_tid_extents(kernel, dims, sig.uses_tid)
        return dims

    def with_statics(arrays, statics):
        """The full input list from the arrays and the static values (by position)."""
        values, arrays = [], iter(arrays)
        for k in range(sig.num_inputs):
            values.append(statics[k] if k in statics else next(arrays))
        return values

    def forward(*args):
        arrays, statics = split_inputs(sig.inputs, args, what)
        dims = dims_of(args)
        first = sig.inputs[sig.array_inputs[0]].warp_shape(args[sig.array_inputs[0]].shape)
        out_types = output_types(jax, [(arg, first) for arg in sig.outputs])
        sig.preload(preload_mode)

        def run(buffers, outputs):
            inputs = [sig.inputs[k].view(b.copy() if k in sig.written_inputs else b) if k in sig.array_inputs
                      else b for k, b in enumerate(with_statics(buffers, statics))]
            launch(kernel, dims, inputs=inputs, outputs=[a.view(o) for a, o in zip(sig.outputs, outputs)],
                   block_dim=launch_block)

        specs = [(a, t.shape, None) for a, t in zip(sig.outputs, out_types)]
        host = HostCall(run, array_args, specs, check=check_device_support)
        return list(call_host(jax, host, arrays, out_types, vmap_method))  # a list of the outputs, as Warp returns

    def backward(statics, arrays, outputs, cotangents):
        args = with_statics(arrays, statics)
        dims = dims_of(args)
        grad_types = output_types(jax, [(sig.inputs[k], sig.inputs[k].warp_shape(args[k].shape))
                                        for k in float_inputs])

        def run(buffers, grads):
            n_in, n_out = len(sig.array_inputs), len(sig.outputs)
            inputs = [sig.inputs[k].view(b) if k in sig.array_inputs else b
                      for k, b in enumerate(with_statics(buffers[:n_in], statics))]
            outs = [a.view(o) for a, o in zip(sig.outputs, buffers[n_in:n_in + n_out])]
            # (the adjoint may consume an output's adjoint: XLA's cotangent buffer is copied)
            adj_outs = [a.view(c.copy()) for a, c in zip(sig.outputs, buffers[n_in + n_out:])]
            grad_of = dict(zip(float_inputs, grads))
            adj_ins = [sig.inputs[k].view(grad_of[k]) if k in grad_of else None for k in range(sig.num_inputs)]
            launch(kernel, dims, inputs=inputs, outputs=outs, adj_inputs=adj_ins, adj_outputs=adj_outs,
                   adjoint=True, block_dim=launch_block)

        specs = [(sig.inputs[k], t.shape, None) for k, t in zip(float_inputs, grad_types)]
        host = HostCall(run, array_args + sig.outputs + sig.outputs, specs, check=check_device_support)
        grads = call_host(jax, host, [*arrays, *outputs, *cotangents], grad_types, vmap_method)
        grad_of = dict(zip(float_inputs, grads))
        return tuple(grad_of.get(k) for k in sig.array_inputs)  # None: no gradient (integer arrays)

    op = jax.custom_vjp(forward, nondiff_argnums=statics_at)

    def op_fwd(*args):
        outputs = forward(*args)
        arrays = tuple(args[k] for k in sig.array_inputs)
        return outputs, (arrays, tuple(outputs))

    def op_bwd(*bwd_args):
        n = len(statics_at)
        statics = dict(zip(statics_at, bwd_args[:n]))
        (arrays, outputs), cotangents = bwd_args[n], bwd_args[n + 1]
        return backward(statics, arrays, outputs, tuple(cotangents))

    op.defvjp(op_fwd, op_bwd)
    return DifferentiableKernel(op, kernel, block_dim, fixed_dims)


class DifferentiableKernel:
    """A kernel as a JAX op with a VJP: call it with the kernel's inputs (JAX arrays and
    static scalars); it returns the outputs as a tuple. Launch dims, output dims and the
    vmap method are fixed when it is made (`jax_kernel` again gives another)."""

    def __init__(self, op, kernel, block_dim, launch_dims):
        self._op = op
        self.kernel = kernel
        self.block_dim = block_dim
        self.launch_dims = launch_dims
        functools.update_wrapper(self, kernel.func, updated=())

    def __call__(self, *args, launch_dims=_MISSING, output_dims=_MISSING, vmap_method=_MISSING):
        if launch_dims is not _MISSING:
            raise TypeError(f"jax_kernel(): launch_dims cannot be overridden per-call when enable_backward=True "
                            f"(this wrapper's are {self.launch_dims!r}); make another wrapper with jax_kernel()")
        if output_dims is not _MISSING:
            raise TypeError("jax_kernel(): output_dims is not supported when enable_backward=True")
        if vmap_method is not _MISSING:
            raise TypeError("jax_kernel(): vmap_method cannot be overridden per-call when enable_backward=True; "
                            "make another wrapper with jax_kernel()")
        return self._op(*args)
