"""Launch diagnostics switched on in `weft.config`: `print_launches` and `verify_fp`."""

from __future__ import annotations

import numpy as np

from .array import array


def print_launch(kernel, dims, params, device) -> None:
    from ..logger import get_logger
    args = ", ".join(f"{n}={_short(v)}" for n, v in zip(kernel.arg_names, params))
    get_logger().info(f"kernel: {kernel.key} dim: {dims} inputs: [{args}] device: {device}")


def _short(value) -> str:
    if isinstance(value, array):
        return f"array(shape={value.shape}, dtype={value.dtype!r})"
    return repr(value)


def _float_fields(data: np.ndarray):
    """The floating-point parts of an array's memory (struct fields included)."""
    if data.dtype.names:
        for name in data.dtype.names:
            yield from _float_fields(data[name])
    elif np.issubdtype(data.dtype, np.floating) or data.dtype.name == "bfloat16":  # (ml_dtypes: no np.floating)
        yield data


def verify_fp(kernel, params) -> None:
    """Print a warning naming the kernel and argument for each array of floats that holds
    NaN or Inf after the launch (Warp's `verify_fp` reports and carries on)."""
    for name, value in zip(kernel.arg_names, params):
        if not isinstance(value, array):
            continue
        for data in _float_fields(value.numpy()):
            if np.isfinite(data).all():
                continue
            kinds = [k for k, bad in (("nan", np.isnan(data).any()), ("inf", np.isinf(data).any())) if bad]
            print(f"Warp verify_fp: kernel '{kernel.key}' left non-finite values ({', '.join(kinds)}) "
                  f"in argument '{name}'", flush=True)
            break
