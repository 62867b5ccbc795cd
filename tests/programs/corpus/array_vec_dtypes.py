"""Arrays of vectors and matrices: numpy with trailing dims, lists of vec values, component writes in kernels."""

import numpy as np
import warp as wp


@wp.kernel
def component_writes(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i].x = v[i].y * 2.0
    out[i].y = v[i][2] + 1.0
    out[i][2] = float(i)


@wp.kernel
def mat_ops(m: wp.array(dtype=wp.mat22), v: wp.array(dtype=wp.vec2), out: wp.array(dtype=wp.vec2),
            diag: wp.array2d(dtype=float)):
    i = wp.tid()
    out[i] = m[i] * v[i]
    diag[i, 0] = m[i][0, 0]
    diag[i, 1] = m[i][1][1]
    m[i][0, 1] = -1.0


@wp.kernel
def half_kernel(h: wp.array(dtype=wp.vec3h), out: wp.array(dtype=wp.float16)):
    i = wp.tid()
    out[i] = wp.length_sq(h[i])


def run():
    r = {}
    rng = np.random.default_rng(0)
    pts = rng.standard_normal((5, 3)).astype(np.float32)
    v = wp.array(pts, dtype=wp.vec3)
    r["v_shape"] = np.array(v.shape)
    out = wp.zeros(5, dtype=wp.vec3)
    wp.launch(component_writes, dim=5, inputs=[v, out])
    r["out"] = out.numpy().copy()
    lst = wp.array([wp.vec3(1.0, 2.0, 3.0), wp.vec3(4.0, 5.0, 6.0)], dtype=wp.vec3)
    r["lst"] = lst.numpy().copy()
    tl = wp.array([(1.0, 2.0), (3.0, 4.0)], dtype=wp.vec2)
    r["tl"] = tl.numpy().copy()
    ms = rng.standard_normal((4, 2, 2)).astype(np.float32)
    m = wp.array(ms, dtype=wp.mat22)
    vv = wp.array(rng.standard_normal((4, 2)).astype(np.float32), dtype=wp.vec2)
    mo = wp.empty(4, dtype=wp.vec2)
    diag = wp.zeros((4, 2), dtype=float)
    wp.launch(mat_ops, dim=4, inputs=[m, vv, mo, diag])
    r["mo"] = mo.numpy().copy()
    r["diag"] = diag.numpy().copy()
    r["m_after"] = m.numpy().copy()
    flat = wp.array(np.arange(12, dtype=np.float64), dtype=wp.vec3d)
    r["flat_shape"] = np.array(flat.shape)
    r["flat"] = flat.numpy().copy()
    vi = wp.zeros(3, dtype=wp.vec4i)
    vi.fill_(wp.vec4i(1, -2, 3, -4))
    r["vi"] = vi.numpy().copy()
    h = wp.array(np.array([[0.5, 1.0, 2.0], [1.5, -1.0, 0.25]], dtype=np.float16), dtype=wp.vec3h)
    ho = wp.zeros(2, dtype=wp.float16)
    wp.launch(half_kernel, dim=2, inputs=[h, ho])
    r["half"] = ho.numpy().copy()
    m33 = wp.full(2, wp.mat33(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0), dtype=wp.mat33)
    r["m33"] = m33.numpy().copy()
    m1 = m33.list()[1]
    r["m33_list"] = np.array([[m1[i][j] for j in range(3)] for i in range(3)])
    r["m33_row"] = np.array(m1[2])
    r["vec_list_nodtype"] = wp.array([wp.vec3(1.0, 2.0, 3.0), wp.vec3(4.0, 5.0, 6.0)]).numpy().copy()
    q = wp.array([wp.quat_identity()], dtype=wp.quat)
    r["q"] = q.numpy().copy()
    return r
