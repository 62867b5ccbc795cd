"""Arithmetic operators of `weft.array` (`a + b`, `2.0 * a`, `-a`, `a % s`...): elementwise,
computed by small generic kernels that call the kernel builtin of each operator, so that an
array expression means exactly what the same expression means inside a kernel (integer `/`
truncates, `%` keeps the dividend's sign, `mat * vec` is a product, `pow` takes floats).

Operands: two arrays of one shape, or an array and one value (a number, a weft scalar, a
vector or matrix value). The result is a new array on the array's device.
"""

from __future__ import annotations

import linecache
from typing import Any

import numpy as np

_KERNELS: dict = {}


def _builtin(name: str):
    from ..builtins.registry import BUILTINS
    return BUILTINS[name]


def _kernel(op: str, form: str, ndim: int):
    """A generic kernel computing `out = op(a, b)` (form "aa": both arrays, "as": b one value,
    "sa": a one value, "a": unary) over `ndim` dimensions."""
    key = (op, form, ndim)
    if key in _KERNELS:
        return _KERNELS[key]
    import weft as wp

    from ..lang.decorators import kernel

    f = _builtin(op)
    arr = out_t = wp.array(dtype=Any, ndim=ndim)
    idx = ", ".join(f"i{d}" for d in range(ndim))
    src = {"aa": f"f(a[{idx}], b[{idx}])", "as": f"f(a[{idx}], b)", "sa": f"f(a, b[{idx}])",
           "a": f"f(a[{idx}])"}[form]
    params = {"aa": "a: arr, b: arr", "as": "a: arr, b: Any", "sa": "a: Any, b: arr", "a": "a: arr"}[form]
    code = (f"def array_{op}_{form}{ndim}({params}, out: out_t):\n"
            f"    {idx}{',' if ndim == 1 else ''} = wp.tid()\n"
            f"    out[{idx}] = {src}\n")
    namespace = {"wp": wp, "f": f, "arr": arr, "out_t": out_t, "Any": Any}
    filename = f"<weft array operator {op} {form} {ndim}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)  # for the frontend
    exec(compile(code, filename, "exec"), namespace)  # noqa: S102 - our own source
    k = kernel(namespace[f"array_{op}_{form}{ndim}"], module="unique")
    _KERNELS[key] = k
    return k


def _sample(dtype):
    """A value of `dtype` (ones) for working out a result type in Python scope."""
    from ..types import Matrix, Vector
    if isinstance(dtype, (Vector, Matrix)):
        return dtype(*([1] * dtype.num_components))
    return dtype(1)


def _value_type(x, like):
    """The weft type of a value operand (a Python number takes the array's scalar type)."""
    from ..types import Scalar
    from ..types.values import CompositeValue
    if isinstance(x, CompositeValue):
        return x.type, x
    scalar = like if isinstance(like, Scalar) else like.dtype
    t = next((s for s in _scalars() if isinstance(x, np.generic) and s.np_dtype == x.dtype), None)
    if t is None and isinstance(x, (bool, int, float, np.generic)):
        return scalar, scalar(x)
    if t is None:
        raise TypeError(f"array arithmetic: unsupported operand {x!r} ({type(x).__name__})")
    return t, x


def _scalars():
    from ..types import scalars
    return [v for v in vars(scalars).values() if isinstance(v, scalars.Scalar)]


def _result_type(op, ta, tb):
    from ..types import Scalar
    if isinstance(ta, Scalar) and isinstance(tb, Scalar):
        if ta is not tb:
            raise TypeError(f"array arithmetic '{op}': operands of different types {ta!r} and {tb!r}")
        return ta
    r = _builtin(op)(_sample(ta), _sample(tb))
    return getattr(r, "type", ta if not isinstance(ta, Scalar) else tb)


def binary(op: str, a, b, out=None):
    """`op(a, b)` elementwise, where a and/or b is a weft array (into `out` where given:
    the in-place operators)."""
    from .array import array
    from .array_create import empty
    a_arr, b_arr = isinstance(a, array), isinstance(b, array)
    if a_arr and b_arr:
        if a.shape != b.shape:
            raise ValueError(f"array arithmetic '{op}': shapes {a.shape} and {b.shape} differ")
        form, ref, ta, tb = "aa", a, a.dtype, b.dtype
    elif a_arr:
        tb, b = _value_type(b, a.dtype)
        form, ref, ta = "as", a, a.dtype
    else:
        ta, a = _value_type(a, b.dtype)
        form, ref, tb = "sa", b, b.dtype
    dtype = _result_type(op, ta, tb)
    if out is None:
        out = empty(ref.shape, dtype=dtype, device=ref.device)
    elif out.dtype is not dtype:
        raise TypeError(f"array arithmetic '{op}' in place: the result type {dtype!r} is not the "
                        f"array's {out.dtype!r}")
    from .launch import launch
    launch(_kernel(op, form, ref.ndim), ref.shape, [a, b, out], device=ref.device)
    return out


def unary(op: str, a):
    from .array_create import empty
    from .launch import launch
    out = empty(a.shape, dtype=a.dtype, device=a.device)
    launch(_kernel(op, "a", a.ndim), a.shape, [a, out], device=a.device)
    return out


_UFUNCS = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "div",
           np.floor_divide: "floordiv", np.remainder: "mod", np.power: "pow"}
_UNARY_UFUNCS = {np.negative: "neg", np.positive: "pos"}


def _is_value(x) -> bool:
    from ..types.values import CompositeValue
    return isinstance(x, (bool, int, float, np.generic, CompositeValue))


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """numpy's operator protocol: `np.float32(2) * a` (a numpy scalar on the left) is the
    array operator; any other use of a ufunc computes on the arrays' numpy views."""
    from .array import array
    if method == "__call__" and not kwargs:
        if ufunc in _UFUNCS and len(inputs) == 2 and all(isinstance(x, array) or _is_value(x) for x in inputs):
            return binary(_UFUNCS[ufunc], *inputs)
        if ufunc in _UNARY_UFUNCS and len(inputs) == 1:
            return unary(_UNARY_UFUNCS[ufunc], inputs[0])
    inputs = tuple(x.numpy() if isinstance(x, array) else x for x in inputs)
    if "out" in kwargs:
        kwargs["out"] = tuple(x.numpy() if isinstance(x, array) else x for x in kwargs["out"])
    return getattr(ufunc, method)(*inputs, **kwargs)


def _operator(op, reflected):
    def method(self, other):
        from .array import array
        if not (isinstance(other, array) or _is_value(other)):
            return NotImplemented
        return binary(op, other, self) if reflected else binary(op, self, other)
    return method


def _in_place(op):
    def method(self, other):
        from .array import array
        if not (isinstance(other, array) or _is_value(other)):
            return NotImplemented
        return binary(op, self, other, out=self)
    return method


def install(cls):
    """Give the array class its operators."""
    for name, op in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"),
                     ("floordiv", "floordiv"), ("mod", "mod"), ("pow", "pow")):
        setattr(cls, f"__{name}__", _operator(op, False))
        setattr(cls, f"__r{name}__", _operator(op, True))
        setattr(cls, f"__i{name}__", _in_place(op))
    cls.__neg__ = lambda self: unary("neg", self)
    cls.__pos__ = lambda self: unary("pos", self)
    cls.__array_ufunc__ = array_ufunc
