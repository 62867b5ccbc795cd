"""Adjoints through the tile linear algebra: tile_cholesky, the lower triangular solve, float64
tile_matmul after a tile_load_indexed gather, tile_astype. (Warp 1.19 gives zero adjoints through
tile_upper_solve, tile_cholesky_solve and tile_reduce, which weft differentiates; those are
checked against finite differences in tests/builtins/tiles/test_solve.py and
test_tile_derivatives.py instead.)"""

import numpy as np
import warp as wp

N = 5


@wp.kernel
def factor(A: wp.array2d(dtype=wp.float64), L_out: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(N, N))
    wp.tile_store(L_out, wp.tile_cholesky(a))


@wp.kernel
def lower(L: wp.array2d(dtype=wp.float64), b: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    l = wp.tile_load(L, shape=(N, N))
    rhs = wp.tile_load(b, shape=N)
    wp.tile_store(y, wp.tile_lower_solve(l, rhs))


@wp.kernel
def gather_mm(table: wp.array2d(dtype=wp.float64), ids: wp.array(dtype=int), W: wp.array2d(dtype=wp.float64),
              loss: wp.array(dtype=wp.float64)):
    idx = wp.tile_load(ids, shape=4)
    rows = wp.tile_load_indexed(table, idx, shape=(4, 3), axis=0)
    w = wp.tile_load(W, shape=(3, 2))
    h = wp.tile_matmul(rows, w)
    wp.tile_atomic_add(loss, wp.tile_sum(wp.tile_map(wp.tanh, h)))


@wp.kernel
def cast_chain(x: wp.array(dtype=float), out: wp.array(dtype=wp.float64)):
    t = wp.tile_load(x, shape=6)
    d = wp.tile_astype(t, wp.float64)
    wp.tile_store(out, wp.tile_map(wp.exp, d) * wp.float64(0.5))


def run():
    rng = np.random.default_rng(73)
    m = rng.standard_normal((N, N))
    A = wp.array(m @ m.T + N * np.eye(N), dtype=wp.float64, requires_grad=True)
    L_out = wp.zeros((N, N), dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(factor, dim=1, inputs=[A, L_out], block_dim=32)
    tape.backward(grads={L_out: wp.array(np.tril(rng.standard_normal((N, N))), dtype=wp.float64)})
    res = {"L": L_out.numpy(), "dA": A.grad.numpy()}

    Lm = np.tril(rng.standard_normal((N, N))) + 3.0 * np.eye(N)
    L = wp.array(Lm, dtype=wp.float64, requires_grad=True)
    b2 = wp.array(rng.standard_normal(N), dtype=wp.float64, requires_grad=True)
    y = wp.zeros(N, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(lower, dim=1, inputs=[L, b2, y], block_dim=64)
    tape.backward(grads={y: wp.array(np.linspace(-1, 1, N), dtype=wp.float64)})
    res.update({"y": y.numpy(), "dL": L.grad.numpy(), "db2": b2.grad.numpy()})
    table = wp.array(rng.standard_normal((6, 3)), dtype=wp.float64, requires_grad=True)
    ids = wp.array([4, 0, 4, 2], dtype=int)
    W = wp.array(rng.standard_normal((3, 2)), dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(gather_mm, dim=1, inputs=[table, ids, W, loss], block_dim=128)
    tape.backward(loss)
    res.update({"loss": loss.numpy(), "dtable": table.grad.numpy(), "dW": W.grad.numpy()})

    xc = wp.array(rng.uniform(-1, 1, 6).astype(np.float32), requires_grad=True)
    oc = wp.zeros(6, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(cast_chain, dim=1, inputs=[xc, oc], block_dim=32)
    tape.backward(grads={oc: wp.array(np.linspace(1, 2, 6), dtype=wp.float64)})
    res.update({"cast": oc.numpy(), "dcast": xc.grad.numpy()})
    return res


TOLERANCE = {"L": (1e-10, 1e-12), "dA": (1e-9, 1e-11), "y": (1e-10, 1e-12),
             "z": (1e-10, 1e-12), "dL": (1e-9, 1e-11), "db2": (1e-9, 1e-11), "loss": (1e-10, 1e-12),
             "dtable": (1e-10, 1e-12), "dW": (1e-10, 1e-12), "cast": (1e-6, 1e-7), "dcast": (1e-6, 1e-7)}
