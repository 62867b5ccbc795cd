"""Arrays made from other arrays and data of other types: zeros_like/ones_like/empty_like/full_like with
Warp's positional device/requires_grad/pinned/retain_grad, of views and vector arrays (shape, dtype,
strides, flags); clone of strided and transposed views; wp.full with values whose dtype is inferred
(lists, tuples, numpy arrays and scalars); assign from numpy of another dtype (float64, int64, bool,
uint8) into float, int, vector and float16 arrays; fill_ with vectors and matrices and with numpy
scalars; numpy() dtypes and list() element types."""

import numpy as np
import warp as wp


def describe(a):
    return np.array([a.ndim, a.size, int(a.requires_grad), int(a.is_contiguous)] + list(a.shape) + list(a.strides))


def run():
    r = {}
    src = wp.array(np.arange(12, dtype=np.float64).reshape(3, 4), requires_grad=True)
    z = wp.zeros_like(src, "cpu", False)
    r["zeros_like_positional"] = describe(z)
    r["zeros_like_dtype"] = str(z.dtype.__name__)
    o = wp.ones_like(src[:, 1::2])
    r["ones_like_view"] = describe(o)
    r["ones_like_values"] = o.numpy().copy()
    e = wp.empty_like(src.transpose(), None, False)
    r["empty_like_transpose"] = describe(e)
    f = wp.full_like(src, 2.5, None, True, False, True)
    r["full_like"] = f.numpy().copy()
    r["full_like_retain"] = f.retain_grad
    v = wp.zeros(5, dtype=wp.vec3h)
    fv = wp.full_like(v, wp.vec3h(1.0, 2.0, 3.0))
    r["full_like_vec3h"] = fv.numpy().copy()
    r["full_like_vec3h_dtype"] = str(fv.numpy().dtype)
    c = wp.clone(src[::2, ::3])
    r["clone_strided"] = describe(c)
    r["clone_strided_values"] = c.numpy().copy()
    ct = wp.clone(src.transpose(), requires_grad=False)
    r["clone_transpose"] = describe(ct)
    r["clone_transpose_values"] = ct.numpy().copy()
    values = (("list2", [1.0, 2.0]), ("tuple3i", (1, 2, 3)), ("np3f", np.array([1.0, 2.0, 3.0], dtype=np.float32)),
              ("nested22", [[1.0, 2.0], [3.0, 4.0]]), ("np_i16", np.array([1, 2], dtype=np.int16)),
              ("bool", True), ("float", 0.25), ("int", 7))
    for name, value in values:
        a = wp.full(2, value)
        r[f"full_{name}_np_dtype"] = str(a.numpy().dtype)
        r[f"full_{name}"] = a.numpy().copy()
    fl = wp.zeros(4, dtype=float)
    fl.assign(np.array([0.1, 1e10, -3.5, 2.0**-30], dtype=np.float64))
    r["f32_from_f64"] = fl.numpy().copy()
    ii = wp.zeros(4, dtype=wp.int32)
    ii.assign(np.array([1, -2, 2**31 - 1, 5], dtype=np.int64))
    r["i32_from_i64"] = ii.numpy().copy()
    bb = wp.zeros(3, dtype=float)
    bb.assign(np.array([True, False, True]))
    r["f32_from_bool"] = bb.numpy().copy()
    u8 = wp.zeros(3, dtype=wp.int16)
    u8.assign(np.array([0, 200, 255], dtype=np.uint8))
    r["i16_from_u8"] = u8.numpy().copy()
    vv = wp.zeros(2, dtype=wp.vec3)
    vv.assign(np.arange(6, dtype=np.float64).reshape(2, 3) / 3.0)
    r["vec3_from_f64"] = vv.numpy().copy()
    hh = wp.zeros(3, dtype=wp.float16)
    hh.assign(np.array([0.1, 65504.0, 1e-5], dtype=np.float64))
    r["f16_from_f64"] = hh.numpy().copy()
    m = wp.zeros(2, dtype=wp.mat22d)
    m.fill_(wp.mat22d(1.0, 2.0, 3.0, 4.0))
    r["fill_mat22d"] = m.numpy().copy()
    m.fill_([[5.0, 6.0], [7.0, 8.0]])
    r["fill_mat22d_nested"] = m.numpy().copy()
    q = wp.zeros(2, dtype=wp.quat)
    q.fill_(wp.quat_identity())
    r["fill_quat"] = q.numpy().copy()
    n8 = wp.zeros(3, dtype=wp.uint8)
    n8.fill_(np.uint8(250))
    r["fill_np_uint8"] = n8.numpy().copy()
    d = wp.zeros(3, dtype=wp.float64)
    d.fill_(np.float32(0.1))
    r["fill_f64_from_np_f32"] = d.numpy().copy()
    lists = {
        "f32": wp.array([1.5, 2.5], dtype=float).list(),
        "i64": wp.array([1, 2], dtype=wp.int64).list(),
        "bool": wp.array([True, False], dtype=wp.bool).list(),
        "u8": wp.array([3, 4], dtype=wp.uint8).list(),
    }
    r["list_types"] = ",".join(f"{k}:{type(x[0]).__name__}" for k, x in lists.items())
    r["list_values"] = np.array([float(x[0]) for x in lists.values()])
    return r
