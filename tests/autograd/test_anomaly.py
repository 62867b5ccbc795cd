"""`weft.autograd.detect_anomaly()` and `weft.config.verify_fp`: a launch (forward or
adjoint) that leaves NaN or Inf in an array it writes is reported with the kernel, the
array, the first bad element, the user's line, and the first operation that made the
value (found by a checked variant of the kernel run on copies of the arrays)."""

import numpy as np
import pytest

import weft as wp
from weft.autograd import AnomalyError, detect_anomaly, is_anomaly_enabled

HERE = __file__


def line_of(marker: str) -> int:
    """The line of this file holding `marker` in a comment (the one source of truth for
    the lines the reports must name)."""
    with open(HERE) as f:
        found = [n for n, text in enumerate(f, 1) if text.rstrip().endswith("# " + marker)]
    assert len(found) == 1, marker
    return found[0]


@wp.kernel
def sqrt_of_minus(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    a = x[i] * 2.0
    b = a + 1.0
    y[i] = wp.sqrt(-a) + b  # planted-sqrt


@wp.kernel
def plain_sqrt(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.sqrt(x[i]) * 3.0  # adjoint-sqrt


@wp.kernel
def safe_sqrt_then_log(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    s = wp.where(x[i] > 0.0, wp.sqrt(x[i]), 0.0)  # discarded NaN for x < 0
    y[i] = s + wp.log(x[i] + 1.0)  # planted-log


@wp.kernel
def accumulate(x: wp.array(dtype=float), total: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(total, 0, x[i])
    y[i] = 1.0 / x[i]  # planted-div


@wp.kernel
def overflow(x: wp.array(dtype=float), total: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(total, 0, x[i])  # planted-atomic


@wp.kernel
def normalize_rows(v: wp.array2d(dtype=wp.vec3), out: wp.array2d(dtype=wp.vec3)):
    i, j = wp.tid()
    out[i, j] = wp.normalize(v[i, j]) * 2.0


@wp.kernel
def copy_twice(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * 2.0  # copies-input


@wp.kernel
def loop_sum(x: wp.array(dtype=float), n: int, y: wp.array(dtype=float)):
    i = wp.tid()
    s = 0.0
    for k in range(n):
        s = s + wp.sqrt(x[i] * float(k))  # loop-sqrt
    y[i] = s


@wp.kernel
def log_shifted(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    print(i)
    b[i] = wp.log(a[i] - 1.0)  # aliased-log


@wp.kernel
def narrow(x: wp.array(dtype=wp.float64), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = float(x[i])  # planted-cast


@wp.struct
class Body:
    pos: wp.array(dtype=wp.vec3)
    mass: wp.array(dtype=float)


@wp.func
def weight(m: float):
    return wp.sqrt(m) * 9.8  # func-sqrt


@wp.kernel
def body_energy(body: Body, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = weight(body.mass[i]) * body.pos[i][1]


def f32(values):
    return wp.array(np.asarray(values, dtype=np.float32), dtype=float, requires_grad=True)


def test_forward_nan_names_kernel_array_index_value_and_lines():
    x = f32([-1.0, 0.5, -2.0, 3.0])
    y = wp.zeros(4, dtype=float)
    with detect_anomaly(), pytest.raises(AnomalyError) as info:
        wp.launch(sqrt_of_minus, dim=4, inputs=[x], outputs=[y])  # forward-launch
    e = info.value
    assert isinstance(e, FloatingPointError)
    assert (e.kernel, e.adjoint, e.array, e.index, e.flat_index) == ("sqrt_of_minus", False, "y", (1,), 1)
    assert np.isnan(e.value)
    assert e.launched_at == (HERE, line_of("forward-launch"))
    assert e.operation == "sqrt" and e.thread == 1
    assert (e.op_location.file, e.op_location.line) == (HERE, line_of("planted-sqrt"))
    text = str(e)
    assert "kernel 'sqrt_of_minus'" in text and "array 'y'" in text and "y[1] = nan" in text
    assert f"test_anomaly.py:{line_of('forward-launch')}" in text
    assert f"test_anomaly.py:{line_of('planted-sqrt')}" in text and "sqrt(-1.0) = nan" in text
    # the arrays are as the failed launch left them (the checked run used copies)
    with np.errstate(invalid="ignore"):
        expected = np.sqrt(-2.0 * x.numpy()) + 2.0 * x.numpy() + 1.0
    np.testing.assert_allclose(y.numpy(), expected.astype(np.float32), rtol=1e-6)


def test_nan_only_in_the_adjoint_names_the_gradient_and_the_forward_line():
    x = f32([4.0, 0.0, 1.0])
    y = wp.zeros(3, dtype=float, requires_grad=True)
    with detect_anomaly():
        with wp.Tape() as tape:
            wp.launch(plain_sqrt, dim=3, inputs=[x], outputs=[y])  # recorded-launch
        np.testing.assert_allclose(y.numpy(), [6.0, 0.0, 3.0])  # the forward is finite
        with pytest.raises(AnomalyError) as info:
            tape.backward(grads={y: wp.ones(3, dtype=float)})
    e = info.value
    assert (e.kernel, e.adjoint, e.array, e.index) == ("plain_sqrt", True, "adj_x", (1,))
    assert np.isinf(e.value)
    assert e.launched_at == (HERE, line_of("recorded-launch"))
    assert (e.op_location.file, e.op_location.line) == (HERE, line_of("adjoint-sqrt"))
    assert e.forward_operation == "sqrt" and e.operation in ("div", "mul") and e.thread == 1
    text = str(e)
    assert "the adjoint of kernel 'plain_sqrt'" in text and "'adj_x' (the gradient of 'x')" in text
    assert "in the adjoint code of `sqrt`" in text
    # the gradient is as the adjoint left it: 3 / (2 sqrt(x)), inf at 0, not doubled
    np.testing.assert_allclose(x.grad.numpy(), [0.75, np.inf, 1.5])


def test_a_discarded_nan_is_not_blamed_and_the_first_bad_thread_is_named():
    x = f32([-0.5, 2.0, -1.0, 5.0])  # thread 0 computes sqrt(-0.5) and throws it away
    y = wp.zeros(4, dtype=float)
    with detect_anomaly(), pytest.raises(AnomalyError) as info:
        wp.launch(safe_sqrt_then_log, dim=4, inputs=[x], outputs=[y])
    e = info.value
    assert e.index == (2,) and np.isneginf(e.value)
    assert e.operation == "log" and e.thread == 2
    assert e.op_location.line == line_of("planted-log")
    assert "log(0.0) = -inf" in str(e)


def test_finite_launches_run_unchanged_with_and_without_detection():
    def run():
        x = f32([0.25, 1.0, 9.0])
        y = wp.zeros(3, dtype=float, requires_grad=True)
        with wp.Tape() as tape:
            wp.launch(plain_sqrt, dim=3, inputs=[x], outputs=[y])
        tape.backward(grads={y: wp.ones(3, dtype=float)})
        return y.numpy().copy(), x.grad.numpy().copy()

    plain = run()
    with detect_anomaly():
        checked = run()
    for a, b in zip(plain, checked):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(plain[1], 1.5 / np.sqrt([0.25, 1.0, 9.0]), rtol=1e-6)


def test_outside_the_block_nothing_is_checked(monkeypatch):
    from weft.autograd import anomaly

    def refuse(*args, **kwargs):
        raise AssertionError("a launch was checked outside detect_anomaly")

    monkeypatch.setattr(anomaly, "run_checked", refuse)
    x = f32([1.0, 2.0])
    y = wp.zeros(2, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(sqrt_of_minus, dim=2, inputs=[x], outputs=[y])  # NaN, and nobody looks
    tape.backward(grads={y: wp.ones(2, dtype=float)})
    assert np.isnan(y.numpy()[0])
    assert not is_anomaly_enabled() and wp.config.anomaly_depth == 0


def test_nested_blocks_and_check_nan_false():
    x = f32([1.0])
    y = wp.zeros(1, dtype=float)
    outer = detect_anomaly()
    with outer:
        with detect_anomaly():
            assert wp.config.anomaly_depth == 2
            with pytest.raises(AnomalyError):
                wp.launch(sqrt_of_minus, dim=1, inputs=[x], outputs=[y])
        assert is_anomaly_enabled()  # the inner block's exit leaves the outer one on
        with detect_anomaly(check_nan=False):
            assert not is_anomaly_enabled()
            wp.launch(sqrt_of_minus, dim=1, inputs=[x], outputs=[y])  # not checked
            with outer:  # the same object entered again, inside itself
                assert is_anomaly_enabled()
            assert not is_anomaly_enabled()
        y.zero_()  # (a NaN already in y before a launch is not that launch's doing)
        with pytest.raises(AnomalyError):
            wp.launch(sqrt_of_minus, dim=1, inputs=[x], outputs=[y])
    assert wp.config.anomaly_depth == 0

    @detect_anomaly()
    def decorated():
        wp.launch(sqrt_of_minus, dim=1, inputs=[x], outputs=[y])

    y.zero_()
    with pytest.raises(AnomalyError):
        decorated()
    assert wp.config.anomaly_depth == 0


def test_atomics_are_not_repeated_and_an_atomic_overflow_is_named():
    x = f32([1.0, 2.0, 0.0, 4.0])
    total = wp.zeros(1, dtype=float)
    y = wp.zeros(4, dtype=float)
    with detect_anomaly(), pytest.raises(AnomalyError) as info:
        wp.launch(accumulate, dim=4, inputs=[x, total, y])
    e = info.value
    assert (e.array, e.index, e.operation) == ("y", (2,), "div")
    assert e.op_location.line == line_of("planted-div") and "div(1.0, 0.0) = inf" in str(e)
    assert total.numpy()[0] == 7.0  # once: the checked run added into a copy

    big = f32([3.0e38, 3.0e38])
    total = wp.zeros(1, dtype=float)
    with detect_anomaly(), pytest.raises(AnomalyError) as info:
        wp.launch(overflow, dim=2, inputs=[big, total])
    e = info.value
    assert (e.array, e.index, e.operation, e.thread) == ("total", (0,), "atomic_add", 1)
    assert np.isposinf(e.value) and e.op_location.line == line_of("planted-atomic")


def test_vector_arrays_and_two_dimensional_launches():
    v = np.ones((2, 3, 3), dtype=np.float32)
    v[1, 2] = 0.0  # normalize of a zero vector: weft (as Warp) returns zero, no NaN
    v[0, 1] = [np.float32(3e38)] * 3  # length overflows to inf, and x / inf is 0: finite
    vin = wp.array(v, dtype=wp.vec3)
    out = wp.zeros((2, 3), dtype=wp.vec3)
    with detect_anomaly():
        wp.launch(normalize_rows, dim=(2, 3), inputs=[vin], outputs=[out])
    assert np.isfinite(out.numpy()).all()

    v[0, 1] = [np.inf, 1.0, 1.0]  # an input already bad: the report says so
    vin = wp.array(v, dtype=wp.vec3)
    with detect_anomaly(), pytest.raises(AnomalyError) as info:
        wp.launch(normalize_rows, dim=(2, 3), inputs=[vin], outputs=[out])
    e = info.value
    assert e.array == "out" and e.index[:2] == (0, 1) and e.flat_index == 1
    assert e.operation == "load" and e.thread == 1
    assert "read a non-finite value (inf) from array 'v'" in str(e) and "thread (0, 1)" in str(e)


@wp.kernel
def lengths(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.length(v[i])  # planted-length


def test_an_op_inside_a_builtin_names_the_builtin_called():
    v = wp.array(np.array([[1.0, 2.0, 2.0], [3.0e38, 0.0, 0.0]], dtype=np.float32), dtype=wp.vec3)
    out = wp.zeros(2, dtype=float)
    with detect_anomaly(), pytest.raises(AnomalyError) as info:
        wp.launch(lengths, dim=2, inputs=[v], outputs=[out])
    e = info.value
    assert (e.index, e.operation, e.called, e.thread) == ((1,), "mul", "wp.length", 1)
    assert "`mul` inside `wp.length`, in thread 1: mul(3e+38, 3e+38) = inf" in str(e)
    assert e.op_location.line == line_of("planted-length")
    assert out.numpy()[0] == 3.0


def test_a_bad_input_is_blamed_on_the_input():
    x = f32([1.0, np.nan, 2.0])
    y = wp.zeros(3, dtype=float)
    with detect_anomaly(), pytest.raises(AnomalyError) as info:
        wp.launch(copy_twice, dim=3, inputs=[x], outputs=[y])
    e = info.value
    assert (e.array, e.index, e.operation, e.thread) == ("y", (1,), "load", 1)
    assert e.op_location.line == line_of("copies-input")
    # values that were already non-finite in an output before the launch are not new
    y2 = wp.array(np.array([np.inf, 0.0, 0.0], dtype=np.float32))
    with detect_anomaly():
        wp.launch(copy_twice, dim=1, inputs=[f32([1.0, 1.0, 1.0])], outputs=[y2])  # writes y2[0] only
        wp.launch(copy_twice, dim=3, inputs=[f32([1.0, 1.0, 1.0])], outputs=[y2])
    np.testing.assert_array_equal(y2.numpy(), [2.0, 2.0, 2.0])


def test_adjoint_of_a_loop_names_the_sqrt_inside_it():
    x = f32([1.0, 0.0])
    y = wp.zeros(2, dtype=float, requires_grad=True)
    with detect_anomaly():
        with wp.Tape() as tape:
            wp.launch(loop_sum, dim=2, inputs=[x, 3], outputs=[y])
        with pytest.raises(AnomalyError) as info:
            tape.backward(grads={y: wp.ones(2, dtype=float)})
    e = info.value
    # sqrt(x k) at k = 0: its derivative divides by zero in every thread (thread 0 first)
    assert e.adjoint and e.array == "adj_x" and e.thread == 0 and e.forward_operation == "sqrt"
    assert e.op_location.line == line_of("loop-sqrt")


def test_adjoint_recorded_outside_the_block_says_the_line_is_unknown():
    x = f32([0.0])
    y = wp.zeros(1, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(plain_sqrt, dim=1, inputs=[x], outputs=[y])
    with detect_anomaly(), pytest.raises(AnomalyError) as info:
        tape.backward(grads={y: wp.ones(1, dtype=float)})
    assert info.value.launched_at is None and "recorded outside detect_anomaly" in str(info.value)
    assert info.value.op_location.line == line_of("adjoint-sqrt")


def test_a_user_adjoint_launch_is_checked_as_an_adjoint():
    x = f32([0.0, 1.0])
    y = wp.zeros(2, dtype=float)
    adj_x = wp.zeros(2, dtype=float)
    adj_y = wp.ones(2, dtype=float)
    with detect_anomaly(), pytest.raises(AnomalyError) as info:
        wp.launch(plain_sqrt, dim=2, inputs=[x], outputs=[y], adj_inputs=[adj_x], adj_outputs=[adj_y],
                  adjoint=True)  # user-adjoint
    e = info.value
    assert e.adjoint and e.array == "adj_x" and e.index == (0,)
    assert e.launched_at == (HERE, line_of("user-adjoint") - 1)
    np.testing.assert_array_equal(adj_y.numpy(), [1.0, 1.0])  # a user's adjoint launch keeps it


# verify_fp: Warp's meaning (print a warning after the launch, go on) ---------------------------
@wp.struct
class Cell:
    mass: wp.float32
    tag: int


@wp.kernel
def divide_mass(cells: wp.array(dtype=Cell), d: float):
    i = wp.tid()
    cells[i].mass = cells[i].mass / d


def test_verify_fp_prints_kernel_argument_first_element_and_value(capfd, monkeypatch):
    cells = wp.zeros(3, dtype=Cell)
    monkeypatch.setattr(wp.config, "verify_fp", True)
    wp.launch(divide_mass, dim=3, inputs=[cells, 0.0])  # 0 / 0: NaN, and no exception
    out = capfd.readouterr().out
    assert "kernel 'divide_mass'" in out and "argument 'cells'" in out
    assert "cells[0].mass = nan" in out and "(nan)" in out
    wp.launch(divide_mass, dim=1, inputs=[wp.array([Cell()], dtype=Cell), 2.0])
    assert capfd.readouterr().out == ""  # finite: nothing


def test_verify_fp_also_reports_adjoint_launches_of_a_tape(capfd, monkeypatch):
    x = f32([0.0])
    y = wp.zeros(1, dtype=float, requires_grad=True)
    monkeypatch.setattr(wp.config, "verify_fp", True)
    with wp.Tape() as tape:
        wp.launch(plain_sqrt, dim=1, inputs=[x], outputs=[y])
    assert capfd.readouterr().out == ""
    tape.backward(grads={y: wp.ones(1, dtype=float)})
    out = capfd.readouterr().out
    assert "kernel 'plain_sqrt (adjoint)'" in out and "argument 'adj_x'" in out and "inf" in out


def test_an_array_passed_twice_is_copied_once_and_prints_are_not_repeated(capfd):
    a = wp.array(np.array([3.0, 2.0, 1.0], dtype=np.float32))
    with detect_anomaly(), pytest.raises(AnomalyError) as info:
        wp.launch(log_shifted, dim=3, inputs=[a, a])  # b is a: the kernel reads what it writes
    e = info.value
    # the checked run read a's old contents (thread 2: log(1 - 1)), not what the launch wrote
    assert (e.array, e.index, e.operation, e.thread) == ("b", (2,), "log", 2)
    assert "log(0.0) = -inf" in str(e) and e.op_location.line == line_of("aliased-log")
    np.testing.assert_allclose(a.numpy(), [np.log(2.0), 0.0, -np.inf])
    assert sorted(capfd.readouterr().out.split()) == ["0", "1", "2"]  # the launch's, once


def test_a_narrowing_cast_that_overflows_is_named():
    y = wp.zeros(2, dtype=float)
    with detect_anomaly(), pytest.raises(AnomalyError) as info:
        wp.launch(narrow, dim=2, inputs=[wp.array([1.0, 1e300], dtype=wp.float64)], outputs=[y])
    e = info.value
    assert e.operation == "cast to float32" and e.thread == 1 and e.op_location.line == line_of("planted-cast")
    assert "float32(1e+300) = inf" in str(e)


def test_arrays_held_in_structs_and_funcs_are_named():
    body = Body()
    body.pos = wp.array(np.ones((3, 3), dtype=np.float32), dtype=wp.vec3, requires_grad=True)
    body.mass = f32([4.0, 1.0, 0.0])
    out = wp.zeros(3, dtype=float, requires_grad=True)
    with detect_anomaly():
        with wp.Tape() as tape:
            wp.launch(body_energy, dim=3, inputs=[body], outputs=[out])
        with pytest.raises(AnomalyError) as info:
            tape.backward(grads={out: wp.ones(3, dtype=float)})
    e = info.value
    assert (e.array, e.index, e.thread, e.forward_operation) == ("adj_body.mass", (2,), 2, "sqrt")
    assert "'adj_body.mass' (the gradient of 'body.mass')" in str(e)
    assert e.op_location.line == line_of("func-sqrt")  # the line inside the func
    np.testing.assert_allclose(body.pos.grad.numpy()[:, 1], 9.8 * np.sqrt([4.0, 1.0, 0.0]), rtol=1e-6)


def test_a_launch_object_is_checked_when_it_runs_inside_the_block():
    x = f32([1.0, 0.0])
    y = wp.zeros(2, dtype=float)
    cmd = wp.launch(plain_sqrt, dim=2, inputs=[x], outputs=[y], record_cmd=True)
    with detect_anomaly():
        cmd.launch()  # finite
        cmd.set_param_by_name("x", f32([-1.0, 4.0]))
        with pytest.raises(AnomalyError) as info:
            cmd.launch()  # launch-object
    e = info.value
    assert (e.array, e.index, e.operation, e.thread) == ("y", (0,), "sqrt", 0)
    assert e.launched_at == (HERE, line_of("launch-object"))
    np.testing.assert_array_equal(np.isnan(y.numpy()), [True, False])
    cmd.launch()  # outside: not checked
