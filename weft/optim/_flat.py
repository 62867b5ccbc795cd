"""Flat scalar views of parameter arrays, so that one kernel per float dtype updates arrays
of scalars, vectors and matrices alike."""

from __future__ import annotations

from ..runtime.array import array, zeros
from ..types import float16, float32, float64

FLOAT_TYPES = (float16, float32, float64)


def scalar_type(a: array, what: str):
    """The float scalar type of `a`'s elements (its components for vectors and matrices)."""
    t = getattr(a.dtype, "dtype", a.dtype)  # a vector's or matrix's component type
    if t not in FLOAT_TYPES:
        raise TypeError(f"{what}: optimizers update float arrays (float16/32/64, or vectors and "
                        f"matrices of them), got an array of {a.dtype!r}")
    return t


def flat(a: array, what: str) -> array:
    """`a`'s memory as a 1-D array of its scalar components (no copy)."""
    check_contiguous(a, what)
    return array(a.numpy().reshape(-1), dtype=scalar_type(a, what), copy=False)


def check_contiguous(a: array, what: str):
    if not a.is_contiguous:
        raise ValueError(f"{what}: optimizers update contiguous arrays; this one has strides "
                         f"{a.strides} (pass a contiguous copy)")


def state_like(param: array, t) -> array:
    """A zeroed optimizer state buffer for `param`: its shape and dtype (as Warp's
    `zeros_like`), with scalar type `t` where that differs from the parameter's (float32
    moments of float16 parameters); composite float16 parameters get a flat float32 buffer."""
    own = scalar_type(param, "optimizer parameter")
    if own is t:
        return zeros(param.shape, dtype=param.dtype)
    if param.dtype is own:
        return zeros(param.shape, dtype=t)
    return zeros(flat_size(param), dtype=t)


def state_fits(buffer, param: array, t) -> bool:
    """Whether an existing state buffer can be kept for `param` (same size and scalar type)."""
    return (buffer is not None and flat_size(buffer) == flat_size(param)
            and getattr(buffer.dtype, "dtype", buffer.dtype) is t)


def flat_size(a: array) -> int:
    """The number of scalar components of `a` (its size times those of one element)."""
    return a.size * getattr(a.dtype, "num_components", 1)


def check_grads(params, grads, name: str):
    """The checks of `name.step(grads)`: parameters set, one gradient of the right dtype and
    shape per parameter."""
    if params is None:
        raise RuntimeError(f"{name} parameters must be set before calling step(), got None "
                           f"(pass them to {name}(params) or set_params)")
    if len(grads) != len(params):
        raise ValueError(f"{name}.step: {len(params)} parameters but {len(grads)} gradients")
    for k, (p, g) in enumerate(zip(params, grads)):
        check_grad(p, g, k, name)


def check_grad(param: array, grad: array, k: int, name: str):
    if grad is None:
        raise ValueError(f"{name}.step: no gradient for parameter {k} (got None)")
    if grad.dtype != param.dtype:
        raise TypeError(f"{name} gradient dtype must match parameter dtype {param.dtype!r}, got "
                        f"{grad.dtype!r} (gradient {k})")
    if tuple(grad.shape) != tuple(param.shape):
        raise ValueError(f"{name} gradient shape must match parameter shape {tuple(param.shape)}, got "
                         f"{tuple(grad.shape)} (gradient {k})")
