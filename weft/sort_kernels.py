"""The kernels of `weft.utils.radix_sort_pairs` for large arrays: a least-significant-digit
radix sort, 8 bits a pass, as Warp's CPU sort is (and as stable).

Keys are read as unsigned integers of their width (`radix_key` maps them to numbers in the
order of the keys: the sign bit flipped for signed integers, all bits flipped for negative
floats and the sign bit set for the others), values as unsigned integers of theirs. One
pass over the keys counts every pass's digits (a single thread sorts, so one histogram per
pass holds for all of them), then each pass moves the pairs into the other half of the
arrays (Warp's scratch space: keys and values hold 2 * count elements). Passes whose digit
is the same for every key are skipped. One thread runs it all: the scatter is sequential
(stability), and splitting it over threads would need a histogram per chunk and pass.
Imported on the first large sort (kernel-language code needs the frontend)."""

from __future__ import annotations

from typing import Any

import numpy as np

import weft as wp

# (the offsets are exclusive sums of the digit counts: every slot written lies in the array)
wp.set_module_options({"enable_backward": False, "bounds_checks": False})

UNSIGNED, SIGNED, FLOAT = 0, 1, 2


@wp.func
def radix_key(bits: Any, kind: int, sign: Any, begin: Any, mask: Any):
    """`bits` (a key's bits) as a number in the order of the keys, bits [begin, ...) masked."""
    if kind == SIGNED:
        bits = bits ^ sign
    elif kind == FLOAT:
        if (bits & sign) != type(bits)(0):
            bits = ~bits
        else:
            bits = bits | sign
    return (bits >> begin) & mask


@wp.kernel
def digit_counts(keys: wp.array(dtype=Any), n: int, kind: int, sign: Any, begin: Any, mask: Any, passes: int,
                 counts: wp.array2d(dtype=int)):
    for j in range(n):
        key = radix_key(keys[j], kind, sign, begin, mask)
        for p in range(passes):
            digit = int((key >> type(key)(8 * p)) & type(key)(255))
            counts[p, digit] = counts[p, digit] + 1


@wp.kernel
def digit_scatter(keys: wp.array(dtype=Any), values: wp.array(dtype=Any), n: int, kind: int, sign: Any, begin: Any,
                  mask: Any, shift: Any, offsets: wp.array(dtype=int), keys_out: wp.array(dtype=Any),
                  values_out: wp.array(dtype=Any)):
    for j in range(n):
        bits = keys[j]
        digit = int((radix_key(bits, kind, sign, begin, mask) >> shift) & type(bits)(255))
        slot = offsets[digit]
        offsets[digit] = slot + 1
        keys_out[slot] = bits
        values_out[slot] = values[j]


def sort_pairs(keys, values, count: int, kind: int, begin_bit: int, end_bit: int) -> None:
    """Sort `keys[:count]` (an array of uint32 or uint64: the keys' bits) by bits
    [begin_bit, end_bit) of their radix keys, moving `values[:count]` (uint32 or uint64)
    with them, stably; both hold 2 * count elements, the second half scratch."""
    utype = keys.dtype
    width = utype.bits
    bits = end_bit - begin_bit
    passes = (bits + 7) // 8
    sign, begin = utype(1 << (width - 1)), utype(begin_bit)
    mask = utype((1 << bits) - 1)
    halves = [(keys[:count], values[:count]), (keys[count:2 * count], values[count:2 * count])]
    counts = wp.zeros((passes, 256), dtype=int, device=keys.device)
    wp.launch(digit_counts, 1, inputs=[halves[0][0], count, kind, sign, begin, mask, passes, counts],
              device=keys.device, record_tape=False)
    histograms = counts.numpy()
    source = 0
    for p in range(passes):
        histogram = histograms[p]
        if histogram.max() == count:  # (every key has this digit: the pass would not move anything)
            continue
        offsets = wp.array((np.cumsum(histogram) - histogram).astype(np.int32), device=keys.device)
        (k_in, v_in), (k_out, v_out) = halves[source], halves[1 - source]
        wp.launch(digit_scatter, 1, inputs=[k_in, v_in, count, kind, sign, begin, mask, utype(8 * p), offsets,
                                            k_out, v_out], device=keys.device, record_tape=False)
        source = 1 - source
    if source == 1:  # (the sorted pairs are in the scratch half)
        for a in (keys.numpy(), values.numpy()):
            a[:count] = a[count:2 * count]
