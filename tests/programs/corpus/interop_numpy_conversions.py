"""Array construction from numpy and Python data: the dtype Warp infers (lists of ints and
floats, numpy float64/int64/bool, lists of vectors), conversions when a dtype is given,
assign/fill_/copy with numpy sources, and which mismatches raise a RuntimeError."""

import numpy as np
import warp as wp


@wp.kernel
def total(a: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, a[i])


def raises_runtime_error(fn):
    try:
        fn()
    except RuntimeError:  # what Warp documents and users catch
        return True
    return False


def run():
    inferred = {
        "list_int": wp.array([1, 2, 3]),
        "list_float": wp.array([1.0, 2.5]),
        "np_f64": wp.array(np.linspace(0.0, 1.0, 3)),
        "np_i64": wp.array(np.arange(3)),
        "np_bool": wp.array(np.array([True, False])),
        "np_u16": wp.array(np.arange(3, dtype=np.uint16)),
        "np_2d": wp.array(np.ones((2, 3), dtype=np.float32)),
        "vec_list": wp.array([wp.vec3(1.0, 2.0, 3.0), wp.vec3(4.0, 5.0, 6.0)]),
        "mat_list": wp.array([wp.mat22(1.0, 2.0, 3.0, 4.0)]),
        "vec_list_typed": wp.array([wp.vec3(1.0, 2.0, 3.0)], dtype=wp.vec3),
    }
    out = {f"{k}_dtype": v.dtype.__name__ for k, v in inferred.items()}
    out.update({f"{k}_ndim": v.ndim for k, v in inferred.items()})
    out.update({f"{k}_shape": np.array(v.shape) for k, v in inferred.items()})
    out["vec_list"] = inferred["vec_list"].numpy()

    converted = wp.array(np.array([0.1, 0.7, -2.6, 3.5]), dtype=wp.float32)
    truncated = wp.array(np.array([0.9, -1.9, 2.5, 7.0]), dtype=wp.int32)
    as_f64 = wp.array([1, 2, 3, 4], dtype=wp.float64)
    s = wp.zeros(1, dtype=wp.float64)
    wp.launch(total, dim=4, inputs=[as_f64], outputs=[s])

    v = wp.zeros(4, dtype=wp.vec2)
    v.assign(np.arange(8, dtype=np.float32).reshape(4, 2))
    v_after_assign = v.numpy().copy()
    v.fill_(wp.vec2(-1.0, 0.5))
    m = wp.empty((2, 2), dtype=wp.mat22)
    m.fill_(wp.mat22(1.0, 2.0, 3.0, 4.0))
    dst = wp.zeros(6, dtype=float)
    src = wp.array(np.arange(10, 16, dtype=np.float32))
    wp.copy(dst, src, dest_offset=2, src_offset=1, count=3)
    c = wp.clone(dst)
    c.zero_()

    full_vec = wp.full(2, (1.0, 2.0, 3.0))  # a vector of numpy's type for the tuple
    full_int = wp.full(3, 7)
    out.update({
        "full_vec": full_vec.numpy(),
        "full_vec_strides": np.array(full_vec.strides),
        "full_int": full_int.numpy(),
        "err_reshape": raises_runtime_error(lambda: wp.array(np.arange(6, dtype=np.float32), shape=(4, 2))),
        "converted": converted.numpy(),
        "truncated": truncated.numpy(),
        "sum_f64": s.numpy(),
        "v_after_assign": v_after_assign,
        "v_filled": v.numpy(),
        "m_filled": m.numpy(),
        "dst": dst.numpy(),
        "clone_zeroed": c.numpy(),
        "dst_unchanged_by_clone": dst.numpy(),
        "err_vec_shape": raises_runtime_error(lambda: wp.array(np.ones((4, 2), dtype=np.float32), dtype=wp.vec3)),
        "err_assign_shape": raises_runtime_error(lambda: v.assign(np.ones(5, dtype=np.float32))),
        "err_launch_dtype": raises_runtime_error(
            lambda: wp.launch(total, dim=3, inputs=[wp.zeros(3, dtype=wp.float32)], outputs=[s])),
        "err_launch_count": raises_runtime_error(lambda: wp.launch(total, dim=3, inputs=[as_f64])),
        "err_scalar_data": raises_runtime_error(lambda: wp.array(5.0)),
    })
    return out
