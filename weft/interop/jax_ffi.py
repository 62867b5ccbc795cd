"""weft kernels and functions as JAX operations: `jax_kernel`, `jax_callable` (Warp's
`warp.jax_experimental` API).

    jax_add = weft.jax_kernel(add_kernel)            # inputs first, outputs last
    (y,) = jax.jit(lambda a, b: jax_add(a, b))(a, b)  # a JAX op: jit, vmap, grad

Mechanism. A call becomes an XLA FFI call (`jax.ffi.ffi_call`) of one target that weft
registers on the CPU platform: a C function pointer made by ctypes (xla_ffi.py). When XLA
runs the op it passes its own buffers; weft views them as arrays, zeroes the outputs (an
in-out argument's output is its input's buffer, aliased by XLA), and launches the kernel
(or calls the function) on them in place. What one call costs beyond the kernel: XLA's
dispatch of a custom call, entering Python through ctypes (taking the GIL), viewing the
buffers (a few microseconds each) and zeroing the outputs (one write of each). Measured
on this project's shared 2-core machine (load average 5), best of 7: a 1024-element add
takes 0.4 ms as a jax_kernel (jnp's own add: 0.2 ms; the weft launch alone: 0.05 ms);
at 1M elements 5 ms (jnp: 0.9 ms; the launch alone: 2.2 ms). Where JAX lacks the FFI
the op is a `jax.pure_callback` instead, which copies every input and output through
numpy (1.3 ms and 23 ms for the same two cases).

Transformations. `jax.jit`: the op is staged; weft runs when the compiled
computation does. `jax.vmap`: `vmap_method="sequential"` lets JAX run one call per batch
element; `"broadcast_all"` and `"expand_dims"` pass the batch in one call, and weft
launches once per batch element on views of it, so a kernel always sees the shapes it
was written for. `"legacy_vectorized"` (JAX's former `vectorized=True`) passes only the
batched inputs with a batch dimension (moved to the front) and the others as they are;
weft aligns an input's batch dimensions with the innermost ones of the call (numpy's
broadcasting), which is right for one vmap; under nested vmaps an input batched by an
outer vmap only is ambiguous (JAX's reason for retiring it): prefer `"broadcast_all"`.
`jax.grad`: `jax_kernel(..., enable_backward=True)` defines the VJP with
the kernel's adjoint (see `jax_kernel.py`).

Scalar arguments are static: they must be Python values when the op is traced (a
`static_argnames` of `jax.jit`), since a kernel launch takes them by value.
"""

from __future__ import annotations

import enum
import numbers

import numpy as np

from ..runtime.array import view_of
from ..runtime.launch import MAX_THREADS
from ..types import ArrayType, Matrix, Scalar, Vector
from . import xla_ffi
from .jax import _jax


class JaxCallableGraphMode(enum.IntEnum):
    """How a `jax_callable` is captured in a CUDA graph (Warp's modes). On the CPU, `NONE`
    and `JAX` run the function directly; the `WARP*` modes capture a CUDA graph and are
    refused on the CPU with a clear error."""

    NONE = 0
    JAX = 1
    WARP = 2
    WARP_STAGED = 3
    WARP_STAGED_EX = 4


class JaxModulePreloadMode(enum.IntEnum):
    """When a wrapper compiles its kernel: `NONE` at the first call, `CURRENT_DEVICE` and
    `ALL_DEVICES` when the op is traced (weft has one device, the CPU)."""

    NONE = 0
    CURRENT_DEVICE = 1
    ALL_DEVICES = 2


#: how many Warp-captured CUDA graphs a callable keeps (there are none on the CPU)
JAX_CALLABLE_DEFAULT_GRAPH_CACHE_MAX = 32

VMAP_METHODS = (None, "sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized")
_TID_MAX_EXTENT = MAX_THREADS  # tid() indices are 32-bit signed integers


class Arg:
    """One parameter of a wrapped kernel or function: its name, weft type and how JAX sees
    it (an array of `jax_dtype` with `dtype_shape` trailing component dimensions)."""

    def __init__(self, name, t, in_out=False, what="jax_kernel()"):
        self.name = name
        self.type = t
        self.in_out = in_out
        self.is_array = isinstance(t, ArrayType)
        if self.is_array:
            element = t.dtype
            if isinstance(element, (Vector, Matrix)):
                scalar, self.dtype_shape = element.dtype, tuple(element.np_shape)
            elif isinstance(element, Scalar):
                scalar, self.dtype_shape = element, ()
            else:
                raise TypeError(f"{what}: argument '{name}' is an array of {element!r}; JAX arrays hold "
                                "scalars, vectors and matrices")
            self.np_dtype = np.dtype(scalar.np_dtype)
            self.ndim = t.ndim + len(self.dtype_shape)  # of the JAX array
        elif in_out:
            raise TypeError(f"{what}: in-out argument '{name}' must be an array, not {t!r}")
        elif not isinstance(t, (Scalar, Vector, Matrix)):
            raise TypeError(f"{what}: argument '{name}' is a {t!r}; arguments must be arrays or "
                            "scalars (vectors and matrices: static values)")

    def check(self, value, what):
        """Check JAX array `value` against this parameter at trace time (clear errors)."""
        shape = getattr(value, "shape", None)
        dtype = getattr(value, "dtype", None)
        if shape is None or dtype is None:
            raise TypeError(f"{what}: argument '{self.name}' must be a JAX array, got {type(value).__name__}")
        if np.dtype(dtype) != self.np_dtype:
            raise TypeError(f"{what}: invalid data type for array argument '{self.name}': expected "
                            f"{self.np_dtype}, got {np.dtype(dtype)}")
        if len(shape) != self.ndim:
            raise TypeError(f"{what}: invalid dimensionality for array argument '{self.name}': expected "
                            f"{self.ndim} dimensions, got {len(shape)}")
        if self.dtype_shape and tuple(shape[len(shape) - len(self.dtype_shape):]) != self.dtype_shape:
            raise TypeError(f"{what}: invalid inner dimensions for array argument '{self.name}' of "
                            f"{self.type.dtype!r}: expected {self.dtype_shape}, got "
                            f"{tuple(shape[len(shape) - len(self.dtype_shape):])}")

    def warp_shape(self, shape) -> tuple:
        """The weft array shape of a JAX array of shape `shape` (components dropped)."""
        return tuple(shape[:len(shape) - len(self.dtype_shape)])

    def out_shape(self, dims) -> tuple:
        """The JAX shape of an output given `dims`: its weft shape, or (for vectors and
        matrices) its JAX shape, components included."""
        dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
        dims = tuple(int(d) for d in dims)
        if len(dims) == self.type.ndim:
            return dims + self.dtype_shape
        if self.dtype_shape and len(dims) == self.ndim and dims[self.type.ndim:] == self.dtype_shape:
            return dims
        raise ValueError(f"invalid output dimensions {dims} for argument '{self.name}', an array of "
                         f"{self.type.dtype!r} with {self.type.ndim} dimension(s)")

    def static_value(self, value, what):
        """A scalar argument's value, which must be known when the op is traced."""
        jax = _jax()
        if isinstance(value, jax.core.Tracer):
            raise ValueError(f"{what}: argument '{self.name}' must be a static value (a Python number, "
                             "e.g. through jax.jit(..., static_argnames=...)), not a traced JAX value")
        return value

    def view(self, storage):
        """A weft array viewing numpy `storage` (a buffer XLA handed to the callback)."""
        return view_of(storage, self.type.dtype, f"argument '{self.name}'")


def split_in_out(names, in_out_argnames, num_outputs, what):
    """(number of inputs, set of in-out names): checks Warp's rules for `num_outputs` and
    `in_out_argnames` over the parameter `names`."""
    selected = list(in_out_argnames or ())
    if len(set(selected)) != len(selected):
        raise ValueError(f"{what}: in_out_argnames must not contain duplicate names, got {selected}")
    if not isinstance(num_outputs, numbers.Integral) or num_outputs < 1:
        raise ValueError(f"{what}: at least one output is required (num_outputs={num_outputs!r})")
    if num_outputs > len(names):
        raise ValueError(f"{what}: num_outputs={num_outputs} is more than the {len(names)} arguments")
    if num_outputs < len(selected):
        raise ValueError(f"{what}: num_outputs={num_outputs} must count the {len(selected)} in_out arguments")
    num_inputs = len(names) - num_outputs + len(selected)
    for name in names[num_inputs:]:
        if name in selected:
            raise ValueError(f"{what}: expected an output-only argument for argument '{name}': "
                             "in_out arguments should be placed before output-only arguments")
    unknown = [n for n in selected if n not in names]
    if unknown:
        raise ValueError(f"{what}: in_out_argnames {unknown} did not match any function argument names "
                         f"({', '.join(names)})")
    return num_inputs, set(selected)


def check_vmap_method(vmap_method, what):
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"{what}: vmap_method must be one of {VMAP_METHODS}, got {vmap_method!r}")
    return vmap_method


def normalize_dims(dims, what, name):
    """`dims` (an int or a sequence of ints) as a tuple, or None."""
    if dims is None:
        return None
    if isinstance(dims, numbers.Integral) and not isinstance(dims, bool):
        return (int(dims),)
    try:
        out = tuple(int(d) for d in dims)
    except TypeError:
        raise TypeError(f"{what}: {name} must be an int or a sequence of ints, got {dims!r}") from None
    if not out or any(d < 0 for d in out):
        raise ValueError(f"{what}: {name} must be non-negative and non-empty, got {dims!r}")
    return out


def check_tid_extents(kernel, dims, uses_tid):
    """Refuse launch dimensions that tid() cannot index (32-bit) before JAX builds the op."""
    if not uses_tid:
        return
    for d, extent in enumerate(dims):
        if extent > _TID_MAX_EXTENT:
            raise ValueError(f"kernel '{kernel.name}', launch dims {dims}: Warp cannot launch a kernel using "
                             f"wp.tid() with extent {extent} in dimension {d} (tid() indices are 32-bit: "
                             f"at most {_TID_MAX_EXTENT} per dimension)")


def output_types(jax, args_and_dims):
    """The `jax.ShapeDtypeStruct` of each output, given (Arg, weft dims) pairs."""
    return [jax.ShapeDtypeStruct(arg.out_shape(dims), arg.np_dtype) for arg, dims in args_and_dims]


def split_inputs(inputs, args, what):
    """(the JAX arrays, {position: static value}) of a call's arguments, each checked against
    its `Arg` in `inputs`."""
    if len(args) != len(inputs):
        names = ", ".join(a.name for a in inputs)
        raise ValueError(f"{what}: expected {len(inputs)} inputs ({names}), got {len(args)}")
    arrays, statics = [], {}
    for k, (arg, value) in enumerate(zip(inputs, args)):
        if arg.is_array:
            arg.check(value, what)
            arrays.append(value)
        else:
            statics[k] = arg.static_value(value, what)
    return arrays, statics


def _varying_axes(jax, inputs) -> tuple:
    """The manual mesh axes (inside `shard_map`) that any of `inputs` varies over."""
    if not hasattr(jax, "typeof"):
        return ()
    varying = set()
    for value in inputs:
        axis_type = getattr(jax.typeof(value), "manual_axis_type", None)
        if axis_type is not None and axis_type.varying:
            varying.update(axis_type.varying)
    return tuple(sorted(varying, key=str))


class HostCall:
    """What runs when XLA executes one call: input buffers in, output buffers filled.

    `run(inputs, outputs)` does the work on numpy views for one (unbatched) element;
    `in_args` are the Args of the array inputs; `out_specs` (Arg, JAX shape, index of the
    input it starts from or None) those of the outputs, which start as zeros or as their
    in-out input. Batch dimensions that vmap put in front (every argument has the same
    number of them, size 1 where an argument is not batched) are looped over.
    """

    def __init__(self, run, in_args, out_specs, check=None):
        self.run = run
        self.in_args = in_args
        self.out_specs = out_specs
        self.check = check  # called first: refuses a call that cannot run here
        self.input_dtypes = [a.np_dtype for a in in_args]
        self.output_dtypes = [a.np_dtype for a, _, _ in out_specs]

    def __call__(self, *buffers):
        """The pure_callback form: fresh outputs, returned (XLA copies them)."""
        buffers = [np.asarray(b) for b in buffers]
        batch = self._batch(buffers)
        outputs = [np.empty(batch + shape, dtype=arg.np_dtype) for arg, shape, _ in self.out_specs]
        self.execute(buffers, outputs)
        return tuple(outputs)

    def _batch(self, buffers) -> tuple:
        shapes = [b.shape[:b.ndim - a.ndim] for b, a in zip(buffers, self.in_args)]
        return np.broadcast_shapes(*shapes) if shapes else ()

    def execute(self, buffers, outputs):
        """Run on `buffers` into `outputs` (XLA's own, in the FFI form)."""
        if self.check is not None:
            self.check()
        for out, (_, _, source) in zip(outputs, self.out_specs):
            if source is None:
                out.fill(0)
            elif out.ctypes.data != buffers[source].ctypes.data:  # (an aliased in-out buffer is the input)
                np.copyto(out, np.broadcast_to(buffers[source], out.shape))
        batch = outputs[0].shape[:outputs[0].ndim - self.out_specs[0][0].ndim] if outputs else self._batch(buffers)
        if not batch:
            self.run(buffers, outputs)
            return
        # each input's leading (batch) dimensions, aligned with the last of `batch` as numpy
        # broadcasts: all of them under "expand_dims" and "broadcast_all" (size 1 where the
        # input is not batched); under "legacy_vectorized" an unbatched input has none
        leads = [b.shape[:b.ndim - a.ndim] for b, a in zip(buffers, self.in_args)]
        for lead, arg in zip(leads, self.in_args):
            if len(lead) > len(batch) or any(n not in (1, m) for n, m in zip(lead[::-1], batch[::-1])):
                raise ValueError(f"argument '{arg.name}' has batch dimensions {lead}, which do not broadcast "
                                 f"to the call's batch {batch} (with vmap_method='legacy_vectorized', an "
                                 "input's batch dimensions are aligned with the innermost vmap's; use "
                                 "'broadcast_all' for nested vmaps)")
        for index in np.ndindex(*batch):
            views = [b[tuple(i if n > 1 else 0 for i, n in zip(index[len(index) - len(lead):], lead))]
                     for b, lead in zip(buffers, leads)]
            self.run(views, [o[index] for o in outputs])


def call_host(jax, host, arrays, out_types, vmap_method, has_side_effect=False):
    """Stage `host` as a JAX op on `arrays` with results `out_types` (a tuple of arrays):
    an XLA FFI call into weft where JAX has the FFI (no copies: see xla_ffi.py), else a
    `pure_callback` (an `io_callback` if `has_side_effect`: the op runs even where its
    outputs are unused). Inside `shard_map`, every output varies over the mesh axes that
    any input varies over (the op's data flow is opaque to JAX, so it assumes the most)."""
    if xla_ffi.available(jax):
        aliases = {source: k for k, (_, _, source) in enumerate(host.out_specs) if source is not None}
        outputs = xla_ffi.stage(jax, host, arrays, out_types, vmap_method, aliases, has_side_effect)
    elif has_side_effect:
        from jax.experimental import io_callback
        outputs = io_callback(host, tuple(out_types), *arrays, ordered=False)
    else:
        outputs = jax.pure_callback(host, tuple(out_types), *arrays, vmap_method=vmap_method)
    varying = _varying_axes(jax, arrays)
    if varying:
        outputs = tuple(_cast_varying(jax, o, varying) for o in outputs)
    return tuple(outputs)


def _cast_varying(jax, value, axes):
    have = getattr(jax.typeof(value), "manual_axis_type", None)
    missing = tuple(a for a in axes if have is None or a not in have.varying)
    return jax.lax.pcast(value, missing, to="varying") if missing else value


GraphMode = JaxCallableGraphMode  # Warp's older name
