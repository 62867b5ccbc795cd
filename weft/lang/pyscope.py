"""Python-scope evaluation: builtins and `@func`s called from plain Python, outside kernels.

Builtins (`weft.length(v)`, `weft.sin(1.0)`) compile, once per (builtin, argument types), a
one-thread kernel through the ordinary pipeline (frontend, IR passes, LLVM, disk cache) that
makes the same call and stores its result in a one-element array. The result is therefore
exactly what a kernel computes (the same lowering, the same float32 rounding), as Warp's
Python scope calls its compiled builtins. Later calls with the same argument types only pack
the arguments and run the cached native code.

A user's `@func` runs its Python body, as in Warp, once its argument types have selected an
overload (`call_func`): the Python-scope semantics of its operators and the builtins it calls
are the ones a Warp program sees. A C++ snippet (`func_native`) has no Python body, and
weft's own funcs (`weft.math`, ...) stand for Warp's builtins: those are compiled and run as
a builtin is.

Argument values (the kernel's parameters):
- Python `bool`, `int` and `float` are `bool`, `int32` and `float32`, as in Warp's Python
  scope (no adapting to the other operands: `weft.mul(weft.float64(2), 3)` matches nothing);
- weft scalars (numpy scalars), vectors, matrices, quaternions, transforms, struct values
  and arrays have their own types.
Anything else (types, strings, None, funcs) is a compile-time constant of the call, as the
same expression would be inside a kernel. Lists, tuples and numpy arrays of numbers are
refused, as in Warp: a vector is passed as a weft vector.

Results come back as Warp returns them: `float32`, `int32` and `bool` as Python numbers,
other scalars as weft scalars (numpy), composites as their weft values, a tuple for a
builtin returning several values, None for no value.
"""

from __future__ import annotations

import hashlib
import linecache
import numbers
import threading

import numpy as np

from .. import config
from ..ir.core import Value
from ..types import (
    ArrayType,
    Composite,
    CompositeValue,
    Matrix,
    Scalar,
    StructType,
    StructValue,
    TupleType,
    Vector,
    bool_,
    float32,
    int32,
    scalar_from_numpy,
)
from ..types.scalars import SCALAR_VALUES
from ..types.values import CallMismatch  # noqa: F401 - (raised here; defined with the values)
from .errors import GENERATED_SOURCE_PREFIX, CompileError
from .function import is_generic

# Builtins whose value only exists inside a kernel launch.
KERNEL_ONLY = frozenset({"tid", "block_dim"})

_lock = threading.RLock()  # compiling may nest: wp.static(f(...)) inside a kernel being compiled


# Entry points ---------------------------------------------------------------------------------
def call_builtin(builtin, args: tuple, kwargs: dict):
    """`builtin(*args, **kwargs)` evaluated in Python scope."""
    if builtin.name in KERNEL_ONLY:
        raise RuntimeError(f"weft.{builtin.name}() can only be called inside a kernel")
    return _evaluate(builtin, builtin.name, args, kwargs, _builtin_mismatch)


def call_func(func, args: tuple, kwargs: dict):
    """A `@weft.func` called from Python scope: the overload the arguments' types select runs
    its Python body, as in Warp. Python numbers stay Python numbers (`f(0.1)` computes in
    float64, `x / 0.0` raises ZeroDivisionError, `-7 // 2` is -4 and `-7 % 2` is 1), builtins
    called in the body are evaluated as above, and a func may return an array."""
    refs = sorted({name for overload in func.overloads for name in overload.ref_params})
    if refs:
        raise TypeError(f"func {func.name} takes parameters by reference ({', '.join(refs)}: wp.ref[T]), "
                        f"which a call from Python scope cannot update; call it from a kernel or func")
    if any(isinstance(x, Value) for x in (*args, *kwargs.values())):
        raise TypeError("a value of a kernel being compiled cannot be passed to a Python-scope "
                        "call (call the func inside the kernel instead)")
    if getattr(func, "native", False) or _is_library_func(func):
        return _evaluate(func, func.name, args, kwargs, _func_mismatch)
    overload, given = _select_overload(func, args, kwargs)
    if overload is None:
        hint = ""
        if any(isinstance(x, (list, tuple, np.ndarray)) for x in (*args, *kwargs.values())):
            hint = ("; pass vectors and matrices as weft types (weft.vec3, weft.mat33, ...), "
                    "not lists, tuples or numpy arrays")
        raise CallMismatch(_func_mismatch(func.name, args, kwargs) + hint)
    if any(is_generic(t) for t in overload.params.values()):
        _note_instance(func, overload, given)
    return overload.pyfunc(*args, **kwargs)


def _note_instance(func, overload, given: dict):
    """Warp instantiates a generic func for the argument types of a Python-scope call (its
    `user_overloads` grow by one, once per types): so does weft, without compiling it. The
    instance holds types only, never the arguments. `given`: parameter name -> argument."""
    from .function import FUNCTION, FuncInstance
    types, functions = {}, {}
    for name, want in overload.params.items():
        x = given[name] if name in given else overload.defaults.get(name)
        if want is FUNCTION:
            functions[name] = x
            continue
        t = _scope_type(x)
        if t is None:
            return  # (a list or a constant: no instance a kernel could share)
        types[name] = t
    key = (id(overload), tuple(types.values()), tuple((k, id(f)) for k, f in functions.items()))
    func.instances.setdefault(key, FuncInstance(func, overload, types, functions))


def _is_library_func(func) -> bool:
    """Whether `func` is one of weft's own (defined in a `weft.` module: `weft.math`, the
    noise and geometry helpers, also weft's examples): written in the kernel language where
    Warp has builtins or concretely typed funcs, they run compiled, as builtins do."""
    return all(getattr(o.pyfunc, "__module__", "").startswith("weft.") for o in func.overloads)


def _select_overload(func, args, kwargs):
    """(the overload whose parameters take these arguments' types exactly, parameter name ->
    argument) (Warp's rule in Python scope: a Python float is a float32, an int an int32,
    nothing converts), concrete overloads before generic ones; (None, None) if none does."""
    concrete = [o for o in func.overloads if not any(is_generic(t) for t in o.params.values())]
    for overloads in (concrete, func.overloads):
        for overload in overloads:
            given = _bind(overload, args, kwargs)
            if given is not None:
                return overload, given
    return None, None


def _bind(overload, args, kwargs) -> dict | None:
    """Parameter name -> argument if `overload` takes these arguments, else None."""
    names = list(overload.params)
    if len(args) > len(names) or any(k not in names[len(args):] for k in kwargs):
        return None
    given = dict(zip(names, args), **kwargs)
    if any(name not in given and name not in overload.defaults for name in names):
        return None
    return given if all(_accepts(overload.params[name], x) for name, x in given.items()) else None


def _accepts(want, x) -> bool:
    """Whether a parameter of type `want` takes the Python-scope value `x`."""
    from .function import FUNCTION, GENERIC, is_callable_function
    if want is FUNCTION or is_callable_function(x):
        return want is FUNCTION and is_callable_function(x)
    if want is GENERIC:
        return True
    t = _scope_type(x)
    if t is None:
        return False
    return want.matches(t) if is_generic(want) else t == want


def _scope_type(x):
    """The weft type of a value passed to a func from Python scope, None if it has none (a
    list, a constant). Any Python int is an int32 (the body runs in Python, where it does
    not overflow)."""
    if type(x) is int:
        return int32
    try:
        return value_type(x)
    except (TypeError, ValueError):
        return None


def _builtin_mismatch(name, args, kwargs):
    names = ", ".join(_type_name(x) for x in (*args, *kwargs.values()))
    return f"Couldn't find a function '{name}' compatible with the arguments '{names}'"


def _func_mismatch(name, args, kwargs):
    shown = repr(tuple(args)) if not kwargs else f"{tuple(args)!r}, {kwargs!r}"
    return f"Error calling function '{name}', no overload found for arguments {shown}"


# Arguments ------------------------------------------------------------------------------------
def value_type(x):
    """The weft type of a runtime argument value, or None if `x` is a compile-time constant."""
    if isinstance(x, CompositeValue):  # (first: the ABC checks below are slow for value classes)
        return x.type
    if isinstance(x, (bool, np.bool_)):
        return bool_
    if isinstance(x, numbers.Integral) and type(x) is int:
        if not -2**31 <= x < 2**31:
            raise ValueError(f"the Python int {x} does not fit int32; pass weft.int64({x}) "
                             "(or another weft integer type)")
        return int32
    if type(x) is float:
        return float32
    if isinstance(x, SCALAR_VALUES):
        t = scalar_from_numpy(x.dtype)
        if t is None:
            raise TypeError(f"{type(x).__name__} values have no weft type")
        return t
    if isinstance(x, StructValue):
        return x._type
    t = getattr(x, "_type", None)  # a weft array
    if isinstance(t, ArrayType):
        return t
    composite = getattr(type(x), "_weft_type", None)  # composite values as classes, if any
    if isinstance(composite, Composite):
        return composite
    if isinstance(x, (list, np.ndarray)) or (isinstance(x, tuple) and any(
            isinstance(e, (numbers.Number, tuple, list)) for e in x)):
        raise TypeError("builtins and funcs cannot be called with lists, tuples or numpy arrays "
                        "in Python scope; use a weft type such as weft.vec3, weft.mat33, "
                        "weft.quat or weft.transform")
    if isinstance(x, Value):
        raise TypeError("a value of a kernel being compiled cannot be passed to a Python-scope "
                        "call (call the builtin or func inside the kernel instead)")
    return None


def _type_name(x) -> str:
    """How a mismatch message names an argument's type (Warp's names: 'float', 'vec3f')."""
    t = getattr(x, "type", None) if isinstance(x, CompositeValue) else None
    if t is None and isinstance(x, StructValue):
        t = x._type
    return t.name if t is not None else type(x).__name__


def _constant_key(x):
    """A hashable cache key for a compile-time constant (by value where possible)."""
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return ("value", type(x), x) if isinstance(x, (str, tuple, int, float, type(None))) \
        else ("id", id(x))


# Evaluation -----------------------------------------------------------------------------------
def _evaluate(callee, name: str, args: tuple, kwargs: dict, mismatch):
    """Run the entry for these argument types. Python ints are runtime int32 values first;
    if the call does not type-check that way and ints were given by keyword, it is compiled
    again with those as compile-time constants, one entry per value: a size such as
    `identity(n=3, dtype=float)` must be a constant, as in a kernel. (Only keywords: a
    positional int that became a constant would adapt to the other operands, and
    `wp.mul(wp.float64(2), 3)` would stop being the mismatch it is in Warp.)"""
    cache = _cache_of(callee)
    first_error = None
    for constant_ints in (False, True):
        try:
            kinds, values = _split(args, kwargs, constant_ints)
        except CallMismatch:
            raise
        except TypeError as e:  # a list or a numpy array given: no overload takes one
            raise CallMismatch(f"{mismatch(name, args, kwargs)}: {e}") from None
        key = (kinds, tuple(kwargs), constant_ints)
        entry = cache.get(key)
        if entry is None:
            with _lock:
                entry = cache.get(key)
                if entry is None:
                    entry = cache[key] = _build(callee, name, args, kwargs, constant_ints)
        if isinstance(entry, _Entry):
            return entry(values)
        first_error = first_error or entry  # a CompileError: the call did not type-check
        if not any(type(x) is int for x in kwargs.values()):
            break
    raise CallMismatch(mismatch(name, args, kwargs)) from first_error


def _argument_types(args, kwargs, constant_ints: bool):
    """The weft type of each argument, None for a compile-time constant."""
    types = [value_type(x) for x in args]
    types += [None if constant_ints and type(x) is int else value_type(x) for x in kwargs.values()]
    return types


def _split(args, kwargs, constant_ints: bool):
    """(the cache key of each argument: its type or constant; the runtime values)."""
    kinds, values = [], []
    arguments = (*args, *kwargs.values())
    types = _argument_types(args, kwargs, True) if constant_ints else map(value_type, arguments)
    for x, t in zip(arguments, types):
        if t is None:
            kinds.append(_constant_key(x))
        else:
            kinds.append(t)
            values.append(x)
    return tuple(kinds), values


def _build(callee, name, args, kwargs, constant_ints):
    """A new entry, or the CompileError saying that the call itself does not type-check
    (no overload takes these types); an error inside a func's body is raised as it is."""
    try:
        return _Entry(callee, name, args, kwargs, constant_ints)
    except CompileError as err:
        if err.loc is not None and err.loc.file.startswith(_FILE_PREFIX):
            return err.with_traceback(None)
        raise err.with_traceback(None) from None


def _cache_of(callee) -> dict:
    """Compiled entries of `callee`, held by the callee so that they live as long as it; a
    func's are dropped when its overloads change (an overload added or replaced)."""
    version = tuple(callee.overloads) if hasattr(callee, "overloads") else None
    held = callee.__dict__.get("_pyscope_entries")
    if held is None or held[0] != version:
        held = callee.__dict__["_pyscope_entries"] = (version, {})
    return held[1]


_FILE_PREFIX = GENERATED_SOURCE_PREFIX + "python-scope call"


class _Entry:
    """The native code for one callee and one tuple of argument types."""

    def __init__(self, callee, name, args, kwargs, constant_ints=False):
        self.name = name
        self.subject = f"{name}() (called from Python scope)"
        env = {"_callee": callee}
        params, call_args = [], []
        types = _argument_types(args, kwargs, constant_ints)
        for k, (x, t) in enumerate(zip((*args, *kwargs.values()), types)):
            if t is None:
                env[f"_c{k}"] = x
                ref = f"_c{k}"
            else:
                env[f"_T{k}"] = t
                params.append(f"a{k}: _T{k}")
                ref = f"a{k}"
            call_args.append(ref)
        n_pos = len(args)
        call = "_callee(" + ", ".join(call_args[:n_pos] + [f"{kw}={ref}" for kw, ref in
                                                          zip(kwargs, call_args[n_pos:])]) + ")"
        self.result_type = _result_type(name, env, params, call)
        self.result_types = list(self.result_type.elements) if isinstance(self.result_type, TupleType) \
            else [] if self.result_type is None else [self.result_type]
        if any(isinstance(t, ArrayType) for t in self.result_types):
            raise TypeError(f"{name}() returns an array, which cannot be returned to Python scope")
        stores = []
        for j, rt in enumerate(self.result_types):
            env[f"_R{j}"] = ArrayType(rt, 1)
            params.append(f"r{j}: _R{j}")
            stores.append(f"r{j}[0] = _r[{j}]" if isinstance(self.result_type, TupleType) else f"r{j}[0] = _r")
        # arguments a builtin updates in place (inout) come back too, to update the caller's
        # composite or struct value (a Python number cannot be updated: it is left as it is)
        self.updated = [k for k in getattr(callee, "inout", ()) if k < len(args)
                        and isinstance(types[k], (Vector, Matrix, StructType))]
        for k in self.updated:
            env[f"_U{k}"] = ArrayType(types[k], 1)
            params.append(f"u{k}: _U{k}")
            stores.append(f"u{k}[0] = a{k}")
        body = [f"_r = {call}" if self.result_types else call, *stores] if stores else [call]
        self.kernel = _make_kernel(name, env, params, body)
        from ..runtime.array import zeros
        from ..runtime.launch import run_compiled
        self.run = run_compiled
        outputs = [zeros(1, dtype=rt) for rt in self.result_types]
        self.write_backs = [(args[k], zeros(1, dtype=types[k])) for k in self.updated]
        outputs += [out for _, out in self.write_backs]
        self.outputs = outputs
        self.readers = [(_reader(rt), out.numpy()) for rt, out in zip(self.result_types, outputs)]
        self.updaters = [(k, _reader(types[k]), out.numpy()) for k, (_, out) in zip(self.updated, self.write_backs)]
        # the variant (contiguous arrays or not) is fixed unless an argument is an array
        self.has_arrays = any(isinstance(t, ArrayType) for name, t in env.items() if name.startswith("_T"))
        n_args = len(self.kernel.arg_names) - len(outputs)
        self.spec = self.kernel.specialization([None] * n_args + outputs)
        self.lock = threading.Lock()
        self.last = (None, None)  # (settings, compiled kernel) of the last call
        # argument position -> position among the runtime values
        self.value_index = {k: sum(t is not None for t in types[:k]) for k in self.updated}

    def _compiled(self, params):
        """The native kernel under the current settings; the last one is kept, so that a
        call without array arguments does not look it up again."""
        if self.has_arrays:
            return self.kernel.compiled(self.kernel.specialization(params))
        settings = config.changes  # counts every change of a setting
        if self.last[0] != settings:
            self.last = (settings, self.kernel.compiled(self.spec))
        return self.last[1]

    def __call__(self, values):
        params = [*values, *self.outputs]
        with self.lock:  # the result arrays are this entry's own
            ck = self._compiled(params)
            ck.subject = self.subject  # (a run-time error names the call, not the generated kernel)
            self.run(ck, (1,), params)
            results = [read(storage[0]) for read, storage in self.readers]
            updates = [(k, read(storage[0])) for k, read, storage in self.updaters]
        for k, new in updates:
            _update_in_place(values[self.value_index[k]], new)
        if self.result_type is None:
            return None
        return tuple(results) if isinstance(self.result_type, TupleType) else results[0]


def _source(name: str, params: list, body: list) -> tuple[str, str, str]:
    """(function name, file name, text) of a generated function; the file name is derived
    from the text so that its IR, and so the disk cache key, is the same in every process."""
    fname = "pyscope_" + "".join(c if c.isalnum() else "_" for c in name)
    text = f"def {fname}({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body)
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    return fname, f"{_FILE_PREFIX} {name} {digest}>", text


def _define(fname: str, filename: str, text: str, env: dict):
    """The Python function of `text`, its source readable by inspect (through linecache)."""
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = dict(env, __name__="weft.pyscope")
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - text we generated
    return namespace[fname]


def _result_type(name, env, params, call):
    """The type of `call` (None for no value): typed as the body of a func returning it."""
    from .frontend import FunctionCompiler
    from .function import signature_types
    from .source import ParsedSource
    fname, filename, text = _source(name, params, [f"return {call}"])
    pyfunc = _define(fname, filename, text, env)
    fc = FunctionCompiler(ParsedSource(pyfunc), "func", fname, signature_types(pyfunc, "func"))
    return fc.compile().ret_type


def _make_kernel(name, env, params, body):
    from .kernel import Kernel
    fname, filename, text = _source(name, params, body)
    return Kernel(_define(fname, filename, text, env), enable_backward=False)


# Results --------------------------------------------------------------------------------------
_NATIVE = {float32: float, int32: int, bool_: bool}


def _reader(t):
    """A function turning a value read from a result array (numpy) into the Python-scope
    value of type `t`."""
    if isinstance(t, Scalar):
        native = _NATIVE.get(t)
        if native is not None:
            return native
        legacy = bool if t is bool_ else float if t.is_float else int

        def read_scalar(raw):  # (config.legacy_scalar_return_types: Python numbers for every type)
            return legacy(raw) if config.legacy_scalar_return_types else t(raw)
        return read_scalar
    if isinstance(t, (Vector, Matrix)):
        return lambda raw: CompositeValue(t, raw.ravel().copy())
    if isinstance(t, StructType):
        fields = [(name, _reader(ft)) for name, ft in t.fields.items() if not isinstance(ft, ArrayType)]

        def read_struct(raw):
            out = t()
            for name, read in fields:  # array fields are not returned by value: they stay None
                setattr(out, name, read(raw[name]))
            return out
        return read_struct
    raise TypeError(f"a {t!r} cannot be returned to Python scope")


def _update_in_place(target, new):
    """Copy `new` (a fresh value of the same type) into the caller's value `target`."""
    if isinstance(target, StructValue):
        for name in target._type.fields:
            setattr(target, name, getattr(new, name))
    else:
        target._data[...] = new._data
