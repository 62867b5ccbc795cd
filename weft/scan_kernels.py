"""The kernels of `weft.utils.array_scan` for large arrays: the elements are split into one
run per chunk; a first launch sums each chunk, the chunk totals are scanned on the host (a
few dozen numbers), and a second launch scans every chunk from its offset. Each component
of a vector scans on its own (the arrays are seen as (elements, components)).

A chunked float scan adds in another order than a sequential one: the sums differ in the
last bits (as Warp's CUDA scan differs from its CPU one). Imported on the first large scan
(kernel-language code needs the frontend)."""

from __future__ import annotations

from typing import Any

import numpy as np

import weft as wp

from .runtime.launch import launch_internal

# (every index is within [0, n) of arrays the caller checked)
wp.set_module_options({"enable_backward": False, "bounds_checks": False})


@wp.kernel
def chunk_totals(src: wp.array2d(dtype=Any), chunk: int, totals: wp.array2d(dtype=Any)):
    c, k = wp.tid()
    begin = c * chunk
    end = wp.min(begin + chunk, src.shape[0])
    total = type(src[0, k])(0)
    for i in range(begin, end):
        total += src[i, k]
    totals[c, k] = total


@wp.kernel
def chunk_scan(src: wp.array2d(dtype=Any), chunk: int, offsets: wp.array2d(dtype=Any), inclusive: int,
               dst: wp.array2d(dtype=Any)):
    c, k = wp.tid()
    begin = c * chunk
    end = wp.min(begin + chunk, src.shape[0])
    running = offsets[c, k]
    if inclusive != 0:
        for i in range(begin, end):
            running += src[i, k]
            dst[i, k] = running
    else:
        for i in range(begin, end):
            value = src[i, k]  # (read before the write: the scan may be in place)
            dst[i, k] = running
            running += value


def scan(src: np.ndarray, dst: np.ndarray, inclusive: bool, chunks: int) -> None:
    """Prefix sums along axis 0 of `src` (elements, components) into `dst` of the same shape
    and dtype (both may be the same memory), in `chunks` runs."""
    n = src.shape[0]
    chunk = -(-n // chunks)
    chunks = -(-n // chunk)
    source, target = wp.array(src, copy=False), wp.array(dst, copy=False)
    totals = wp.empty((chunks, src.shape[1]), dtype=source.dtype)
    launch_internal(chunk_totals, (chunks, src.shape[1]), inputs=[source, chunk, totals])
    sums = totals.numpy()
    offsets = np.zeros_like(sums)
    np.cumsum(sums[:-1], axis=0, dtype=sums.dtype, out=offsets[1:])
    launch_internal(chunk_scan, (chunks, src.shape[1]), inputs=[source, chunk, wp.array(offsets, copy=False),
                                                                int(inclusive), target])
