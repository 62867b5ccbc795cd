"""`fill_` and `zero_` inside a recording Tape: the elements they set no longer depend on
what they held, so an accumulator cleared every step passes each step's gradient to that
step only (Warp keeps the gradient flowing through the clear, so every step gets the sum)."""

import numpy as np

import weft as wp


@wp.kernel
def accumulate_square(x: wp.array(dtype=wp.float64), s: int, acc: wp.array(dtype=wp.float64)):
    wp.atomic_add(acc, 0, x[s] * x[s] * x[s])


@wp.kernel
def read_into(acc: wp.array(dtype=wp.float64), s: int, y: wp.array(dtype=wp.float64)):
    y[s] = acc[0] + wp.float64(1.0)


@wp.kernel
def weighted_sum(y: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, y[i] * wp.float64(i + 1))


def _loss(x0, clear, record=False):
    x = wp.array(x0, dtype=wp.float64, requires_grad=True)
    acc = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(len(x0), dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        for s in range(len(x0)):
            clear(acc)
            wp.launch(accumulate_square, dim=1, inputs=[x, s, acc])
            wp.launch(read_into, dim=1, inputs=[acc, s, y])
        wp.launch(weighted_sum, dim=len(x0), inputs=[y, loss])
    if record:
        tape.backward(loss)
        return x.grad.numpy()
    return float(loss.numpy()[0])


def test_an_accumulator_cleared_every_step_gives_each_step_its_own_gradient():
    x0 = np.array([0.7, -1.2, 1.5])
    for clear in (lambda a: a.zero_(), lambda a: a.fill_(0.0)):
        grad = _loss(x0, clear, record=True)
        np.testing.assert_allclose(grad, 3 * x0**2 * np.array([1.0, 2.0, 3.0]), rtol=1e-12)
        eps = 1e-6
        fd = [(_loss(x0 + eps * e, clear) - _loss(x0 - eps * e, clear)) / (2 * eps) for e in np.eye(3)]
        np.testing.assert_allclose(grad, fd, rtol=1e-7)


def test_the_first_fill_keeps_the_gradient_of_the_initial_value_readable():
    # (nothing recorded wrote the array before: the fill sets its initial value, no adjoint)
    x = wp.array([2.0], dtype=wp.float64, requires_grad=True)
    acc = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        acc.zero_()
        wp.launch(accumulate_square, dim=1, inputs=[x, 0, acc])
        wp.launch(read_into, dim=1, inputs=[acc, 0, y])
    tape.backward(grads={y: wp.array([1.0], dtype=wp.float64)})
    assert acc.grad.numpy().tolist() == [1.0] and x.grad.numpy().tolist() == [12.0]
