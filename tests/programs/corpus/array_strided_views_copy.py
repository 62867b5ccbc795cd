"""Non-contiguous arrays from the Python side: step slices of 1-D/2-D/3-D arrays and their strides,
numpy() and list() of strided views, wp.copy between strided views in both directions, copies with
offsets and counts on 1-D strided views, assign and fill_ through step slices, view(dtype) of a
strided view, contiguous() copies, transposes used as copy sources, kernels writing through strided
views, and which operations Warp refuses on non-contiguous arrays (exception type only)."""

import numpy as np
import warp as wp


@wp.kernel
def bump(a: wp.array2d(dtype=float), k: float):
    i, j = wp.tid()
    a[i, j] = a[i, j] + k * float(i * 10 + j)


@wp.kernel
def scale1(a: wp.array(dtype=wp.vec2), s: float):
    i = wp.tid()
    a[i] = a[i] * s


def refused(fn):
    try:
        fn()
    except Exception as e:  # the exception type is what Warp promises, not its message
        return type(e).__name__
    return "ok"


def run():
    r = {}
    a = wp.array(np.arange(24, dtype=np.float32).reshape(4, 6))
    v = a[:, ::2]
    r["v_shape"] = np.array(v.shape)
    r["v_strides"] = np.array(v.strides)
    r["v_contiguous"] = v.is_contiguous
    r["v_numpy"] = v.numpy().copy()
    r["v_list"] = np.array(v.list())
    w = a[1::2, 1:6:2]
    r["w_numpy"] = w.numpy().copy()
    r["w_strides"] = np.array(w.strides)
    b = wp.zeros((4, 3), dtype=float)
    wp.copy(b, v)
    r["copy_from_strided"] = b.numpy().copy()
    c = wp.zeros((4, 6), dtype=float)
    wp.copy(c[:, 1::2], v)
    r["copy_strided_to_strided"] = c.numpy().copy()
    d = wp.full(12, -1.0, dtype=float)
    wp.copy(d[::3], a[0, ::2])
    r["copy_1d_steps"] = d.numpy().copy()
    e = wp.zeros(10, dtype=float)
    src = wp.array(np.arange(20, dtype=np.float32))[::2]
    wp.copy(e[::2], src, dest_offset=1, src_offset=3, count=2)
    r["copy_offsets_strided"] = e.numpy().copy()
    f = wp.zeros((3, 4), dtype=float)
    f[:, ::3].assign(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32))
    f[::2, 1].fill_(9.0)
    r["assign_fill_steps"] = f.numpy().copy()
    r["view_int_of_strided"] = v.view(wp.int32).numpy().copy()
    cont = v.contiguous()
    r["contiguous_strides"] = np.array(cont.strides)
    r["contiguous_is_copy"] = cont.ptr != v.ptr
    t = a.transpose()
    r["t_strides"] = np.array(t.strides)
    tt = wp.zeros((6, 4), dtype=float)
    wp.copy(tt, t)
    r["copy_from_transpose"] = tt.numpy().copy()
    r["t_flat_via_contiguous"] = t.contiguous().flatten().numpy().copy()
    g = wp.zeros((5, 8), dtype=float)
    wp.launch(bump, dim=(3, 4), inputs=[g[1:4, ::2], 1.0])
    wp.launch(bump, dim=(2, 4), inputs=[g[::4, 1::2], -1.0])
    r["kernel_through_steps"] = g.numpy().copy()
    vec = wp.array(np.arange(16, dtype=np.float32).reshape(8, 2), dtype=wp.vec2)
    wp.launch(scale1, dim=3, inputs=[vec[1::3], 10.0])
    r["vec_steps"] = vec.numpy().copy()
    r["vec_step_list"] = np.array([list(x) for x in vec[::4].list()])
    cube = wp.array(np.arange(60, dtype=np.float32).reshape(3, 4, 5))
    r["cube_slice"] = cube[1, ::2, 1:4:2].numpy().copy()
    r["cube_slice_strides"] = np.array(cube[::2, 1:, ::4].strides)
    r["cube_col"] = cube[:, 2].numpy().copy()
    r["flatten_refused"] = refused(lambda: a[:, :2].flatten())
    r["reshape_refused"] = refused(lambda: t.reshape((24,)))
    r["count_2d_refused"] = refused(lambda: wp.copy(wp.zeros(12), v, count=3))
    r["fill_wrong_type"] = refused(lambda: v.fill_(wp.vec3(1.0, 2.0, 3.0)))
    r["fill_per_element_refused"] = refused(lambda: v[0].fill_(np.array([1.0, 2.0, 3.0])))
    r["fill_float_into_int"] = refused(lambda: wp.zeros(3, dtype=wp.int32).fill_(2.5))
    r["fill_vec2_into_mat22"] = refused(lambda: wp.zeros(3, dtype=wp.mat22).fill_(wp.vec2(1.0, 2.0)))
    return r
