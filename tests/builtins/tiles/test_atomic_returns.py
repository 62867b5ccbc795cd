"""The tile that tile_atomic_add returns (the destination's elements before the add) can be
stored on a Tape: it has no derivative (its values depend on the order the blocks ran in),
so the adjoint runs as long as no gradient reaches it, as Warp's does."""

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import NotDifferentiableError


@wp.kernel
def add_and_log(x: wp.array[float], acc: wp.array[float], old: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(x, shape=4, offset=i * 4)
    before = wp.tile_atomic_add(acc, t * 2.0)
    wp.tile_store(old, before, offset=i * 4)


def test_old_values_stored_where_no_gradient_comes_from():
    x = wp.array(np.arange(8, dtype=np.float32), requires_grad=True)
    acc = wp.zeros(4, dtype=float, requires_grad=True)
    old = wp.zeros(8, dtype=float)
    with wp.Tape() as tape:
        wp.launch_tiled(add_and_log, dim=2, inputs=[x, acc, old], block_dim=8)
    tape.backward(grads={acc: wp.array([1.0, 2.0, 3.0, 4.0], dtype=float)})
    np.testing.assert_array_equal(acc.numpy(), [8, 12, 16, 20])
    np.testing.assert_array_equal(x.grad.numpy(), [2, 4, 6, 8, 2, 4, 6, 8])
    logged = old.numpy().reshape(2, 4)  # one block saw zeros, the other the first block's sums
    assert sorted(map(tuple, logged)) == [(0, 0, 0, 0), (0, 2, 4, 6)] or \
        sorted(map(tuple, logged)) == [(0, 0, 0, 0), (8, 10, 12, 14)]


def test_a_gradient_reaching_the_old_values_is_refused():
    x = wp.array(np.arange(8, dtype=np.float32), requires_grad=True)
    acc = wp.zeros(4, dtype=float, requires_grad=True)
    old = wp.zeros(8, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch_tiled(add_and_log, dim=2, inputs=[x, acc, old], block_dim=8)
    with pytest.raises(NotDifferentiableError, match=r"a gradient reaches the value returned by atomic_add"):
        tape.backward(grads={old: wp.ones(8, dtype=float)})
