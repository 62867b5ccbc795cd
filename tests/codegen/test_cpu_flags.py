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


def _llvm_exp(flags, name="exp"):
    """LLVM's own float32 `name` (the intrinsic, as Warp's C `expf` becomes) under `flags`."""
    with cpu.target(flags):
        tm = cpu.target_machine()
        ir = f'target triple = "{tm.triple}"\n' + _EXP_IR.replace("exp", name)
        address = cpu.load_object(cpu.compile_to_object(ir), f"weft_test_{name}")
    return ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)(address)


def _exp_under(flags):
    return _llvm_exp(flags)(0.5)


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


_LIMITED = "-march=native -mllvm -limit-float-precision=6"


def _exp_kernel(flags, dtype=wp.float32):
    @wp.kernel(module="unique", module_options={"cpu_compiler_flags": flags})
    def exps(x: wp.array(dtype=dtype), y: wp.array(dtype=dtype), logs: wp.array(dtype=dtype)):
        i = wp.tid()
        y[i] = wp.exp(x[i])
        s = dtype(0.0)
        for _k in range(2):  # (a loop: weft runs the threads on vector lanes itself)
            s += wp.log(wp.exp2(x[i])) + wp.log2(y[i]) + wp.log10(y[i])
        logs[i] = s

    return exps


def _run_exps(flags, x, dtype=wp.float32):
    xs = wp.array(x, dtype=dtype)
    y, logs = wp.zeros_like(xs), wp.zeros_like(xs)
    wp.launch(_exp_kernel(flags, dtype), len(x), inputs=[xs, y, logs])
    return y.numpy(), logs.numpy()


def test_limit_float_precision_makes_kernels_float32_exp_and_log_coarse():
    """-mllvm -limit-float-precision=N is honoured in kernels, as Warp's Clang build honours
    it: float32 exp, exp2, log, log2 and log10 become LLVM's low-precision sequences (on
    every thread, whether the kernel runs lane by lane or vectorised); other functions,
    float64, and kernels without the option keep full precision."""
    x = np.linspace(-3.0, 3.0, 67).astype(np.float32)  # (enough threads for vector lanes)
    exact, exact_logs = _run_exps("-march=native", x)
    np.testing.assert_allclose(exact, np.exp(x.astype(np.float64)), rtol=3e-7)
    coarse, coarse_logs = _run_exps(_LIMITED, x)
    assert np.count_nonzero(coarse != exact) > 60
    np.testing.assert_allclose(coarse, np.exp(x.astype(np.float64)), rtol=3e-2)
    # each thread's value is LLVM's own limited-precision exp of its input
    llvm_exp = _llvm_exp(_LIMITED)
    np.testing.assert_array_equal(coarse, np.array([llvm_exp(float(v)) for v in x], np.float32))
    f = {name: _llvm_exp(_LIMITED, name) for name in ("exp2", "log", "log2", "log10")}
    f32 = np.float32
    terms = [f32(f["log"](f["exp2"](float(v)))) + f32(f["log2"](float(e))) + f32(f["log10"](float(e)))
             for v, e in zip(x, coarse)]
    np.testing.assert_array_equal(coarse_logs, 2 * np.array(terms, np.float32))
    assert np.count_nonzero(coarse_logs != exact_logs) > 60
    f64, _ = _run_exps(_LIMITED, x.astype(np.float64), wp.float64)
    np.testing.assert_allclose(f64, np.exp(x.astype(np.float64)), rtol=1e-15)
    assert np.array_equal(_run_exps("-march=native", x)[0], exact)  # (the option does not stay set)


def test_limit_float_precision_value_forms():
    for flags, bits in (("-mllvm -limit-float-precision=6", 6), ("-mllvm=-limit-float-precision=12", 12),
                        ("-mllvm=--limit-float-precision=18", 18), ("-mllvm=-limit-float-precision=0", 0),
                        ("-mllvm=-limit-float-precision=19", 0), ("-march=native", 0),
                        ("-mllvm=-limit-float-precision=6 -mllvm=-limit-float-precision=0", 0)):
        with cpu.target(flags):
            assert cpu.limited_float_precision() == bits, flags


def test_large_modules_get_o1_unless_a_level_is_set(monkeypatch):
    """optimization_level None: O3, but O1 for modules of more than LARGE_MODULE_LINES lines
    (LLVM's O3 time grows faster than the code); a level that is set applies to every size."""
    small, large = "x\n" * 10, "x\n" * (cpu.LARGE_MODULE_LINES + 1)
    monkeypatch.setattr(wp.config, "optimization_level", None)
    assert (cpu.opt_level(), cpu.opt_level(small), cpu.opt_level(large)) == (3, 3, 1)
    monkeypatch.setattr(wp.config, "optimization_level", 2)
    assert (cpu.opt_level(small), cpu.opt_level(large)) == (2, 2)
    monkeypatch.setattr(wp.config, "optimization_level", None)
    monkeypatch.setattr(cpu, "LARGE_MODULE_LINES", 1)  # (the exp module compiled at O1 works)
    assert _exp_under("-march=native") == pytest.approx(np.exp(0.5), rel=1e-6)
