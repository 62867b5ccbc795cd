"""Python-side views: slices, strides, reshape, flatten, transpose, contiguous, view(dtype), kernels on views."""

import numpy as np
import warp as wp


@wp.kernel
def add_one(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0


@wp.kernel
def scale2d(a: wp.array2d(dtype=float), s: float):
    i, j = wp.tid()
    a[i, j] = a[i, j] * s


def run():
    r = {}
    base = wp.array(np.arange(20, dtype=np.float32).reshape(4, 5))
    r["strides"] = np.array(base.strides)
    sl = base[1:3]
    r["sl_shape"] = np.array(sl.shape)
    r["sl"] = sl.numpy().copy()
    col = base[:, 1]
    r["col_shape"] = np.array(col.shape)
    r["col_strides"] = np.array(col.strides)
    r["col_contig"] = col.is_contiguous
    wp.launch(add_one, dim=col.shape[0], inputs=[col])
    r["base_after_col"] = base.numpy().copy()
    sub = base[1:3, 2:5]
    wp.launch(scale2d, dim=sub.shape, inputs=[sub, 10.0])
    r["base_after_sub"] = base.numpy().copy()
    step = base[::2, ::2]
    r["step"] = step.numpy().copy()
    row = base[2]
    r["row"] = row.numpy().copy()
    r["elem"] = float(base.numpy()[3, 4])
    flat = base.flatten()
    r["flat_shape"] = np.array(flat.shape)
    wp.launch(add_one, dim=3, inputs=[flat[17:]])
    r["base_after_flat"] = base.numpy().copy()
    rs = base.reshape((5, 4))
    r["rs"] = rs.numpy().copy()
    rs2 = base.reshape((-1, 2))
    r["rs2_shape"] = np.array(rs2.shape)
    tr = base.transpose()
    r["tr_shape"] = np.array(tr.shape)
    r["tr_strides"] = np.array(tr.strides)
    r["tr"] = tr.numpy().copy()
    r["tr_contig"] = tr.is_contiguous
    cont = tr.contiguous()
    r["cont_strides"] = np.array(cont.strides)
    r["cont"] = cont.numpy().copy()
    t3 = wp.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    tp = t3.transpose((2, 0, 1))
    r["tp"] = tp.numpy().copy()
    ints = wp.array(np.array([1.0, 2.0, -0.5], dtype=np.float32))
    bits = ints.view(dtype=wp.uint32)
    r["bits"] = bits.numpy().copy()
    v3 = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=float)
    vv = v3.view(wp.vec3)
    m4 = wp.array(np.arange(8, dtype=np.float32).reshape(2, 2, 2))
    r["mv"] = m4.view(wp.mat22).numpy().copy()
    r["vsingle_shape"] = np.array(wp.ones(3, dtype=float).view(wp.vec3).shape)
    r["vv_shape"] = np.array(vv.shape)
    r["vv"] = vv.numpy().copy()
    vec = wp.zeros(4, dtype=wp.vec2)
    fl = vec.view(dtype=float)
    r["fl_shape"] = np.array(fl.shape)
    r["fl_strides"] = np.array(fl.strides)
    return r
