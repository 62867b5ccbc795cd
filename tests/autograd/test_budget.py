"""Tape(memory_budget=...): segments re-run during backward give gradients identical, bit
for bit, to an unbounded Tape, within the budget, and leave the arrays as forward did."""

import numpy as np
import pytest

import weft as wp

N = 64
DT = 0.01


@wp.kernel
def step(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), x_new: wp.array(dtype=wp.vec3),
         v_new: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a = -x[i] * wp.length(x[i]) + wp.vec3(0.0, -9.8, 0.0)
    v_new[i] = v[i] + a * DT
    x_new[i] = x[i] + v_new[i] * DT


@wp.kernel
def damp_in_place(v: wp.array(dtype=wp.vec3), c: float):
    i = wp.tid()
    v[i] = v[i] * (1.0 - c * wp.length(v[i]) * DT)


@wp.kernel
def energy(x: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.dot(x[i], x[i]))


class Double(wp.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = wp.empty_like(x)
        y.assign(x.numpy() * 2.0)
        return y

    @staticmethod
    def backward(ctx, adj):
        return adj.numpy() * 2.0


def simulate(steps, budget=None, extras=False):
    rng = np.random.default_rng(0)
    x0 = wp.array(rng.normal(size=(N, 3)), dtype=wp.vec3, requires_grad=True)
    v0 = wp.array(rng.normal(size=(N, 3)), dtype=wp.vec3, requires_grad=True)
    xs = [x0, wp.zeros(N, dtype=wp.vec3, requires_grad=True)]
    vs = [v0, wp.zeros(N, dtype=wp.vec3, requires_grad=True)]
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape(memory_budget=budget)
    with tape:
        for s in range(steps):
            a, b = s % 2, (s + 1) % 2
            wp.launch(step, dim=N, inputs=[xs[a], vs[a]], outputs=[xs[b], vs[b]])
            wp.launch(damp_in_place, dim=N, inputs=[vs[b], 0.1])
            if extras and s == steps // 2:  # steps that are not re-run, mid-recording
                wp.copy(xs[b], Double.apply(xs[b]))
        final = xs[steps % 2]
        wp.launch(energy, dim=N, inputs=[final], outputs=[loss])
    held = tape._budget.held_bytes() if budget else None
    state = [a.numpy().copy() for a in xs + vs]
    tape.backward(loss)
    return x0.grad.numpy().copy(), v0.grad.numpy().copy(), state, [a.numpy().copy() for a in xs + vs], held


@pytest.mark.parametrize("extras", [False, True])
def test_budgeted_gradients_equal_unbounded_bit_for_bit(extras):
    steps = 200
    per_step = 2 * N * 12  # x and v overwritten each step
    gx, gv, _, _, _ = simulate(steps, extras=extras)
    budget = steps * per_step // 20
    bx, bv, state, after, held = simulate(steps, budget=budget, extras=extras)
    np.testing.assert_array_equal(gx, bx)
    np.testing.assert_array_equal(gv, bv)
    assert held <= budget
    for s, a in zip(state, after):  # the arrays hold what the forward left
        np.testing.assert_array_equal(s, a)
    assert np.isfinite(gx).all() and np.abs(gx).max() > 0


def test_budgeted_tape_records_fewer_entries_than_launches():
    tape = wp.Tape(memory_budget=4 * N * 12)
    x = wp.zeros(N, dtype=wp.vec3, requires_grad=True)
    v = wp.ones(N, dtype=wp.vec3, requires_grad=True)
    with tape:
        for _ in range(64):
            wp.launch(damp_in_place, dim=N, inputs=[v, 0.1])
            wp.launch(step, dim=N, inputs=[x, v], outputs=[x, v])
    segments = [e for e in tape.launches if type(e).__name__ == "Segment"]
    assert 1 < len(segments) < 64
    assert sum(len(s.entries) for s in segments) == 128


def test_budget_gradient_matches_finite_differences():
    gx, _, _, _, _ = simulate(30, budget=30 * 2 * N * 12 // 10)

    def loss_at(delta):
        rng = np.random.default_rng(0)
        x = rng.normal(size=(N, 3)).astype(np.float32)
        x[5, 0] += delta
        xs = [wp.array(x, dtype=wp.vec3), wp.zeros(N, dtype=wp.vec3)]
        vs = [wp.array(rng.normal(size=(N, 3)), dtype=wp.vec3), wp.zeros(N, dtype=wp.vec3)]
        for s in range(30):
            a, b = s % 2, (s + 1) % 2
            wp.launch(step, dim=N, inputs=[xs[a], vs[a]], outputs=[xs[b], vs[b]])
            wp.launch(damp_in_place, dim=N, inputs=[vs[b], 0.1])
        loss = wp.zeros(1, dtype=wp.float64)
        out = np.asarray(xs[0].numpy(), dtype=np.float64)
        loss = (out * out).sum()
        return loss

    eps = 1e-2
    assert gx[5, 0] == pytest.approx((loss_at(eps) - loss_at(-eps)) / (2 * eps), rel=2e-2)


def test_bad_budget_is_an_error():
    for bad in (-5, 0, float("nan"), float("inf"), "1GB", True):
        with pytest.raises(ValueError, match="positive number of bytes"):
            wp.Tape(memory_budget=bad)
    assert wp.Tape(memory_budget=256e6)._budget.limit == 256_000_000
