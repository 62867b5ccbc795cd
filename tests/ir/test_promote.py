"""Loop-updated array elements become loop-carried values (weft/ir/promote.py)."""

import numpy as np

import weft as wp
from weft.ir.core import walk


@wp.kernel
def running_product(a: wp.array2d(dtype=float), y: wp.array(dtype=float), n: int):
    i = wp.tid()
    for j in range(n):
        y[i] = y[i] * a[i, j] + 1.0


@wp.kernel
def scatter_in_loop(y: wp.array(dtype=float), n: int):
    for j in range(n):
        y[j] = y[j] + 1.0  # the index changes every iteration: stays in memory


@wp.kernel
def store_in_branch(y: wp.array(dtype=float), n: int):
    i = wp.tid()
    for j in range(n):
        if j % 2 == 0:
            y[i] = y[i] * 2.0


def _loop_body_accesses(kernel):
    (loop,) = [op for op in kernel.ir().body.ops if op.name == "for"]
    return [op.name for op in walk(loop.regions[0]) if op.name in ("load", "store") and op.operands[0].hint == "y"]


def test_element_updated_in_a_loop_is_carried_in_a_register():
    assert _loop_body_accesses(running_product) == []
    names = [op.name for op in running_product.ir().body.ops]
    assert names.index("load") < names.index("for") < names.index("store")


def test_promoted_loop_computes_the_same_values():
    rng = np.random.default_rng(1)
    a = rng.random((5, 3)).astype(np.float32)
    y0 = rng.random(5).astype(np.float32)
    y = wp.array(y0)
    wp.launch(running_product, 5, inputs=[wp.array(a), y, 3])
    want = y0.copy()
    for j in range(3):
        want = want * a[:, j] + 1.0
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)


def test_changing_index_or_store_in_a_branch_is_not_promoted():
    assert _loop_body_accesses(scatter_in_loop) == ["load", "store"]
    assert _loop_body_accesses(store_in_branch) == ["load", "store"]
    y = wp.zeros(4)
    wp.launch(scatter_in_loop, 1, inputs=[y, 3])
    np.testing.assert_array_equal(y.numpy(), [1, 1, 1, 0])
