"""A loop whose adjoint keeps one value per iteration on the AD stack (only the loop index,
used to index a 2-d array): the single-result `pop` is lowered like any other (it once
stored a one-element list and the adjoint failed to compile)."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def rows_doubled(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float)):
    i = wp.tid()
    for m in range(a.shape[0]):
        b[m, i] = a[m, i] * 2.0


@wp.kernel
def rows_doubled_static(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float)):
    i = wp.tid()
    for m in range(2):
        b[m, i] = a[m, i] * 2.0


@pytest.mark.parametrize("kernel", [rows_doubled, rows_doubled_static])
def test_gradient_through_a_loop_that_pushes_only_its_index(kernel):
    a = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    b = wp.zeros((2, 3), requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, 3, inputs=[a], outputs=[b])
    tape.backward(grads={b: wp.array(np.arange(1, 7, dtype=np.float32).reshape(2, 3))})
    np.testing.assert_array_equal(a.grad.numpy(), 2.0 * np.arange(1, 7).reshape(2, 3))
