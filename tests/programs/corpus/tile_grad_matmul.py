"""Gradients through a tiled linear layer under a Tape: tile_matmul, tile_map, tile_sum, tile_atomic_add."""

import numpy as np
import warp as wp

IN = 8
OUT = 4
BATCH = 16
TB = 8


@wp.func
def softplus(x: float):
    return wp.log(1.0 + wp.exp(x))


@wp.kernel
def layer_loss(W: wp.array2d(dtype=float), X: wp.array2d(dtype=float), bias: wp.array2d(dtype=float),
               Y: wp.array2d(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    w = wp.tile_load(W, shape=(OUT, IN))
    x = wp.tile_load(X, shape=(IN, TB), offset=(0, i * TB))
    b = wp.tile_load(bias, shape=(OUT, 1))
    z = wp.tile_matmul(w, x) + wp.tile_broadcast(b, shape=(OUT, TB))
    h = wp.tile_map(softplus, z)
    wp.tile_store(Y, h, offset=(0, i * TB))
    wp.tile_atomic_add(loss, wp.tile_sum(wp.tile_map(wp.mul, h, h)))


@wp.kernel
def accumulate_form(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float),
                    E: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    a = wp.tile_load(A, shape=(6, 5))
    b = wp.tile_load(B, shape=(5, 3))
    c = wp.tile_load(C, shape=(6, 3))
    wp.tile_matmul(a, b, c)
    e = wp.tile_load(E, shape=(6, 4))
    d = wp.tile_matmul(wp.tile_transpose(e), c)
    wp.tile_store(out, wp.tile_sum(wp.tile_map(wp.sin, d)))


def run():
    rng = np.random.default_rng(8)
    W = wp.array(rng.standard_normal((OUT, IN)).astype(np.float32) * 0.5, requires_grad=True)
    X = wp.array(rng.standard_normal((IN, BATCH)).astype(np.float32), requires_grad=True)
    bias = wp.array(rng.standard_normal((OUT, 1)).astype(np.float32) * 0.1, requires_grad=True)
    Y = wp.zeros((OUT, BATCH), dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(layer_loss, dim=BATCH // TB, inputs=[W, X, bias], outputs=[Y, loss], block_dim=64)
    tape.backward(loss)
    res = {"loss": loss.numpy(), "Y": Y.numpy(), "dW": W.grad.numpy(), "dX": X.grad.numpy(), "db": bias.grad.numpy()}
    tape.zero()
    res["dW_zeroed"] = W.grad.numpy()

    A = wp.array(rng.standard_normal((6, 5)).astype(np.float32), requires_grad=True)
    B = wp.array(rng.standard_normal((5, 3)).astype(np.float32), requires_grad=True)
    C = wp.array(rng.standard_normal((6, 3)).astype(np.float32), requires_grad=True)
    E = wp.array(rng.standard_normal((6, 4)).astype(np.float32), requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape2 = wp.Tape()
    with tape2:
        wp.launch_tiled(accumulate_form, dim=1, inputs=[A, B, C, E], outputs=[out], block_dim=32)
    tape2.backward(loss=out)
    res.update({"out": out.numpy(), "dA": A.grad.numpy(), "dB": B.grad.numpy(), "dC": C.grad.numpy(),
                "dE": E.grad.numpy()})
    return res


TOLERANCE = {"loss": (1e-5, 1e-5), "dW": (1e-4, 1e-5), "dX": (1e-4, 1e-5), "db": (1e-4, 1e-5),
             "dA": (1e-4, 1e-5), "dB": (1e-4, 1e-5), "dC": (1e-4, 1e-5), "dE": (1e-4, 1e-5), "out": (1e-5, 1e-5)}
