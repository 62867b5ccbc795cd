"""numpy interop: arrays built from numpy with and without copies, `.numpy()` views that share
memory with the Warp array, `__array_interface__`, vector dtypes from (N, 3) arrays."""

import numpy as np
import warp as wp


@wp.kernel
def scale_points(points: wp.array(dtype=wp.vec3), s: float, lengths: wp.array(dtype=float)):
    i = wp.tid()
    points[i] = points[i] * s
    lengths[i] = wp.length(points[i])


@wp.kernel
def add_one(a: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a[i] = a[i] + wp.float64(1.0)


@wp.kernel
def grid_sum(grid: wp.array2d(dtype=wp.int32), row_sums: wp.array(dtype=wp.int32)):
    i, j = wp.tid()
    wp.atomic_add(row_sums, i, grid[i, j] * (j + 1))


def run():
    rng = np.random.default_rng(11)
    host = rng.uniform(-1.0, 1.0, size=(8, 3)).astype(np.float32)

    # copy=False: the Warp array aliases the numpy buffer on the CPU
    points = wp.array(host, dtype=wp.vec3, copy=False)
    lengths = wp.zeros(8, dtype=float)
    wp.launch(scale_points, dim=8, inputs=[points, 2.0], outputs=[lengths])
    aliased_after_launch = host.copy()

    # copy (the default): later numpy writes do not reach the array
    copied = wp.array(host, dtype=wp.vec3)
    host[0] = 100.0
    copied_first = copied.numpy()[0].copy()

    # .numpy() of a CPU array shares memory: writes through the view reach the kernel
    f = wp.zeros(5, dtype=wp.float64)
    view = f.numpy()
    view[:] = np.arange(5) * 0.5
    wp.launch(add_one, dim=5, inputs=[f])
    view_after = view.copy()

    # wp.from_numpy with an explicit vector dtype and shape
    fn = wp.from_numpy(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=wp.vec3)
    fn_shape = np.array(fn.shape)

    # __array_interface__ lets numpy wrap a Warp array
    iface = f.__array_interface__
    wrapped = np.asarray(f)
    wrapped[1] = -7.0

    grid_np = np.arange(12, dtype=np.int32).reshape(3, 4)
    grid = wp.from_numpy(grid_np, dtype=wp.int32)
    row_sums = wp.zeros(3, dtype=wp.int32)
    wp.launch(grid_sum, dim=grid.shape, inputs=[grid], outputs=[row_sums])

    return {
        "aliased_after_launch": aliased_after_launch,
        "lengths": lengths.numpy(),
        "copied_first": copied_first,
        "points_numpy_shape": np.array(points.numpy().shape),
        "view_after": view_after,
        "f_after_wrap_write": f.numpy(),
        "iface_shape": np.array(iface["shape"]),
        "iface_typestr": iface["typestr"],
        "fn_shape": fn_shape,
        "fn_numpy": fn.numpy(),
        "row_sums": row_sums.numpy(),
        "grid_strides": np.array(grid.strides),
        "vec_dtype_numpy": str(points.numpy().dtype),
    }
