"""Tuples in kernels and funcs: literals, indexing (constant and by a loop index), unpacking,
tuple returns and parameters, and `tuple[T, ...]` annotations of any length."""

from typing import Any

import numpy as np
import pytest

import weft as wp


@wp.func
def total_ints(values: tuple[int, ...]):
    s = wp.int32(0)
    for i in range(wp.static(len(values))):
        s += values[i]
    return s


@wp.func
def weighted(values: Any):
    s = wp.int32(0)
    for i in range(len(values)):  # a runtime index into a tuple of one element type
        s += values[i] * (i + 1)
    return s


@wp.func
def scale_pair(p: tuple[wp.vec3, float]) -> tuple[float, wp.vec3]:
    return wp.length(p[0]) * p[1], p[0] * p[1]


def test_variadic_tuple_annotation_any_length():
    @wp.kernel(module="unique")
    def k(x: wp.array(dtype=int), out: wp.array(dtype=int)):
        a = x[0]
        out[0] = total_ints((a,))
        out[1] = total_ints((a, 2))
        out[2] = total_ints((a, 2, 3, 4, 5))

    out = wp.zeros(3, dtype=int)
    wp.launch(k, dim=1, inputs=[wp.array([7], dtype=int), out])
    np.testing.assert_array_equal(out.numpy(), [7, 9, 21])


def test_variadic_annotation_rejects_other_element_types():
    @wp.kernel(module="unique")
    def k(out: wp.array(dtype=int)):
        out[0] = total_ints((1, 2.5))

    with pytest.raises(RuntimeError, match="tuple\\[int32, ...\\]|no overload"):
        wp.launch(k, dim=1, inputs=[wp.zeros(1, dtype=int)])


def test_runtime_index_into_homogeneous_tuple():
    @wp.kernel(module="unique")
    def k(x: wp.array(dtype=int), out: wp.array(dtype=int)):
        i = wp.tid()
        t = (x[0], x[1], x[2])
        out[i] = t[i] * 100 + weighted(t)

    x = wp.array([3, 5, 7], dtype=int)
    out = wp.zeros(3, dtype=int)
    wp.launch(k, dim=3, inputs=[x, out])
    w = 3 * 1 + 5 * 2 + 7 * 3
    np.testing.assert_array_equal(out.numpy(), [300 + w, 500 + w, 700 + w])


def test_runtime_index_into_mixed_tuple_is_an_error():
    @wp.kernel(module="unique")
    def k(n: int, out: wp.array(dtype=float)):
        t = (1, 2.0)
        out[0] = float(t[n])

    with pytest.raises(TypeError, match="different types must be indexed with constants"):
        wp.launch(k, dim=1, inputs=[1, wp.zeros(1, dtype=float)])


def test_tuple_parameter_and_return_unpacked():
    @wp.kernel(module="unique")
    def k(out: wp.array(dtype=float)):
        t = (wp.vec3(3.0, 0.0, 4.0), 2.0)
        n, v = scale_pair(t)
        r = scale_pair((t[0], t[1]))
        out[0] = n
        out[1] = v[2]
        out[2] = r[0] + float(len(r))

    out = wp.zeros(3, dtype=float)
    wp.launch(k, dim=1, inputs=[out])
    np.testing.assert_allclose(out.numpy(), [10.0, 8.0, 12.0])


def test_tuple_rebound_in_branches_and_loops_with_gradients():
    @wp.kernel(module="unique")
    def k(x: wp.array(dtype=float), n: int, y: wp.array(dtype=float)):
        i = wp.tid()
        t = (x[i], 2.0 * x[i])
        if n > 0:
            t = (t[1], t[0])  # swapped: a tuple value merged after the branch
        s = wp.float32(0.0)
        for _j in range(3):
            t = (t[0] + 1.0, t[1])  # carried by the loop
            s += t[0]
        y[i] = s * t[1]

    x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    y = wp.zeros(2, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(k, dim=2, inputs=[x, 1, y])
    xs = np.array([1.0, 2.0])
    # t = (2x, x) after the if; s = (2x+1) + (2x+2) + (2x+3) = 6x + 6; y = (6x + 6) x
    np.testing.assert_allclose(y.numpy(), (6 * xs + 6) * xs)
    tape.backward(grads={y: wp.ones(2, dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), 12 * xs + 6)


def test_tuple_of_constants_stays_a_shape():
    @wp.kernel(module="unique")
    def k(out: wp.array(dtype=float)):
        shape = (2, 3)
        m = wp.zeros(shape=shape, dtype=float)
        m[1, 2] = 5.0
        out[0] = m[1, 2] + float(len(shape))

    out = wp.zeros(1, dtype=float)
    wp.launch(k, dim=1, inputs=[out])
    assert out.numpy()[0] == 7.0
