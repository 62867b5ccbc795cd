"""fill_/zero_/assign/numpy/list, wp.copy with offsets and counts, copies between views, array.to."""

import numpy as np
import warp as wp


@wp.kernel
def square(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] = a[i] * a[i]


def run():
    r = {}
    a = wp.array(np.arange(10, dtype=np.float32))
    b = wp.zeros(10, dtype=float)
    wp.launch(square, dim=10, inputs=[a, b])
    c = wp.zeros(10, dtype=float)
    wp.copy(c, b, dest_offset=2, src_offset=5, count=3)
    r["c"] = c.numpy().copy()
    d = wp.zeros(10, dtype=float)
    wp.copy(d, b)
    r["d"] = d.numpy().copy()
    d.fill_(3.5)
    r["filled"] = d.numpy().copy()
    d.zero_()
    r["zeroed"] = d.numpy().copy()
    d.assign(np.linspace(0.0, 1.0, 10, dtype=np.float32))
    r["assigned_np"] = d.numpy().copy()
    d.assign(b)
    r["assigned_arr"] = d.numpy().copy()
    d.assign([float(x) for x in range(10, 0, -1)])
    r["assigned_list"] = d.numpy().copy()
    r["as_list"] = np.array(d.list())
    v = wp.zeros(3, dtype=wp.vec3)
    v.fill_(wp.vec3(1.0, 2.0, 3.0))
    r["vfill"] = v.numpy().copy()
    v.fill_(0.5)
    r["vfill_scalar"] = v.numpy().copy()
    r["vlist"] = np.array([list(x) for x in v.list()])
    m = wp.zeros((2, 3), dtype=wp.int32)
    m.fill_(7)
    m[1].fill_(-1)
    r["m"] = m.numpy().copy()
    m2 = wp.zeros((2, 3), dtype=wp.int32)
    wp.copy(m2, m)
    r["m2"] = m2.numpy().copy()
    cpu = m2.to("cpu")
    r["to"] = cpu.numpy().copy()
    r["to_same"] = cpu.ptr == m2.ptr
    e = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    col = wp.zeros(2, dtype=float)
    wp.copy(col, e[:, 2])
    r["col"] = col.numpy().copy()
    f = wp.zeros((3, 2), dtype=float)
    f.assign(e.transpose())
    r["f"] = f.numpy().copy()
    s = wp.zeros(4, dtype=wp.float64)
    s[1:3].fill_(2.0)
    r["s"] = s.numpy().copy()
    g = wp.zeros(3, dtype=wp.float32)
    g.assign(np.array([1, 2, 3], dtype=np.float32))
    r["g"] = g.numpy().copy()
    npv = a.numpy()
    npv[0] = 100.0
    r["numpy_shares"] = a.numpy()[0]
    return r
