"""`Scalar._type_`: the ctypes type of one value, as Warp's scalar types carry it."""

import ctypes

import weft as wp


def test_scalar_ctypes_sizes_match_numpy():
    for t in (wp.bool, wp.int8, wp.uint16, wp.int32, wp.uint64, wp.float16, wp.bfloat16, wp.float32, wp.float64):
        assert ctypes.sizeof(t._type_) == t.np_dtype.itemsize, t
    assert wp.float32._type_ is ctypes.c_float and wp.float64._type_ is ctypes.c_double
    assert wp.float16._type_ is ctypes.c_uint16  # (raw half bits, as Warp's)
    assert wp.vec3d._type_ is wp.float64._type_  # a composite's is its scalar's
