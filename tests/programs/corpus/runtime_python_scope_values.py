"""Warp values used from Python, outside kernels: arithmetic on scalar objects (integer division
truncating toward zero and % with the dividend's sign, as in kernels; wrapping int8/uint8 sums),
vector and matrix operators (scalar * vec, mat * vec, mat @ mat, vec * mat, unary minus, slices,
negative indices, component and slice assignment, equality), builtins called from Python
(dot, cross, normalize, determinant, inverse, outer, skew, quat_rotate, transform_point, min,
clamp, lerp, cw_mul, matrix_from_rows/cols, ddot, trace), and the str() of vectors and matrices."""

import numpy as np
import warp as wp


def num(x):
    return np.array(x, dtype=np.float64).reshape(-1)


def run():
    r = {}
    r["int_div"] = num([wp.int32(-7) / wp.int32(2), wp.int32(7) / wp.int32(2), wp.int32(-7) / 2, 7 / wp.int32(2),
                        wp.int8(-7) / wp.int8(2), wp.uint8(7) / wp.uint8(2), wp.int64(-9) / wp.int64(4)])
    r["int_mod"] = num([wp.int32(-7) % wp.int32(3), wp.int32(7) % wp.int32(-3), wp.int32(-7) % 3,
                        wp.int64(-9) % wp.int64(4)])
    r["float_mod"] = num([wp.float32(-7.5) % wp.float32(2.0), wp.float32(7.5) % wp.float32(-2.0),
                          wp.float64(-0.3) % wp.float64(0.2)])
    r["wrap"] = num([wp.int8(100) + wp.int8(100), wp.uint8(3) - wp.uint8(5), wp.float16(1.5) + wp.float16(2.25)])
    v = wp.vec3(1.0, 2.0, 3.0)
    w = wp.vec3(-1.0, 0.5, 2.0)
    m = wp.mat33(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0)
    r["vec_ops"] = np.stack([num(v + w), num(v - w), num(2.0 * v), num(v / 2.0), num(2.0 / v), num(-v)])
    r["mat_vec"] = num(m * v)
    r["vec_mat"] = num(v * m)
    r["mat_mat"] = num(m @ m)
    r["indexing"] = num([v[-1], v.x, m[1, 2], m[2][0]])
    r["slice"] = num(v[1:])
    r["mat_row"] = num(m[1])
    r["eq"] = np.array([v == wp.vec3(1.0, 2.0, 3.0), v != w, v == w])
    r["int_vec"] = np.stack([num(wp.vec2i(7, -7) / 2), num(wp.vec2i(7, -7) % 3), num(wp.vec2i(3, 4) * 2)])
    r["float_vec_mod"] = num(wp.vec2(7.5, -7.5) % 2.0)
    u = wp.vec3(0.0, 0.0, 0.0)
    u[0] = 9.0
    u[1:] = wp.vec2(7.0, 8.0)
    r["set_items"] = num(u)
    mm = wp.mat22(1.0, 2.0, 3.0, 4.0)
    mm[0, 1] = -5.0
    mm[1] = wp.vec2(6.0, 7.0)
    r["set_mat"] = num(mm)
    q = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), 1.0)
    tf = wp.transform(wp.vec3(1.0, 2.0, 3.0), q)
    r["builtins"] = np.concatenate([
        num(wp.dot(v, w)), num(wp.cross(v, w)), num(wp.normalize(v)), num(wp.length(v)),
        num(wp.determinant(m)), num(wp.inverse(m)), num(wp.transpose(m)),
        num(wp.outer(wp.vec2(1.0, 2.0), wp.vec2(3.0, 4.0))), num(wp.skew(v)),
        num(wp.quat_rotate(q, v)), num(wp.transform_point(tf, v)), num(wp.transform_vector(tf, v)),
        num(q * wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), 0.5)),
        num(wp.min(wp.vec3(1.0, -2.0, 3.0), wp.vec3(0.0, 0.0, 0.0))), num(wp.clamp(5, 0, 3)),
        num(wp.lerp(wp.vec2(0.0, 0.0), wp.vec2(2.0, 4.0), 0.25)), num(wp.cw_mul(wp.vec2(1.0, 2.0), wp.vec2(3.0, 4.0))),
        num(wp.matrix_from_rows(wp.vec2(1.0, 2.0), wp.vec2(3.0, 4.0))),
        num(wp.matrix_from_cols(wp.vec2(1.0, 2.0), wp.vec2(3.0, 4.0))),
        num(wp.ddot(mm, mm)), num(wp.trace(mm)), num(wp.floor(-1.5)), num(wp.sin(0.5)),
        num(wp.abs(-2.5)), num(wp.diag(wp.vec2(1.0, 2.0))),
    ])
    r["str_vec"] = str(wp.vec3(1.0, 2.5, -3.0))
    r["str_vec2i"] = str(wp.vec2i(1, -2))
    r["str_mat"] = str(wp.mat22(1.0, 2.0, 3.0, 4.0))
    r["str_quat"] = str(wp.quat_identity())
    r["str_vec3d"] = str(wp.vec3d(0.1, 0.2, 0.3))
    r["str_vec3_inexact"] = str(wp.vec3(0.1, 0.2, 0.3))
    r["str_vec2h"] = str(wp.vec2h(0.1, 0.2))
    r["str_mat22h"] = str(wp.mat22h(0.1, 0.0, 0.0, 1.0))
    r["str_scalars"] = ",".join(str(x) for x in (wp.float16(0.1), wp.float64(0.1), wp.int8(-3), wp.uint32(7)))
    r["repr_vec"] = repr(wp.vec3(1.0, 2.5, -3.0))
    r["repr_vec2h"] = repr(wp.vec2h(0.1, 0.2))
    return r
