"""In-place updates of array elements in kernels: += -= *= /= //= %= <<= >>= |= &= ^= on int, uint, float,
vector and matrix arrays, component updates of 2-D vector arrays, matrix rows and entries, negative
component indices of local vectors."""

import numpy as np
import warp as wp


@wp.kernel(enable_backward=False)
def int_inplace(a: wp.array(dtype=int), b: wp.array(dtype=int), c: wp.array(dtype=int), d: wp.array(dtype=int)):
    i = wp.tid()
    a[i] += 5
    b[i] -= 3
    c[i] *= 4
    d[i] //= 2


@wp.kernel(enable_backward=False)
def float_inplace(a: wp.array(dtype=float), b: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a[i] *= 2.5
    b[i] /= wp.float64(4.0)


@wp.kernel(enable_backward=False)
def vec_inplace(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    a[i] *= float(i + 1)
    a[i] += wp.vec3(1.0)
    m[i] *= 3.0
    m[i] -= wp.identity(n=2, dtype=float)


@wp.kernel(enable_backward=False)
def bit_inplace(a: wp.array(dtype=wp.uint32), b: wp.array(dtype=wp.int32)):
    i = wp.tid()
    a[i] |= wp.uint32(6)
    a[i] &= wp.uint32(12)
    a[i] ^= wp.uint32(1)
    b[i] <<= 2
    b[i] >>= 1
    b[i] %= 5


@wp.kernel(enable_backward=False)
def grid_inplace(a: wp.array2d(dtype=float), v: wp.array2d(dtype=wp.vec2)):
    i, j = wp.tid()
    a[i, j] += float(i)
    a[i][j] *= 2.0
    v[i, j][0] += 1.0
    v[i, j].y -= float(j)


@wp.kernel(enable_backward=False)
def matrix_parts(a: wp.array(dtype=wp.mat33), rows: wp.array(dtype=wp.vec3), last: wp.array(dtype=float)):
    i = wp.tid()
    a[i][1, 2] = 5.0 + float(i)
    a[i][2] = wp.vec3(7.0, 8.0, 9.0)
    a[i][0][0] = -1.0
    rows[i] = a[i][1]
    v = wp.vec3(1.0, 2.0, 3.0 + float(i))
    last[i] = v[-1] + a[i][-1][-2]


def run():
    r = {}
    arrays = [wp.array(np.array(x, dtype=np.int32)) for x in ([1, 2, 3], [1, 2, 3], [1, -2, 3], [-3, 5, -8])]
    wp.launch(int_inplace, dim=3, inputs=arrays)
    for name, arr in zip("abcd", arrays):
        r["int_" + name] = arr.numpy().copy()
    fa = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    fb = wp.array(np.array([1.0, -2.0, 3.0]))
    wp.launch(float_inplace, dim=3, inputs=[fa, fb])
    r["float_a"] = fa.numpy().copy()
    r["float_b"] = fb.numpy().copy()
    va = wp.ones(3, dtype=wp.vec3)
    ma = wp.full(3, wp.mat22(1.0, 2.0, 3.0, 4.0), dtype=wp.mat22)
    wp.launch(vec_inplace, dim=3, inputs=[va, ma])
    r["vec"] = va.numpy().copy()
    r["mat"] = ma.numpy().copy()
    ua = wp.array(np.array([1, 2, 3], dtype=np.uint32))
    ib = wp.array(np.array([-7, 5, 9], dtype=np.int32))
    wp.launch(bit_inplace, dim=3, inputs=[ua, ib])
    r["bits_u"] = ua.numpy().copy()
    r["bits_i"] = ib.numpy().copy()
    g = wp.ones((3, 2), dtype=float)
    gv = wp.zeros((3, 2), dtype=wp.vec2)
    wp.launch(grid_inplace, dim=(3, 2), inputs=[g, gv])
    r["grid"] = g.numpy().copy()
    r["grid_vec"] = gv.numpy().copy()
    m3 = wp.zeros(2, dtype=wp.mat33)
    rows = wp.zeros(2, dtype=wp.vec3)
    last = wp.zeros(2, dtype=float)
    wp.launch(matrix_parts, dim=2, inputs=[m3, rows, last])
    r["m3"] = m3.numpy().copy()
    r["rows"] = rows.numpy().copy()
    r["last"] = last.numpy().copy()
    return r
