"""The rules of wp.copy: dtype and shape mismatches refused (RuntimeError), same size but another
shape accepted, counts and offsets beyond either array refused, flat offsets into 2-D arrays, counts
of vector elements, count=0 meaning the whole array, int32 to uint32 bit copies, offsets on
indexed arrays and strided destinations refused, and a copy between overlapping views."""

import numpy as np
import warp as wp


def attempt(dst, src, **kw):
    try:
        wp.copy(dst, src, **kw)
    except RuntimeError:
        return "RuntimeError", None
    except Exception as e:
        return type(e).__name__, None
    return "ok", dst.numpy().copy()


def run():
    r = {}
    cases = {
        "dtype_mismatch": (wp.zeros(3), wp.zeros(3, dtype=wp.float64), {}),
        "shape_mismatch": (wp.zeros(3), wp.zeros(4), {}),
        "same_size_other_shape": (wp.zeros((2, 3)), wp.array(np.arange(6, dtype=np.float32)), {}),
        "count_too_big": (wp.zeros(3), wp.zeros(3), {"count": 5}),
        "offset_too_big": (wp.zeros(3), wp.zeros(3), {"dest_offset": 2, "count": 2}),
        "offsets_2d": (wp.zeros((2, 3)), wp.array(np.arange(6, dtype=np.float32).reshape(2, 3)),
                       {"dest_offset": 1, "src_offset": 2, "count": 3}),
        "vec_count": (wp.zeros(3, dtype=wp.vec2), wp.array(np.arange(6, dtype=np.float32).reshape(3, 2), dtype=wp.vec2),
                      {"dest_offset": 1, "count": 2}),
        "indexed_offsets": (wp.zeros(4), wp.indexedarray1d(wp.array(np.arange(10, dtype=np.float32)),
                                                           [wp.array([9, 7, 5], dtype=wp.int32)]),
                            {"dest_offset": 1, "src_offset": 1, "count": 2}),
        "count_zero_is_all": (wp.ones(3), wp.array([4.0, 5.0, 6.0]), {"count": 0}),
        "vec_to_float": (wp.zeros(6), wp.zeros(3, dtype=wp.vec2), {}),
        "int_to_uint": (wp.zeros(3, dtype=wp.uint32), wp.array([-1, 2, 3], dtype=wp.int32), {}),
        "negative_offset": (wp.zeros(3), wp.zeros(3), {"src_offset": -1, "count": 1}),
        "strided_dest_count": (wp.zeros(6)[::2], wp.array([1.0, 2.0, 3.0]), {"dest_offset": 1, "count": 2}),
    }
    outcomes = []
    for name, (dst, src, kw) in cases.items():
        what, values = attempt(dst, src, **kw)
        outcomes.append(f"{name}:{what}")
        if values is not None:
            r[name] = values
    r["outcomes"] = ",".join(outcomes)
    a = wp.array(np.arange(5, dtype=np.float32))
    wp.copy(a[1:], a[:-1])
    r["overlap"] = a.numpy().copy()
    return r
