"""Tape.summary() / print(tape): entries in order, arrays read and written, memory kept."""

import numpy as np

import weft as wp


@wp.kernel
def scale(x: wp.array(dtype=wp.float64), s: wp.float64, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = s * x[i] * x[i]  # (its adjoint reads x: a Tape keeps x if it is overwritten)


class Twice(wp.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        y = wp.empty_like(x)
        wp.launch(scale, dim=x.shape, inputs=[x, 2.0], outputs=[y])
        return y

    @staticmethod
    def backward(ctx, adj):
        return adj.numpy() * 2.0


def test_summary_lists_launches_functions_and_snapshots():
    x = wp.array(np.ones(100), dtype=wp.float64, requires_grad=True)
    y = wp.zeros(100, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(scale, dim=100, inputs=[x, 2.0], outputs=[y])
        z = Twice.apply(y)
        wp.launch(scale, dim=100, inputs=[z, 1.0], outputs=[y])  # y, saved by Twice, overwritten
        wp.launch(scale, dim=100, inputs=[y, 1.0], outputs=[x])  # x, read by launch 0, overwritten
    text = str(tape)
    assert text.splitlines() == [
        "Tape: 4 entries, keeps 1.6 KiB alive (1 snapshot 800 B, 1 saved array 800 B)",
        "  0  launch   scale  dim (100,)  reads x=A1  writes y=A2  (x=A1 from a snapshot)",
        "  1  Function Twice  reads A2  writes A3  keeps A4 (a snapshot)",
        "  2  launch   scale  dim (100,)  reads x=A3  writes y=A2",
        "  3  launch   scale  dim (100,)  reads x=A2  writes y=A1",
        "  arrays: A1 float64[100], A2 float64[100], A3 float64[100], A4 float64[100]",
    ]
    assert tape.summary() == text


def test_summary_of_a_budgeted_tape_shows_segments():
    x = wp.array(np.ones(10), dtype=wp.float64, requires_grad=True)
    tape = wp.Tape(memory_budget=200)
    with tape:
        for _ in range(8):
            wp.launch(scale, dim=10, inputs=[x, 1.5], outputs=[x])
    text = tape.summary()
    assert "memory budget 200 B" in text.splitlines()[0]
    assert "segment  " in text and "launches (scale), re-run in backward" in text
