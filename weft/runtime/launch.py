"""`weft.launch`: validate arguments, pack them, run the kernel, report run-time errors."""

from __future__ import annotations

import copy
import ctypes
import functools
import numbers
import reprlib

import numpy as np

from .. import config
from .. import tape as tape_module
from ..lang.errors import CompileError
from ..lang.kernel import Kernel
from ..types import ArrayType, CompositeValue, Matrix, Scalar, StructType, StructValue, Vector, bfloat16, bool_, int64
from ..types.composite import cast_components, deprecated_fill, fills_with_deprecation
from ..types.introspect import type_repr
from ..types.layout import array_descriptor, ctype_of
from ..types.scalars import SCALAR_VALUES
from . import capture, cpu_blocks, diagnostics, half_adjoints, scatter
from .array import array, view_of
from .device import get_device
from .indexed_array import indexedarray
from .threads import get_pool, thread_count

MAX_DIMS = 4
MAX_THREADS = 2**31 - 1


class LaunchContext(ctypes.Structure):
    """Mirrors codegen.llvm.CTX_TYPE."""

    _fields_ = [("dim", ctypes.c_int32 * MAX_DIMS), ("ndim", ctypes.c_int32),
                ("error_site", ctypes.c_int32), ("error_index", ctypes.c_int64 * MAX_DIMS),
                ("error_extent", ctypes.c_int64 * MAX_DIMS), ("scratch", ctypes.c_void_p),
                ("adstack_limit", ctypes.c_int64), ("serial", ctypes.c_int32),
                ("private_mask", ctypes.c_uint64)]

    @classmethod
    def for_kernel(cls, ck) -> LaunchContext:
        """A context whose scratch memory holds the largest element `ck` accesses."""
        ctx = cls()
        ctx.scratch_buffer = ctypes.create_string_buffer(ck.scratch_size)  # kept alive with ctx
        ctx.scratch = ctypes.addressof(ctx.scratch_buffer)
        return ctx


class LaunchError(Exception):
    pass


# Argument checking and packing ----------------------------------------------------------------
class LaunchTypeError(TypeError, RuntimeError):
    """A launch argument of the wrong kind: a TypeError, and the RuntimeError Warp raises."""


def _fail(kernel, name, expected, got, exc=LaunchTypeError):
    where = f"kernel '{kernel.name}', argument '{name}'" if kernel is not None else name
    raise exc(f"{where}: expected {expected}, got {got}")


class LaunchValueError(ValueError, TypeError):
    """A launch argument that cannot be converted: Warp's ValueError, and weft's TypeError."""


def _refuse(kernel, name, message, exc=LaunchTypeError):
    raise exc(f"kernel '{kernel.name}', argument '{name}' {message}")


def _describe(value) -> str:
    if isinstance(value, array):
        return f"an array of {value.dtype!r} with {value.ndim} dimension(s)"
    if isinstance(value, CompositeValue):
        return f"a {value.type!r}"
    if isinstance(value, SCALAR_VALUES):  # `float32 1.0`, not `float32 np.float32(1.0)`
        return f"{type(value).__name__} {value.item()!r}"
    if isinstance(value, (tuple, list)) and len(value) <= 16:
        return f"{type(value).__name__} {value!r}"
    return f"{type(value).__name__} {value!r}" if np.ndim(value) == 0 else f"{type(value).__name__}"


def make_packer(kernel, name, t):
    """A function turning an argument into the ctypes value of parameter `name` (type `t`).
    Arrays take a fast path (the common case); everything else goes through pack_value."""
    if isinstance(t, ArrayType):
        def pack_array(value):
            if type(value) is array and value._type is t and value.device.is_cpu:
                desc = value._desc
                return desc if desc is not None else value.descriptor()
            return pack_value(kernel, name, t, value)
        return pack_array
    if isinstance(t, Scalar) and t.is_float and t.bits > 16:
        def pack_float(value):
            if type(value) is float:
                return value
            return pack_value(kernel, name, t, value)
        return pack_float
    if isinstance(t, Scalar) and t.is_int and not t.is_bool:
        lo, hi = _int_range(t)
        lo = 0 if t.np_dtype.kind == "u" else lo  # (a negative value for an unsigned type wraps: below)

        def pack_int(value):
            if type(value) is int and lo <= value <= hi:
                return value
            return pack_value(kernel, name, t, value)
        return pack_int
    if isinstance(t, (Vector, Matrix)) and not (t.dtype.is_float and t.dtype.bits == 16):
        ct = ctype_of(t)

        def pack_composite(value):
            if isinstance(value, CompositeValue) and value.type is t:
                return ct(*value._data.tolist())
            return pack_value(kernel, name, t, value)
        return pack_composite
    if isinstance(t, StructType):  # (a struct's fields are checked when they are set)
        ct = ctype_of(t)
        fields = [(field, make_packer(kernel, f"{name}.{field}", ft)) for field, ft in t.fields.items()]

        def pack_struct(value):
            if isinstance(value, StructValue) and value._type is t:
                out = ct()
                for field, pack in fields:
                    setattr(out, field, pack(getattr(value, field)))
                return out
            return pack_value(kernel, name, t, value)
        return pack_struct
    return lambda value: pack_value(kernel, name, t, value)


def _foreign_array(kernel, name, t, value) -> array:
    """A weft array viewing the memory of `value`, an array of another library that shows
    its CPU memory through `__array_interface__` or `__array__()` (numpy arrays, torch CPU
    tensors: Warp's rule). The caller's object keeps the memory alive during the launch."""
    if not (hasattr(value, "__array_interface__") or hasattr(value, "__array__")) or isinstance(value, str):
        _refuse(kernel, name, f"expects an array of type {type_repr(t)}, but passed value has type "
                f"{type(value).__name__}: {reprlib.repr(value)}")
    try:
        storage = np.asarray(value)
        return view_of(storage, t.dtype, f"kernel '{kernel.name}', argument '{name}'")
    except (TypeError, ValueError, RuntimeError) as e:
        _fail(kernel, name, f"a weft array of {t.dtype!r} (or memory viewable as one)",
              f"{type(value).__name__} ({e})")


def pack_value(kernel, name, t, value):
    """`value` as the ctypes value of a parameter of weft type `t`, or a clear error."""
    if isinstance(t, ArrayType) and t.fabric:
        if value is None:
            return ctype_of(t)()  # no elements: any access is out of bounds
        vt = getattr(value, "_type", None)
        if not (isinstance(vt, ArrayType) and vt.fabric and vt.indexed == t.indexed):
            _fail(kernel, name, f"a {t.family} of {t.dtype!r}", _describe(value))
        if vt is not t:
            _fail(kernel, name, f"a {t.family} of {t.dtype!r} with {t.ndim} dimension(s)",
                  f"one of {value.dtype!r} with {value.ndim} dimension(s)")
        return value.descriptor()
    if isinstance(t, ArrayType) and t.indexed:
        if value is None:
            return ctype_of(t)()
        if not isinstance(value, indexedarray):
            _fail(kernel, name, f"an indexedarray of {t.dtype!r}", _describe(value))
        if value.dtype is not t.dtype or value.ndim != t.ndim:
            _fail(kernel, name, f"an indexedarray of {t.dtype!r} with {t.ndim} dimension(s)",
                  f"one of {value.dtype!r} with {value.ndim} dimension(s)")
        return value.descriptor()
    if isinstance(t, ArrayType):
        if value is None or (isinstance(value, ArrayType) and type(value) is ArrayType):
            # a null array: any access is out of bounds (`wp.array(dtype=float)`, which is an
            # empty array in Warp and the annotation in weft, passes as one too)
            return array_descriptor(t.ndim)()
        if not isinstance(value, array):  # (a descriptor of Warp's `from_torch(..., return_ctype=True)`)
            vt = getattr(value, "_type", None)
            if isinstance(vt, ArrayType):  # an indexed or fabric array: its writes would be lost
                _refuse(kernel, name, f"expects an array of type {type_repr(t)}, but passed value has "
                        f"type {type(value).__name__}")
            described = _described_array(value)
            value = described if isinstance(described, array) else _foreign_array(kernel, name, t, value)
        if (value.dtype is not t.dtype and not _same_field_type(value.dtype, t.dtype)) or value.ndim != t.ndim:
            _fail(kernel, name, f"an array of {t.dtype!r} with {t.ndim} dimension(s)", _describe(value))
        if not value.device.is_cpu:
            _fail(kernel, name, "an array on device 'cpu'", f"one on {value.device}", ValueError)
        return value.descriptor()
    if isinstance(t, Scalar):
        return _pack_scalar(kernel, name, t, value)
    if isinstance(t, (Vector, Matrix)):
        if isinstance(value, CompositeValue) and value.type is t:
            data = value._data
        elif isinstance(value, CompositeValue) and value.type.np_shape != t.np_shape:
            _fail(kernel, name, repr(t), _describe(value))
        elif value is None:
            _refuse(kernel, name, f"expects {t!r} but got None: Failed to convert argument for param "
                    f"{name} to {t!r}", LaunchValueError)
        elif fills_with_deprecation(value):
            data = deprecated_fill(value, t, f"kernel parameter '{name}'")
        elif isinstance(value, (numbers.Number, *SCALAR_VALUES)):  # one number is not broadcast
            _refuse(kernel, name, f"expects {t!r} but got a single value of type {type(value).__name__}. "
                    f"Construct the value explicitly, e.g.: {t!r}(...)")
        elif isinstance(value, (array, str)):
            _fail(kernel, name, repr(t), _describe(value))
        else:  # (a value of another scalar type converts, as Warp builds `t(value)`)
            try:
                data = cast_components(value, t.dtype)
            except (TypeError, ValueError) as e:
                _fail(kernel, name, repr(t), f"{_describe(value)} ({e})",
                      LaunchTypeError if isinstance(e, TypeError) else type(e))
            if data.size != t.num_components:
                _fail(kernel, name, f"{t!r} ({t.num_components} components)",
                      f"{_describe(value)} ({data.size} values)")
        ct = ctype_of(t)
        if t.dtype.bits == 16 and t.dtype.is_float:  # (the bits: see types.layout)
            data = data.astype(t.dtype.np_dtype).view(np.uint16)
        return ct(*data.tolist())
    if isinstance(t, StructType):
        if value is None:
            _refuse(kernel, name, f"expects {t.name} but got None")
        if not isinstance(value, StructValue) and hasattr(value, "_as_struct"):
            try:  # an object a struct type stands for (weft.sparse.bsr_matrix_t)
                value = value._as_struct(t)
            except TypeError as e:
                _refuse(kernel, name, f"cannot take it: {e}")
        if not isinstance(value, StructValue) or not _same_struct(value._type, t):
            _fail(kernel, name, f"an instance of struct {t.name}", _describe(value))
        out = ctype_of(t)()
        for field, ft in t.fields.items():
            setattr(out, field, pack_value(kernel, f"{name}.{field}", ft, getattr(value, field)))
        return out
    _fail(kernel, name, repr(t), _describe(value))


def _same_struct(a: StructType, b: StructType) -> bool:
    """`a` is `b`, or the same struct defined again (a module reloaded, a notebook cell run
    twice): the same key and the same fields of the same types."""
    if a is b:
        return True
    if a.key != b.key or a.field_names != b.field_names:
        return False
    return all(_same_field_type(fa, fb) for fa, fb in zip(a.fields.values(), b.fields.values()))


def _same_field_type(a, b) -> bool:
    if a is b or a == b:
        return True
    if isinstance(a, StructType) and isinstance(b, StructType):
        return _same_struct(a, b)
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):  # (arrays of a struct defined again)
        return (a.ndim, a.indexed, a.fabric) == (b.ndim, b.indexed, b.fabric) and _same_field_type(a.dtype, b.dtype)
    return False


@functools.cache
def _int_range(t: Scalar) -> tuple[int, int]:
    """The Python ints a parameter of integer type `t` takes: its range, and for an unsigned
    type also the negative values of its width (-1 is all ones, as C and Warp convert it)."""
    info = np.iinfo(t.np_dtype)
    return (-(int(info.max) + 1) // 2 if info.min == 0 else int(info.min)), int(info.max)


def _pack_scalar(kernel, name, t: Scalar, value):
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    elif not isinstance(value, (np.generic, numbers.Number)) and getattr(value, "ndim", None) == 0 \
            and hasattr(value, "item"):  # a 0-d torch or JAX array
        value = value.item()
    # (a bool is a number and a number a bool, as Warp's ctypes packing takes them)
    if t.is_bool:
        # an integer is taken as its truth value, as Warp's ctypes.c_bool(value) does (a
        # float is refused: 0.5 as a flag is more likely a mistake than a choice)
        if not isinstance(value, (bool, np.bool_, numbers.Integral)):
            _fail(kernel, name, "a bool", _describe(value))
        return bool(value)
    if isinstance(value, SCALAR_VALUES) and type(value).__name__ == "bfloat16":  # (ml_dtypes': no numbers.Number)
        value = float(value)
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if not isinstance(value, numbers.Number):
        _fail(kernel, name, f"a number ({t!r})", _describe(value))
    if t.is_int:
        if not isinstance(value, numbers.Integral):
            _fail(kernel, name, f"an integer ({t!r})", _describe(value))
        lo, hi = _int_range(t)
        if not lo <= int(value) <= hi:
            _fail(kernel, name, f"an integer in the range of {t!r}", repr(int(value)), ValueError)
        value = int(value)
        return value % (hi + 1) if value < 0 and t.np_dtype.kind == "u" else value  # (-1: all ones)
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        _fail(kernel, name, f"a real number ({t!r})", _describe(value))
    try:
        value = float(value)
    except OverflowError:  # an int beyond float64's range
        _fail(kernel, name, f"a number in the range of {t!r}", repr(value), ValueError)
    if t.bits == 16:  # float16 or bfloat16: the bits (bfloat16 through float32, as Warp)
        with np.errstate(over="ignore"):  # (beyond the range: infinity, as Warp)
            return int(np.asarray(np.float32(value) if t is bfloat16 else value, t.np_dtype).view(np.uint16))
    return value


def _described_array(value):
    """The array a descriptor of Warp's `from_torch(..., return_ctype=True)` describes (the
    Tape follows its gradient); any other value as it is."""
    if isinstance(value, array):
        return value
    described = getattr(value, "weft_array", None)
    return described if isinstance(described, array) else value


def normalize_dim(kernel, dim) -> tuple:
    if type(dim) is int and 0 <= dim <= MAX_THREADS:
        return (dim,)
    dims = (dim,) if isinstance(dim, numbers.Integral) else \
        tuple(dim) if isinstance(dim, (tuple, list, np.ndarray)) and np.ndim(dim) == 1 else None
    # (a value of the wrong type is a TypeError, a wrong number a ValueError: Warp's classes)
    wrong_type = dims is None or not all(isinstance(d, numbers.Integral) for d in dims)
    if wrong_type or not 1 <= len(dims) <= MAX_DIMS or not all(d >= 0 for d in dims):
        raise (LaunchValueError if wrong_type else ValueError)(
            f"kernel '{kernel.name}': dim must be a non-negative int or a tuple of 1 to {MAX_DIMS} "
            f"of them, got {dim!r}")
    total = _product(dims)
    if total > MAX_THREADS:
        raise ValueError(f"kernel '{kernel.name}': {total} threads exceed the limit of {MAX_THREADS}")
    return tuple(int(d) for d in dims)


def _product(dims) -> int:
    total = 1
    for d in dims:
        total *= int(d)
    return total


# Running --------------------------------------------------------------------------------------
class Launch:
    """A launch with its arguments packed, ready to run again with little overhead. With
    `adjoint=True` it runs the adjoint kernel.

    `launch(..., record_cmd=True)` makes one; `Launch(kernel, device)` (Warp's form) makes
    one with default arguments (arrays None, numbers and composites zero) and no threads,
    to fill in with `set_param_*` and `set_dim`. `hooks`, `params_addr` and `max_blocks`
    are Warp's CUDA launch details, kept but unused on the CPU; `block_dim` is the one a
    launch on the CPU has (`cpu_block_dim`).

    `arguments` are the values the kernel runs with: its arguments, then (adjoint) the
    adjoint array of each parameter that has one (see `adjoint_arguments`); the `params`
    given to the constructor are in this form. `params` lists them as Warp does: the launch
    bounds (`bounds`: the launch shape), the arguments, then (adjoint) one adjoint per
    parameter, zero for a number, vector, matrix or struct (a value passed by copy, whose
    adjoint reaches no caller; weft's adjoint kernel has no argument for it)."""

    def _variant(self, kernel) -> dict:
        """`compiled()`'s options for these arguments (see `adjoint_variant`)."""
        if not self.adjoint or len(self.arguments) <= len(kernel.arg_names):
            return {}
        return adjoint_variant(kernel, self.arguments)

    def __init__(self, kernel, device=None, hooks=None, params=None, params_addr=None, bounds=None,
                 max_blocks=0, block_dim=None, adjoint=False, *, dims=None):
        block_dim = cpu_block_dim(block_dim)
        if kernel.is_generic:
            raise TypeError(f"kernel '{kernel.name}' is generic: make a Launch of one of its overloads "
                            "(weft.overload(kernel, [types])) or launch it with arguments")
        self.kernel = kernel
        self.device = get_device(device)
        self.adjoint = adjoint
        self.max_blocks = max_blocks
        self.block_dim = block_dim
        # cooperative CPU blocks asked for: the block program is chosen by set_dim (it
        # depends on the launch's shape); a recorded launch() passes the program itself
        self._blocks_of = kernel if block_dim > 1 and kernel.lanes is None else None
        self.arguments = list(params) if params is not None else default_arguments(kernel, adjoint)
        self._adjoints_given = set()  # parameters whose adjoint array was set explicitly
        self._raw = False  # a parameter was set from its packed form: `params` no longer tell it
        self._struct_params = [k for k, t in enumerate(kernel.params.values()) if isinstance(t, StructType)]
        self.spec = kernel.specialization(self.arguments, adjoint)
        # (the kernel as compiled; `compiled` may be its variant for the launch's shape)
        self._options = self._variant(kernel)
        self.base = self.compiled = kernel.compiled(self.spec, adjoint, **self._options)
        self.args = self.compiled.pack(self.arguments)
        self.ctx = LaunchContext.for_kernel(self.compiled)
        if dims is None:  # nothing to run until set_dim
            self.dims, self.total = (0,), set_launch_shape(self.ctx, (0,))
        else:
            self.set_dim(dims)

    @property
    def bounds(self) -> tuple:
        """The launch shape (Warp's launch bounds)."""
        return self.dims

    @property
    def params(self) -> list:
        """The launch's parameters in Warp's order (a new list; see the class's text)."""
        n = len(self.kernel.arg_names)
        out = [self.bounds, *self.arguments[:n]]
        if self.adjoint:
            arrays = self.kernel.adjoint_param_indices
            for k, t in enumerate(self.kernel.params.values()):
                if k in arrays:
                    out.append(self.arguments[n + arrays.index(k)])
                else:
                    out.append(default_value(t))
        return out

    def set_dim(self, dim):
        if self._blocks_of is not None:  # blocks of block_dim threads (config.enable_cpu_blocks)
            n = len(self._blocks_of.arg_names)
            program, dims = cpu_blocks.block_launch(self._blocks_of, self.arguments[:n], self.block_dim,
                                                    normalize_dim(self._blocks_of, dim))
            if program is not self.kernel:
                self.kernel = program
                self.spec = program.specialization(self.arguments, self.adjoint)
                self._options = self._variant(program)
                self.base = self.compiled = program.compiled(self.spec, self.adjoint, **self._options)
                self.args = self.compiled.pack(self.arguments)
                self.ctx = LaunchContext.for_kernel(self.compiled)
            dim = dims
        self.dims = normalize_dim(self.kernel, dim)
        self._use(self.base)
        self.total = set_launch_shape(self.ctx, self.dims)

    def _use(self, compiled):
        """Run `compiled`, or its variant for this launch's shape (CompiledKernel.for_dims)."""
        compiled, self.dims = compiled.for_dims(self.dims)
        if compiled is not self.compiled:  # (the same parameters: the same packing)
            self.compiled = compiled
            self.args = compiled.pack(self.arguments) if not self._raw else self._repacked(compiled)
            self.ctx = LaunchContext.for_kernel(compiled)

    def _repacked(self, compiled):
        """This launch's argument block, raw fields included, in `compiled`'s block type."""
        args = compiled.args_type()
        ctypes.memmove(ctypes.addressof(args), ctypes.addressof(self.args), ctypes.sizeof(args))
        return args

    def set_param_at_index(self, index: int, value, adjoint: bool = False):
        """Set argument `index` of the kernel (with `adjoint=True`: its adjoint array)."""
        n = len(self.kernel.arg_names)
        if not 0 <= index < n:
            raise IndexError(f"kernel '{self.kernel.name}' has {n} parameters, no index {index}")
        if adjoint:
            if not self.adjoint:
                raise ValueError(f"kernel '{self.kernel.name}': this Launch runs the forward kernel; "
                                 "it has no adjoint arguments")
            arrays = self.kernel.adjoint_param_indices
            if index not in arrays:
                return  # not an array of floats: it has no adjoint argument
            if value is None:
                self._adjoints_given.discard(index)
                value = default_adjoint(self.kernel, index, self.arguments[index])
            else:
                self._adjoints_given.add(index)
            self._set(n + arrays.index(index), value)
            return
        self._set(index, value)
        if self.adjoint and index in self.kernel.adjoint_param_indices and index not in self._adjoints_given:
            # an adjoint not given follows its primal (its .grad), as in an adjoint launch
            arrays = self.kernel.adjoint_param_indices
            self._set(n + arrays.index(index), default_adjoint(self.kernel, index, value))

    def _set(self, index: int, value):
        packed = self.compiled.packers[index](value)
        self.arguments[index] = value
        spec = self.kernel.specialization(self.arguments, self.adjoint)
        options = self._variant(self.kernel)
        if spec == self.spec and options == self._options:
            setattr(self.args, f"p{index}", packed)
        else:  # a strided array where a contiguous one was (or back), or an adjoint that is
            # (or is no longer) its array's own gradient: another variant
            self.spec, self._options = spec, options
            self.base = self.compiled = self.kernel.compiled(spec, self.adjoint, **options)
            self.args = self.compiled.pack(self.arguments)
            self._use(self.base)

    def set_param_at_index_from_ctype(self, index: int, value, adjoint: bool = False):
        """Set argument `index` from its packed (ctypes) form, without conversion."""
        n = len(self.kernel.arg_names)
        if adjoint:
            index = n + self.kernel.adjoint_param_indices.index(index)
        field = f"p{index}"
        if isinstance(value, ctypes.Structure):
            offset, size = getattr(type(self.args), field).offset, getattr(type(self.args), field).size
            if ctypes.sizeof(value) != size:
                raise TypeError(f"kernel '{self.kernel.name}', argument {index}: a packed value of "
                                f"{ctypes.sizeof(value)} bytes where {size} are expected")
            ctypes.memmove(ctypes.addressof(self.args) + offset, ctypes.addressof(value), size)
            self._raw = True
        else:
            setattr(self.args, field, self.compiled.packers[index](value))

    def set_param_by_name_from_ctype(self, name: str, value, adjoint: bool = False):
        self.set_param_at_index_from_ctype(self._index(name), value, adjoint)

    def _index(self, name: str) -> int:
        if name not in self.kernel.arg_names:
            raise KeyError(f"kernel '{self.kernel.name}' has no parameter '{name}' "
                           f"(it has {', '.join(self.kernel.arg_names)})")
        return self.kernel.arg_names.index(name)

    def set_param_by_name(self, name: str, value, adjoint: bool = False):
        self.set_param_at_index(self._index(name), value, adjoint)

    def set_params(self, values):
        for k, v in enumerate(values):
            self.set_param_at_index(k, v)

    def set_params_adjoint(self, values):
        for k, v in enumerate(values):
            self.set_param_at_index(k, v, adjoint=True)

    def _snapshot(self) -> Launch:
        """This launch as it is now, for a graph capture: as in Warp, a replay runs with the
        parameters and struct field values the launch had when it was captured; neither a
        later set_param_* nor a change to a struct's fields reaches it (arrays are shared, so
        their contents do). Launched directly, a Launch reads its structs' current fields."""
        snap = copy.copy(self)
        snap.arguments = [a.to(self.device) if isinstance(a, StructValue) else a for a in self.arguments]
        snap.args = type(self.args).from_buffer_copy(self.args)
        for k in self._struct_params:
            setattr(snap.args, f"p{k}", self.compiled.packers[k](snap.arguments[k]))
        snap._struct_params = []  # (frozen: nothing to refresh when it runs)
        snap._adjoints_given = set(self._adjoints_given)
        snap.ctx = LaunchContext.for_kernel(self.compiled)
        snap.total = set_launch_shape(snap.ctx, self.dims)
        return snap

    def launch(self, stream=None):
        if self._raw and getattr(capture.active_graph(), "apic", False):
            raise NotImplementedError(f"kernel '{self.kernel.name}': a parameter set from a raw array ctype "
                                      "(set_param_at_index_from_ctype) cannot be recorded in an apic=True "
                                      "capture, whose arrays must be known to be saved; use set_param_at_index")
        if capture.capturing():  # recorded as it is now; runs when the graph does
            snap = self._snapshot()
            if capture.record(snap.launch, None if self._raw else ("launch", snap)):
                return
        for k in self._struct_params:  # mutable: their fields may have changed since
            setattr(self.args, f"p{k}", self.compiled.packers[k](self.arguments[k]))
        if config.anomaly_depth:  # weft.autograd.detect_anomaly()
            from ..autograd.anomaly import run_checked
            run_checked(self.kernel, self.compiled, self.dims, self.arguments, self.adjoint,
                        run=lambda: run(self.compiled, self.args, self.ctx, self.total))
            return
        run(self.compiled, self.args, self.ctx, self.total)


def default_arguments(kernel, adjoint: bool) -> list:
    """Arguments for a Launch made without any: arrays None, numbers, vectors and structs
    zero (adjoints: those of default_adjoint)."""
    out = [default_value(t) for t in kernel.params.values()]
    if adjoint:
        out.extend(default_adjoint(kernel, k, out[k]) for k in kernel.adjoint_param_indices)
    return out


def default_value(t):
    """A parameter's value in a Launch made without arguments: None for an array, zero
    for a number, vector or matrix, a default struct."""
    if isinstance(t, StructType):
        return t()
    if isinstance(t, (Scalar, Vector, Matrix)):
        return False if t is bool_ else t(0)
    return None


def adjoint_arguments(kernel, params, adj_params) -> list:
    """The adjoint kernel's arguments: the primal ones, then the adjoint of each parameter
    that has one (see `default_adjoint` for a `None` given there). Entries for parameters
    without an adjoint (scalars, vectors, integer arrays) are ignored: None or zero, as in
    Warp."""
    names = kernel.arg_names
    adj_params = list(adj_params)
    if len(adj_params) != len(names):
        raise TypeError(f"kernel '{kernel.name}': an adjoint launch takes one adjoint per argument "
                        f"({len(names)}: {', '.join(names)}) in adj_inputs + adj_outputs, "
                        f"got {len(adj_params)}")
    out = list(params)
    out.extend(_given_adjoint(adj_params[k], params[k]) if adj_params[k] is not None
               else default_adjoint(kernel, k, params[k]) for k in kernel.adjoint_param_indices)
    return out


def adjoint_variant(kernel, params) -> dict:
    """`compiled()`'s options for an adjoint launch with `params` (the primal arguments,
    then the adjoint ones). Warp's rule: the adjoint of a store consumes the gradient of an
    array the kernel only writes where it is the array's own `.grad` (the Tape's case; an
    array with retain_grad keeps it); an adjoint array the caller owns keeps what it holds."""
    kernel.check_redefinitions()  # (a func redefined since may change which arrays are write-only)
    write_only = kernel.write_only_params
    if not write_only:
        return {}
    n = len(kernel.arg_names)
    keep = {k for k in write_only if not isinstance(k, int)}  # (arrays held in structs)
    for j, k in enumerate(kernel.adjoint_param_indices):
        if k in write_only:
            primal, adj = params[k], params[n + j]
            own = type(primal) is array and primal.grad is not None and isinstance(adj, array) and \
                adj.ptr == primal.grad.ptr and not primal.retain_grad
            if not own:
                keep.add(k)
    return {"consume": True, "retain": frozenset(keep)}


def _given_adjoint(adj, primal):
    """The adjoint argument for `adj` as given: the adjoint of an indexed array may be given
    as the plain gradient array of the array it indexes (Warp's backward ABI), which is
    then indexed as the primal is."""
    if type(primal) is array:  # (the backward hot path)
        return adj
    if isinstance(primal, indexedarray) and type(adj) is array and adj.shape == primal.data.shape:
        return indexedarray(adj, primal.indices)
    return adj


def default_adjoint(kernel, k: int, primal):
    """The adjoint of argument `k` when the caller gives None (Warp's rule): an array's own
    `.grad`, a struct's adjoint struct (the `.grad` of its arrays); for an array without
    one, `missing_adjoint`."""
    if isinstance(primal, (array, indexedarray)):
        if primal.grad is not None:
            return primal.grad
    elif isinstance(primal, StructValue):
        adjoint = tape_module.adjoint_struct(primal)  # (its arrays without gradient are null: they take none)
        return adjoint if adjoint is not None else primal._type()
    return missing_adjoint(kernel, k, primal)


def missing_adjoint(kernel, k: int, primal):
    """What stands in for an adjoint array that does not exist: None (a variant of the
    adjoint leaves it out, so no gradient flows through that array), except where the
    kernel both reads and writes the array: there a gradient can pass through memory inside
    the kernel (store, then load), so a zero array carries it."""
    reads, writes = kernel.array_effects()
    if k in reads and k in writes and isinstance(primal, array):
        return array(shape=primal.shape, dtype=primal.dtype, device=primal.device)
    return None


def set_launch_shape(ctx, dims) -> int:
    ctx.dim[:] = list(dims) + [1] * (MAX_DIMS - len(dims))
    ctx.ndim = len(dims)
    return _product(dims)


def run(ck, args, ctx, total: int, args_ptr=None, ctx_ptr=None, widened=False):
    """Run compiled kernel `ck` over `total` threads; raise the first run-time error."""
    if total == 0:
        return
    if ck.widened and not widened:  # half adjoint arrays, accumulated in float32
        return half_adjoints.run_widened(run, ck, args, ctx, total, args_ptr, ctx_ptr)
    ctx.error_site = 0
    if ck.has_stack:
        ctx.adstack_limit = config.adstack_limit
    if args_ptr is None:
        args_ptr, ctx_ptr = ctypes.addressof(args), ctypes.addressof(ctx)
    # small launches skip even counting threads: this is the launch hot path
    if total * ck.cost_weight >= config.parallel_threshold and (threads := thread_count()) > 1 \
            and not (ck.order_dependent and ck.kernel.deterministic):
        ctx.serial = 0
        private = scatter.privatised(ck, args, args_ptr, total) if ck.scatter_params else None
        if private is not None:
            private.run(get_pool(), args, ctx, total, threads, args_ptr, ctx_ptr)
        else:
            get_pool().run_kernel(ck, args_ptr, ctx_ptr, total, threads)
    else:
        ctx.serial = 1  # one call runs every thread: its atomics need not be atomic
        ck.entry(args_ptr, 0, total, ctx_ptr)
        ctx.serial = 0
    if ck.has_print:
        _flush_c_stdout()
    if ctx.error_site:
        raise_launch_error(ck, ctx)


_libc = None


def _flush_c_stdout():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None)
    _libc.fflush(None)


def raise_launch_error(ck, ctx):
    from ..lang.errors import GENERATED_SOURCE_PREFIX, format_at
    site = ck.sites[ctx.error_site]
    op = site.op
    subject = ck.subject
    if site.what == "integer division":
        at = None if op.loc is None or str(op.loc.file).startswith(GENERATED_SOURCE_PREFIX) else op.loc
        raise ZeroDivisionError(format_at(f"{subject}: integer division by zero", at))
    if site.what == "AD stack":
        raise MemoryError(format_at(
            f"{subject}: the AD stack of this loop outgrew weft.config.adstack_limit "
            f"({config.adstack_limit} bytes per thread) or memory ran out", op.loc))
    if site.what == "assert" and op.attrs.get("not_differentiable"):
        from ..lang.errors import NotDifferentiableError
        raise NotDifferentiableError(f"{subject}: {op.attrs['message']}", op.loc)
    if site.what == "assert":
        raise AssertionError(format_at(f"{subject}: assertion failed: {op.attrs['message']}", op.loc))
    if op.name == "slice":  # the record holds its integer keys, as int64
        n = sum(k == "i" for k in op.attrs["keys"])
        index_types = [int64] * n
    else:
        n = len(op.operands) - 1 - (op.name in ("store", "atomic", "insert_dyn"))
        index_types = [v.type for v in op.operands[1:1 + n]]
    # the record holds int64: show unsigned 64-bit indices as the user wrote them
    index = tuple(i % 2**64 if not t.is_signed else i for i, t in zip(ctx.error_index[:n], index_types))
    extent = tuple(ctx.error_extent[:n])
    shown_index = index[0] if n == 1 else index
    message = (f"{subject}: index {shown_index} is out of bounds for {site.what} "
               f"with shape {extent}")
    raise IndexError(format_at(message, op.loc))


def cpu_block_dim(block_dim) -> int:
    """The threads per block of a CPU launch asking for `block_dim`, as Warp resolves it: 1
    unless `config.enable_cpu_blocks` is set (then the one asked for, default 1); more than
    1024 is a ValueError either way."""
    if block_dim is None:
        return 1
    if isinstance(block_dim, int) and not isinstance(block_dim, bool) and block_dim > 1024:
        raise ValueError(f"block_dim must be at most 1024 on CPU, got {block_dim}")
    return block_dim if config.enable_cpu_blocks else 1


def launch(kernel, dim, inputs=(), outputs=(), adj_inputs=(), adj_outputs=(), device=None,
           stream=None, adjoint=False, record_tape=True, record_cmd=False, max_blocks=0,
           block_dim=None):
    """Run `kernel` over `dim` threads (an int or a tuple of up to 4) with the arguments
    `inputs + outputs`. With `adjoint=True`, run its adjoint instead: `adj_inputs +
    adj_outputs` give one adjoint per argument (`None` for an array: its own `.grad`; see
    `adjoint_arguments`); input adjoints are accumulated, and the adjoints of arrays the
    kernel only writes are read and left unchanged (so a PyTorch grad_output can be passed as it is, as in Warp). With
    `record_cmd=True`, return a `Launch` to run later instead. Inside `with Tape():`
    forward launches are recorded unless `record_tape=False`. `block_dim` (None: 1 on the
    CPU, as in Warp) only matters under `config.enable_cpu_blocks` (runtime/cpu_blocks.py)."""
    if not isinstance(kernel, Kernel):
        raise TypeError(f"launch: expected a @weft.kernel, got {type(kernel).__name__}")
    try:
        device = get_device(device)
    except ValueError as e:
        raise type(e)(f"kernel '{kernel.name}': {e}") from None  # (CudaUnavailableError stays one)
    dims = normalize_dim(kernel, dim)
    params = [*(inputs or ()), *(outputs or ())]
    threads_per_block = cpu_block_dim(block_dim)  # (1 unless config.enable_cpu_blocks)
    if isinstance(threads_per_block, int) and threads_per_block > 1 and kernel.lanes is None:
        kernel, dims = cpu_blocks.block_launch(kernel, params, threads_per_block, dims)
    if kernel.is_generic:  # compiled for the types of these arguments
        kernel = kernel.specialize(params)
    names = kernel.arg_names
    if len(params) != len(names):
        raise LaunchTypeError(f"kernel '{kernel.name}' takes {len(names)} arguments "
                        f"({', '.join(names)}), got {len(params)}")
    if adjoint:
        params = adjoint_arguments(kernel, params, [*(adj_inputs or ()), *(adj_outputs or ())])
    elif not record_cmd:  # (a recorded command runs later, possibly many times: tapes do not see it)
        tape_module.on_launch(kernel, dims, [_described_array(p) for p in params], device, record=record_tape,
                              n_inputs=len(inputs or ()))
    if record_cmd:
        return Launch(kernel, device, params=params, adjoint=adjoint, dims=dims,
                      max_blocks=max_blocks, block_dim=block_dim)
    if capture.recording is not None:  # inside a graph capture: runs when the graph does
        Launch(kernel, device, params=params, adjoint=adjoint, dims=dims, max_blocks=max_blocks,
               block_dim=block_dim).launch()  # (recorded, see Launch.launch)
        return None
    if config.print_launches:
        diagnostics.print_launch(kernel, dim, inputs, outputs, device)
    try:
        ck = kernel.compiled(kernel.specialization(params, adjoint), adjoint,
                             **(adjoint_variant(kernel, params) if adjoint else {}))
    except CompileError as err:  # the message points at the user's source: hide our frames
        # (and drop this frame's reference to the kernel: a kept error, as a notebook keeps
        # the last one with its frames' locals, must not keep a failed definition alive)
        del kernel
        raise err.with_traceback(None) from None
    if config.anomaly_depth:  # weft.autograd.detect_anomaly(): checked, with the caller's line
        from ..autograd.anomaly import run_checked
        ck, dims = ck.for_dims(dims)  # (the variant this launch runs, which the check re-runs)
        run_checked(kernel, ck, dims, params, adjoint)
    else:
        run_compiled(ck, dims, params)
    if config.verify_fp:
        diagnostics.verify_fp(ck.label, ck.param_names, params)


def launch_internal(kernel, dim, inputs=(), **kwargs):
    """A launch of weft's own builders (hash grids, BVHs, meshes, scans): never recorded on a
    Tape, since Warp's are native code a Tape does not see (their outputs are indices and
    bounds, with no gradient)."""
    launch(kernel, dim, inputs, record_tape=False, **kwargs)


def launch_tiled(kernel, dim, inputs=(), outputs=(), *args, block_dim=None, **kwargs):
    """Launch `kernel` over a grid `dim` of blocks (Warp's tile launch): the launch gets one
    more dimension, the block's threads. On the CPU a block is one thread, as in Warp, so
    `block_dim` is accepted and the last dimension is 1; `wp.tid()` gives the block's
    coordinates. Under Warp's `config.enable_cpu_blocks` a block has `block_dim` threads
    that run together (runtime/cpu_blocks.py)."""
    if block_dim is None:
        raise RuntimeError("launch_tiled: pass block_dim=... as a keyword argument")
    if isinstance(block_dim, int) and block_dim > 1024:
        raise ValueError(f"block_dim must be at most 1024 on CPU, got {block_dim}")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 3:
        raise RuntimeError("launch_tiled() requires a grid with fewer than 4 dimensions")
    if config.enable_cpu_blocks and isinstance(block_dim, int) and block_dim > 1 and isinstance(kernel, Kernel):
        program = cpu_blocks.tiled_launch(kernel, [*(inputs or ()), *(outputs or ())], block_dim, dims)
        return launch(program, dims, inputs, outputs, *args, block_dim=1, **kwargs)
    try:
        return launch(kernel, (*dims, 1), inputs, outputs, *args, block_dim=1, **kwargs)
    except CompileError:
        del kernel  # (as in launch: a kept error does not keep the kernel alive)
        raise


def run_compiled(ck, dims: tuple, params: list):
    """Run compiled kernel `ck` with `params` now, on its own argument block."""
    ck, dims = ck.for_dims(dims)
    with ck.lock:  # the compiled kernel's own argument block and context are reused
        ck.pack_cached(params)
        run_locked(ck, dims, ck.args, ck.args_ptr)


def run_block(ck, dims: tuple, args):
    """Run compiled kernel `ck` now on an argument block `args` the caller packed."""
    ck, dims = ck.for_dims(dims)
    with ck.lock:  # the context is the kernel's own
        run_locked(ck, dims, args, ctypes.addressof(args))


def run_locked(ck, dims, args, args_ptr):
    """Run `ck` on block `args` at address `args_ptr`, holding `ck.lock`, with `dims` checked."""
    if dims != ck.last_dims:
        ck.last_total = set_launch_shape(ck.ctx, dims)
        ck.last_dims = dims
    run(ck, args, ck.ctx, ck.last_total, args_ptr, ck.ctx_ptr)
