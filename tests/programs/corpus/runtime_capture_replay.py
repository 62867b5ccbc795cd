"""CPU graph capture: ScopedCapture of launches, copies, fill_/zero_/assign and a Tape's backward pass,
replayed with capture_launch after the inputs change; a recorded Launch inside a capture."""

import numpy as np
import warp as wp


@wp.kernel
def inc(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = a[i] + s


@wp.kernel
def sq(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def total(y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, y[i])


@wp.kernel
def sgd(x: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    x[i] = x[i] - lr * g[i]


def run():
    r = {}
    a = wp.zeros(3, dtype=float)
    b = wp.zeros(3, dtype=float)
    with wp.ScopedCapture() as cap:
        wp.launch(inc, dim=3, inputs=[a, 1.0])
        wp.copy(b, a)
        a.zero_()
        wp.launch(inc, dim=3, inputs=[a, 0.5])
    r["a_captured"] = a.numpy().copy()
    wp.capture_launch(cap.graph)
    r["a_1"] = a.numpy().copy()
    r["b_1"] = b.numpy().copy()
    a.fill_(10.0)
    wp.capture_launch(cap.graph)
    r["a_2"] = a.numpy().copy()
    r["b_2"] = b.numpy().copy()
    c = wp.zeros(2, dtype=float)
    with wp.ScopedCapture() as cap2:
        c.assign(np.array([3.0, 4.0], dtype=np.float32))
        wp.launch(inc, dim=2, inputs=[c, 1.0])
    wp.capture_launch(cap2.graph)
    r["c"] = c.numpy().copy()
    x = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with wp.ScopedCapture() as step:
        loss.zero_()
        with tape:
            wp.launch(sq, dim=3, inputs=[x], outputs=[y])
            wp.launch(total, dim=3, inputs=[y], outputs=[loss])
        tape.backward(loss)
        wp.launch(sgd, dim=3, inputs=[x, x.grad, 0.1])
        tape.zero()
    losses = []
    for _ in range(4):
        wp.capture_launch(step.graph)
        losses.append(float(loss.numpy()[0]))
    r["losses"] = np.array(losses)
    r["x_trained"] = x.numpy().copy()
    d = wp.zeros(2, dtype=float)
    cmd = wp.launch(inc, dim=2, inputs=[d, 1.0], record_cmd=True)
    with wp.ScopedCapture() as cap3:
        cmd.launch()
    for _ in range(3):
        wp.capture_launch(cap3.graph)
    r["cmd_replayed"] = d.numpy().copy()
    e = wp.zeros(4, dtype=float)
    wp.capture_begin()
    wp.launch(inc, dim=4, inputs=[e, 2.0])
    graph = wp.capture_end()
    wp.capture_launch(graph)
    r["begin_end"] = e.numpy().copy()
    return r
