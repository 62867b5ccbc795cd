"""Patterns of Warp's tile examples: stream compaction with scan + tile_from_thread +
tile_store_indexed on cooperative CPU blocks, and an FFT convolution of float64 signals
(tile_fft, tile_map with a complex product, tile_ifft), module options set by the program."""

import numpy as np
import warp as wp

wp.set_module_options({"enable_backward": False})

TILE_SIZE = 32
NUM_BLOCKS = 4
TILE_M = 2
TILE_N = 64


@wp.func
def compute_index(valid: int, scan_inclusive: int, offset: int) -> int:
    if valid == 1:
        return scan_inclusive + offset - 1
    return -1


@wp.kernel
def compact(is_valid: wp.array(dtype=int), data: wp.array(dtype=float), num_output: wp.array(dtype=int),
            output: wp.array(dtype=float)):
    i, j = wp.tid()
    data_tile = wp.tile_load(data, TILE_SIZE, offset=i * TILE_SIZE)
    valid_tile = wp.tile_load(is_valid, TILE_SIZE, offset=i * TILE_SIZE)
    scan = wp.tile_scan_inclusive(valid_tile)
    offset = int(0)  # noqa: UP018 (a Warp kernel variable assigned in a branch is declared typed)
    if j == wp.block_dim() - 1:
        count = wp.tile_extract(scan, wp.block_dim() - 1)
        offset = wp.atomic_add(num_output, 0, count)
    offset_tile = wp.tile_from_thread(shape=TILE_SIZE, value=offset, thread_idx=wp.block_dim() - 1, storage="shared")
    index_tile = wp.tile_map(compute_index, valid_tile, scan, offset_tile)
    wp.tile_store_indexed(output, index_tile, data_tile, axis=0)


@wp.func
def cplx_prod(x: wp.vec2d, y: wp.vec2d) -> wp.vec2d:
    return wp.vec2d(x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0])


@wp.kernel
def conv_tiled(x: wp.array2d(dtype=wp.vec2d), y: wp.array2d(dtype=wp.vec2d), z: wp.array2d(dtype=wp.vec2d)):
    a = wp.tile_load(x, shape=(TILE_M, TILE_N))
    b = wp.tile_load(y, shape=(TILE_M, TILE_N))
    wp.tile_fft(a)
    wp.tile_fft(b)
    c = wp.tile_map(cplx_prod, a, b)
    wp.tile_ifft(c)
    wp.tile_store(z, c)


def run():
    rng = np.random.default_rng(83)
    n = NUM_BLOCKS * TILE_SIZE
    valid = wp.array((rng.uniform(0, 1, n) < 0.4).astype(np.int32), dtype=int)
    data = wp.array(np.arange(n, dtype=np.float32) * 0.5)
    num = wp.zeros(1, dtype=int)
    out = wp.full(n, -1.0, dtype=float)
    saved = wp.config.enable_cpu_blocks
    wp.config.enable_cpu_blocks = True
    try:
        wp.launch_tiled(compact, dim=NUM_BLOCKS, inputs=[valid, data, num, out], block_dim=TILE_SIZE)
    finally:
        wp.config.enable_cpu_blocks = saved
    count = int(num.numpy()[0])
    # blocks reserve their output ranges in an unspecified order: compare the set of values
    kept = np.sort(out.numpy()[:count])

    x = rng.standard_normal((TILE_M, TILE_N, 2))
    h = np.zeros((TILE_M, TILE_N, 2))
    h[:, :5, 0] = 0.2  # a box filter
    z = wp.zeros((TILE_M, TILE_N), dtype=wp.vec2d)
    wp.launch_tiled(conv_tiled, dim=[1, 1], inputs=[wp.array(x, dtype=wp.vec2d), wp.array(h, dtype=wp.vec2d)],
                    outputs=[z], block_dim=64)
    return {"count": np.int64(count), "kept": kept, "tail": out.numpy()[count:], "conv": z.numpy() / TILE_N}


TOLERANCE = {"conv": (1e-12, 1e-12)}
