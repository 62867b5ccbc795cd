"""How wp.array converts the data it is given: dtypes inferred from Python lists (ints, floats, bools,
mixed, nested, vectors) and numpy arrays; Python floats truncated into int arrays; Python numbers
out of an integer dtype's range refused while numpy data is cast with wrap-around; float16 overflow
to inf; bool arrays from floats; vector and matrix arrays from flat, nested and trailing-dimension
data; the shape argument; and data Warp refuses (scalars, wrong component counts), reported as
whether a RuntimeError was raised."""

import numpy as np
import warp as wp


def outcome(fn):
    try:
        a = fn()
    except RuntimeError:
        return "RuntimeError"
    except Exception as e:
        return type(e).__name__
    return f"{a.dtype.__name__}{a.shape}"


def run():
    r = {}
    r["inferred"] = ",".join(outcome(f) for f in (
        lambda: wp.array([1, 2, 3]), lambda: wp.array([1.0, 2.0]), lambda: wp.array([True, False]),
        lambda: wp.array([1, 2.5]), lambda: wp.array([[1.0, 2.0], [3.0, 4.0]]), lambda: wp.array((1.0, 2.0)),
        lambda: wp.array(np.zeros(3)), lambda: wp.array(np.zeros(3, dtype=np.int16)),
        lambda: wp.array(np.zeros((2, 3), dtype=np.uint8)), lambda: wp.array([wp.vec2(1.0, 2.0), wp.vec2(3.0, 4.0)]),
    ))
    r["float_list_to_int"] = wp.array([1.7, -1.7, 2.5, -0.5], dtype=int).numpy().copy()
    r["numpy_wraps_u8"] = wp.array(np.array([-1, 256, 300]), dtype=wp.uint8).numpy().copy()
    r["numpy_wraps_i8"] = wp.array(np.array([127, 128, -129], dtype=np.int64), dtype=wp.int8).numpy().copy()
    r["list_out_of_range"] = ",".join(outcome(f) for f in (
        lambda: wp.array([-1, 256], dtype=wp.uint8), lambda: wp.array([2**40], dtype=wp.int32),
        lambda: wp.array([[1, 2], [3, 400]], dtype=wp.vec2ub), lambda: wp.array([255, 0], dtype=wp.uint8),
        lambda: wp.array([2**63 - 1], dtype=wp.int64), lambda: wp.array([2**64 - 1], dtype=wp.uint64),
    ))
    r["f16_overflow"] = wp.array([0.1, 70000.0, -1e6, 6e-8], dtype=wp.float16).numpy().copy()
    r["bool_from_float"] = wp.array([0.0, 0.5, -2.0], dtype=wp.bool).numpy().copy()
    r["bool_from_numpy_int"] = wp.array(np.array([0, 3, -1]), dtype=wp.bool).numpy().copy()
    v_flat = wp.array(np.arange(6, dtype=np.float32), dtype=wp.vec3)
    r["vec_from_flat"] = v_flat.numpy().copy()
    r["vec_from_2d_f64_dtype"] = str(wp.array(np.zeros((3, 3)), dtype=wp.vec3).numpy().dtype)
    r["mat_from_3d"] = wp.array(np.arange(8, dtype=np.float64).reshape(2, 2, 2), dtype=wp.mat22).numpy().copy()
    r["mat_from_flat_rows"] = wp.array(np.arange(8, dtype=np.float32).reshape(2, 4), dtype=wp.mat22).numpy().copy()
    r["vec_from_column"] = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3, 1), dtype=wp.vec3).numpy().copy()
    r["shape_arg"] = wp.array(np.arange(6, dtype=np.float32), shape=(2, 3)).numpy().copy()
    r["list_of_lists_vec"] = wp.array([[1, 2, 3], [4, 5, 6]], dtype=wp.vec3h).numpy().copy()
    r["refused"] = ",".join(outcome(f) for f in (
        lambda: wp.array(3.0), lambda: wp.array(np.zeros((3, 4)), dtype=wp.vec3),
        lambda: wp.array([[1.0, 2.0, 3.0]], dtype=wp.vec2),
    ))
    return r
