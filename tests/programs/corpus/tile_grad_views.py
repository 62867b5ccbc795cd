"""Adjoints through tile views and element access: tile_view, tile_assign, t[i] reads and
writes in a loop, tile_transpose, tile_reshape."""

import numpy as np
import warp as wp


@wp.kernel
def views(x: wp.array2d(dtype=float), out: wp.array2d(dtype=float), loss: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(4, 6))
    top = wp.tile_view(t, offset=(0, 0), shape=(2, 6))
    bottom = wp.tile_view(t, offset=(2, 0), shape=(2, 6))
    mixed = top * 2.0 + wp.tile_map(wp.cos, bottom)
    r = wp.tile_reshape(mixed, shape=(3, 4))
    tt = wp.tile_transpose(r)
    wp.tile_store(out, tt)
    wp.tile_atomic_add(loss, wp.tile_sum(tt))


@wp.kernel
def element_writes(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=8)
    u = wp.tile_zeros(shape=8, dtype=float)
    for i in range(8):
        u[i] = t[i] * t[(i + 1) % 8]
    wp.tile_store(y, u)


@wp.kernel
def assign_block(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    big = wp.tile_load(a, shape=(4, 4))
    small = wp.tile_load(b, shape=(2, 2))
    wp.tile_assign(big, wp.tile_map(wp.exp, small), offset=(1, 2))
    wp.tile_store(out, big * big)


def run():
    rng = np.random.default_rng(47)
    res = {}
    x = wp.array(rng.standard_normal((4, 6)).astype(np.float32), requires_grad=True)
    out = wp.zeros((4, 3), dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(views, dim=1, inputs=[x], outputs=[out, loss], block_dim=64)
    tape.backward(grads={loss: wp.array([1.0], dtype=float),
                         out: wp.array(rng.standard_normal((4, 3)).astype(np.float32))})
    res.update({"views_out": out.numpy(), "views_loss": loss.numpy(), "views_dx": x.grad.numpy()})

    xe = wp.array(rng.standard_normal(8).astype(np.float32), requires_grad=True)
    ye = wp.zeros(8, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(element_writes, dim=1, inputs=[xe, ye], block_dim=32)
    tape.backward(grads={ye: wp.array(np.arange(8, dtype=np.float32) - 3.0)})
    res.update({"ew_y": ye.numpy(), "ew_dx": xe.grad.numpy()})

    a = wp.array(rng.standard_normal((4, 4)).astype(np.float32), requires_grad=True)
    b = wp.array(rng.standard_normal((2, 2)).astype(np.float32) * 0.5, requires_grad=True)
    ob = wp.zeros((4, 4), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(assign_block, dim=1, inputs=[a, b, ob], block_dim=32)
    tape.backward(grads={ob: wp.ones((4, 4), dtype=float)})
    res.update({"assign": ob.numpy(), "assign_da": a.grad.numpy(), "assign_db": b.grad.numpy()})

    return res


TOLERANCE = {"views_loss": (1e-5, 1e-5), "views_dx": (1e-5, 1e-5), "ew_dx": (1e-5, 1e-6),
             "assign_db": (1e-5, 1e-6)}
