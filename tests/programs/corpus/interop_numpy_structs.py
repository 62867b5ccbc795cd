"""numpy and Warp structs and views: arrays of structs from and to numpy structured arrays,
arrays wrapping an existing buffer by pointer, reshape/flatten/view/transpose of arrays and
what numpy sees of them (shapes, strides, contents), `.list()` of vector arrays."""

import numpy as np
import warp as wp


@wp.struct
class Body:
    com: wp.vec3
    mass: float
    id: int


@wp.kernel
def push(bodies: wp.array(dtype=Body), dv: wp.vec3):
    i = wp.tid()
    b = bodies[i]
    bodies[i].com = b.com + dv * (1.0 / b.mass)
    bodies[i].id = b.id * 10 + i


@wp.kernel
def index_grid(a: wp.array2d(dtype=float)):
    i, j = wp.tid()
    a[i, j] = float(i * 100 + j)


def run():
    bodies = []
    for i in range(4):
        b = Body()
        b.com = wp.vec3(float(i), 0.5, -float(i))
        b.mass = 1.0 + float(i)
        b.id = i + 1
        bodies.append(b)
    arr = wp.array(bodies, dtype=Body)
    wp.launch(push, dim=4, inputs=[arr, wp.vec3(1.0, 2.0, 3.0)])
    data = arr.numpy()

    # a structured numpy array back into an array of structs
    data["mass"] *= 2.0
    arr2 = wp.array(data, dtype=Body)
    wp.launch(push, dim=4, inputs=[arr2, wp.vec3(1.0, 0.0, 0.0)])

    host = np.zeros(12, dtype=np.float32)
    by_ptr = wp.array(ptr=host.ctypes.data, dtype=float, shape=(3, 4), device="cpu")
    wp.launch(index_grid, dim=(3, 4), inputs=[by_ptr])

    g = wp.zeros((3, 4), dtype=float)
    wp.launch(index_grid, dim=(3, 4), inputs=[g])
    gt = g.transpose()
    flat = g.flatten()
    r = g.reshape((2, 6))
    as_int = g.view(wp.int32)
    col = g[:, 2]

    vecs = wp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=wp.vec3)
    lst = vecs.list()

    return {
        "com": data["com"],
        "ids": data["id"],
        "com2": arr2.numpy()["com"],
        "ids2": arr2.numpy()["id"],
        "struct_fields": np.array(list(data.dtype.names)),
        "host": host,
        "gt": gt.numpy(),
        "gt_strides": np.array(gt.strides),
        "flat": flat.numpy(),
        "r": r.numpy(),
        "as_int": as_int.numpy(),
        "col": col.numpy(),
        "col_strides": np.array(col.strides),
        "col_iface_strides": np.array(col.__array_interface__["strides"]),
        "list_len": len(lst),
        "list_second": np.array(lst[1]),
        "list_type": type(lst[1]).__name__,
    }
