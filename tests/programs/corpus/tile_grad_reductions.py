"""Adjoints of tile_sum (whole and per axis), tile_map with user funcs of two tiles, broadcast,
transpose, wp.tile/untile and float64 loads, each under a Tape."""

import numpy as np
import warp as wp


@wp.func
def weighted_sq(x: float, w: float):
    return w * x * x + wp.sin(x * w)


@wp.func
def huber(x: wp.float64):
    ax = wp.abs(x)
    if ax < wp.float64(1.0):
        return wp.float64(0.5) * x * x
    return ax - wp.float64(0.5)


@wp.kernel
def row_norms(x: wp.array2d(dtype=float), w: wp.array2d(dtype=float), out: wp.array2d(dtype=float),
              total: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=(4, 8), offset=(4 * i, 0))
    wt = wp.tile_load(w, shape=(1, 8))
    y = wp.tile_map(weighted_sq, t, wp.tile_broadcast(wt, shape=(4, 8)))
    rows = wp.tile_sum(y, axis=1)
    wp.tile_store(out, wp.tile_reshape(rows, shape=(4, 1)), offset=(4 * i, 0))
    cols = wp.tile_sum(wp.tile_transpose(y), axis=1)
    wp.tile_atomic_add(total, wp.tile_sum(cols * 0.5) + wp.tile_sum(rows))


@wp.kernel
def robust_loss(r: wp.array(dtype=wp.float64), scale: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = wp.tile_load(r, shape=16, offset=16 * i)
    s = wp.tile_load(scale, shape=1)
    scaled = t * s[0]
    wp.tile_atomic_add(loss, wp.tile_sum(wp.tile_map(huber, scaled)))


@wp.kernel
def per_thread(x: wp.array(dtype=float), y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i] * x[i] - 0.5 * x[i]
    t = wp.tile(v)
    s = wp.tile_sum(wp.tile_map(wp.exp, t * 0.1))
    y[i] = wp.untile(t * 2.0)
    wp.atomic_add(loss, 0, s[0])


def run():
    rng = np.random.default_rng(19)
    x = wp.array(rng.uniform(-1, 1, (8, 8)).astype(np.float32), requires_grad=True)
    w = wp.array(rng.uniform(0.5, 1.5, (1, 8)).astype(np.float32), requires_grad=True)
    out = wp.zeros((8, 1), dtype=float, requires_grad=True)
    total = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(row_norms, dim=2, inputs=[x, w], outputs=[out, total], block_dim=64)
    tape.backward(grads={out: wp.array(np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)),
                         total: wp.array([0.5], dtype=float)})
    res = {"out": out.numpy(), "total": total.numpy(), "dx": x.grad.numpy(), "dw": w.grad.numpy()}

    r = wp.array(rng.standard_normal(48) * 1.5, dtype=wp.float64, requires_grad=True)
    scale = wp.array([0.8], dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(robust_loss, dim=3, inputs=[r, scale], outputs=[loss], block_dim=32)
    tape.backward(loss)
    res.update({"huber": loss.numpy(), "dr": r.grad.numpy(), "dscale": scale.grad.numpy()})

    xs = wp.array(rng.uniform(-1, 1, 64).astype(np.float32), requires_grad=True)
    ys = wp.zeros(64, dtype=float, requires_grad=True)
    l3 = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(per_thread, dim=64, inputs=[xs], outputs=[ys, l3], block_dim=64)
    tape.backward(grads={l3: wp.array([1.0], dtype=float), ys: wp.ones(64, dtype=float)})
    res.update({"ys": ys.numpy(), "l3": l3.numpy(), "dxs": xs.grad.numpy()})
    return res


TOLERANCE = {"total": (1e-5, 1e-5), "dx": (1e-4, 1e-5), "dw": (1e-4, 1e-5), "huber": (1e-12, 1e-12),
             "dscale": (1e-12, 1e-12), "l3": (1e-5, 1e-5), "dxs": (1e-5, 1e-5)}
