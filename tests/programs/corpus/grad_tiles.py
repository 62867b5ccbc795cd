"""Gradients through tile kernels under a Tape: a small two-layer MLP forward in tiles
(tile_load, tile_matmul, tile_map with a builtin and a user function, tile_transpose,
elementwise tile arithmetic, tile_store) followed by a tile_sum loss accumulated with
tile_atomic_add; weight and input gradients come back through wp.launch_tiled."""

import numpy as np
import warp as wp

TILE_M = 8
TILE_K = 4
TILE_N = 6


@wp.func
def softplus(x: float):
    return wp.log(1.0 + wp.exp(x))


@wp.kernel
def mlp(x: wp.array2d(dtype=float), w1: wp.array2d(dtype=float), w2: wp.array2d(dtype=float),
        hidden: wp.array2d(dtype=float), loss: wp.array(dtype=float)):
    tx = wp.tile_load(x, shape=(TILE_M, TILE_K))
    t1 = wp.tile_load(w1, shape=(TILE_K, TILE_N))
    h = wp.tile_map(softplus, wp.tile_matmul(tx, t1))
    wp.tile_store(hidden, h)
    t2 = wp.tile_load(w2, shape=(TILE_M, TILE_N))
    y = wp.tile_map(wp.tanh, wp.tile_matmul(wp.tile_transpose(h), t2))
    z = y * y + wp.tile_map(wp.sin, y) * 0.5
    wp.tile_atomic_add(loss, wp.tile_sum(z))


def run():
    rng = np.random.default_rng(67)
    x = wp.array(rng.normal(size=(TILE_M, TILE_K)).astype(np.float32) * 0.5, requires_grad=True)
    w1 = wp.array(rng.normal(size=(TILE_K, TILE_N)).astype(np.float32) * 0.5, requires_grad=True)
    w2 = wp.array(rng.normal(size=(TILE_M, TILE_N)).astype(np.float32) * 0.5, requires_grad=True)
    hidden = wp.zeros((TILE_M, TILE_N), dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(mlp, dim=[1], inputs=[x, w1, w2], outputs=[hidden, loss], block_dim=32)
    tape.backward(loss)
    return {"loss": loss.numpy().copy(), "hidden": hidden.numpy().copy(), "x_grad": x.grad.numpy().copy(),
            "w1_grad": w1.grad.numpy().copy(), "w2_grad": w2.grad.numpy().copy()}


TOLERANCE = {"loss": (1e-5, 1e-5), "hidden": (1e-5, 1e-6), "x_grad": (1e-4, 1e-5), "w1_grad": (1e-4, 1e-5),
             "w2_grad": (1e-4, 1e-5)}
