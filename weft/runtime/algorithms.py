"""Array algorithms of `weft.utils` (Warp's): prefix sums, key-value sorts, run-length
encoding and casts.

They work on the arrays' memory through numpy (the arrays are numpy-backed CPU memory):
numpy's cumulative sums and stable sorts are exact and well tested, which matters more here
than spreading one call over all cores. Each call checks its arguments at once and raises
Warp's errors; the work itself is recorded instead of run inside a graph capture (see
capture.py), so a replay sorts or scans the arrays' contents at that time.
"""

from __future__ import annotations

import operator

import numpy as np

from ..types import Scalar, Vector, float32, float64, int32, int64, uint32, uint64
from . import capture
from .array import array, element_numpy
from .threads import thread_count

_SCAN_SCALARS = (int32, int64, float32, float64)
_UNSIGNED = {4: uint32, 8: uint64}
#: array_scan scans this many numbers or more with kernels (scan_kernels.py) on several
#: threads, fewer with numpy (one thread; a launch costs more than it saves there)
SCAN_KERNELS_FROM = 1 << 16
#: radix_sort_pairs sorts this many pairs or more with kernels (sort_kernels.py), fewer
#: through numpy's stable sort of the same radix keys (the same order, less overhead)
KERNEL_SORT_FROM = 1 << 14
_INT32_MAX = (1 << 31) - 1


def _run(work, name: str, *args, **kwargs) -> None:
    """Run `work` now, or record it if a graph capture is under way (saveable as the call
    `weft.utils.<name>(*args, **kwargs)`, see capture_io.py)."""
    if not capture.record(work, ("call", f"weft.utils.{name}", args, kwargs)):
        work()


def _elements(a: array) -> np.ndarray:
    """`a`'s memory as (size, *components), a view that writes through (Warp's algorithms
    take contiguous arrays or 1-D strided views, which both give views here)."""
    data = a.numpy()
    if a.ndim == 1:
        return data
    view = data.reshape((a.size,) + element_numpy(a.dtype)[1])
    if not np.shares_memory(view, data) and view.size:
        raise RuntimeError("a multi-dimensional array must be contiguous here")
    return view


def _scalar_of(dtype):
    """The scalar type of a scalar or vector dtype, else None."""
    if isinstance(dtype, Scalar):
        return dtype
    return dtype.dtype if isinstance(dtype, Vector) else None


def array_scan(in_array: array, out_array: array, inclusive: bool = True) -> None:
    """Prefix sums of `in_array` into `out_array` (vectors component-wise): inclusive
    (`out[i] = in[0] + ... + in[i]`) or exclusive (`out[0] = 0`, `out[i] = in[0] + ... +
    in[i-1]`). Scalars and vectors of int32, int64, float32, float64."""
    if in_array.device != out_array.device:
        raise RuntimeError(f"In and out array storage devices do not match ({in_array.device} vs {out_array.device})")
    if in_array.size != out_array.size:
        raise RuntimeError(f"In and out array storage sizes do not match ({in_array.size} vs {out_array.size})")
    if in_array.dtype is not out_array.dtype:
        raise RuntimeError(f"In and out array data types do not match ({in_array.dtype!r} vs {out_array.dtype!r})")
    if in_array.size == 0:
        return
    if _scalar_of(in_array.dtype) not in _SCAN_SCALARS:
        raise RuntimeError(f"Unsupported data type: {in_array.dtype!r}")
    for what, a in (("Input", in_array), ("Output", out_array)):
        if not a.is_contiguous and a.ndim != 1:
            raise RuntimeError(f"{what} array must be contiguous or one-dimensional")
    src, dst = _elements(in_array), _elements(out_array)

    def scan():
        if src.size >= SCAN_KERNELS_FROM and thread_count() > 1:
            from .. import scan_kernels  # (kernel-language code: imported on the first large scan)
            scan_kernels.scan(src.reshape(len(src), -1), dst.reshape(len(dst), -1), inclusive, 4 * thread_count())
            return
        sums = np.cumsum(src, axis=0, dtype=src.dtype)
        if inclusive:
            dst[...] = sums
        else:
            dst[1:] = sums[:-1]
            dst[0] = 0
    _run(scan, "array_scan", in_array, out_array, inclusive=inclusive)


def _radix_order(keys: np.ndarray) -> np.ndarray:
    """Keys as unsigned integers of the same width whose order is the keys' order (what a
    radix sort compares): signed integers with the sign bit flipped, floats by their bits
    (all bits flipped for negatives, the sign bit set for the rest)."""
    bits = keys.dtype.itemsize * 8
    unsigned = np.dtype(f"u{keys.dtype.itemsize}")
    raw = keys.view(unsigned)
    sign = unsigned.type(1 << (bits - 1))
    if keys.dtype.kind == "i":
        return raw ^ sign
    if keys.dtype.kind == "f":
        return np.where(raw & sign, ~raw, raw | sign)
    return raw


def _check_sort_storage(keys, values, count, message):
    if keys.size < 2 * count or values.size < 2 * count:
        raise RuntimeError(message)


def radix_sort_pairs(keys: array, values: array, count: int, begin_bit: int = 0,
                     end_bit: int | None = None) -> None:
    """Sort `keys[:count]` ascending, moving `values[:count]` with them; stable. Only key bits
    `[begin_bit, end_bit)` are compared. Keys: int32, uint32, float32, int64, uint64, float64;
    values: any 4- or 8-byte type. Both arrays hold at least `2 * count` elements (Warp's
    scratch space, which the sort of 16384 pairs or more uses, as Warp's does)."""
    if keys.device != values.device:
        raise RuntimeError(f"Keys and values array storage devices do not match ({keys.device} vs {values.device})")
    if count == 0:
        return
    _check_sort_storage(keys, values, count,
                        "Keys and values array storage must be large enough to contain 2*count elements")
    types = f"{keys.dtype!r}, {values.dtype!r}"
    value_bytes = values.numpy().itemsize * int(np.prod(element_numpy(values.dtype)[1], dtype=int))
    if value_bytes not in (4, 8) or keys.dtype not in (int32, uint32, float32, int64, uint64, float64):
        raise RuntimeError(f"Unsupported keys and values data types: {types}")
    for what, a in (("keys", keys), ("values", values)):
        if not a.is_contiguous:
            raise RuntimeError(f"radix_sort_pairs() requires a contiguous {what} array, got non-contiguous "
                               f"{what} with data types: {types}")
    width = keys.dtype.size * 8
    end_bit = width if end_bit is None else end_bit
    if not isinstance(begin_bit, int) or not isinstance(end_bit, int):
        raise RuntimeError("begin_bit and end_bit must be integers")
    if not 0 <= begin_bit <= end_bit <= width:
        raise RuntimeError(f"Invalid radix sort bit range [{begin_bit}, {end_bit}) for {width}-bit keys")
    if begin_bit == end_bit:
        return
    k, v = _elements(keys)[:count], _elements(values)[:count]
    if count >= KERNEL_SORT_FROM and keys.ndim == 1 and values.ndim == 1:
        def sort():
            from .. import sort_kernels  # (kernel-language code: imported on the first large sort)
            kind = {"i": sort_kernels.SIGNED, "f": sort_kernels.FLOAT}.get(k.dtype.kind, sort_kernels.UNSIGNED)
            sort_kernels.sort_pairs(keys.view(_UNSIGNED[k.itemsize]), values.view(_UNSIGNED[value_bytes]), count,
                                    kind, begin_bit, end_bit)
        _run(sort, "radix_sort_pairs", keys, values, count, begin_bit, end_bit)
        return

    def sort():
        order_keys = _radix_order(k)
        if (begin_bit, end_bit) != (0, width):
            mask = (1 << (end_bit - begin_bit)) - 1
            order_keys = (order_keys >> order_keys.dtype.type(begin_bit)) & order_keys.dtype.type(mask)
        order = np.argsort(order_keys, kind="stable")
        k[...] = k[order]
        v[...] = v[order]
    _run(sort, "radix_sort_pairs", keys, values, count, begin_bit, end_bit)


def _segment_indices(name: str, a: array) -> None:
    if a.dtype is not int32:
        raise RuntimeError(f"{name} array must be of type int32")
    if a.ndim != 1:
        raise RuntimeError(f"{name} must be one-dimensional")
    if not a.is_contiguous:
        raise RuntimeError(f"segmented_sort_pairs() requires a contiguous {name} array")


def segmented_sort_pairs(keys: array, values: array, count: int, segment_start_indices: array,
                         segment_end_indices: array | None = None) -> None:
    """Sort each segment `[start, end)` of `keys[:count]` ascending (stable), moving
    `values` with the keys. Without `segment_end_indices`, consecutive start indices bound
    the segments. Keys int32 or float32, values int32; every range must satisfy
    `0 <= start <= end <= count` (ValueError naming the first bad segment, before any
    sorting). Both arrays hold at least `2 * count` elements (Warp's scratch space)."""
    if isinstance(count, bool):
        raise TypeError("count must be an integer")
    try:
        count = operator.index(count)
    except TypeError:
        raise TypeError("count must be an integer") from None
    if count < 0:
        raise ValueError(f"count must be non-negative, got {count}")
    if count > _INT32_MAX:
        raise ValueError(f"count must not exceed {_INT32_MAX}, got {count}")
    devices = {keys.device, values.device, segment_start_indices.device}
    if segment_end_indices is not None:
        devices.add(segment_end_indices.device)
    if len(devices) > 1:
        raise RuntimeError("Keys, values, and segment index array storage devices must match")
    if count == 0:
        return
    _check_sort_storage(keys, values, count, "Array storage must be large enough to contain 2*count elements")
    for what, a in (("keys", keys), ("values", values)):
        if not a.is_contiguous:
            raise RuntimeError(f"segmented_sort_pairs() requires a contiguous {what} array")
    _segment_indices("segment_start_indices", segment_start_indices)
    if segment_end_indices is None:
        offsets = segment_start_indices.numpy()
        starts, ends = offsets[:-1], offsets[1:]
    else:
        _segment_indices("segment_end_indices", segment_end_indices)
        if segment_start_indices.size != segment_end_indices.size:
            raise RuntimeError("segment_start_indices and segment_end_indices must have the same size "
                               f"({segment_start_indices.size} vs {segment_end_indices.size})")
        starts, ends = segment_start_indices.numpy(), segment_end_indices.numpy()
    if starts.size == 0:
        return
    if (keys.dtype, values.dtype) not in ((int32, int32), (float32, int32)):
        raise RuntimeError(f"Unsupported data type: {keys.dtype!r}")
    k, v = _elements(keys)[:count], _elements(values)[:count]
    # a bad range is a ValueError of the call, or (found when a captured graph runs) a
    # RuntimeError of the graph's launch, as in Warp
    error = RuntimeError if capture.capturing() else ValueError

    def sort():
        s, e = starts.astype(np.int64), ends.astype(np.int64)
        bad = np.flatnonzero((s < 0) | (e < s) | (e > count))
        if bad.size:
            i = int(bad[0])
            raise error(f"Invalid segment range at index {i}: [{s[i]}, {e[i]}) "
                             f"(ranges must satisfy 0 <= start <= end <= count={count})")
        for lo, hi in zip(s.tolist(), e.tolist()):
            if hi - lo > 1:
                order = np.argsort(_radix_order(k[lo:hi]), kind="stable") + lo
                k[lo:hi] = k[order]
                v[lo:hi] = v[order]
    _run(sort, "segmented_sort_pairs", keys, values, count, segment_start_indices, segment_end_indices)


def runlength_encode(values: array, run_values: array, run_lengths: array, run_count: array | None = None,
                     value_count: int | None = None):
    """Run-length encode `values[:value_count]`: each run of equal consecutive values gives
    one entry of `run_values` and its length in `run_lengths` (int32). Returns the number of
    runs, or writes it to `run_count[0]` (and returns `run_count`) if given."""
    if run_values.device != values.device or run_lengths.device != values.device:
        raise RuntimeError("run_values, run_lengths and values storage devices do not match")
    if value_count is None:
        value_count = values.size
    elif value_count < 0:
        raise RuntimeError(f"value_count must be non-negative, got {value_count}")
    if run_values.size < value_count or run_lengths.size < value_count:
        raise RuntimeError(f"Output array storage sizes must be at least equal to value_count ({value_count})")
    if values.dtype is not run_values.dtype:
        raise RuntimeError(f"values and run_values data types do not match "
                           f"({values.dtype!r} vs {run_values.dtype!r})")
    if run_lengths.dtype is not int32:
        raise RuntimeError("run_lengths array must be of type int32")
    if values.dtype is not int32:
        raise RuntimeError(f"Unsupported data type: {values.dtype!r}")
    if run_count is not None and run_count.dtype is not int32:
        raise RuntimeError("run_count array must be of type int32")
    if run_count is None and value_count == 0:
        return 0
    if run_count is None and capture.capturing():
        raise NotImplementedError("inside a graph capture, runlength_encode() needs a run_count array "
                                  "(the count is only known when the graph runs)")
    src = _elements(values)[:value_count]
    out_values, out_lengths = _elements(run_values), _elements(run_lengths)
    result = []

    def encode():
        if value_count == 0:
            n = 0
        else:
            starts = np.flatnonzero(np.concatenate(([True], src[1:] != src[:-1])))
            n = starts.size
            out_values[:n] = src[starts]
            out_lengths[:n] = np.diff(np.append(starts, value_count))
        if run_count is not None:
            run_count.numpy().reshape(-1)[0] = n
        result.append(n)
    _run(encode, "runlength_encode", values, run_values, run_lengths, run_count, value_count=value_count)
    if run_count is not None:
        return run_count
    return result[0]


def array_cast(in_array: array, out_array: array, count: int | None = None) -> None:
    """Convert the elements of `in_array` to `out_array`'s type (as C casts do: floats to
    integers truncate). Arrays of different ndim or element shapes are cast as flat lists of
    scalars; `count` (1-D only) limits the number of elements."""
    if in_array.device != out_array.device:
        raise RuntimeError(f"Array storage devices do not match ({in_array.device} vs {out_array.device})")
    src, dst = in_array.numpy(), out_array.numpy()
    in_shape, out_shape = element_numpy(in_array.dtype)[1], element_numpy(out_array.dtype)[1]
    flat = in_array.ndim != out_array.ndim or in_shape != out_shape
    if flat:  # scalar by scalar, in row-major order
        src, dst = _scalars(in_array), _scalars(out_array)
        if count is not None:
            count *= int(np.prod(in_shape, dtype=int))
        ndim, in_size, out_size, shape_in, shape_out = 1, src.shape[0], dst.shape[0], None, None
    else:
        ndim, in_size, out_size = in_array.ndim, in_array.size, out_array.size
        shape_in, shape_out = in_array.shape, out_array.shape
    if count is None:
        count = in_size
    if ndim > 1 and count < in_size:
        raise RuntimeError("Partial cast is not supported for arrays with more than one dimension")
    if ndim > 1 and shape_in != shape_out:
        raise RuntimeError(f"Array shapes do not match ({shape_in} vs {shape_out})")
    if count > in_size or count > out_size:
        raise RuntimeError(f"Cast count ({count}) exceeds the input size ({in_size}) or output size ({out_size})")

    def cast():
        source = _scalars(in_array) if flat else in_array.numpy()  # the contents at run time
        with np.errstate(over="ignore", invalid="ignore"):  # (out of range: C's casts, no warning)
            if ndim == 1:
                dst[:count] = source[:count]
            else:
                dst[...] = source
        if flat and not np.shares_memory(dst, out_array.numpy()):  # a strided output was copied
            out_array.numpy()[...] = dst.reshape(out_array.numpy().shape)
    _run(cast, "array_cast", in_array, out_array, count)


def _scalars(a: array) -> np.ndarray:
    """`a`'s scalars in row-major order (a view where the memory allows)."""
    return a.numpy().reshape(-1)
