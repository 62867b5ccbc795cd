"""Whole-array reductions of Warp's `warp.utils`: `array_sum` and `array_inner`.

Both work on arrays whose scalar type is float32 or float64 (vectors and matrices of them
included). Without `axis` they reduce the first `count` elements in row-major order (all by
default); with `axis` they reduce the first `count` entries along that axis and keep it as
a dimension of extent 1, as Warp does. The result goes into `out` when given (and `out` is
returned), else a new array, or a host value when `axis` is None.

Errors say what was found, then Warp's words for the rule ("out array should have type
float32"), last, as Warp's messages end.
"""

from __future__ import annotations

import operator

import numpy as np

from ..types import Matrix, Scalar, Vector, float32, float64
from . import capture
from .array import array, element_numpy, elements, empty

_SUMMABLE = (float32, float64)


def _scalar_type(dtype):
    if isinstance(dtype, Scalar):
        return dtype
    if isinstance(dtype, (Vector, Matrix)):
        return dtype.dtype
    return None


def _check_summable(operation: str, a: array):
    if _scalar_type(a.dtype) not in _SUMMABLE:
        raise RuntimeError(f"{operation}() sums float32 or float64 values (and vectors/matrices of "
                           f"them). Unsupported data type: {a.dtype!r}")


def _normalize_axis(operation: str, axis, ndim: int) -> int:
    axis = operator.index(axis)
    if axis < -ndim or axis >= ndim:
        raise IndexError(f"{operation}() axis {axis} is out of bounds for an array with {ndim} "
                         f"dimensions")
    return axis % ndim


def _count(operation: str, count, extent: int, what: str) -> int:
    if count is None:
        return extent
    count = operator.index(count)
    if not 0 <= count <= extent:
        raise ValueError(f"{operation}() count {count} is outside [0, {extent}], the {what}")
    return count


def _output(operation: str, out, shape: tuple, dtype, like: array):
    """`out` checked against the result's shape and dtype, or a new array for it."""
    if out is None:
        return empty(shape, dtype=dtype, device=like.device), True
    if not isinstance(out, array):
        raise TypeError(f"{operation}() out must be a weft array, got {type(out).__name__}")
    if out.device != like.device:
        raise RuntimeError(f"{operation}() out is on {out.device}, the input on {like.device}: "
                           "out storage device should match values array")
    if out.dtype != dtype:
        raise RuntimeError(f"{operation}() got an out array of type {out.dtype!r}: out array should have "
                           f"type {dtype!r}")
    if tuple(out.shape) != shape:
        raise RuntimeError(f"{operation}() got an out array of shape {tuple(out.shape)}: out array should have "
                           f"shape {shape}")
    return out, False


def _leading(a: array, axis: int, count: int) -> np.ndarray:
    """The first `count` entries of `a` along `axis` (numpy view, components trailing)."""
    index = [slice(None)] * a.ndim
    index[axis] = slice(0, count)
    return a.numpy()[tuple(index)]


def _in_capture(operation: str, arrays, out, count, has_work: bool) -> bool:
    """Whether a graph capture is under way (the reduction is then recorded, to run when the
    graph does), after Warp's checks of reductions in a capture: an explicit `out` for a
    result (a host value is not known until then), no negative strides or counts."""
    if not capture.capturing():
        return False
    if count is not None and count < 0:
        raise RuntimeError(f"APIC capture does not support {operation}() with a negative count")
    if has_work and out is None:
        raise NotImplementedError(f"APIC capture requires {operation}() to receive an explicit out array "
                                  "(its result is only known when the graph runs)")
    if any(stride < 0 for a in (*arrays, out) if a is not None for stride in a.strides):
        raise NotImplementedError(f"APIC capture does not support {operation}() with negative strides")
    return True


def _reduce(operation: str, work, arrays, out, count, has_work: bool, kwargs: dict) -> None:
    """Run `work` now, or record it in a graph capture (saveable as the call of `operation`)."""
    if has_work and capture.record(work, ("call", f"weft.utils.{operation}", arrays, {"out": out, **kwargs})):
        return
    work()


def array_sum(values: array, out: array | None = None, value_count: int | None = None,
              axis: int | None = None):
    """Sum of `values` (see the module docstring). For a vector or matrix dtype the sum is
    one of that type: a numpy array of its components when returned to the host."""
    _check_summable("array_sum", values)
    trailing = element_numpy(values.dtype)[1]
    extent = values.size if axis is None else values.shape[_normalize_axis("array_sum", axis, values.ndim)]
    has_work = (value_count if value_count is not None else extent) != 0 and values.size != 0
    captured = _in_capture("array_sum", (values,), out, value_count, has_work)
    kwargs = {"value_count": value_count, "axis": axis}
    if axis is None:
        count = _count("array_sum", value_count, values.size, "number of elements")
        result, host = _output("array_sum", out, (1,), values.dtype, values)

        def work():
            data = elements(values)[:count]
            result.numpy()[0] = data.sum(axis=0, dtype=data.dtype)
        _reduce("array_sum", work, (values,), out, count, has_work and captured, kwargs)
        return result.numpy()[0] if host else result
    axis = _normalize_axis("array_sum", axis, values.ndim)
    count = _count("array_sum", value_count, values.shape[axis], f"extent of axis {axis}")
    shape = tuple(1 if d == axis else n for d, n in enumerate(values.shape))
    result, _ = _output("array_sum", out, shape, values.dtype, values)

    def work_axis():
        data = _leading(values, axis, count)
        result.numpy()[...] = data.sum(axis=axis, keepdims=True, dtype=data.dtype).reshape(shape + trailing)
    _reduce("array_sum", work_axis, (values,), out, count, has_work and captured, kwargs)
    return result


def array_inner(a: array, b: array, out: array | None = None, count: int | None = None,
                axis: int | None = None):
    """Inner product of `a` and `b` (same shape and dtype): the sum of the products of all
    components, a scalar of their scalar type (see the module docstring)."""
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"array_inner() arguments must have the same shape, got {a.shape} and {b.shape}")
    if a.device != b.device:
        raise RuntimeError(f"array_inner(): A and b array storage devices do not match ({a.device} vs {b.device})")
    if a.dtype != b.dtype:
        raise RuntimeError(f"array_inner(): A and b array data types do not match ({a.dtype!r} vs {b.dtype!r})")
    _check_summable("array_inner", a)
    scalar = _scalar_type(a.dtype)
    trailing_axes = tuple(range(-len(element_numpy(a.dtype)[1]), 0))
    extent = a.size if axis is None else a.shape[_normalize_axis("array_inner", axis, a.ndim)]
    has_work = (count if count is not None else extent) != 0 and a.size != 0
    captured = _in_capture("array_inner", (a, b), out, count, has_work)
    kwargs = {"count": count, "axis": axis}
    if axis is None:
        n = _count("array_inner", count, a.size, "number of elements")
        if n == 0 and out is None:
            return scalar.np_dtype.type(0)
        result, host = _output("array_inner", out, (1,), scalar, a)

        def work():
            x, y = elements(a)[:n], elements(b)[:n]
            result.numpy()[0] = np.sum(x * y, dtype=x.dtype)
        _reduce("array_inner", work, (a, b), out, n, has_work and captured, kwargs)
        return result.numpy()[0] if host else result
    axis = _normalize_axis("array_inner", axis, a.ndim)
    n = _count("array_inner", count, a.shape[axis], f"extent of axis {axis}")
    shape = tuple(1 if d == axis else k for d, k in enumerate(a.shape))
    result, _ = _output("array_inner", out, shape, scalar, a)

    def work_axis():
        x, y = _leading(a, axis, n), _leading(b, axis, n)
        products = x * y
        if trailing_axes:
            products = products.sum(axis=trailing_axes, dtype=x.dtype)
        result.numpy()[...] = products.sum(axis=axis, keepdims=True, dtype=x.dtype)
    _reduce("array_inner", work_axis, (a, b), out, n, has_work and captured, kwargs)
    return result
