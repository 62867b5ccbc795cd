"""wp.map over arrays: lambdas, @wp.func functions and builtins (wp.clamp, wp.transform_point), scalar and
transform arguments mixed with arrays, numpy broadcasting of shapes (3,1,4) with (5,4), out= in place,
functions returning tuples (several output arrays), indexed arrays as inputs, int and vector results,
requires_grad propagation to created outputs, and return_kernel giving a launchable kernel."""

import numpy as np
import warp as wp


@wp.func
def lerp3(a: float, b: float, t: float):
    return a + (b - a) * t


@wp.func
def split(v: wp.vec3):
    return wp.length(v), wp.normalize(v)


@wp.func
def bucket(x: float, n: int):
    return wp.clamp(int(x * float(n)), 0, n - 1)


def run():
    r = {}
    a = wp.array([1.0, 2.0, 3.0], dtype=wp.float32)
    b = wp.array([4.0, 5.0, 6.0], dtype=wp.float32)
    c = wp.array([7.0, 8.0, 9.0], dtype=wp.float32)
    res = wp.map(lambda x, y, z: x + 2.0 * y - z, a, b, c)
    r["lambda3"] = res.numpy().copy()
    r["func_scalar_arg"] = wp.map(lerp3, a, b, 0.25).numpy().copy()
    xs = wp.array([-1.0, 0.0, 0.2, 1.0], dtype=wp.float32)
    ret = wp.map(wp.clamp, xs, -0.5, 0.5, out=xs)
    r["clamp_inplace"] = xs.numpy().copy()
    r["out_is_returned"] = ret is xs
    tf = wp.transform((1.0, 2.0, 3.0), wp.quat_rpy(0.2, -0.6, 0.1))
    pts = wp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.0, 0.0, 0.0]], dtype=wp.vec3)
    moved = wp.map(wp.transform_point, tf, pts)
    r["transform_point"] = moved.numpy().copy()
    r["transform_dtype"] = str(moved.dtype.__name__)
    p = wp.array(np.arange(12, dtype=np.float32).reshape(3, 1, 4))
    q = wp.array(np.arange(20, dtype=np.float32).reshape(5, 4) * 0.1)
    pq = wp.map(lambda u, v: u * 10.0 + v, p, q)
    r["broadcast_shape"] = np.array(pq.shape)
    r["broadcast"] = pq.numpy().copy()
    vs = wp.array([[3.0, 0.0, 4.0], [0.0, 2.0, 0.0], [1.0, 1.0, 1.0]], dtype=wp.vec3)
    lengths, dirs = wp.map(split, vs)
    r["tuple_lengths"] = lengths.numpy().copy()
    r["tuple_dirs"] = dirs.numpy().copy()
    arr = wp.array(np.arange(10, dtype=np.float32))
    idx = wp.array([1, 3, 5, 7, 9], dtype=int)
    iarr = wp.indexedarray1d(arr, [idx])
    res = wp.map(lambda x: x * 10.0, iarr)
    r["indexed"] = res.numpy().copy()
    vals = wp.array(np.array([0.0, 0.24, 0.5, 0.99, 1.5, -0.2], dtype=np.float32))
    buckets = wp.map(bucket, vals, 4)
    r["int_result"] = buckets.numpy().copy()
    r["int_dtype"] = str(buckets.dtype.__name__)
    g = wp.array(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    h = wp.map(lambda x: x * x, g)
    r["requires_grad_propagates"] = h.requires_grad
    res = wp.map(lambda x: x * x, a)
    r["no_grad_default"] = res.requires_grad
    tape = wp.Tape()
    with tape:
        sq = wp.map(lambda x: x * x * x, g)
    tape.backward(grads={sq: wp.ones(2, dtype=float)})
    r["map_grad"] = g.grad.numpy().copy()
    k = wp.map(lambda x, y: x * y, a, b, return_kernel=True)
    dst = wp.zeros(3, dtype=float)
    wp.launch(k, dim=3, inputs=[a, b], outputs=[dst])
    r["return_kernel"] = dst.numpy().copy()
    m2 = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    res = wp.map(lambda x: wp.sin(x) + 1.0, m2)
    r["map_2d"] = res.numpy().copy()
    return r
