"""Fixed-size local arrays: `zeros(shape, dtype)` inside kernels and funcs (Warp's
fixedarray), and the `fixedarray` annotation."""

from typing import Any

import numpy as np
import pytest

import weft as wp


@wp.func
def fill_rows(arr: wp.array2d[int]):
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j] = i * arr.shape[1] + j


@wp.func
def counted(n: int) -> wp.fixedarray(shape=(3,), dtype=float):
    arr = wp.zeros(shape=(3,), dtype=float)
    for i in range(3):
        arr[i] = float(n + i)
    return arr


@wp.func
def first(arr: wp.array[Any]):
    return arr[0]


@wp.kernel
def use_local_arrays(out: wp.array2d[int], total: wp.array[float]):
    t = wp.tid()
    a = wp.zeros(shape=(2, 3), dtype=int)
    fill_rows(a)  # a func writes the caller's local array
    row = a[1]  # views of it
    part = a[:2, 1:]
    out[t, 0] = a[1, 2] + t
    out[t, 1] = row[0]
    out[t, 2] = part[1, 1]
    out[t, 3] = first(a[0]) + part.shape[1]
    c = counted(t)
    total[t] = c[0] + c[1] + c[2]


def test_local_arrays_in_kernels_and_funcs():
    out, total = wp.zeros((3, 4), dtype=int), wp.zeros(3)
    wp.launch(use_local_arrays, dim=3, inputs=[out, total])
    np.testing.assert_array_equal(out.numpy(), [[5 + t, 3, 5, 2] for t in range(3)])
    np.testing.assert_array_equal(total.numpy(), [3 * t + 3 for t in range(3)])


@wp.kernel
def fresh_each_iteration(n: int, out: wp.array[int]):
    t = wp.tid()
    acc = 0
    for q in range(n):
        c = wp.zeros(shape=(4,), dtype=int)  # zero again on every iteration
        c[q % 4] += q + t
        acc += c[0] + c[1] + c[2] + c[3]
    out[t] = acc


def test_zeroed_each_time_it_runs():
    out = wp.zeros(4, dtype=int)
    wp.launch(fresh_each_iteration, dim=4, inputs=[7, out])
    np.testing.assert_array_equal(out.numpy(), [sum(q + t for q in range(7)) for t in range(4)])


@wp.struct
class Sample:
    offset: int
    dist: float


@wp.kernel
def struct_elements(out: wp.array[float]):
    arr = wp.zeros(shape=(2, 2), dtype=Sample)
    arr[1][0].offset = 3
    arr[1][0].dist = 0.5
    out[0] = float(arr[1, 0].offset) + arr[1, 0].dist + float(arr[0, 0].offset)


def test_struct_elements():
    out = wp.zeros(1)
    wp.launch(struct_elements, dim=1, inputs=[out])
    assert out.numpy()[0] == 3.5


@wp.kernel
def past_the_end(i: int):
    a = wp.zeros(shape=(3,), dtype=float)
    a[i] = 1.0


def test_bounds_are_checked():
    with pytest.raises(IndexError, match="index 3 is out of bounds for array 'a' with shape \\(3,\\)"):
        wp.launch(past_the_end, dim=1, inputs=[3])


def test_errors():
    @wp.kernel(module="unique")
    def runtime_shape():
        tid = wp.tid()
        wp.zeros(shape=(tid,), dtype=int)

    with pytest.raises(wp.WarpCodegenError, match="`shape` argument must be specified as a constant"):
        wp.launch(runtime_shape, dim=1)

    @wp.func
    def escapes() -> wp.array2d[int]:
        return wp.zeros(shape=(2, 3), dtype=int)

    @wp.kernel(module="unique")
    def calls_escapes():
        escapes()

    with pytest.raises(wp.WarpCodegenError, match="`escapes` returns a fixed-size array whereas it has its "
                       "return type annotated as `Array\\[int32\\]`\\.$"):  # (Warp's spelling)
        wp.launch(calls_escapes, dim=1)

    @wp.func
    def wrong_shape() -> wp.fixedarray(shape=(2, 2), dtype=int):
        return wp.zeros(shape=(2, 3), dtype=int)

    @wp.kernel(module="unique")
    def calls_wrong_shape():
        wrong_shape()

    with pytest.raises(wp.WarpCodegenError, match="shape \\(2, 3\\)"):
        wp.launch(calls_wrong_shape, dim=1)

    @wp.kernel(module="unique")
    def uses_ones():
        wp.ones(shape=(2,), dtype=int)

    with pytest.raises(wp.WarpCodegenError, match="only zeros"):
        wp.launch(uses_ones, dim=1)


@wp.kernel
def gather_through_local(x: wp.array[float], idx: wp.array[int], n: int, y: wp.array[float]):
    t = wp.tid()
    c = wp.zeros(shape=(4,), dtype=int)
    for q in range(n):
        c[(q + idx[t]) % 4] = (q * q + 2 * t) % 3
    s = 0.0
    for q in range(n):
        s += x[c[q % 4]] * x[c[q % 4]] * float(q + 1)
    y[t] = s


def test_adjoint_replays_local_array_writes():
    """Integer local arrays steer which elements are read: the adjoint's replay must see
    what the kernel wrote there (checked against float64 finite differences)."""
    x0 = np.array([0.5, -1.25, 2.0])
    idx = wp.array([2, 0, 1], dtype=int)
    x = wp.array(x0, dtype=float, requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(gather_through_local, dim=3, inputs=[x, idx, 6, y])
    tape.backward(grads={y: wp.ones(3)})

    def f(xs):
        total = 0.0
        for t in range(3):
            c = [0] * 4
            for q in range(6):
                c[(q + int(idx.numpy()[t])) % 4] = (q * q + 2 * t) % 3
            total += sum(xs[c[q % 4]] ** 2 * (q + 1) for q in range(6))
        return total

    h = 1e-6
    fd = [(f(x0 + h * e) - f(x0 - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-5)


@wp.kernel
def through_float_local(x: wp.array[float], y: wp.array[float]):
    t = wp.tid()
    c = wp.zeros(shape=(2,), dtype=float)
    c[1] = x[t]
    y[t] = c[1] * c[1]


def test_gradient_through_a_float_local_array_is_an_error():
    x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    y = wp.zeros(2, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(through_float_local, dim=2, inputs=[x, y])
    with pytest.raises(wp.WarpCodegenError, match="kernel-local array"):
        tape.backward(grads={y: wp.ones(2)})


def test_fixedarray_annotation():
    t = wp.fixedarray(dtype=int, shape=(2, 3))
    assert t.dtype is wp.int32 and t.ndim == 2 and t.shape == (2, 3)
    assert wp.fixedarray(dtype=int, shape=(2, 3)) is t
    assert wp.types.type_is_array(wp.fixedarray) and wp.types.is_array(wp.fixedarray(dtype=int))
    assert not wp.types.is_array(wp.fixedarray) and not wp.types.type_is_array(t)
    with pytest.raises(TypeError, match="fixedarray dtype"):
        wp.fixedarray(dtype="float", shape=2)


@wp.kernel
def rewritten_in_loop(x: wp.array[float], n: int, y: wp.array[float]):
    t = wp.tid()
    c = wp.zeros(shape=(4,), dtype=int)
    s = 0.0
    for q in range(n):
        s += x[c[q % 4]] * x[c[q % 4]]
        c[(q + 1) % 4] = (q + t) % 3
    y[t] = s


def test_reads_the_adjoint_cannot_recover_are_an_error():
    """A loop that reads a local array and writes it: the adjoint's recomputed iterations
    would read what later iterations wrote (a silently wrong gradient): refused."""
    x = wp.array([0.5, -1.25, 2.0], dtype=float, requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(rewritten_in_loop, dim=3, inputs=[x, 6, y])
    with pytest.raises(wp.WarpCodegenError, match="kernel-local array 'c' is read here inside a loop"):
        tape.backward(grads={y: wp.ones(3)})
