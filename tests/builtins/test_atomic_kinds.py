"""atomic_cas / atomic_exch (a spin lock), the bitwise atomics and their augmented
assignments, narrow and half-precision atomics, Warp's element-type rules for explicit
calls, and the gradient of float atomic_min/max: the winning value claims the element's
adjoint (once, even on ties), the element's earlier value gets none when a thread won,
and the comparison uses the array as the launch left it even if it is overwritten later."""

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError


@wp.func
def acquire(lock: wp.array(dtype=wp.int32)):
    while wp.atomic_cas(lock, 0, 0, 1) == 1:
        pass


@wp.kernel
def locked_increment(counter: wp.array(dtype=wp.float64), lock: wp.array(dtype=wp.int32)):
    acquire(lock)
    value = wp.atomic_exch(counter, 0, wp.float64(0.0))  # a read no cache can hold back
    counter[0] = value + wp.float64(1.0)
    wp.atomic_exch(lock, 0, 0)


def test_spin_lock_from_many_threads():
    counter, lock = wp.zeros(1, dtype=wp.float64), wp.zeros(1, dtype=wp.int32)
    wp.launch(locked_increment, 2000, inputs=[counter, lock])
    assert counter.numpy()[0] == 2000 and lock.numpy()[0] == 0


@wp.kernel
def cas_returns_old(a: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    out[0] = wp.atomic_cas(a, 0, 1.0, 5.0)  # matches: swapped
    out[1] = wp.atomic_cas(a, 1, 9.0, 5.0)  # does not match: unchanged


def test_cas_on_floats_compares_values():
    a, out = wp.array(np.array([1.0, 2.0], np.float32)), wp.zeros(2)
    wp.launch(cas_returns_old, 1, inputs=[a, out])
    assert a.numpy().tolist() == [5.0, 2.0] and out.numpy().tolist() == [1.0, 2.0]


@wp.kernel
def bitwise(a: wp.array(dtype=wp.uint32), b: wp.array(dtype=wp.uint32), op: int):
    i = wp.tid()
    w = i // 32
    mask = wp.uint32(1) << wp.uint32(i % 32)
    if op == 0:
        a[w] &= (b[w] & mask) | ~mask
    elif op == 1:
        a[w] |= b[w] & mask
    elif op == 2:
        a[w] ^= b[w] & mask
    elif op == 3:
        wp.atomic_and(a, w, (b[w] & mask) | ~mask)
    elif op == 4:
        wp.atomic_or(a, w, b[w] & mask)
    else:
        wp.atomic_xor(a, w, b[w] & mask)


@pytest.mark.parametrize("op,expected", [(0, np.bitwise_and), (1, np.bitwise_or), (2, np.bitwise_xor),
                                         (3, np.bitwise_and), (4, np.bitwise_or), (5, np.bitwise_xor)])
def test_bitwise_atomics_one_bit_per_thread(op, expected):
    rng = np.random.default_rng(op)
    x, y = (rng.integers(0, 2**32 - 1, 64, dtype=np.uint32) for _ in range(2))
    a = wp.array(x, dtype=wp.uint32)
    wp.launch(bitwise, 64 * 32, inputs=[a, wp.array(y, dtype=wp.uint32), op])
    np.testing.assert_array_equal(a.numpy(), expected(x, y))


@wp.kernel
def narrow(a: wp.array(dtype=wp.int8), s: wp.array(dtype=wp.uint16), h: wp.array(dtype=wp.vec3h)):
    a[0] += wp.int8(1)
    s[0] -= wp.uint16(1)
    wp.atomic_add(h, 0, wp.vec3h(wp.float16(1.0)))


def test_narrow_and_half_atomics():
    a, s, h = wp.zeros(1, dtype=wp.int8), wp.full(1, 1000, dtype=wp.uint16), wp.zeros(1, dtype=wp.vec3h)
    wp.launch(narrow, 100, inputs=[a, s, h])
    assert a.numpy()[0] == 100 and s.numpy()[0] == 900 and h.numpy()[0].tolist() == [100, 100, 100]


@wp.kernel
def add_int8(a: wp.array(dtype=wp.int8)):
    wp.atomic_add(a, 0, wp.int8(1))


@wp.kernel
def and_float(a: wp.array(dtype=float)):
    wp.atomic_and(a, 0, 1.0)


@wp.kernel
def min_half(a: wp.array(dtype=wp.float16)):
    wp.atomic_min(a, 0, wp.float16(1.0))


@pytest.mark.parametrize("kernel,dtype", [(add_int8, wp.int8), (and_float, wp.float32),
                                          (min_half, wp.float16)])
def test_explicit_atomics_follow_warps_element_types(kernel, dtype):
    with pytest.raises(CompileError, match="operations only work on arrays with"):
        wp.launch(kernel, 1, inputs=[wp.zeros(1, dtype=dtype)])


@wp.kernel
def seed_min(y: wp.array(dtype=float), m: wp.array(dtype=float)):
    m[0] = 2.0 * y[0]


@wp.kernel
def take_min(x: wp.array(dtype=float), m: wp.array(dtype=float)):
    wp.atomic_min(m, 0, x[wp.tid()])


@wp.kernel
def take_max_vec(x: wp.array(dtype=wp.vec2), m: wp.array(dtype=wp.vec2)):
    wp.atomic_max(m, 0, x[wp.tid()])


@wp.kernel
def scale_into(m: wp.array(dtype=float), out: wp.array(dtype=float)):
    out[0] = 3.0 * m[0]


@wp.kernel
def overwrite(m: wp.array(dtype=float)):
    m[0] = 100.0


def _min_gradients(y0, xs, later_overwrite=False):
    y = wp.array([y0], dtype=float, requires_grad=True)
    x = wp.array(xs, dtype=float, requires_grad=True)
    m, out = wp.zeros(1, requires_grad=True), wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(seed_min, 1, inputs=[y, m])
        wp.launch(take_min, len(xs), inputs=[x, m])
        wp.launch(scale_into, 1, inputs=[m, out])
        if later_overwrite:
            wp.launch(overwrite, 1, inputs=[m])
    tape.backward(loss=out)
    return y.grad.numpy()[0], x.grad.numpy()


def test_atomic_min_gradient_goes_to_the_winner_only():
    y_grad, x_grad = _min_gradients(5.0, [4.0, 1.0, 3.0])  # x[1] wins over 2 * 5
    assert y_grad == 0.0 and x_grad.tolist() == [0.0, 3.0, 0.0]
    y_grad, x_grad = _min_gradients(0.25, [4.0, 1.0, 3.0])  # the earlier value wins
    assert y_grad == 6.0 and x_grad.tolist() == [0.0, 0.0, 0.0]


def test_atomic_min_gradient_on_ties_is_claimed_once():
    _, x_grad = _min_gradients(5.0, [1.0, 1.0, 1.0, 2.0])
    assert x_grad.sum() == 3.0 and sorted(x_grad.tolist()) == [0.0, 0.0, 0.0, 3.0]


def test_atomic_min_gradient_survives_a_later_overwrite():
    _, x_grad = _min_gradients(5.0, [4.0, 1.0, 3.0], later_overwrite=True)
    assert x_grad.tolist() == [0.0, 3.0, 0.0]


def test_atomic_max_gradient_per_component():
    xs = np.array([[1.0, 9.0], [7.0, 2.0], [3.0, 4.0]], np.float32)
    x = wp.array(xs, dtype=wp.vec2, requires_grad=True)
    m = wp.full(1, -1e9, dtype=wp.vec2, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(take_max_vec, 3, inputs=[x, m])
    tape.backward(grads={m: wp.array([[1.0, 1.0]], dtype=wp.vec2)})
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1], [1, 0], [0, 0]])
