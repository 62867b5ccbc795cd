"""weft.checkpoint: launches re-run during backward give the same gradients, bit for bit,
as recording them directly; inputs may come through a closure or be updated in place."""

import numpy as np
import pytest

import weft as wp

N = 16
DT = 0.01


@wp.kernel
def step(x: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d), k: wp.float64,
         x_new: wp.array(dtype=wp.vec3d), v_new: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    a = -k * x[i] * wp.length(x[i]) + wp.vec3d(0.0, -9.8, 0.0)
    v_new[i] = v[i] + a * DT
    x_new[i] = x[i] + v_new[i] * DT


@wp.kernel
def step_in_place(x: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v[i] = v[i] - x[i] * wp.length(x[i]) * DT
    x[i] = x[i] + v[i] * DT


@wp.kernel
def energy(x: wp.array(dtype=wp.vec3d), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.dot(x[i], x[i]) + wp.sin(x[i][1]))


def _state(seed=0):
    rng = np.random.default_rng(seed)
    x = wp.array(rng.normal(size=(N, 3)), dtype=wp.vec3d, requires_grad=True)
    v = wp.array(rng.normal(size=(N, 3)), dtype=wp.vec3d, requires_grad=True)
    return x, v


def _run(steps, use_checkpoint, per_checkpoint=5):
    """Ping-pong between two states; groups of `per_checkpoint` steps checkpointed."""
    x0, v0 = _state()
    xs = [x0, wp.zeros(N, dtype=wp.vec3d, requires_grad=True)]
    vs = [v0, wp.zeros(N, dtype=wp.vec3d, requires_grad=True)]
    k = 0.7
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)

    def group(first):
        for s in range(first, first + per_checkpoint):
            a, b = s % 2, (s + 1) % 2
            wp.launch(step, dim=N, inputs=[xs[a], vs[a], k], outputs=[xs[b], vs[b]])

    with wp.Tape() as tape:
        for first in range(0, steps, per_checkpoint):
            if use_checkpoint:
                wp.checkpoint(group, first)  # the arrays come through the closure
            else:
                group(first)
        wp.launch(energy, dim=N, inputs=[xs[steps % 2]], outputs=[loss])
    tape.backward(loss)
    return tape, x0, v0, [a.numpy().copy() for a in xs + vs]


def test_checkpointed_gradients_equal_direct_recording_bit_for_bit():
    tape_a, x_a, v_a, state_a = _run(20, use_checkpoint=False)
    tape_b, x_b, v_b, state_b = _run(20, use_checkpoint=True)
    assert len(tape_b.launches) == 4 + 1  # one step per checkpoint, then the loss
    np.testing.assert_array_equal(x_a.grad.numpy(), x_b.grad.numpy())
    np.testing.assert_array_equal(v_a.grad.numpy(), v_b.grad.numpy())
    for a, b in zip(state_a, state_b):  # backward put the state back as forward left it
        np.testing.assert_array_equal(a, b)


def test_checkpoint_gradient_matches_finite_differences():
    _, x0, _, _ = _run(10, use_checkpoint=True)
    analytic = x0.grad.numpy()[3, 1]

    def loss_at(delta):
        x, v = _state()
        x.numpy()[3, 1] += delta
        xs, vs = [x, wp.zeros_like(x)], [v, wp.zeros_like(v)]
        for s in range(10):
            a, b = s % 2, (s + 1) % 2
            wp.launch(step, dim=N, inputs=[xs[a], vs[a], 0.7], outputs=[xs[b], vs[b]])
        loss = wp.zeros(1, dtype=wp.float64)
        wp.launch(energy, dim=N, inputs=[xs[0]], outputs=[loss])
        return loss.numpy()[0]

    eps = 1e-6
    assert analytic == pytest.approx((loss_at(eps) - loss_at(-eps)) / (2 * eps), rel=1e-6)


def test_in_place_updates_inside_checkpoint():
    def simulate(x, v, steps):
        for _ in range(steps):
            wp.launch(step_in_place, dim=N, inputs=[x, v])

    grads = []
    for use_checkpoint in (False, True):
        x, v = _state(1)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        with wp.Tape() as tape:
            for _ in range(3):
                if use_checkpoint:
                    wp.checkpoint(simulate, x, v, 4)
                else:
                    simulate(x, v, 4)
            wp.launch(energy, dim=N, inputs=[x], outputs=[loss])
        after = x.numpy().copy()
        tape.backward(loss)
        np.testing.assert_array_equal(x.numpy(), after)
        grads.append((x.grad.numpy().copy(), v.grad.numpy().copy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


def test_checkpoint_returning_new_arrays():
    def advance(x, v):
        x1 = wp.zeros_like(x, requires_grad=True)
        v1 = wp.zeros_like(v, requires_grad=True)
        wp.launch(step, dim=N, inputs=[x, v, 0.3], outputs=[x1, v1])
        return x1, v1

    grads = []
    for use_checkpoint in (False, True):
        x, v = _state(2)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        with wp.Tape() as tape:
            x1, v1 = wp.checkpoint(advance, x, v) if use_checkpoint else advance(x, v)
            x2, _ = wp.checkpoint(advance, x1, v1) if use_checkpoint else advance(x1, v1)
            wp.launch(energy, dim=N, inputs=[x2], outputs=[loss])
        tape.backward(loss)
        grads.append(x.grad.numpy().copy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_without_a_tape_checkpoint_just_calls():
    x, v = _state()
    x1, v1 = wp.zeros_like(x), wp.zeros_like(v)
    assert wp.checkpoint(lambda: wp.launch(step, dim=N, inputs=[x, v, 0.7], outputs=[x1, v1]) or 42) == 42
    assert x1.numpy().any()
