"""cpu_compiler_flags: -march=native, -mllvm options (compiled in a child process) and
-fno-vectorize."""

import ctypes

import numpy as np
import pytest

import weft as wp
from weft.codegen import cpu

_EXP_IR = """
define float @weft_test_exp(float %x) {
  %r = call float @llvm.exp.f32(float %x)
  ret float %r
}
declare float @llvm.exp.f32(float)
"""


def _exp_under(flags):
    with cpu.target(flags):
        tm = cpu.target_machine()
        ir = f'target triple = "{tm.triple}"\n' + _EXP_IR
        address = cpu.load_object(cpu.compile_to_object(ir), "weft_test_exp")
    return ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)(address)(0.5)


def test_parse_flags_forms():
    f = cpu.parse_flags("-march=native -mllvm -limit-float-precision=6 -mllvm=-inline-threshold=300 -fno-vectorize")
    assert f.march == ("-march=native",)
    assert f.llvm_options == ("-limit-float-precision=6", "-inline-threshold=300")
    assert f.vectorize is False
    assert cpu.parse_flags("").llvm_options == () and cpu.parse_flags(None).vectorize is True
    with pytest.raises(ValueError, match="-mllvm needs an option"):
        cpu.parse_flags("-mllvm")


def test_llvm_options_apply_to_that_compile_only():
    exact = _exp_under("-march=native")
    assert exact == pytest.approx(np.exp(0.5), rel=1e-6)
    # LLVM's limited-precision expansion of exp: a different (coarser) value
    for flags in ("-march=native -mllvm -limit-float-precision=6", "-mllvm=-limit-float-precision=6"):
        coarse = _exp_under(flags)
        assert coarse != exact and coarse == pytest.approx(np.exp(0.5), rel=1e-2)
    assert _exp_under("-march=native") == exact  # the option did not stay set in this process


def test_unknown_llvm_option_is_a_clear_error_and_later_builds_work():
    with pytest.raises(RuntimeError, match="CPU kernel build failed: LLVM has no option -weft-no-such-option"):
        _exp_under("-mllvm=-weft-no-such-option")
    assert _exp_under("-march=native -mllvm=-inline-threshold=300") == pytest.approx(np.exp(0.5), rel=1e-6)


def test_flags_change_the_cache_key_but_not_results():
    keys = set()
    for flags in ("-march=native", "-march=native -fno-vectorize", "-march=native -mllvm=-inline-threshold=300"):
        with cpu.target(flags):
            keys.add(cpu.cache_key("x"))
    assert len(keys) == 3

    @wp.kernel(module="unique", module_options={"cpu_compiler_flags": "-march=native -fno-vectorize "
                                                                       "-mllvm=-inline-threshold=50"})
    def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = 2.0 * x[i] + y[i]

    x = wp.array(np.arange(100, dtype=np.float32))
    y = wp.ones(100, dtype=float)
    wp.launch(saxpy, 100, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), 2.0 * np.arange(100, dtype=np.float32) + 1.0)
