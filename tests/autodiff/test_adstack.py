"""The AD stack: loop-carried values saved per iteration by adjoint kernels."""

import numpy as np
import pytest

import weft as wp


@wp.struct
class Indexed:
    idx: wp.array(dtype=int)
    w: float


@wp.kernel
def carry_struct(s: Indexed, x: wp.array(dtype=float), y: wp.array(dtype=float), n: int):
    i = wp.tid()
    t = s
    for _j in range(n):
        t.w = t.w * x[i] + float(t.idx[i])
    y[i] = t.w


def test_struct_with_an_array_field_is_carried_and_restored():
    s = Indexed()
    s.idx = wp.array(np.array([1, 2, 3], np.int32))
    s.w = 0.5
    x = wp.array(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(carry_struct, 3, inputs=[s, x, y, 3])
    tape.backward(grads={y: np.ones(3, np.float32)})
    # w3 = ((0.5 x + c) x + c) x + c  ->  dw3/dx = 1.5 x^2 + 2 c x + c
    xv, c = np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), 1.5 * xv**2 + 2 * c * xv + c, rtol=1e-6)


@wp.kernel
def long_recurrence(x: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64),
                    n: int):
    i = wp.tid()
    s = x[i]
    for _j in range(n):
        s = s * a[i] + wp.sin(s)
    y[i] = s


def _recurrence(x, a, n):
    s = x.copy()
    for _ in range(n):
        s = s * a + np.sin(s)
    return s


@pytest.mark.parametrize("threads", [1, 2])
def test_many_iterations_and_threads_each_keep_their_own_stack(threads, monkeypatch):
    """2,000 iterations (16 KB per thread: the stack grows several times), on one or two
    threads (each pool worker has its own stack)."""
    monkeypatch.setattr(wp.config, "num_threads", threads)
    monkeypatch.setattr(wp.config, "parallel_threshold", 1)
    rng = np.random.default_rng(3)
    m, n = 64, 2000
    xv, av = rng.uniform(-1, 1, m), rng.uniform(0.2, 0.45, m)
    x = wp.array(xv, dtype=wp.float64, requires_grad=True)
    a = wp.array(av, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(m, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(long_recurrence, m, inputs=[x, a, y, n])
    tape.backward(grads={y: np.ones(m)})
    h = 1e-6
    fd_x = (_recurrence(xv + h, av, n) - _recurrence(xv - h, av, n)) / (2 * h)
    fd_a = (_recurrence(xv, av + h, n) - _recurrence(xv, av - h, n)) / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), fd_x, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(a.grad.numpy(), fd_a, rtol=1e-5, atol=1e-8)


def test_exceeding_the_limit_is_a_clear_error_and_the_next_launch_works(monkeypatch):
    x = wp.array(np.full(4, 0.5), dtype=wp.float64, requires_grad=True)
    a = wp.array(np.full(4, 0.3), dtype=wp.float64, requires_grad=True)
    y = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(long_recurrence, 4, inputs=[x, a, y, 100_000])
    monkeypatch.setattr(wp.config, "adstack_limit", 1 << 16)
    with pytest.raises(MemoryError, match=r"long_recurrence \(adjoint\).*adstack_limit") as info:
        tape.backward(grads={y: np.ones(4)})
    assert "test_adstack.py" in str(info.value)  # points at the loop in the source
    monkeypatch.setattr(wp.config, "adstack_limit", 1 << 30)
    tape.zero()
    tape.backward(grads={y: np.ones(4)})
    assert np.all(np.isfinite(x.grad.numpy()))
