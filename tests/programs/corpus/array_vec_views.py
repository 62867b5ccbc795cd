"""Views of vector and matrix arrays: reshape with -1 of vec3 arrays, transpose of 2-D vec2 arrays and
their strides, step slices of mat22 arrays and numpy()/list() of them, view() between vec4 and mat22,
vec2 and float64, int64 and vec2i, views of 2-D float arrays as vec arrays, gradients seen through
reshaped views, kernels on transposed vector views, and the views Warp refuses (exception type)."""

import numpy as np
import warp as wp


@wp.kernel
def rotate(a: wp.array2d(dtype=wp.vec2)):
    i, j = wp.tid()
    v = a[i, j]
    a[i, j] = wp.vec2(-v[1], v[0]) + wp.vec2(float(i), float(10 * j))


@wp.kernel
def norm_sq(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, wp.dot(a[i], a[i]))


def refused(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "ok"


def run():
    r = {}
    v3 = wp.array(np.arange(24, dtype=np.float32).reshape(8, 3), dtype=wp.vec3)
    rs = v3.reshape((2, -1))
    r["reshape_shape"] = np.array(rs.shape)
    r["reshape_strides"] = np.array(rs.strides)
    r["reshape_values"] = rs.numpy().copy()
    v2 = wp.array(np.arange(24, dtype=np.float32).reshape(3, 4, 2), dtype=wp.vec2)
    t = v2.transpose()
    r["t_shape"] = np.array(t.shape)
    r["t_strides"] = np.array(t.strides)
    r["t_numpy"] = t.numpy().copy()
    wp.launch(rotate, dim=t.shape, inputs=[t])
    r["after_rotate_through_t"] = v2.numpy().copy()
    m = wp.array(np.arange(40, dtype=np.float32).reshape(10, 2, 2), dtype=wp.mat22)
    ms = m[1::3]
    r["mat_step_numpy"] = ms.numpy().copy()
    r["mat_step_list"] = np.array([[x[0, 0], x[0, 1], x[1, 0], x[1, 1]] for x in ms.list()])
    r["mat_step_strides"] = np.array(ms.strides)
    v4 = wp.array(np.arange(8, dtype=np.float32).reshape(2, 4), dtype=wp.vec4)
    r["vec4_as_mat22"] = v4.view(wp.mat22).numpy().copy()
    d = wp.array(np.array([[1.5, -2.0], [0.25, 8.0]], dtype=np.float32), dtype=wp.vec2)
    r["vec2_as_f64"] = d.view(wp.float64).numpy().copy()
    li = wp.array(np.array([1, -1, 2**40], dtype=np.int64))
    r["i64_as_vec2i"] = li.view(wp.vec2i).numpy().copy()
    g = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3))
    gv = g.view(wp.vec3)
    r["f2d_as_vec3_shape"] = np.array(gv.shape)
    r["f2d_as_vec3"] = gv.numpy().copy()
    r["f2d_wrong_width"] = refused(lambda: wp.zeros((2, 6), dtype=float).view(wp.vec3))
    x = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=wp.vec3, requires_grad=True)
    flat = x.reshape((2, 2)).flatten()
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(norm_sq, dim=4, inputs=[flat, out])
    tape.backward(out)
    r["grad_through_reshape"] = x.grad.numpy().copy()
    r["view_grad_shares"] = flat.grad is not None
    r["odd_view"] = refused(lambda: wp.zeros(3, dtype=float).view(wp.vec2))
    r["size_mismatch_view"] = refused(lambda: wp.zeros(3, dtype=float).view(wp.float16))
    r["reshape_bad"] = refused(lambda: v3.reshape((5, -1)))
    r["transpose_bad_axes"] = refused(lambda: v2.transpose((0, 0, 1)))
    return r
