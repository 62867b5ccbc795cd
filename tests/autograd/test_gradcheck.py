"""`weft.autograd.gradcheck` and `gradcheck_tape`: they pass on right adjoints and fail,
naming the worst entry, on wrong ones (a derivative rule deliberately broken for a kernel
built in the test, or a discontinuity only the finite differences see)."""

import re

import numpy as np
import pytest

import weft as wp
from weft.autograd import gradcheck, gradcheck_tape, jacobian, jacobian_fd
from weft.autograd.check import compare
from weft.autograd.jacobian import ad_jacobians
from weft.autograd.problem import recorded_problem
from weft.builtins.registry import PRIMITIVES

from .kernels import F64, d_sin_times_x, f64, sin_times_x, sin_times_x32, sum_squares, two_launch_chain, zeros


@pytest.fixture
def doubled_sin(monkeypatch):
    """sin's derivative rule doubled: a kernel whose adjoint is built while this is active
    (a kernel defined in the test, so no cached adjoint hides it) has a wrong gradient."""
    prim = PRIMITIVES["sin"]
    right = prim.vjp
    monkeypatch.setattr(prim, "vjp", lambda b, args, results, g: [b.add(a, a) for a in right(b, args, results, g)])


def make_wrong_kernel():
    @wp.kernel
    def wrong_sin(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
        i = wp.tid()
        y[i] = wp.sin(x[i]) * x[i]

    return wrong_sin


def test_passes_on_a_right_adjoint_and_prints_a_summary(capsys):
    x = np.array([0.3, -1.2, 2.0])
    assert gradcheck(sin_times_x, 3, [f64(x)], [zeros(3)]) is True
    out = capsys.readouterr().out
    assert "Gradient check of kernel 'sin_times_x' passed" in out
    assert "max abs error" in out and "max rel error" in out and " at d y[" in out and "PASS" in out
    assert gradcheck(sum_squares, 3, [f64(x)], [f64([2.0])], show_summary=False)
    assert capsys.readouterr().out == ""


def test_fails_on_a_wrong_adjoint(doubled_sin, capsys):
    wrong = make_wrong_kernel()
    x = np.array([0.3, -1.2, 2.0])
    # sin's rule doubled: AD = 2 x cos x + sin x against the true sin x + x cos x
    ad, fd = x * np.cos(x) * 2 + np.sin(x), d_sin_times_x(x)
    np.testing.assert_allclose(np.diag(jacobian(wrong, 3, [f64(x)], [zeros(3)])[0, 0]), ad, rtol=1e-9)
    assert gradcheck(wrong, 3, [f64(x)], [zeros(3)], raise_exception=False) is False
    out = capsys.readouterr().out
    assert "FAIL" in out and "FAILED for 1 of 1 input/output pairs" in out

    worst = int(np.argmax(np.abs(ad - fd) / (1e-3 + 1e-2 * np.abs(fd))))
    with pytest.raises(ValueError) as info:
        gradcheck(wrong, 3, [f64(x)], [zeros(3)], show_summary=False)
    message = str(info.value)
    assert "kernel 'wrong_sin'" in message and "input 'x' -> output 'y'" in message
    assert f"at d y[{worst}] / d x[{worst}]" in message
    got = re.search(r"autodiff gives (\S+) but finite differences give (\S+) ", message)
    assert float(got[1]) == pytest.approx(ad[worst], rel=1e-8)
    assert float(got[2]) == pytest.approx(fd[worst], rel=1e-6)
    assert "3 of 9 entries of this Jacobian fail, worst relative error" in message


def test_a_check_that_only_covers_the_right_part_passes(doubled_sin):
    # x = 0 makes the wrong term x cos x vanish there: checking only that column passes
    wrong = make_wrong_kernel()
    x = [0.0, 1.0]
    assert gradcheck(wrong, 2, [f64(x)], [zeros(2)], max_inputs_per_var=1, show_summary=False)
    assert not gradcheck(wrong, 2, [f64(x)], [zeros(2)], raise_exception=False, show_summary=False)


def test_a_discontinuity_fails_the_check():
    @wp.kernel
    def staircase(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
        i = wp.tid()
        y[i] = wp.floor(x[i]) + x[i]

    x = f64([0.5, 1.99995])  # the second is within eps of the step at 2
    assert not gradcheck(staircase, 2, [x], [zeros(2)], raise_exception=False, show_summary=False)
    with pytest.raises(ValueError, match=r"at d y\[1\] / d x\[1\] .* autodiff gives 1 but finite differences give 500"):
        gradcheck(staircase, 2, [x], [zeros(2)], show_summary=False)


def test_compare_fails_nan_and_reports_the_worst_entries():
    ad = np.array([[1.0, 2.0], [np.nan, 4.0]])
    fd = np.array([[1.0, 2.5], [3.0, 4.0]])
    c = compare(ad, fd, atol=1e-3, rtol=1e-2)
    assert not c.passed and c.failures == 2 and c.worst == (1, 0)
    c = compare(ad[:1], fd[:1], atol=1e-3, rtol=1e-2)
    assert not c.passed and c.worst == (0, 1) and c.max_abs == (0.5, (0, 1))
    assert c.max_rel[0] == pytest.approx(0.2) and c.max_rel[1] == (0, 1)
    assert compare(fd, fd + 1e-4, atol=1e-3, rtol=0.0).passed


def test_python_function():
    def chain(x):
        return two_launch_chain(x)[1]

    assert gradcheck(chain, inputs=[f64([0.4, -0.9, 1.5])], show_summary=False)


def test_float32_passes_at_default_tolerances():
    x = wp.array(np.array([0.3, 1.1, -2.0], dtype=np.float32), dtype=float, requires_grad=True)
    assert gradcheck(sin_times_x32, 3, [x], [wp.zeros(3, dtype=float, requires_grad=True)], show_summary=False)


def test_nothing_to_check_is_an_error():
    with pytest.raises(ValueError, match="nothing to check"):
        gradcheck(sin_times_x, 1, [f64([1.0], requires_grad=False)], [zeros(1)])


# Tapes -----------------------------------------------------------------------------------------
def record_two_launches(first=sin_times_x):
    x, y, loss = f64([0.4, -0.9, 1.5]), zeros(3), zeros(1)
    with wp.Tape() as tape:
        wp.launch(first, 3, inputs=[x], outputs=[y])
        wp.launch(sum_squares, 3, inputs=[y], outputs=[loss])
    return tape


def test_tape_of_two_launches_passes(capsys):
    tape = record_two_launches()
    tape.record_func(lambda: None, [])  # user steps are not kernels: skipped
    assert gradcheck_tape(tape) is True
    out = capsys.readouterr().out
    assert "kernel 'sin_times_x' (tape launch 0) passed" in out
    assert "kernel 'sum_squares' (tape launch 1) passed" in out


def test_tape_skips_launches_without_gradients(capsys):
    @wp.kernel(enable_backward=False)
    def double_no_backward(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
        i = wp.tid()
        y[i] = x[i] * F64(2.0)

    x = f64([1.0, 2.0])
    with wp.Tape() as tape:
        wp.launch(sin_times_x, 2, inputs=[f64([1.0, 2.0], requires_grad=False)], outputs=[zeros(2)])
        wp.launch(double_no_backward, 2, inputs=[x], outputs=[zeros(2)])
    assert gradcheck_tape(tape) is True
    out = capsys.readouterr().out
    assert "kernel 'sin_times_x' (tape launch 0) skipped: no differentiable input/output pair" in out
    assert "kernel 'double_no_backward' (tape launch 1) skipped: enable_backward=False" in out


def test_tape_with_a_wrong_kernel_fails_unless_it_is_skipped(doubled_sin):
    tape = record_two_launches(make_wrong_kernel())
    assert gradcheck_tape(tape, raise_exception=False, show_summary=False) is False
    with pytest.raises(ValueError, match=r"kernel 'wrong_sin' \(tape launch 0\), input 'x' -> output 'y'"):
        gradcheck_tape(tape, show_summary=False)
    assert gradcheck_tape(tape, blacklist_kernels=["wrong_sin"], show_summary=False)
    assert gradcheck_tape(tape, whitelist_kernels=[sum_squares.key], show_summary=False)
    assert gradcheck_tape(tape, skip_to_launch_index=1, show_summary=False)
    assert not gradcheck_tape(tape, reverse_launches=True, skip_to_launch_index=1, raise_exception=False,
                              show_summary=False)
    with pytest.raises(ValueError, match="asks for input 'y', which has no gradient .* that the kernel reads: 'x'"):
        gradcheck_tape(tape, input_output_masks={"wrong_sin": [("y", "y")]}, show_summary=False)
    assert gradcheck_tape(tape, input_output_masks={sum_squares.key: [(0, 1)]}, whitelist_kernels=["sum_squares"],
                          show_summary=False)


def test_tape_launch_is_checked_at_the_state_it_read():
    @wp.kernel
    def square_in_place(x: wp.array(dtype=F64)):
        i = wp.tid()
        x[i] = x[i] * x[i]

    x0 = np.array([0.5, -2.0, 3.0])
    x = f64(x0)
    with wp.Tape() as tape:
        wp.launch(square_in_place, 3, inputs=[x])
        wp.launch(square_in_place, 3, inputs=[x])
    np.testing.assert_allclose(x.numpy(), x0 ** 4)
    # the array read and written is both input and output, by argument position
    for k, before in enumerate((x0, x0 ** 2)):
        with recorded_problem(tape.launches[k], k) as problem:
            J = ad_jacobians(problem, problem.pairs())
        assert set(J) == {(0, 0)}
        np.testing.assert_allclose(J[0, 0], np.diag(2 * before), rtol=1e-12)
    assert gradcheck_tape(tape, show_summary=False)
    np.testing.assert_allclose(x.numpy(), x0 ** 4)  # nothing moved


def test_plots(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from weft.autograd import jacobian_plot

    x = f64([0.1, 0.2, 0.3])
    J = jacobian_fd(sin_times_x, 3, [x], [zeros(3)])
    fig = jacobian_plot(J, sin_times_x, [x], show_plot=False, log_scale=True)
    assert len(fig.axes) == 2  # the Jacobian and its colour bar
    fig.savefig(tmp_path / "jacobian.png")
    plt.close("all")
    assert gradcheck(sin_times_x, 3, [x], [zeros(3)], plot_relative_error=True, plot_absolute_error=True,
                     show_summary=False)
    assert len(plt.get_fignums()) == 2
    plt.close("all")
