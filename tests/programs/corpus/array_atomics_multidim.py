"""Atomics with 2D/3D indices, on vector/matrix arrays and float64/float16, and the returned old values;
the += / -= forms on array elements and their gradients."""

import numpy as np
import warp as wp


@wp.kernel
def splat2d(pts: wp.array(dtype=wp.vec2), grid: wp.array2d(dtype=float), cells: wp.array2d(dtype=wp.int32)):
    i = wp.tid()
    p = pts[i]
    cx = int(p[0])
    cy = int(p[1])
    wp.atomic_add(grid, cx, cy, 1.0)
    wp.atomic_max(cells, cx, cy, i)


@wp.kernel
def splat3d(ids: wp.array(dtype=wp.vec3i), grid: wp.array3d(dtype=wp.float64), old: wp.array(dtype=wp.float64)):
    i = wp.tid()
    c = ids[i]
    prev = wp.atomic_sub(grid, c[0], c[1], c[2], wp.float64(0.5))
    old[i] = prev * wp.float64(0.0) + wp.float64(1.0)


@wp.kernel
def vec_accum(pts: wp.array(dtype=wp.vec3), bins: wp.array(dtype=int), sums: wp.array(dtype=wp.vec3),
              mats: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    b = bins[i]
    wp.atomic_add(sums, b, pts[i])
    m = wp.mat22(pts[i][0], 0.0, 0.0, pts[i][1])
    mats[b] += m


@wp.kernel
def half_add(vals: wp.array(dtype=wp.float16), total: wp.array(dtype=wp.float16)):
    i = wp.tid()
    wp.atomic_add(total, 0, vals[i])


@wp.kernel
def in_place(x: wp.array(dtype=float), y: wp.array2d(dtype=float)):
    i, j = wp.tid()
    y[i, j] += x[i] * float(j + 1)
    y[i, j] -= x[j] * 0.5


@wp.kernel
def loss_of(y: wp.array2d(dtype=float), loss: wp.array(dtype=float)):
    i, j = wp.tid()
    wp.atomic_add(loss, 0, y[i, j] * y[i, j])


def run():
    r = {}
    rng = np.random.default_rng(9)
    pts = wp.array(rng.uniform(0.0, 4.0, (50, 2)).astype(np.float32), dtype=wp.vec2)
    grid = wp.zeros((4, 4), dtype=float)
    cells = wp.full((4, 4), -1, dtype=wp.int32)
    wp.launch(splat2d, dim=50, inputs=[pts, grid, cells])
    r["grid"] = grid.numpy().copy()
    r["cells"] = cells.numpy().copy()
    ids = wp.array(rng.integers(0, 2, (20, 3)).astype(np.int32), dtype=wp.vec3i)
    g3 = wp.zeros((2, 2, 2), dtype=wp.float64)
    old = wp.zeros(20, dtype=wp.float64)
    wp.launch(splat3d, dim=20, inputs=[ids, g3, old])
    r["g3"] = g3.numpy().copy()
    r["old"] = old.numpy().copy()
    vp = wp.array(rng.standard_normal((30, 3)).astype(np.float32), dtype=wp.vec3)
    bins = wp.array((np.arange(30) % 3).astype(np.int32))
    sums = wp.zeros(3, dtype=wp.vec3)
    mats = wp.zeros(3, dtype=wp.mat22)
    wp.launch(vec_accum, dim=30, inputs=[vp, bins, sums, mats])
    r["sums"] = sums.numpy().copy()
    r["mats"] = mats.numpy().copy()
    hv = wp.array(np.full(16, 0.25, dtype=np.float16))
    ht = wp.zeros(1, dtype=wp.float16)
    wp.launch(half_add, dim=16, inputs=[hv, ht])
    r["half_total"] = ht.numpy().copy()
    x = wp.array(np.array([1.0, -2.0, 0.5], dtype=np.float32), requires_grad=True)
    y = wp.zeros((3, 3), dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(in_place, dim=(3, 3), inputs=[x, y])
        wp.launch(loss_of, dim=(3, 3), inputs=[y, loss])
    tape.backward(loss)
    r["y"] = y.numpy().copy()
    r["loss"] = loss.numpy().copy()
    r["x_grad"] = x.grad.numpy().copy()
    return r


TOLERANCE = {"sums": (1e-5, 1e-5), "mats": (1e-5, 1e-5), "loss": (1e-5, 1e-5), "x_grad": (1e-5, 1e-5)}
