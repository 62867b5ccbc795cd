"""Module-level values read by kernels without wp.constant: typed scalars (wp.float32,
wp.float64, wp.int64), a Python int too large for int32 made an int64, a bool, vector,
matrix and quaternion globals; a loop index read after its loop (the last value), and a
local named like a builtin (min_v)."""

import numpy as np
import warp as wp

G32 = wp.float32(2.5)
G64 = wp.float64(1.25)
GI = wp.int64(3)
BIG = 3000000000
FLAG = True
V = wp.vec3(1.0, 2.0, 3.0)
M = wp.mat22(1.0, 2.0, 3.0, 4.0)
Q = wp.quat_rpy(0.1, 0.2, 0.3)


@wp.kernel
def read_globals(ns: wp.array(dtype=int), out: wp.array(dtype=float, ndim=2), o64: wp.array(dtype=wp.float64),
                 oi: wp.array(dtype=wp.int64, ndim=2)):
    i = wp.tid()
    n = ns[i]
    j = int(-1)
    for j in range(n):
        out[i, 5] += float(j)
    out[i, 0] = float(j)
    out[i, 1] = float(i) * G32
    o64[i] = wp.float64(i) * G64 + G64 * G64
    oi[i, 0] = GI * wp.int64(i)
    oi[i, 1] = wp.int64(BIG) + wp.int64(i)
    oi[i, 2] = wp.int64(int(FLAG) + 1)
    out[i, 2] = wp.dot(V, V) + M[1, 0] + wp.length(wp.quat_rotate(Q, V))
    min_v = float(n) * 2.0
    out[i, 3] = min_v
    acc = float(0.0)
    for q in range(3):
        acc += float(q)
    out[i, 4] = acc + float(q)


def run():
    # (non-empty loops only: after `for j in range(0)` Warp's j is not the value before it)
    ns = wp.array(np.array([1, 2, 5], dtype=np.int32))
    out = wp.zeros((3, 6), dtype=float)
    o64 = wp.zeros(3, dtype=wp.float64)
    oi = wp.zeros((3, 3), dtype=wp.int64)
    wp.launch(read_globals, dim=3, inputs=[ns], outputs=[out, o64, oi])
    return {"floats": out.numpy(), "doubles": o64.numpy(), "int64": oi.numpy()}
