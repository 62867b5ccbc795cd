"""Multi-dimensional arrays: array2d/3d/4d, a[i, j] and a[i][j] forms, multi-dim tid, launch dims as tuples."""

import warp as wp


@wp.kernel
def fill2d(a: wp.array2d(dtype=float)):
    i, j = wp.tid()
    a[i, j] = float(i * 10 + j)


@wp.kernel
def row_sum(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    s = float(0.0)  # noqa: UP018 (a dynamic variable, as Warp requires for loops)
    for j in range(a.shape[1]):
        s += a[i][j]
    out[i] = s


@wp.kernel
def fill3d(a: wp.array3d(dtype=wp.int32)):
    i, j, k = wp.tid()
    a[i, j, k] = i * 100 + j * 10 + k


@wp.kernel
def fill4d(a: wp.array4d(dtype=wp.float64)):
    i, j, k, l = wp.tid()
    a[i, j, k, l] = wp.float64(i) - wp.float64(j) * wp.float64(0.5) + wp.float64(k * l)


@wp.kernel
def sub_rows(a: wp.array3d(dtype=wp.int32), out: wp.array2d(dtype=wp.int32)):
    i, j = wp.tid()
    row = a[i, j]
    out[i, j] = row[0] + row[row.shape[0] - 1]


@wp.kernel
def tid_flat(out: wp.array(dtype=int)):
    t = wp.tid()
    out[t] = t * 3


def run():
    r = {}
    a = wp.zeros((4, 5), dtype=float)
    wp.launch(fill2d, dim=(4, 5), inputs=[a])
    r["a"] = a.numpy().copy()
    s = wp.empty(4, dtype=float)
    wp.launch(row_sum, dim=4, inputs=[a, s])
    r["s"] = s.numpy().copy()
    b = wp.empty((2, 3, 4), dtype=wp.int32)
    wp.launch(fill3d, dim=b.shape, inputs=[b])
    r["b"] = b.numpy().copy()
    c = wp.zeros(shape=(2, 2, 3, 2), dtype=wp.float64)
    wp.launch(fill4d, dim=c.shape, inputs=[c])
    r["c"] = c.numpy().copy()
    o = wp.zeros((2, 3), dtype=wp.int32)
    wp.launch(sub_rows, dim=(2, 3), inputs=[b, o])
    r["o"] = o.numpy().copy()
    t = wp.zeros(7, dtype=int)
    wp.launch(tid_flat, dim=[7], inputs=[t])
    r["t"] = t.numpy().copy()
    return r
