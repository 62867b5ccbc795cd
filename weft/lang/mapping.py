"""`weft.map(f, *inputs, out=None)`: apply a func, builtin, Python function or lambda to
every element of arrays, as Warp's `wp.map` does.

The call is compiled into a kernel over the broadcast shape of the array inputs (NumPy's
rules: dimensions compared from the last; equal, or one of them 1). Each thread reads one
element of every array input (index 0 along the dimensions where that input has size 1),
passes the non-array inputs as they are, calls `f` and stores each of its results in an
output array. The kernel is an ordinary kernel: a Tape records its launch, so gradients
flow back to the inputs.

Kernels are cached in `map_cache`, keyed by the function and, per input, whether it is an
array (its kind, dtype, ndim and which dimensions have size 1) or a value (its type). Shapes
are not part of the key: arrays of another length reuse the kernel. A lambda is known by
its text, its parameters and the values it captures, so the same lambda written again
(`map(lambda x, y: x + y, a, b)` in a loop) reuses its kernel, and one whose captured
value changed does not run with the old value. `map_cache.clear()` forgets them all.
"""

from __future__ import annotations

import hashlib
import inspect
import re

from ..builtins.registry import Builtin
from ..runtime.array import array
from ..runtime.array_create import empty
from ..types import ArrayType, TileType, TupleType
from ..types.array_type import valid_dtype
from .errors import GENERATED_SOURCE_PREFIX, CompileError
from .function import Func
from .source import lambda_body

#: (function key, input descriptors, output kinds) -> (result types, kernel)
map_cache: dict[tuple, tuple] = {}

_FILE_PREFIX = GENERATED_SOURCE_PREFIX + "map"


def map(func, *inputs, out=None, return_kernel=False, block_dim=None, device=None):  # noqa: A001 - Warp's name
    """Apply `func` to the elements of the array `inputs` (other inputs are passed to every
    call as they are); returns the output array, a list of them for a function returning a
    tuple, or with `return_kernel=True` the kernel without running it (its parameters: the
    inputs, then the outputs). `out` gives the output array(s) to write instead of new ones;
    a new output requires gradients when an array input does and its dtype is a float
    type (scalars, vectors, matrices, structs of them)."""
    callee, name, func_key, n_params = _callee(func)
    if n_params is not None and len(inputs) != n_params:
        raise TypeError(f"Number of input arguments ({len(inputs)}) does not match expected number of "
                        f"function arguments ({n_params})")
    descriptors, element_types = [], []
    for x in inputs:
        t = getattr(x, "_type", None)
        if isinstance(t, ArrayType):
            descriptors.append((True, type(x), t, tuple(d == 1 for d in x.shape)))
            element_types.append(t.dtype)
            if device is None:
                device = x.device
        else:
            vt = _value_type(x)
            descriptors.append((False, vt))
            element_types.append(vt)
    key = (func_key, tuple(descriptors), _output_kinds(out))
    cached = map_cache.get(key)
    if cached is None:
        result_types = _result_types(callee, name, element_types)
    else:
        result_types, kernel = cached

    shapes = [x.shape for x, d in zip(inputs, descriptors) if d[0]]
    if not shapes:
        raise ValueError("map requires at least one warp.array input")
    out_shape = broadcast_shapes(shapes)
    outputs = _outputs(out, result_types, out_shape, inputs, descriptors, device)

    if cached is None:
        kernel = _make_kernel(callee, name, inputs, descriptors, outputs, out_shape)
        map_cache[key] = (result_types, kernel)
    if return_kernel:
        return kernel
    from ..runtime.launch import launch
    launch(kernel, dim=out_shape, inputs=list(inputs), outputs=outputs, block_dim=block_dim, device=device)
    return outputs[0] if len(outputs) == 1 else outputs


def broadcast_shapes(shapes) -> tuple:
    """The shape NumPy broadcasting gives arrays of these shapes; ValueError if there is none."""
    result = tuple(shapes[0])
    for shape in shapes[1:]:
        n = max(len(result), len(shape))
        a = (1,) * (n - len(result)) + tuple(result)
        b = (1,) * (n - len(shape)) + tuple(shape)
        if any(x != y and x != 1 and y != 1 for x, y in zip(a, b)):
            raise ValueError(f"Shapes {result} and {tuple(shape)} are not broadcastable")
        result = tuple(max(x, y) if 1 in (x, y) else x for x, y in zip(a, b))
    return result


# The function --------------------------------------------------------------------------------
def _callee(func):
    """(what the kernel calls, its name in messages, its cache key, its number of parameters
    or None where that is not known before compiling: builtins)."""
    if isinstance(func, Builtin):
        return func, func.name, ("builtin", func.name), None
    if isinstance(func, Func):
        return func, _identifier(func.__wrapped__.__qualname__), func, _n_params(func.__wrapped__)
    if not callable(func) or not hasattr(func, "__code__"):
        raise TypeError("func must be a callable function or a warp.Function")
    n = _n_params(func)
    if func.__name__ != "<lambda>":
        key = ("function", func, _captured(func))
        if key not in _FUNCS:
            _FUNCS[key] = (_as_func(func), _identifier(func.__qualname__))
        return *_FUNCS[key], key, n
    body = lambda_body(func)
    params = inspect.signature(func).parameters
    key = ("lambda", body, tuple(params), id(func.__globals__), _captured(func))
    if key not in _FUNCS:
        name = "lambda_" + hashlib.sha1(body.encode()).hexdigest()[:12]
        source = f"def {name}({', '.join(params)}): return ({body})\n"
        _FUNCS[key] = (_as_func(func, name, source), name)
    return *_FUNCS[key], key, n


# The funcs made of Python functions and lambdas, by what `_callee` keys them with (a
# captured value that changed makes another: the func reads its captures when compiled).
_FUNCS: dict = {}


def _as_func(pyfunc, name=None, source=None) -> Func:
    """A func of a plain Python function (its parameters generic unless annotated); of a
    lambda, with `source` the def of its body."""
    f = Func(pyfunc, key=name, source=source)
    if name:
        f.name = name
    return f


def _n_params(pyfunc) -> int:
    return len(inspect.signature(pyfunc).parameters)


def _identifier(qualname: str) -> str:
    """Warp's key of a function: its qualified name as an identifier (`f.<locals>.g` is
    `f__locals__g`)."""
    return re.sub(r"[^0-9a-zA-Z_]+", "", qualname.replace(".", "__"))


def _captured(func) -> tuple:
    """The values a lambda captures, as part of its cache key (by value where hashable)."""
    out = []
    for cell in func.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:
            value = None
        try:
            hash(value)
            out.append((type(value), value))
        except TypeError:
            out.append(("id", id(value)))
    return tuple(out)


def _value_type(x):
    from .pyscope import value_type
    try:
        t = value_type(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"map: cannot pass {type(x).__name__} values to the function: {e}") from None
    if t is None:
        raise TypeError(f"map: cannot pass {type(x).__name__} values to the function (inputs are arrays, "
                        "numbers, vectors, matrices, quaternions, transforms and structs)")
    return t


# Types and outputs -----------------------------------------------------------------------------
def _source_of(name: str, params: list, body: list) -> tuple[str, str, str]:
    fname = "map_" + "".join(c if c.isalnum() else "_" for c in name)
    text = f"def {fname}({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body)
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    return fname, f"{_FILE_PREFIX} {name} {digest}>", text


def _result_types(callee, name, element_types) -> tuple:
    """The types `callee` returns for these argument types (one per output)."""
    from .frontend import FunctionCompiler
    from .function import signature_types
    from .pyscope import _define
    from .source import ParsedSource
    env = {"_F": callee, **{f"_T{k}": t for k, t in enumerate(element_types)}}
    params = [f"a{k}: _T{k}" for k in range(len(element_types))]
    args = ", ".join(f"a{k}" for k in range(len(element_types)))
    fname, filename, text = _source_of(name, params, [f"return _F({args})"])
    pyfunc = _define(fname, filename, text, env)
    try:
        ret = FunctionCompiler(ParsedSource(pyfunc), "func", fname, signature_types(pyfunc, "func")).compile().ret_type
    except CompileError as err:
        if err.loc is not None and str(err.loc.file).startswith(_FILE_PREFIX) and not err.callers:
            names = ", ".join(repr(t) for t in element_types)
            raise TypeError(f"Function {name} does not support the provided argument types {names}") from None
        raise err.with_traceback(None) from None
    if ret is None:
        raise TypeError("The provided function must return a value")
    types = tuple(ret.elements) if isinstance(ret, TupleType) else (ret,)
    for t in types:
        if not valid_dtype(t) or isinstance(t, (TileType, TupleType)):
            raise TypeError(f"Function {name} returns a {t!r}, which cannot be an array element")
    return types


def _output_kinds(out):
    """The part of the cache key `out` decides: the kinds of array other than plain arrays."""
    def kind(o):
        return None if type(o) is array else type(o)
    if out is None:
        return None
    if isinstance(out, (list, tuple)):
        kinds = tuple(kind(o) for o in out)
        return kinds if any(k is not None for k in kinds) else None
    return kind(out)


def _outputs(out, result_types, shape, inputs, descriptors, device) -> list:
    from ..autodiff.active import active_types
    if out is None:
        grad = any(d[0] and getattr(x, "requires_grad", False) for x, d in zip(inputs, descriptors))
        return [empty(shape, dtype=t, requires_grad=grad and bool(active_types(t)), device=device)
                for t in result_types]
    if len(result_types) == 1 and isinstance(getattr(out, "_type", None), ArrayType):
        if out.dtype is not result_types[0]:
            raise TypeError(f"Output array dtype {out.dtype!r} does not match expected dtype {result_types[0]!r}")
        if tuple(out.shape) != shape:
            raise TypeError(f"Output array shape {tuple(out.shape)} does not match expected shape {shape}")
        return [out]
    if len(result_types) > 1 and isinstance(out, (list, tuple)):
        if len(out) != len(result_types):
            raise TypeError(f"Number of provided output arrays ({len(out)}) does not match expected number of "
                            f"function outputs ({len(result_types)})")
        for i, (o, t) in enumerate(zip(out, result_types)):
            if not isinstance(getattr(o, "_type", None), ArrayType):
                raise TypeError(f"Output {i} must be an array, got {type(o).__name__}")
            if o.dtype is not t:
                raise TypeError(f"Output array {i} dtype {o.dtype!r} does not match expected dtype {t!r}")
            if tuple(o.shape) != shape:
                raise TypeError(f"Output array {i} shape {tuple(o.shape)} does not match expected shape {shape}")
        return list(out)
    if len(result_types) > 1:
        raise TypeError(f"Invalid output provided, expected {len(result_types)} Warp arrays with shape {shape} "
                        f"and dtypes ({', '.join(repr(t) for t in result_types)})")
    raise TypeError(f"Invalid output provided, expected one array of shape {shape} and dtype "
                    f"{result_types[0]!r}, got {type(out).__name__}")


# The kernel ----------------------------------------------------------------------------------
def _make_kernel(callee, name, inputs, descriptors, outputs, shape):
    """The kernel: thread (i0, i1, ...) over `shape` reads element [i...] of each array
    input (0 along its size-1 dimensions), calls `callee` and stores its result(s)."""
    from .kernel import Kernel
    from .pyscope import _define
    ndim = len(shape)
    tids = [f"i{d}" for d in range(ndim)]
    env = {"_F": callee, "_tid": _tid_builtin()}
    params, body, args = [], [f"{', '.join(tids)} = _tid()"], []
    for k, (x, d) in enumerate(zip(inputs, descriptors)):
        env[f"_T{k}"] = x._type if d[0] else d[1]
        params.append(f"x{k}: _T{k}")
        if d[0]:
            mask = d[3]
            index = [("0" if one else tids[ndim - len(mask) + j]) for j, one in enumerate(mask)]
            body.append(f"a{k} = x{k}[{', '.join(index)}]")
            args.append(f"a{k}")
        else:
            args.append(f"x{k}")
    call = f"_F({', '.join(args)})"
    where = ", ".join(tids)
    for j, o in enumerate(outputs):
        env[f"_O{j}"] = o._type
        params.append(f"out{j}: _O{j}")
    if len(outputs) == 1:
        body.append(f"out0[{where}] = {call}")
    else:
        body.append(f"{', '.join(f'r{j}' for j in range(len(outputs)))} = {call}")
        body += [f"out{j}[{where}] = r{j}" for j in range(len(outputs))]
    fname, filename, text = _source_of(name, params, body)
    return Kernel(_define(fname, filename, text, env), key=fname, module="weft.map")


def _tid_builtin():
    from ..builtins.registry import BUILTINS
    return BUILTINS["tid"]
