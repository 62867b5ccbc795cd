"""codegen/elf_loader.py: object code mapped without LLVM runs as MCJIT's does, and what it
does not handle goes to LLVM instead."""

import ctypes

import llvmlite.binding as llvm
import numpy as np
import pytest

import weft as wp
from weft.codegen import cpu, elf_loader

pytestmark = pytest.mark.skipif(not elf_loader.supported(), reason="ELF loading is for x86-64 Linux")


def _busy_kernel():
    def busy(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), total: wp.array(dtype=float)):
        i = wp.tid()
        s = float(0.0)  # noqa: UP018 - a variable (a literal would be a constant)
        for k in range(i % 7):
            s += wp.sin(float(k)) * wp.exp(-x[i])
        x[i] = s + wp.length(v[i]) + wp.pow(x[i], 1.5)
        wp.atomic_add(total, 0, x[i])
    return wp.kernel(busy)  # (a new Kernel each call: nothing compiled in memory)


@pytest.mark.parametrize("n", [5, 20000])
def test_kernels_loaded_either_way_compute_the_same(n, monkeypatch):
    rng = np.random.default_rng(1)
    x0 = rng.uniform(0.1, 2.0, n).astype(np.float32)
    v0 = rng.standard_normal((n, 3)).astype(np.float32)
    results = []
    for loader in ("mcjit", "elf"):
        monkeypatch.setattr(cpu, "LOADER", loader)
        x, total = wp.array(x0), wp.zeros(1)
        wp.launch(_busy_kernel(), n, inputs=[x, wp.array(v0, dtype=wp.vec3), total])
        results.append((x.numpy(), total.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5)  # (atomic float sums: any order)


def _object(ir_text: str, reloc: str = "static", codemodel: str = "jitdefault") -> bytes:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_default_triple().create_target_machine(reloc=reloc, codemodel=codemodel)
    mod = llvm.parse_assembly(ir_text)
    mod.verify()
    return tm.emit_object(mod)


_SUM_OF_SQUARES = """
@table = internal constant [4 x double] [double 1.0, double 2.0, double 3.0, double 4.0]
declare double @sqrt(double)
define double @weft_test_norm() {
entry:
  %p0 = getelementptr [4 x double], ptr @table, i64 0, i64 0
  %p3 = getelementptr [4 x double], ptr @table, i64 0, i64 3
  %a = load double, ptr %p0
  %b = load double, ptr %p3
  %aa = fmul double %a, %a
  %bb = fmul double %b, %b
  %s = fadd double %aa, %bb
  %r = call double @sqrt(double %s)
  ret double %r
}
"""


def test_constants_and_process_symbols_resolve():
    (address,) = elf_loader.load(_object(_SUM_OF_SQUARES), ("weft_test_norm",))
    assert ctypes.CFUNCTYPE(ctypes.c_double)(address)() == pytest.approx(17.0 ** 0.5)


_READS_STDOUT = """
@stdout = external global ptr
define i64 @weft_test_stdout() {
entry:
  %f = load ptr, ptr @stdout
  %i = ptrtoint ptr %f to i64
  ret i64 %i
}
"""


def test_what_the_loader_does_not_handle_goes_to_llvm():
    # position-independent code reads the C library's `stdout` through a GOT entry
    pic = _object(_READS_STDOUT, reloc="pic", codemodel="small")
    with pytest.raises(elf_loader.Unsupported, match="relocation type"):
        elf_loader.load(pic, ("weft_test_stdout",))
    address = cpu.load_object(pic, "weft_test_stdout")
    stdout = ctypes.c_void_p.in_dll(ctypes.CDLL(None), "stdout").value
    assert ctypes.CFUNCTYPE(ctypes.c_int64)(address)() == stdout
    with pytest.raises(elf_loader.Unsupported):
        elf_loader.load(b"not an object file at all, not even close", ("f",))


def test_a_missing_symbol_is_named():
    with pytest.raises(RuntimeError, match="weft_not_there"):
        elf_loader.load(_object(_SUM_OF_SQUARES), ("weft_not_there",))
