"""@weft.func_grad and @weft.func_replay replace a func's adjoint and its replay."""

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError


@wp.func
def safe_sqrt(x: float):
    return wp.sqrt(x)


@wp.func_grad(safe_sqrt)
def adj_safe_sqrt(x: float, adj_ret: float):
    if x > 0.0:
        wp.adjoint[x] += adj_ret / (2.0 * wp.sqrt(x))


@wp.kernel
def sqrt_twice(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = safe_sqrt(x[i]) * 2.0


def _grad(kernel, x_values, seed, *extra):
    x = wp.array(np.asarray(x_values, np.float32), requires_grad=True)
    y = wp.zeros(len(x_values), requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(kernel, len(x_values), inputs=[x, *extra], outputs=[y])
    tape.backward(grads={y: np.asarray(seed, np.float32)})
    return x.grad.numpy()


def test_custom_grad_replaces_the_derivative():
    # d/dx 2 sqrt(x) = 1/sqrt(x); the custom rule gives 0 at x = 0 instead of inf
    np.testing.assert_allclose(_grad(sqrt_twice, [0.0, 1.0, 4.0], [1, 1, 1]), [0.0, 1.0, 0.5])


@wp.func
def scaled(v: wp.vec3, s: float):
    return v * s


@wp.func_grad(scaled)
def adj_scaled(v: wp.vec3, s: float, adj_ret: wp.vec3):
    # deliberately not the true derivative, so the test sees which rule ran
    wp.adjoint[v] += adj_ret * 10.0
    wp.adjoint[s] += 1.0


@wp.kernel
def use_scaled(x: wp.array(dtype=wp.vec3), s: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = scaled(x[i], s[i])


def test_custom_grad_with_vector_arguments_reaches_every_argument():
    x = wp.array(np.ones((2, 3), np.float32), dtype=wp.vec3, requires_grad=True)
    s = wp.array(np.ones(2, np.float32), requires_grad=True)
    y = wp.zeros(2, dtype=wp.vec3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(use_scaled, 2, inputs=[x, s], outputs=[y])
    tape.backward(grads={y: np.full((2, 3), 2.0, np.float32)})
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 20.0))
    np.testing.assert_allclose(s.grad.numpy(), [1.0, 1.0])


@wp.func
def reserve(counter: wp.array(dtype=int), slots: wp.array(dtype=int), tid: int):
    s = wp.atomic_add(counter, 0, 1)
    slots[tid] = s
    return s


@wp.func_replay(reserve)
def replay_reserve(counter: wp.array(dtype=int), slots: wp.array(dtype=int), tid: int):
    return slots[tid]


@wp.kernel
def compact(x: wp.array(dtype=float), counter: wp.array(dtype=int), slots: wp.array(dtype=int),
            out: wp.array(dtype=float)):
    i = wp.tid()
    s = reserve(counter, slots, i)
    out[s] = x[i] * x[i]


def test_replay_recovers_the_slot_an_atomic_handed_out():
    n = 64
    x_values = np.linspace(0.5, 2.0, n).astype(np.float32)
    counter, slots = wp.zeros(1, dtype=int), wp.zeros(n, dtype=int)
    seed = np.arange(1, n + 1, dtype=np.float32)
    grad = _grad(compact, x_values, seed, counter, slots)
    order = slots.numpy()
    assert sorted(order) == list(range(n))
    np.testing.assert_allclose(grad, 2 * x_values * seed[order], rtol=1e-6)


@wp.kernel
def compact_without_replay(x: wp.array(dtype=float), counter: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    s = wp.atomic_add(counter, 0, 1)
    out[s] = x[i]


def test_used_atomic_result_without_replay_is_refused():
    with pytest.raises(CompileError, match="atomic_add"):
        compact_without_replay.adjoint_ir()


def test_grad_with_the_wrong_parameter_count_is_a_clear_error():
    @wp.func
    def twice(x: float):
        return 2.0 * x

    @wp.func_grad(twice)
    def adj_twice(x: float):
        wp.adjoint[x] += 2.0

    @wp.kernel
    def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = twice(x[i])

    with pytest.raises(CompileError, match="adjoint of its result"):
        k.adjoint_ir()


def test_func_grad_needs_a_func():
    with pytest.raises(TypeError, match="needs a @weft.func"):
        wp.func_grad(lambda x: x)
