"""Cooperative CPU blocks (wp.config.enable_cpu_blocks): wp.tile/untile across a block's
threads, tile_scatter_add / tile_scatter_masked, tile_from_thread, wp.block_dim()."""

import numpy as np
import warp as wp


@wp.kernel
def softmax_rows(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    row, lane = wp.tid()
    v = x[row, lane]
    t = wp.tile(v)
    m = wp.tile_max(t)
    e = wp.tile_map(wp.exp, t - wp.tile_broadcast(m, shape=t.shape))
    s = wp.tile_sum(e)
    y[row, lane] = wp.untile(e) / s[0]


@wp.kernel
def histogram(data: wp.array(dtype=float), bins_out: wp.array2d(dtype=float)):
    block, i = wp.tid()
    bins = wp.tile_zeros(shape=4, dtype=float, storage="shared")
    b = int(data[block * wp.block_dim() + i] / 2.0)
    wp.tile_scatter_add(bins, b, 1.0, b >= 0 and b < 4)
    wp.tile_store(bins_out[block], bins)


@wp.kernel
def reverse_block(x: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32)):
    block, i = wp.tid()
    n = wp.block_dim()
    t = wp.tile_zeros(shape=64, dtype=wp.int32, storage="shared")
    wp.tile_scatter_masked(t, n - 1 - i, x[block * n + i], i % 3 != 0)
    wp.tile_store(out, t, offset=block * 64)


@wp.kernel
def leader_value(x: wp.array(dtype=float), out: wp.array(dtype=float), bd: wp.array(dtype=int)):
    i = wp.tid()
    v = x[i] * 10.0
    t = wp.tile_from_thread(shape=8, value=v, thread_idx=3)
    total = wp.tile_sum(t)
    out[i] = total[0] + v
    if i == 0:
        bd[0] = wp.block_dim()


def run():
    saved = wp.config.enable_cpu_blocks
    wp.config.enable_cpu_blocks = True
    try:
        rng = np.random.default_rng(37)
        x = wp.array(rng.standard_normal((3, 32)).astype(np.float32))
        y = wp.zeros((3, 32), dtype=float)
        wp.launch_tiled(softmax_rows, dim=3, inputs=[x, y], block_dim=32)

        data = wp.array(rng.uniform(0.0, 9.0, 128).astype(np.float32))
        bins = wp.zeros((2, 4), dtype=float)
        wp.launch_tiled(histogram, dim=2, inputs=[data, bins], block_dim=64)

        xi = wp.array(np.arange(128, dtype=np.int32) * 3 - 50)
        rev = wp.zeros(128, dtype=wp.int32)
        wp.launch_tiled(reverse_block, dim=2, inputs=[xi, rev], block_dim=64)

        xl = wp.array(np.arange(256, dtype=np.float32) * 0.25)
        ol = wp.zeros(256, dtype=float)
        bd = wp.zeros(1, dtype=int)
        wp.launch(leader_value, dim=256, inputs=[xl, ol, bd], block_dim=128)
    finally:
        wp.config.enable_cpu_blocks = saved
    return {"softmax": y.numpy(), "bins": bins.numpy(), "reverse": rev.numpy(), "leader": ol.numpy(),
            "block_dim": bd.numpy()}


TOLERANCE = {"softmax": (1e-5, 1e-6)}
