"""Arrays inside kernels: shape/len queries, sub-array views of rows, wp.where on null arrays, lower_bound,
fixed-size local arrays (wp.zeros in a kernel), arrays as struct fields and @wp.func arguments."""

import numpy as np
import warp as wp


@wp.struct
class Grid:
    values: wp.array2d(dtype=float)
    weights: wp.array(dtype=float)
    scale: float


@wp.func
def row_dot(row: wp.array(dtype=float), w: wp.array(dtype=float)):
    s = float(0.0)  # noqa: UP018 (a dynamic variable, as Warp requires)
    for j in range(len(row)):
        s += row[j] * w[j]
    return s


@wp.kernel
def grid_rows(g: Grid, out: wp.array(dtype=float), dims: wp.array(dtype=int)):
    i = wp.tid()
    row = g.values[i]
    out[i] = row_dot(row, g.weights) * g.scale
    if i == 0:
        dims[0] = g.values.shape[0]
        dims[1] = g.values.shape[1]
        dims[2] = len(g.weights)
        dims[3] = row.shape[0]


@wp.kernel
def optional_bias(x: wp.array(dtype=float), bias: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    b = float(0.0)  # noqa: UP018 (a dynamic variable, as Warp requires)
    if bias:
        b = bias[i]
    out[i] = x[i] + b + wp.where(bias, 100.0, -100.0)


@wp.kernel
def bucket(sorted_edges: wp.array(dtype=float), queries: wp.array(dtype=float), idx: wp.array(dtype=int),
           idx_range: wp.array(dtype=int)):
    i = wp.tid()
    idx[i] = wp.lower_bound(sorted_edges, queries[i])
    idx_range[i] = wp.lower_bound(sorted_edges, 2, 5, queries[i])


@wp.kernel
def local_hist(data: wp.array2d(dtype=int), hist: wp.array2d(dtype=int)):
    i = wp.tid()
    counts = wp.zeros(shape=4, dtype=int)
    for j in range(data.shape[1]):
        counts[data[i, j] % 4] += 1
    for k in range(4):
        hist[i, k] = counts[k]


@wp.kernel
def slab_sum(vol: wp.array3d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    slab = vol[i]
    s = float(0.0)  # noqa: UP018 (a dynamic variable, as Warp requires)
    for j in range(slab.shape[0]):
        line = slab[j]
        for k in range(line.shape[0]):
            s += line[k] * float(k + 1)
    out[i] = s


def run():
    r = {}
    g = Grid()
    g.values = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    g.weights = wp.array(np.array([1.0, -1.0, 0.5, 2.0], dtype=np.float32))
    g.scale = 0.5
    out = wp.zeros(3, dtype=float)
    dims = wp.zeros(4, dtype=int)
    wp.launch(grid_rows, dim=3, inputs=[g, out, dims])
    r["rows"] = out.numpy().copy()
    r["dims"] = dims.numpy().copy()
    x = wp.array(np.arange(4, dtype=np.float32))
    o1 = wp.zeros(4, dtype=float)
    o2 = wp.zeros(4, dtype=float)
    wp.launch(optional_bias, dim=4, inputs=[x, wp.full(4, 0.25, dtype=float), o1])
    wp.launch(optional_bias, dim=4, inputs=[x, None, o2])
    r["with_bias"] = o1.numpy().copy()
    r["without_bias"] = o2.numpy().copy()
    edges = wp.array(np.array([0.0, 1.0, 2.0, 4.0, 8.0, 16.0], dtype=np.float32))
    q = wp.array(np.array([-1.0, 0.0, 0.5, 3.0, 8.0, 20.0], dtype=np.float32))
    idx = wp.zeros(6, dtype=int)
    idx_r = wp.zeros(6, dtype=int)
    wp.launch(bucket, dim=6, inputs=[edges, q, idx, idx_r])
    r["lower_bound"] = idx.numpy().copy()
    r["lower_bound_range"] = idx_r.numpy().copy()
    rng = np.random.default_rng(2)
    data = wp.array(rng.integers(0, 100, (5, 9)).astype(np.int32))
    hist = wp.zeros((5, 4), dtype=int)
    wp.launch(local_hist, dim=5, inputs=[data, hist])
    r["hist"] = hist.numpy().copy()
    vol = wp.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    ss = wp.zeros(2, dtype=float)
    wp.launch(slab_sum, dim=2, inputs=[vol, ss])
    r["slab"] = ss.numpy().copy()
    return r
