"""Array views made inside kernels: slices with starts, stops, steps and negative bounds, rows and columns
of 2-D and 3-D arrays, views of vector arrays, writes through views, and their gradients."""

import numpy as np
import warp as wp


@wp.kernel
def slices(a: wp.array2d(dtype=float), out: wp.array(dtype=float), shapes: wp.array(dtype=int)):
    s1 = a[1:3]
    s2 = a[:, 1]
    s3 = a[::2, 1:]
    s4 = a[-2:, :-1]
    s5 = a[1, 1:4:2]
    out[0] = s1[0, 0] + s1[1, 3]
    out[1] = s2[2]
    out[2] = s3[1, 0]
    out[3] = s4[0, 0] + s4[1, 2]
    out[4] = s5[0] + s5[1]
    shapes[0] = s1.shape[0] * 10 + s1.shape[1]
    shapes[1] = s2.shape[0]
    shapes[2] = s3.shape[0] * 10 + s3.shape[1]
    shapes[3] = s4.shape[0] * 10 + s4.shape[1]
    shapes[4] = s5.shape[0]


@wp.kernel
def write_tail(a: wp.array(dtype=float)):
    i = wp.tid()
    tail = a[2:]
    tail[i] = float(i) * 10.0


@wp.kernel
def bump_odds(a: wp.array(dtype=float)):
    i = wp.tid()
    odds = a[1::2]
    odds[i] += 0.5


@wp.kernel
def vec_views(a: wp.array(dtype=wp.vec3), b: wp.array3d(dtype=int), out: wp.array(dtype=float)):
    sub = a[1:]
    out[0] = sub[0].x + sub[1][2]
    out[1] = float(sub.shape[0])
    plane = b[1]
    line = plane[:, 2]
    out[2] = float(line[0] + line[1] + plane.shape[0] * 100)


@wp.kernel
def row_energy(x: wp.array2d(dtype=float), e: wp.array(dtype=float)):
    i = wp.tid()
    row = x[i, 1:]
    s = float(0.0)  # noqa: UP018 (a dynamic variable, as Warp requires)
    for j in range(row.shape[0]):
        s += row[j] * row[j] * float(j + 1)
    e[i] = s


def run():
    r = {}
    a = wp.array(np.arange(20, dtype=np.float32).reshape(4, 5))
    out = wp.zeros(5, dtype=float)
    shapes = wp.zeros(5, dtype=int)
    wp.launch(slices, dim=1, inputs=[a, out, shapes])
    r["values"] = out.numpy().copy()
    r["shapes"] = shapes.numpy().copy()
    b = wp.zeros(8, dtype=float)
    wp.launch(write_tail, dim=6, inputs=[b])
    wp.launch(bump_odds, dim=4, inputs=[b])
    r["written"] = b.numpy().copy()
    v = wp.array(np.arange(9, dtype=np.float32).reshape(3, 3), dtype=wp.vec3)
    cube = wp.array(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
    o = wp.zeros(3, dtype=float)
    wp.launch(vec_views, dim=1, inputs=[v, cube, o])
    r["vec_views"] = o.numpy().copy()
    x = wp.array(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
    e = wp.zeros(3, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(row_energy, dim=3, inputs=[x], outputs=[e])
    tape.backward(grads={e: wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32))})
    r["energy"] = e.numpy().copy()
    r["x_grad"] = x.grad.numpy().copy()
    return r
