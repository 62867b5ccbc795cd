"""A two-layer MLP written with tiles, trained for a few SGD steps through the Tape
(the pattern of Warp's tile MLP example): tile_matmul, tile_map(relu), tile_broadcast,
tile_sum loss, tile funcs taking tiles, an update kernel."""

import numpy as np
import warp as wp

DIM_IN = 4
HIDDEN = 16
DIM_OUT = 2
BATCH = 32
TILE_B = 8


@wp.func
def relu(x: float):
    return wp.max(x, 0.0)


@wp.func
def activate(z: wp.tile[float, HIDDEN, TILE_B], scale: float):
    return wp.tile_map(relu, z) * scale


@wp.kernel
def forward_loss(W1: wp.array2d(dtype=float), b1: wp.array2d(dtype=float), W2: wp.array2d(dtype=float),
                 X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(DIM_IN, TILE_B), offset=(0, i * TILE_B))
    z = wp.tile_matmul(wp.tile_load(W1, shape=(HIDDEN, DIM_IN)), x)
    h = activate(z + wp.tile_broadcast(wp.tile_load(b1, shape=(HIDDEN, 1)), shape=(HIDDEN, TILE_B)), 1.0)
    out = wp.tile_matmul(wp.tile_load(W2, shape=(DIM_OUT, HIDDEN)), h)
    diff = out - wp.tile_load(Y, shape=(DIM_OUT, TILE_B), offset=(0, i * TILE_B))
    wp.tile_atomic_add(loss, wp.tile_sum(wp.tile_map(wp.mul, diff, diff)) * (1.0 / float(BATCH)))


@wp.kernel
def sgd(w: wp.array2d(dtype=float), g: wp.array2d(dtype=float), lr: float):
    i, j = wp.tid()
    w[i, j] = w[i, j] - lr * g[i, j]


def run():
    rng = np.random.default_rng(53)
    X = rng.uniform(-1, 1, (DIM_IN, BATCH)).astype(np.float32)
    Y = np.stack([np.sin(X[0] + X[1]), X[2] * X[3]]).astype(np.float32)
    Xw, Yw = wp.array(X), wp.array(Y)
    W1 = wp.array((rng.standard_normal((HIDDEN, DIM_IN)) * 0.5).astype(np.float32), requires_grad=True)
    b1 = wp.array(np.full((HIDDEN, 1), 0.1, dtype=np.float32), requires_grad=True)
    W2 = wp.array((rng.standard_normal((DIM_OUT, HIDDEN)) * 0.3).astype(np.float32), requires_grad=True)
    losses = []
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    for _step in range(5):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch_tiled(forward_loss, dim=BATCH // TILE_B, inputs=[W1, b1, W2, Xw, Yw], outputs=[loss],
                            block_dim=64)
        tape.backward(loss)
        losses.append(loss.numpy()[0])
        for p in (W1, b1, W2):
            wp.launch(sgd, dim=p.shape, inputs=[p, p.grad, 0.1])
        tape.zero()
    return {"losses": np.array(losses), "W1": W1.numpy(), "b1": b1.numpy(), "W2": W2.numpy()}


TOLERANCE = {"losses": (1e-5, 1e-6), "W1": (1e-5, 1e-6), "b1": (1e-5, 1e-6), "W2": (1e-5, 1e-6)}
