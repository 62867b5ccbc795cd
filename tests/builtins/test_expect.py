"""expect_eq / expect_neq / expect_near: a failed check prints a line and the kernel goes on."""

import subprocess
import sys
import textwrap

import pytest

import weft as wp


def run_script(body: str, tmp_path) -> str:
    script = tmp_path / "script.py"
    script.write_text("import weft as wp\n" + textwrap.dedent(body))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout  # (printf output from kernels goes to the process's stdout)


def test_checks_print_only_when_they_fail(tmp_path):
    out = run_script("""
        @wp.kernel
        def k(x: float, out: wp.array(dtype=float)):
            wp.expect_eq(x, 2.0)
            wp.expect_neq(x, 3.0)
            wp.expect_near(wp.vec2(x, x), wp.vec2(2.0, 2.0), 0.1)
            wp.expect_eq(wp.vec3(1.0, 2.0, 3.0), wp.vec3(1.0, 2.0, 3.0))
            out[0] = x
        out = wp.zeros(1)
        wp.launch(k, 1, inputs=[2.0, out])
        print("passing done", out.numpy()[0])
        wp.launch(k, 1, inputs=[2.5, out])
        print("failing done", out.numpy()[0])
        wp.expect_eq(wp.vec2(1.0, 2.0), wp.vec2(1.0, 2.0))
        wp.expect_near(1.0, 1.5, 0.1)
    """, tmp_path)
    # Warp's words and layout (native/builtin.h), each value as print() prints it
    assert out == (
        "passing done 2.0\n"
        "Error, expect_eq() failed:\n\t Expected: 2\n\t Actual: 2.5\n"
        "Error, expect_near() failed with tolerance 0.1\n"
        "    Expected: 2 2 \n    Actual: 2.5 2.5 \n    Max absolute difference: 0.5\n"
        "failing done 2.5\n"
        "Error, expect_near() failed with tolerance 0.1\n"
        "    Expected: 1.5\n    Actual: 1\n    Absolute difference: 0.5\n")


def test_comparing_composites_of_different_types_is_a_compile_error():
    @wp.kernel
    def k():
        wp.expect_neq(wp.mat33f(0.0), wp.mat22f(0.0))

    with pytest.raises(wp.WarpCodegenError, match="Can't test equality for objects with different types"):
        wp.launch(k, 1)
