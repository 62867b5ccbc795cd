"""Kernels and sample values shared by the interop tests."""

import numpy as np
import pytest

import weft as wp

SCALARS = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
           "float16", "float32", "float64"]


def _copy_kernel(t):
    @wp.kernel
    def copy(src: wp.array(dtype=t), dst: wp.array(dtype=t)):
        i = wp.tid()
        dst[i] = src[i]
    return copy


#: dst[i] = src[i], one kernel per scalar dtype name
COPY = {name: _copy_kernel(getattr(wp, name)) for name in SCALARS}


@wp.kernel
def affine(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] * 2.0 + 1.0


def values(name, n=6):
    """`n` (at most 8) values of numpy dtype `name`, including its extremes for integers."""
    if name == "bool":
        return np.array([True, False, True, True, False, True, False, False][:n])
    dt = np.dtype(name)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.array([info.min, info.max, 0, 1, 2, 3, 4, 5][:n], dtype=dt)
    return np.array([-1.5, 0.25, 1000.0, 0.0, 2.0, 3.0, 4.0, 5.0][:n], dtype=dt)


def other(name, n=6):
    """Values of dtype `name` different from `values` at every position."""
    return ~values(name, n) if name == "bool" else values(name, n)[::-1].copy()


def torch_dtype(name):
    """torch's dtype called `name`; the test is skipped where torch (or that dtype) is missing."""
    torch = pytest.importorskip("torch")
    t = getattr(torch, name, None)
    if t is None:
        pytest.skip(f"this torch has no {name}")
    return t
