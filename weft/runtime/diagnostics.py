"""Launch diagnostics switched on in `weft.config`: `print_launches` and `verify_fp`, and
the search for non-finite values that `verify_fp` and `weft.autograd.detect_anomaly` share."""

from __future__ import annotations

import numpy as np

from .array import array


def print_launch(kernel, dim, inputs, outputs, device) -> None:
    """Warp's line for a launch (`config.print_launches`): the dim as given, the inputs and
    outputs as Python prints those lists."""
    from ..logger import get_logger
    get_logger().info(f"kernel: {kernel.key} dim: {dim} inputs: {list(inputs or ())} "
                      f"outputs: {list(outputs or ())} device: {device}")


def is_float_dtype(dt: np.dtype) -> bool:
    """Whether numpy dtype `dt` holds floats (bfloat16, an ml_dtypes type, included)."""
    return dt.kind == "f" or dt.name == "bfloat16"


def float_fields(data: np.ndarray, path: str = ""):
    """(".field" path, view) of each floating-point part of an array's memory (struct
    fields included, nested ones as ".a.b")."""
    if data.dtype.names:
        for name in data.dtype.names:
            yield from float_fields(data[name], f"{path}.{name}")
    elif is_float_dtype(data.dtype):
        yield path, data


def nonfinite_masks(data: np.ndarray) -> dict:
    """".field" path -> boolean mask of the non-finite values, for the fields that have some."""
    out = {}
    for path, values in float_fields(data):
        bad = ~np.isfinite(values)
        if bad.any():
            out[path] = bad
    return out


def first_nonfinite(data: np.ndarray, ndim: int, before: dict | None = None):
    """The first element (in row-major order) of an array's memory `data` (its first `ndim`
    axes are the array's; the others a vector's or matrix's components) with a non-finite
    float that `before` (from `nonfinite_masks`, taken earlier) does not list, as
    (element index, component index, ".field" path, value); None if there is none."""
    best = None
    for path, values in float_fields(data):
        bad = ~np.isfinite(values)
        if before is not None and path in before:
            bad &= ~before[path]
        if not bad.any():
            continue
        shape = values.shape
        per_element = bad.reshape(int(np.prod(shape[:ndim], dtype=np.int64)), -1)
        flat = int(np.argmax(per_element.any(axis=1)))
        if best is not None and flat >= best[0]:
            continue
        component = np.unravel_index(int(np.argmax(per_element[flat])), shape[ndim:]) if len(shape) > ndim else ()
        element = np.unravel_index(flat, shape[:ndim]) if ndim else ()
        value = values[element + component]
        best = (flat, tuple(int(i) for i in element), tuple(int(i) for i in component), path, value)
    return None if best is None else best[1:]


def describe_element(name: str, element: tuple, component: tuple, path: str) -> str:
    """`x[3]`, `x[1, 2][0]`, `foos[4].field` for a report."""
    text = name + (f"[{', '.join(map(str, element))}]" if element else "")
    text += path
    if component:
        text += f"[{', '.join(map(str, component))}]"
    return text


def verify_fp(label: str, names, params) -> None:
    """Print a warning naming the kernel, the argument, the first bad element and its value
    for each array of floats that holds NaN or Inf after the launch. Warp's `verify_fp`
    reports and carries on (its test expects the printed message, not an exception);
    `weft.autograd.detect_anomaly()` is the checking mode that raises. In debug mode, where
    Warp's assertion aborts the process, an AssertionError follows the report."""
    from .. import config
    found_any = None
    for name, value in zip(names, params):
        if not isinstance(value, array):
            continue
        data = value.numpy()
        found = first_nonfinite(data, value.ndim)
        if found is None:
            continue
        element, component, path, bad = found
        kinds = [k for k, test in (("nan", np.isnan), ("inf", np.isinf))
                 if any(test(f.astype(np.float64)).any() for _, f in float_fields(data))]
        report = (f"kernel '{label}' left non-finite values ({', '.join(kinds)}) in argument "
                  f"'{name}', first {describe_element(name, element, component, path)} = {bad}")
        print(f"Warp verify_fp: {report}", flush=True)
        found_any = found_any or report
    if found_any and config.mode == "debug":
        raise AssertionError(f"verify_fp (debug mode): {found_any}")
