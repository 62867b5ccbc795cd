"""`weft.copy`, `clone` and `array.assign` on a Tape (as Warp records them): the adjoint
adds the destination's gradient of the copied range into the source's and consumes it in
the destination (`retain_grad` keeps it), for views and offsets too."""

import contextlib

import numpy as np
import pytest

import weft as wp


@wp.kernel
def total(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
    wp.atomic_add(loss, 0, x[wp.tid()])


@wp.kernel
def double(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 2.0 * x[i]


@wp.kernel
def weighted_total(x: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.float64(i + 1) * x[i])


def _x():
    return wp.array(np.arange(1.0, 5.0, dtype=np.float32), requires_grad=True)


def test_clone_and_assign_carry_the_gradient_into_the_source():
    for copy_of in (wp.clone, lambda x: wp.zeros_like(x).assign(x)):
        x, doubled, loss = _x(), wp.zeros(4, requires_grad=True), wp.zeros(1, requires_grad=True)
        with wp.Tape() as tape:
            copied = copy_of(x)
            wp.launch(double, 4, inputs=[x, doubled])
            wp.launch(total, 4, inputs=[doubled, loss])
            wp.launch(total, 4, inputs=[copied, loss])
        tape.backward(loss=loss)
        np.testing.assert_array_equal(x.grad.numpy(), 3.0)  # 2 through the kernel, 1 through the copy


def test_a_copy_consumes_the_gradient_of_what_it_overwrites():
    x, s = _x(), wp.array(np.full(2, 5.0, np.float32), requires_grad=True)
    y, loss = wp.zeros(4, requires_grad=True), wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(double, 4, inputs=[x, y])
        wp.copy(y, s, dest_offset=1, count=2)  # overwrites y[1:3]
        wp.launch(total, 4, inputs=[y, loss])
    tape.backward(loss=loss)
    assert s.grad.numpy().tolist() == [1.0, 1.0]
    assert x.grad.numpy().tolist() == [2.0, 0.0, 0.0, 2.0]


def test_retain_grad_keeps_the_destination_gradient():
    x, s = _x(), wp.array(np.full(4, 5.0, np.float32), requires_grad=True)
    y = wp.zeros(4, requires_grad=True, retain_grad=True)
    loss = wp.zeros(1, requires_grad=True)
    assert y.retain_grad
    with wp.Tape() as tape:
        wp.launch(double, 4, inputs=[x, y])
        wp.copy(y, s)
        wp.launch(total, 4, inputs=[y, loss])
    tape.backward(loss=loss)
    np.testing.assert_array_equal(y.grad.numpy(), 1.0)  # kept for inspection
    np.testing.assert_array_equal(x.grad.numpy(), 2.0)  # (and so counted again: Warp's documented hazard)


def test_copy_adjoint_into_strided_views():
    base = wp.array(np.ones((3, 4), np.float32), requires_grad=True)
    dst, loss = wp.zeros(2, requires_grad=True), wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(dst, base[:, 2], src_offset=1, count=2)
        wp.launch(total, 2, inputs=[dst, loss])
    tape.backward(loss=loss)
    expected = np.zeros((3, 4), np.float32)
    expected[1:, 2] = 1.0
    np.testing.assert_array_equal(base.grad.numpy(), expected)


@wp.struct
class Particle:
    mass: float
    vel: wp.vec3
    tag: int


@wp.kernel
def particle_total(p: wp.array(dtype=Particle), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, p[i].mass * 2.0 + p[i].vel[1])


def test_clone_of_an_array_of_structs_carries_the_float_fields_gradients():
    ps = wp.array([Particle(mass=1.0, vel=wp.vec3(0.0, 1.0, 0.0), tag=7)] * 2, dtype=Particle, requires_grad=True)
    loss = wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        copied = wp.clone(ps)
        wp.launch(particle_total, 2, inputs=[copied, loss])
    tape.backward(loss=loss)
    grad = ps.grad.numpy()
    assert grad["mass"].tolist() == [2.0, 2.0]
    assert grad["vel"].tolist() == [[0.0, 1.0, 0.0]] * 2
    assert grad["tag"].tolist() == [0, 0]


def test_assigning_data_to_an_input_keeps_its_gradient():
    # (Warp records no copy from data without gradient: the input's .grad is the gradient
    # with respect to the data assigned, as a training loop reads it)
    x, loss = wp.zeros(4, requires_grad=True), wp.zeros(1, requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    with wp.Tape() as tape:
        x.assign(np.arange(4.0, dtype=np.float32))
        wp.launch(double, 4, inputs=[x, y])
        wp.launch(total, 4, inputs=[y, loss])
    tape.backward(loss=loss)
    np.testing.assert_array_equal(x.grad.numpy(), 2.0)


def test_assigning_data_over_a_recorded_write_ends_its_gradient():
    x, y, loss = _x(), wp.zeros(4, requires_grad=True), wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(double, 4, inputs=[x, y])
        y.assign(np.ones(4, np.float32))  # the kernel's result is overwritten: it reaches nothing
        wp.launch(total, 4, inputs=[y, loss])
    tape.backward(loss=loss)
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)  # (Warp, recording nothing, gives 2 here)


@wp.kernel
def total_2d(x: wp.array2d(dtype=float), loss: wp.array(dtype=float)):
    i, j = wp.tid()
    wp.atomic_add(loss, 0, x[i, j])


def test_copies_within_one_array_have_their_true_gradient():
    """A deliberate difference from Warp 1.19, whose tape leaves the incoming gradient as it
    is for a copy whose source and destination overlap (with a warning that it "cannot yet
    be fully tracked": its test_tape_copy_adjoint_out_of_scope expects [1, 1, 1, 1] and
    [1, 1] per row). weft's adjoint reads the source's part of the gradient before the
    copied range is consumed, so these are the derivatives of the function computed."""
    # y[1:4] = y[0:3] (as memmove): y becomes [y0, y0, y1, y2]; d(sum)/dy = [2, 1, 1, 0]
    y, loss = _x(), wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(y, y, dest_offset=1, src_offset=0, count=3)
        wp.launch(total, 4, inputs=[y, loss])
    assert y.numpy().tolist() == [1.0, 1.0, 2.0, 3.0]
    tape.backward(loss=loss)
    assert y.grad.numpy().tolist() == [2.0, 1.0, 1.0, 0.0]
    # one column copied over its neighbour in the same base: column 0 counts twice, 1 not at all
    base = wp.array(np.arange(8.0, dtype=np.float32).reshape(4, 2), requires_grad=True)
    loss = wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(base[:, 1], base[:, 0])
        wp.launch(total_2d, (4, 2), inputs=[base, loss])
    tape.backward(loss=loss)
    np.testing.assert_array_equal(base.grad.numpy(), np.tile([2.0, 0.0], (4, 1)))


def test_an_overlapping_copy_is_differentiated_without_a_warning():
    """Warp 1.19 warns (once) that an overlapping copy "cannot yet be fully tracked" and
    falls back to copying the gradient's bytes (its test_tape_copy_adjoint_fallback_warning
    expects that warning). weft tracks it exactly, so it says nothing; the gradient is
    checked against float64 central differences of the same copy."""
    import warnings

    def run(y0, tape=None):
        y = wp.array(y0, dtype=wp.float64, requires_grad=tape is not None)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=tape is not None)
        with tape if tape is not None else contextlib.nullcontext():
            wp.copy(y, y, dest_offset=1, src_offset=0, count=3)
            wp.launch(weighted_total, 4, inputs=[y, loss])
        return y, loss

    y0 = np.array([1.0, 2.0, 3.0, 4.0])
    tape = wp.Tape()
    y, loss = run(y0, tape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tape.backward(loss=loss)
    h, fd = 1e-6, []
    for k in range(4):
        e = np.eye(4)[k] * h
        fd.append((run(y0 + e)[1].numpy()[0] - run(y0 - e)[1].numpy()[0]) / (2 * h))
    np.testing.assert_allclose(y.grad.numpy(), fd, rtol=1e-8)
    np.testing.assert_allclose(fd, [1.0 + 2.0, 3.0, 4.0, 0.0], rtol=1e-8)  # weights 1, 2, 3, 4


def test_copies_of_data_without_derivatives_pass_no_gradient():
    """The rest of Warp 1.19's test_tape_copy_adjoint_out_of_scope, where weft deliberately
    differs: Warp copies the gradient's bytes. A bool array (or vector of bools) has no
    derivative, so a clone's backward leaves the source's gradient as it was (and does not
    fail); a copy between dtypes of one size reinterprets bytes and has no derivative: an
    integer gradient stops there, and a nonzero float one reaching it is an error."""
    for dtype in (wp.bool, wp.types.vector(length=3, dtype=wp.bool)):
        b = wp.zeros(4, dtype=dtype, requires_grad=True)
        with wp.Tape() as tape:
            cloned = wp.clone(b)
        cloned.grad.fill_(True)
        tape.backward()
        assert not b.grad.numpy().any()
    a = wp.ones(4, dtype=float, requires_grad=True)
    ints = wp.zeros(4, dtype=wp.int32, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(ints, a)
    assert ints.numpy().tolist() == [np.float32(1).view(np.int32)] * 4  # (the bytes)
    ints.grad.assign(np.ones(4, dtype=np.int32))
    tape.backward()
    assert not a.grad.numpy().any()
    floats = wp.zeros(4, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(floats, ints)
    floats.grad.fill_(1.0)
    with pytest.raises(RuntimeError, match="reinterprets bytes and has no derivative"):
        tape.backward()
