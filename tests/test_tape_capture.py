"""A Tape's forward and backward recorded in a CPU graph capture and replayed: the adjoints
of copies and the snapshots of overwritten arrays are made when the graph runs, not when it
is recorded (the values are not there yet then)."""

import numpy as np

import weft as wp

F64 = wp.float64


@wp.kernel
def _square(x: wp.array(dtype=F64), a: wp.array(dtype=F64)):
    i = wp.tid()
    a[i] = x[i] * x[i]


@wp.kernel
def _energy(b: wp.array(dtype=F64), loss: wp.array(dtype=F64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, b[i] * b[i])


def test_a_copys_adjoint_runs_in_the_replay():
    x = wp.array([1.0, 2.0], dtype=F64, requires_grad=True)
    a, b = wp.zeros(2, dtype=F64, requires_grad=True), wp.zeros(2, dtype=F64, requires_grad=True)
    loss = wp.zeros(1, dtype=F64, requires_grad=True)
    tape = wp.Tape()
    with wp.ScopedCapture() as capture:
        with tape:
            wp.launch(_square, 2, inputs=[x, a])
            wp.copy(b, a)
            wp.launch(_energy, 2, inputs=[b, loss])
        tape.backward(loss)
    for values in ([1.0, 2.0], [3.0, -1.0]):
        x.assign(values)
        tape.zero()
        loss.zero_()
        wp.capture_launch(capture.graph)
        np.testing.assert_allclose(x.grad.numpy(), 4.0 * np.array(values) ** 3)  # d sum(x^4)/dx


@wp.kernel
def _sine_in_place(a: wp.array(dtype=F64)):
    i = wp.tid()
    a[i] = wp.sin(a[i])


def _loss_after_sines(x_values, capture_it):
    """loss = sum((x^2)^2) read from a, then a = sin(a) in place and loss += sum(a^2): the
    first read's values are snapshotted when the sine overwrites them."""
    x = wp.array(x_values, dtype=F64, requires_grad=True)
    a = wp.zeros(len(x_values), dtype=F64, requires_grad=True)
    loss = wp.zeros(1, dtype=F64, requires_grad=True)
    tape = wp.Tape()

    def step():
        with tape:
            wp.launch(_square, len(x_values), inputs=[x, a])
            wp.launch(_energy, len(x_values), inputs=[a, loss])
            wp.launch(_sine_in_place, len(x_values), inputs=[a])
            wp.launch(_energy, len(x_values), inputs=[a, loss])
        tape.backward(loss)

    if not capture_it:
        step()
        return x.grad.numpy()
    with wp.ScopedCapture() as capture:
        step()
    x.assign(np.array(x_values) * 0.5)  # (what the capture saw is not what the replay reads)
    x.assign(x_values)
    tape.zero()
    loss.zero_()
    wp.capture_launch(capture.graph)
    return x.grad.numpy()


def test_snapshots_of_overwritten_arrays_are_taken_in_the_replay():
    values = [0.3, -0.7, 1.1]
    eager = _loss_after_sines(values, capture_it=False)
    xs = np.array(values)
    expected = 4 * xs**3 + 2 * np.sin(xs**2) * np.cos(xs**2) * 2 * xs
    np.testing.assert_allclose(eager, expected, rtol=1e-12)
    np.testing.assert_allclose(_loss_after_sines(values, capture_it=True), expected, rtol=1e-12)
