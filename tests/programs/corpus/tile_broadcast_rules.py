"""tile_broadcast as numpy.broadcast_to (shapes aligned from the trailing dimension): a row
to a matrix, a column, a single element, a 3D broadcast; and the adjoint of a broadcast
(the sum over the broadcast dimensions) under a Tape."""

import numpy as np
import warp as wp


@wp.kernel
def rules(row: wp.array(dtype=float), col: wp.array2d(dtype=float), one: wp.array(dtype=float),
          cube: wp.array3d(dtype=float), out: wp.array3d(dtype=float), out3: wp.array3d(dtype=float)):
    r = wp.tile_load(row, shape=6)
    c = wp.tile_load(col, shape=(4, 1))
    s = wp.tile_load(one, shape=1)
    wp.tile_store(out[0], wp.tile_broadcast(r, shape=(4, 6)))
    wp.tile_store(out[1], wp.tile_broadcast(c, shape=(4, 6)))
    wp.tile_store(out[2], wp.tile_broadcast(s, shape=(4, 6)))
    wp.tile_store(out[3], wp.tile_broadcast(r, shape=(4, 6)) * wp.tile_broadcast(c, shape=(4, 6)))
    k = wp.tile_load(cube, shape=(1, 3, 1))
    wp.tile_store(out3, wp.tile_broadcast(k, shape=(2, 3, 4)))


@wp.kernel
def outer_loss(row: wp.array(dtype=float), col: wp.array2d(dtype=float), loss: wp.array(dtype=float)):
    r = wp.tile_load(row, shape=6)
    c = wp.tile_load(col, shape=(4, 1))
    prod = wp.tile_map(wp.mul, wp.tile_broadcast(r, shape=(4, 6)), wp.tile_broadcast(c, shape=(4, 6)))
    wp.tile_atomic_add(loss, wp.tile_sum(wp.tile_map(wp.sin, prod)))


def run():
    rng = np.random.default_rng(103)
    row = wp.array(rng.uniform(-1, 1, 6).astype(np.float32), requires_grad=True)
    col = wp.array(rng.uniform(-1, 1, (4, 1)).astype(np.float32), requires_grad=True)
    one = wp.array([2.5], dtype=float)
    cube = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32).reshape(1, 3, 1))
    out = wp.zeros((4, 4, 6), dtype=float)
    out3 = wp.zeros((2, 3, 4), dtype=float)
    wp.launch_tiled(rules, dim=1, inputs=[row, col, one, cube, out, out3], block_dim=32)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(outer_loss, dim=1, inputs=[row, col, loss], block_dim=64)
    tape.backward(loss)
    return {"out": out.numpy(), "out3": out3.numpy(), "loss": loss.numpy(), "drow": row.grad.numpy(),
            "dcol": col.grad.numpy()}


TOLERANCE = {"loss": (1e-5, 1e-5), "drow": (1e-5, 1e-5), "dcol": (1e-5, 1e-5)}
