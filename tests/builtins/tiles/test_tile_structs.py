"""Tiles of structs: the gradient of tile_atomic_add into an array of
structs, field by field against float64 finite differences; tile_sum of structs whose
fields have no arithmetic (bool, int8) carries an element's value, as Warp does."""

import numpy as np

import weft as wp

F64 = wp.float64


@wp.struct
class Payload:
    x: wp.float64
    y: wp.vec3d
    flag: wp.bool


@wp.kernel
def tile_add_structs(src: wp.array[Payload], dst: wp.array[Payload]):
    wp.tile_atomic_add(dst, wp.tile_load(src, shape=4))


@wp.kernel
def objective(dst: wp.array[Payload], w: wp.array2d[F64], loss: wp.array[F64]):
    i = wp.tid()
    p = dst[i]
    v = p.x * p.x * w[i, 0] + wp.sin(p.y[0]) * w[i, 1] + p.y[1] * p.y[2] * w[i, 2]
    wp.atomic_add(loss, 0, v)


def _payloads(values):
    out = []
    for row in values:
        p = Payload()
        p.x, p.y, p.flag = row[0], wp.vec3d(*row[1:]), True
        out.append(p)
    return wp.array(out, dtype=Payload, requires_grad=True)


def _loss(kernel, values, base, w, tape=None):
    src, dst = _payloads(values), _payloads(base)
    loss = wp.zeros(1, dtype=F64, requires_grad=True)
    def launch():
        wp.launch_tiled(kernel, dim=[1], inputs=[src, dst], block_dim=8)
    if tape is None:
        launch()
        wp.launch(objective, dim=4, inputs=[dst, w, loss])
        return loss.numpy()[0]
    with tape:
        launch()
        wp.launch(objective, dim=4, inputs=[dst, w, loss])
    tape.backward(loss)
    g = src.grad.numpy()
    return np.concatenate([g["x"][:, None], g["y"]], axis=1)


def _check(kernel):
    rng = np.random.default_rng(3)
    values, base = rng.uniform(-1, 1, (4, 4)), rng.uniform(-1, 1, (4, 4))
    w = wp.array(rng.uniform(0.5, 1.5, (4, 3)), dtype=F64)
    grad = _loss(kernel, values, base, w, wp.Tape())
    h = 1e-6
    fd = np.zeros_like(values)
    for idx in np.ndindex(*values.shape):
        plus, minus = values.copy(), values.copy()
        plus[idx] += h
        minus[idx] -= h
        fd[idx] = (_loss(kernel, plus, base, w) - _loss(kernel, minus, base, w)) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def test_tile_atomic_add_into_structs_has_field_gradients():
    _check(tile_add_structs)


@wp.struct
class Mixed:
    flag: wp.bool
    small: wp.int8
    value: wp.float32


@wp.kernel
def sum_mixed(src: wp.array[Mixed], total: wp.array[Mixed]):
    wp.tile_store(total, wp.tile_sum(wp.tile_load(src, shape=5)))


def test_tile_sum_of_structs_carries_the_fields_without_arithmetic():
    items = []
    for i in range(5):
        m = Mixed()
        m.flag, m.small, m.value = True, wp.int8(3), float(i + 1)
        items.append(m)
    total = wp.zeros(1, dtype=Mixed)
    wp.launch_tiled(sum_mixed, dim=[1], inputs=[wp.array(items, dtype=Mixed), total], block_dim=8)
    out = total.numpy()
    assert out["value"][0] == 15.0
    assert bool(out["flag"][0]) is True
    assert out["small"][0] == 3
