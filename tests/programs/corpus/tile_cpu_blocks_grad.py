"""Cooperative CPU blocks with gradients and vector values: wp.tile(v) of vec3 (preserve_type
and split into components), block means subtracted per thread, a block-wide loss through
the Tape, launch_tiled over a 2D grid with the lane index, tile_load shared by the block."""

import numpy as np
import warp as wp

BLOCK = 32  # (a module compiles for one block_dim: both kernels use it)


@wp.kernel
def center_points(p: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), spread: wp.array(dtype=float)):
    i = wp.tid()
    v = p[i]
    tv = wp.tile(v, preserve_type=True)
    mean = wp.tile_sum(tv)[0] / float(wp.block_dim())
    c = v - mean
    out[i] = c
    comps = wp.tile(c)  # shape (3, block_dim)
    sq = wp.tile_map(wp.mul, comps, comps)
    per_axis = wp.tile_sum(sq, axis=1)
    total = wp.tile_sum(per_axis)
    wp.atomic_add(spread, 0, total[0] / float(wp.block_dim() * wp.block_dim()))


@wp.kernel
def grid_weights(w: wp.array2d(dtype=float), x: wp.array2d(dtype=float), y: wp.array2d(dtype=float),
                 loss: wp.array(dtype=float)):
    bi, bj, lane = wp.tid()
    wt = wp.tile_load(w, shape=(1, 32), offset=(bi, 0), storage="shared")
    xi = x[bi * 2 + bj, lane]
    t = wp.tile(xi * xi)
    s = wp.tile_dot(wp.tile_reshape(wt, shape=(32,)), t)
    y[bi * 2 + bj, lane] = wp.untile(t) * s[0]
    wp.tile_atomic_add(loss, s * 0.5)


def run():
    saved = wp.config.enable_cpu_blocks
    wp.config.enable_cpu_blocks = True
    try:
        rng = np.random.default_rng(97)
        p = wp.array(rng.standard_normal((128, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
        out = wp.zeros(128, dtype=wp.vec3, requires_grad=True)
        spread = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(center_points, dim=128, inputs=[p, out, spread], block_dim=BLOCK)
        tape.backward(grads={spread: wp.array([1.0], dtype=float),
                             out: wp.array(np.tile([[0.5, -1.0, 0.25]], (128, 1)).astype(np.float32), dtype=wp.vec3)})
        res = {"centered": out.numpy(), "spread": spread.numpy(), "dp": p.grad.numpy()}

        w = wp.array(rng.uniform(-1, 1, (2, 32)).astype(np.float32), requires_grad=True)
        x = wp.array(rng.uniform(-1, 1, (4, 32)).astype(np.float32), requires_grad=True)
        y = wp.zeros((4, 32), dtype=float, requires_grad=True)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch_tiled(grid_weights, dim=(2, 2), inputs=[w, x, y, loss], block_dim=BLOCK)
        tape.backward(loss)
        res.update({"y": y.numpy(), "loss": loss.numpy(), "dw": w.grad.numpy(), "dx": x.grad.numpy()})
    finally:
        wp.config.enable_cpu_blocks = saved
    return res


TOLERANCE = {"centered": (1e-5, 1e-5), "spread": (1e-5, 1e-5), "dp": (1e-4, 1e-5), "y": (1e-5, 1e-6),
             "loss": (1e-5, 1e-5), "dw": (1e-5, 1e-5), "dx": (1e-5, 1e-5)}
