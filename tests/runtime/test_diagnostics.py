"""Launch diagnostics: `config.print_launches` and `config.verify_fp` (Warp's settings)."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def divide(x: wp.array(dtype=float), d: float):
    i = wp.tid()
    x[i] = x[i] / d


def test_print_launches(monkeypatch, capsys):
    monkeypatch.setattr(wp.config, "print_launches", True)
    wp.launch(divide, 3, inputs=[wp.ones(3), 2.0])
    x = wp.ones(3)
    wp.launch(divide, 3, inputs=[x], outputs=[2.0])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("kernel: divide dim: 3 inputs: [")  # (Warp's line)
    assert lines[0].endswith(", 2.0] outputs: [] device: cpu")
    assert lines[1] == f"kernel: divide dim: 3 inputs: [{x!r}] outputs: [2.0] device: cpu"


def test_verify_fp_reports_non_finite_results(monkeypatch, capsys):
    monkeypatch.setattr(wp.config, "verify_fp", True)
    x = wp.array(np.array([1.0, 0.0, -1.0], dtype=np.float32))
    wp.launch(divide, 3, inputs=[x, 1.0])
    assert capsys.readouterr().out == ""
    wp.launch(divide, 3, inputs=[x, 0.0])  # inf, nan, -inf
    out = capsys.readouterr().out
    assert "divide" in out and "'x'" in out and "nan" in out and "inf" in out
    monkeypatch.setattr(wp.config, "verify_fp", False)
    wp.launch(divide, 3, inputs=[x, 0.0])
    assert capsys.readouterr().out == ""


def test_verify_fp_in_debug_mode_raises(monkeypatch, capsys):
    # (Warp's documented "assertion" aborts its process; weft raises after the report)
    monkeypatch.setattr(wp.config, "verify_fp", True)
    monkeypatch.setattr(wp.config, "mode", "debug")
    x = wp.array(np.array([1.0, 0.0], dtype=np.float32))
    wp.launch(divide, 2, inputs=[x, 2.0])
    with pytest.raises(AssertionError, match=r"verify_fp \(debug mode\): kernel 'divide'.*'x'"):
        wp.launch(divide, 2, inputs=[x, 0.0])
    assert "Warp verify_fp" in capsys.readouterr().out


@wp.func
def expect_one(value: int):
    assert value == 1, "Array element must be 1"


@wp.kernel
def expect_ones(a: wp.array(dtype=int)):
    expect_one(a[wp.tid()])


def test_failed_assert_raises_instead_of_aborting(monkeypatch):
    """Warp aborts the process (SIGABRT) on a failed kernel `assert` in debug mode; weft
    raises AssertionError naming the condition, its message and the source line, and the
    interpreter carries on (Warp's test_assert expects the abort: a deliberate difference)."""
    monkeypatch.setattr(wp.config, "mode", "debug")
    wp.launch(expect_ones, 2, inputs=[wp.ones(2, dtype=int)])
    try:
        wp.launch(expect_ones, 2, inputs=[wp.zeros(2, dtype=int)])
    except AssertionError as e:
        message = str(e)
    else:
        raise AssertionError("expected the kernel's assert to fail")
    assert "value == 1" in message and "Array element must be 1" in message and "test_diagnostics.py" in message
    monkeypatch.setattr(wp.config, "mode", "release")
    wp.launch(expect_ones, 2, inputs=[wp.zeros(2, dtype=int)])  # release: asserts are not compiled


def test_module_mode_option_compiles_asserts(monkeypatch):
    """`set_module_options({"mode": "debug"})` turns on asserts for this module's kernels
    (and the funcs they call) while `config.mode` stays "release"."""
    assert wp.config.mode == "release"
    wp.launch(expect_ones, 1, inputs=[wp.zeros(1, dtype=int)])  # release: no check
    wp.set_module_options({"mode": "debug"})
    try:
        assert wp.get_module_options()["mode"] == "debug"
        try:
            wp.launch(expect_ones, 1, inputs=[wp.zeros(1, dtype=int)])
        except AssertionError as e:
            assert "Array element must be 1" in str(e)
        else:
            raise AssertionError("the module's debug mode did not compile the assert")
    finally:
        wp.set_module_options({"mode": None})
    wp.launch(expect_ones, 1, inputs=[wp.zeros(1, dtype=int)])
