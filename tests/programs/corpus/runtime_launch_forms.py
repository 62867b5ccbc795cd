"""wp.launch forms: dim as int/tuple/list up to 4D, inputs+outputs, keyword args, record_cmd Launch objects."""

import numpy as np
import warp as wp


@wp.kernel
def axpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a * x[i] + y[i]


@wp.kernel
def index4(out: wp.array4d(dtype=wp.int32)):
    i, j, k, l = wp.tid()
    out[i, j, k, l] = ((i * 3 + j) * 4 + k) * 2 + l


@wp.kernel
def tid_in_2d(out: wp.array(dtype=wp.int32), width: int):
    i, j = wp.tid()
    out[i * width + j] = i - j


@wp.kernel
def accumulate(a: wp.array(dtype=float), step: float):
    i = wp.tid()
    a[i] = a[i] + step


@wp.kernel
def first_index(counts: wp.array(dtype=wp.int32)):
    i = wp.tid()
    wp.atomic_add(counts, i, 1)


@wp.kernel
def leading_pair(out: wp.array2d(dtype=wp.int32)):
    i, j = wp.tid()
    out[i, j] = i * 10 + j


@wp.kernel
def count_pairs(counts: wp.array2d(dtype=wp.int32)):
    i, j = wp.tid()
    wp.atomic_add(counts, i, j, 1)


@wp.kernel
def shift(points: wp.array(dtype=wp.vec3), offset: wp.vec3, basis: wp.mat22):
    i = wp.tid()
    points[i] = points[i] + offset * basis[1, 0]


@wp.kernel
def dim_query(out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    out[i] = wp.block_dim() * 0 + i


def run():
    r = {}
    x = wp.array(np.arange(8, dtype=np.float32))
    y = wp.ones(8, dtype=float)
    out = wp.zeros(8, dtype=float)
    wp.launch(axpy, dim=8, inputs=[x, y, 3.0], outputs=[out])
    r["axpy"] = out.numpy().copy()
    out2 = wp.zeros(8, dtype=float)
    wp.launch(kernel=axpy, dim=(8,), inputs=[x, y, -1.0, out2], device="cpu")
    r["axpy_kw"] = out2.numpy().copy()
    o4 = wp.zeros((2, 3, 4, 2), dtype=wp.int32)
    wp.launch(index4, dim=(2, 3, 4, 2), inputs=[o4])
    r["o4"] = o4.numpy().copy()
    t2 = wp.zeros(12, dtype=wp.int32)
    wp.launch(tid_in_2d, dim=[3, 4], inputs=[t2, 4])
    r["t2"] = t2.numpy().copy()
    a = wp.zeros(5, dtype=float)
    cmd = wp.launch(accumulate, dim=5, inputs=[a, 1.0], record_cmd=True)
    r["before_cmd"] = a.numpy().copy()
    cmd.launch()
    cmd.launch()
    r["after_two"] = a.numpy().copy()
    cmd.set_param_at_index(1, 10.0)
    cmd.launch()
    r["after_param"] = a.numpy().copy()
    b = wp.zeros(5, dtype=float)
    cmd.set_param_at_index(0, b)
    cmd.launch()
    r["b_after"] = b.numpy().copy()
    cmd.set_dim(3)
    cmd.launch()
    r["b_dim3"] = b.numpy().copy()
    d = wp.zeros(6, dtype=wp.int32)
    wp.launch(dim_query, dim=6, inputs=[d], max_blocks=2)
    r["max_blocks"] = d.numpy().copy()
    counts = wp.zeros(6, dtype=wp.int32)
    wp.launch(first_index, dim=(4, 6), inputs=[counts])
    r["first_index_2d"] = counts.numpy().copy()
    counts.zero_()
    wp.launch(first_index, dim=(3, 2, 2), inputs=[counts])
    r["first_index_3d"] = counts.numpy().copy()
    lp = wp.zeros((3, 4), dtype=wp.int32)
    wp.launch(leading_pair, dim=3, inputs=[lp])
    r["pair_on_1d"] = lp.numpy().copy()
    pairs = wp.zeros((3, 4), dtype=wp.int32)
    wp.launch(count_pairs, dim=(3, 4, 2), inputs=[pairs])
    wp.launch(count_pairs, dim=(3, 4, 1, 3), inputs=[pairs])
    r["pairs_on_3d_4d"] = pairs.numpy().copy()
    pts = wp.zeros(3, dtype=wp.vec3)
    wp.launch(shift, dim=3, inputs=[pts, wp.vec3d(1.0, 2.0, 3.0), wp.mat22d(1.0, 2.0, 0.5, 4.0)])
    wp.launch(shift, dim=3, inputs=[pts, wp.vec3i(1, 1, 1), ((1.0, 2.0), (2.0, 4.0))])
    wp.launch(shift, dim=3, inputs=[pts, np.array([0.0, 0.0, 1.0]), wp.mat22h(0.0, 0.0, 1.0, 0.0)])
    r["converted_params"] = pts.numpy().copy()
    e = wp.zeros(0, dtype=float)
    wp.launch(accumulate, dim=0, inputs=[e, 1.0])
    r["empty_ok"] = e.size
    return r
