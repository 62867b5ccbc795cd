"""tile_matmul's documented options: operands and accumulator of different float types
(float16 x float16 -> float32, float32 x float64 -> float64), beta=0 with an uninitialized
accumulator (tile_empty), precision="tf32" on the CPU (computed in float32), and beta=0
cutting the gradient to the accumulator's previous contents."""

import numpy as np
import warp as wp


@wp.kernel
def mixed(A16: wp.array2d(dtype=wp.float16), B16: wp.array2d(dtype=wp.float16), A32: wp.array2d(dtype=float),
          B64: wp.array2d(dtype=wp.float64), C32: wp.array2d(dtype=float), C64: wp.array2d(dtype=wp.float64),
          T: wp.array2d(dtype=float)):
    a = wp.tile_load(A16, shape=(8, 16))
    b = wp.tile_load(B16, shape=(16, 4))
    acc = wp.tile_empty(shape=(8, 4), dtype=float)
    wp.tile_matmul(a, b, acc, beta=0.0)
    wp.tile_store(C32, acc)
    a2 = wp.tile_load(A32, shape=(8, 16))
    b2 = wp.tile_load(B64, shape=(16, 4))
    acc2 = wp.tile_ones(shape=(8, 4), dtype=wp.float64)
    wp.tile_matmul(a2, b2, acc2, alpha=wp.float64(0.5), beta=wp.float64(-2.0))
    wp.tile_store(C64, acc2)
    a3 = wp.tile_load(A32, shape=(8, 16))
    b3 = wp.tile_transpose(wp.tile_load(A32, shape=(8, 16)))
    wp.tile_store(T, wp.tile_matmul(a3, b3, precision="tf32"))


@wp.kernel
def beta_zero_grad(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float),
                   out: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(4, 6))
    b = wp.tile_load(B, shape=(6, 3))
    c = wp.tile_load(C, shape=(4, 3))
    d = c * 1.0
    wp.tile_matmul(a, b, c, alpha=2.0, beta=0.0)
    wp.tile_matmul(a, b, d, alpha=1.0, beta=3.0)
    wp.tile_store(out, c + d)


def run():
    rng = np.random.default_rng(101)
    A16 = wp.array(rng.uniform(-1, 1, (8, 16)).astype(np.float16), dtype=wp.float16)
    B16 = wp.array(rng.uniform(-1, 1, (16, 4)).astype(np.float16), dtype=wp.float16)
    A32 = wp.array(rng.uniform(-1, 1, (8, 16)).astype(np.float32))
    B64 = wp.array(rng.uniform(-1, 1, (16, 4)), dtype=wp.float64)
    C32 = wp.zeros((8, 4), dtype=float)
    C64 = wp.zeros((8, 4), dtype=wp.float64)
    T = wp.zeros((8, 8), dtype=float)
    wp.launch_tiled(mixed, dim=1, inputs=[A16, B16, A32, B64, C32, C64, T], block_dim=64)

    A = wp.array(rng.standard_normal((4, 6)).astype(np.float32), requires_grad=True)
    B = wp.array(rng.standard_normal((6, 3)).astype(np.float32), requires_grad=True)
    C = wp.array(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    out = wp.zeros((4, 3), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(beta_zero_grad, dim=1, inputs=[A, B, C, out], block_dim=32)
    tape.backward(grads={out: wp.array(rng.standard_normal((4, 3)).astype(np.float32))})
    return {"f16_f32": C32.numpy(), "f32_f64": C64.numpy(), "tf32": T.numpy(), "out": out.numpy(),
            "dA": A.grad.numpy(), "dB": B.grad.numpy(), "dC": C.grad.numpy()}


TOLERANCE = {"f16_f32": (1e-5, 1e-5), "f32_f64": (1e-7, 1e-9), "tf32": (1e-5, 1e-5), "out": (1e-5, 1e-5),
             "dA": (1e-5, 1e-5), "dB": (1e-5, 1e-5), "dC": (1e-5, 1e-5)}
