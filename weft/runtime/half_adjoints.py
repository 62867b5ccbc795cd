"""Float32 accumulation of half-precision adjoint arrays around one adjoint launch.

An adjoint kernel takes the adjoint of a float16/bfloat16 array as an array of float32
(autodiff/half.py says why). Its argument block holds the `.grad` array's own descriptor
(half elements); `run_widened` replaces it for the launch by a float32 copy and rounds the
elements that changed back into the half memory afterwards, each once.

Adjoint arguments may overlap (the same `.grad` given twice, views into one array): the
memory each one reaches is a byte range, overlapping ranges share one float32 copy of
their union, and each argument's descriptor points into that copy at its own offset, with
its byte strides doubled (2-byte elements become 4-byte ones).
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..types import Matrix, Vector


def _half_scalar(t):
    return t.dtype.dtype if isinstance(t.dtype, (Vector, Matrix)) else t.dtype


def _extent(desc, t):
    """The byte range [lo, hi) the array with descriptor `desc` reaches (None: no memory)."""
    if not desc.data:
        return None
    shape = desc.data_shape if t.indexed else desc.shape
    dims = [int(shape[d]) for d in range(t.ndim)]
    if 0 in dims:
        return None
    lo = hi = int(desc.data)
    for n, s in zip(dims, desc.strides):
        step = (n - 1) * int(s)
        lo, hi = lo + min(step, 0), hi + max(step, 0)
    item = 2 * (t.dtype.num_components if isinstance(t.dtype, (Vector, Matrix)) else 1)
    return lo, hi + item


def run_widened(run, ck, args, *rest):
    """`run(ck, args, *rest)` with the half adjoint arrays of `ck` (its `widened` map:
    argument index -> the half array type) accumulated in float32."""
    saved, ranges = {}, []
    for k, t in ck.widened.items():
        desc = getattr(args, f"p{k}")
        saved[k] = type(desc).from_buffer_copy(desc)
        extent = _extent(desc, t)
        if extent is not None:
            ranges.append((*extent, k, t))
    groups = []  # [lo, hi, [(k, t), ...]] over the union of overlapping ranges
    for lo, hi, k, t in sorted(ranges, key=lambda r: r[0]):
        if groups and lo < groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], hi)
            groups[-1][2].append((k, t))
        else:
            groups.append([lo, hi, [(k, t)]])
    copies = []
    try:
        for lo, hi, members in groups:
            scalars = {_half_scalar(t) for _, t in members}
            if len(scalars) > 1:
                raise TypeError(f"kernel '{ck.kernel.name}': adjoint arrays of different element types "
                                f"({', '.join(sorted(s.name for s in scalars))}) share memory")
            scalar = scalars.pop()
            half = np.ctypeslib.as_array((ctypes.c_uint16 * ((hi - lo) // 2)).from_address(lo))
            half = half.view(scalar.np_dtype)
            wide = half.astype(np.float32)
            before = wide.copy()
            copies.append((half, wide, before))
            base = wide.ctypes.data
            for k, _ in members:
                desc = getattr(args, f"p{k}")
                desc.data = base + 2 * (int(desc.data) - lo)
                for d in range(len(desc.strides)):
                    desc.strides[d] = 2 * desc.strides[d]
        return run(ck, args, *rest, widened=True)
    finally:
        for half, wide, before in copies:
            changed = wide.view(np.uint32) != before.view(np.uint32)
            with np.errstate(invalid="ignore", over="ignore"):  # (NaN and inf stay what they are)
                half[changed] = wide[changed].astype(half.dtype)  # one rounding per element
        for k, desc in saved.items():
            setattr(args, f"p{k}", desc)
