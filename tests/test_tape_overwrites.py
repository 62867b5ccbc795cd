"""`weft.config.verify_autograd_array_access` (Warp's check): a recorded launch or copy
that overwrites an array an earlier recorded launch read is reported (weft's Tape still
keeps the old contents, so the kernels' gradients stay right); arrays carry Warp's read
marks (`_is_read`, `mark_read`, `mark_write`, `mark_init`), which backward and reset clear.
Reports go through weft's logger (stderr, `Warp UserWarning: ...`)."""

import contextlib
import io
import re
import warnings

import numpy as np
import pytest

import weft as wp


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def overwrite(src: wp.array(dtype=float), x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = src[i]


@pytest.fixture
def verify():
    saved = wp.config.verify_autograd_array_access
    wp.config.verify_autograd_array_access = True
    yield
    wp.config.verify_autograd_array_access = saved


def test_an_overwrite_after_a_read_is_reported_and_the_gradient_stays_right(verify):
    a = wp.array(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
    b, c = wp.zeros(3, requires_grad=True), wp.array(np.full(3, -1.0, np.float32), requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, 3, inputs=[a, b])
        assert a._is_read and not b._is_read
        with contextlib.redirect_stderr(io.StringIO()) as err:
            wp.launch(overwrite, 3, inputs=[c, a])
    assert re.search("Warp UserWarning: Array .* passed to argument x in kernel overwrite .* is being written to "
                     "but has already been read from in a previous launch", err.getvalue())
    tape.backward(grads={b: np.ones(3, np.float32)})
    assert a.grad.numpy().tolist() == [2.0, 4.0, 6.0]  # from the a that square read
    assert not a._is_read  # backward consumed the reads


def test_a_copy_over_a_read_array_names_the_callers_line(verify):
    a = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    b = wp.zeros(2, requires_grad=True)
    with wp.Tape(), contextlib.redirect_stderr(io.StringIO()) as err:
        wp.launch(square, 2, inputs=[a, b])
        wp.copy(a, b)
    assert re.search(r"written to by an array copy at .*test_tape_overwrites.py:\d+", err.getvalue())


def test_no_report_without_the_setting_or_after_reset(verify):
    a, b = wp.zeros(2, requires_grad=True), wp.zeros(2, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square, 2, inputs=[a, b])
    tape.reset()
    assert not a._is_read
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with wp.Tape():
            wp.launch(overwrite, 2, inputs=[b, a])


def test_read_marks_reach_the_arrays_a_view_looks_into():
    a = wp.zeros((3, 3), requires_grad=True)
    row = a[1]
    assert not a._is_read
    row.mark_read()
    assert a._is_read and row._is_read
    a.mark_init()
    assert not a._is_read
