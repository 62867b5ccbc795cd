"""Recorded Launch objects changed between replays: set_params (all at once), set_param_by_name,
set_param_at_index with vector, matrix, int and struct values, swapping output arrays, set_dim
to a 2-D shape, and a recorded adjoint launch whose adjoint parameters are changed by index."""

import numpy as np
import warp as wp


@wp.struct
class Affine:
    scale: float
    shift: wp.vec3


@wp.kernel
def transform(src: wp.array(dtype=wp.vec3), dst: wp.array(dtype=wp.vec3), m: wp.mat33, t: Affine, reps: int):
    i = wp.tid()
    v = src[i]
    for _ in range(reps):
        v = m * v
    dst[i] = t.scale * v + t.shift


@wp.kernel
def grid(out: wp.array2d(dtype=wp.int32), base: wp.int32):
    i, j = wp.tid()
    out[i, j] = base + i * 10 + j


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float), k: float):
    i = wp.tid()
    y[i] = k * x[i] * x[i]


def run():
    r = {}
    src = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=wp.vec3)
    dst = wp.zeros(4, dtype=wp.vec3)
    t = Affine()
    t.scale = 2.0
    t.shift = wp.vec3(1.0, 0.0, -1.0)
    rot = wp.mat33(0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    cmd = wp.launch(transform, dim=4, inputs=[src, dst, rot, t, 1], record_cmd=True)
    r["recorded_not_run"] = dst.numpy().copy()
    cmd.launch()
    r["first"] = dst.numpy().copy()
    cmd.set_param_by_name("reps", 2)
    cmd.launch()
    r["reps2"] = dst.numpy().copy()
    t2 = Affine()
    t2.scale = -1.0
    t2.shift = wp.vec3(0.5, 0.5, 0.5)
    cmd.set_param_at_index(3, t2)
    cmd.set_param_at_index(2, wp.mat33(np.diag([1.0, 2.0, 3.0]).astype(np.float32)))
    cmd.launch()
    r["struct_and_matrix"] = dst.numpy().copy()
    dst2 = wp.zeros(4, dtype=wp.vec3)
    cmd.set_params([dst, dst2, wp.mat33(np.eye(3, dtype=np.float32) * 0.5), t, 3])
    cmd.launch()
    r["set_params_dst2"] = dst2.numpy().copy()
    r["set_params_dst_unchanged"] = dst.numpy().copy()
    g = wp.full((3, 4), -1, dtype=wp.int32)
    gcmd = wp.launch(grid, dim=(3, 4), inputs=[g, 100], record_cmd=True)
    gcmd.set_dim((2, 3))
    gcmd.launch()
    r["grid_dim_2x3"] = g.numpy().copy()
    gcmd.set_param_at_index(1, 7)
    gcmd.set_dim((3, 4))
    gcmd.launch()
    r["grid_full"] = g.numpy().copy()
    x = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    fwd = wp.launch(square, dim=3, inputs=[x, y, 2.0], record_cmd=True)
    fwd.launch()
    r["y"] = y.numpy().copy()
    y.grad.fill_(1.0)
    adj = wp.launch(square, dim=3, inputs=[x, y, 2.0], adj_inputs=[x.grad, y.grad, 0.0], adjoint=True,
                    record_cmd=True)
    adj.launch()
    r["xgrad_1"] = x.grad.numpy().copy()
    seeds = wp.array(np.array([0.0, 1.0, -2.0], dtype=np.float32))
    adj.set_param_at_index(1, seeds, adjoint=True)
    adj.launch()
    r["xgrad_2"] = x.grad.numpy().copy()
    return r
