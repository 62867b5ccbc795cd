"""wp.indexedarray: gather views through index arrays, in kernels, with numpy(), fill_ and contiguous()."""

import numpy as np
import warp as wp


@wp.kernel
def double(a: wp.indexedarray(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 2.0


@wp.kernel
def gather_sum(a: wp.indexedarray2d(dtype=float), out: wp.array(dtype=float)):
    i, j = wp.tid()
    wp.atomic_add(out, i, a[i, j])


@wp.kernel
def vec_idx(a: wp.indexedarray(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.length(a[i])


def run():
    r = {}
    data = wp.array(np.arange(10, dtype=np.float32))
    idx = wp.array(np.array([1, 3, 5, 7], dtype=np.int32))
    ia = wp.indexedarray(data, [idx])
    r["ia_shape"] = np.array(ia.shape)
    r["ia"] = ia.numpy().copy()
    wp.launch(double, dim=ia.shape, inputs=[ia])
    r["data_after"] = data.numpy().copy()
    grid = wp.array(np.arange(20, dtype=np.float32).reshape(4, 5))
    rows = wp.array(np.array([0, 2], dtype=np.int32))
    cols = wp.array(np.array([1, 4, 3], dtype=np.int32))
    ia2 = wp.indexedarray2d(grid, [rows, cols])
    r["ia2"] = ia2.numpy().copy()
    out = wp.zeros(2, dtype=float)
    wp.launch(gather_sum, dim=ia2.shape, inputs=[ia2, out])
    r["gather"] = out.numpy().copy()
    ia3 = wp.indexedarray(grid, [None, cols])
    r["ia3"] = ia3.numpy().copy()
    r["ia3_shape"] = np.array(ia3.shape)
    c = ia2.contiguous()
    r["contig"] = c.numpy().copy()
    ia.fill_(-1.0)
    r["after_fill"] = data.numpy().copy()
    vecs = wp.array(np.arange(15, dtype=np.float32).reshape(5, 3), dtype=wp.vec3)
    vi = wp.indexedarray(vecs, [wp.array(np.array([4, 0], dtype=np.int32))])
    lens = wp.zeros(2, dtype=float)
    wp.launch(vec_idx, dim=2, inputs=[vi, lens])
    r["lens"] = lens.numpy().copy()
    via_index = data[idx]
    r["via_index_type"] = type(via_index).__name__
    r["via_index"] = via_index.numpy().copy()
    return r
