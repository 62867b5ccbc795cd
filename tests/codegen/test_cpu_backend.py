"""CPU code generation: vectorisation, versioned bounds checks and the disk cache."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import weft as wp


@wp.kernel
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


def test_contiguous_saxpy_is_vectorised():
    ir = saxpy.llvm_ir(spec=(True, True, False), optimized=True)
    assert any(f"<{w} x float>" in ir for w in (4, 8, 16))


def test_strided_arrays_use_their_strides():
    x = wp.array(np.arange(20, dtype=np.float32))
    y = wp.zeros(20)
    wp.launch(saxpy, 10, inputs=[x[::2], y[::2], 3.0])
    expected = np.zeros(20, np.float32)
    expected[::2] = 3.0 * np.arange(0, 20, 2)
    np.testing.assert_array_equal(y.numpy(), expected)


@wp.kernel
def gather(src: wp.array(dtype=float), idx: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = src[idx[i]]


def test_launch_larger_than_the_array_takes_the_checked_path():
    src = wp.array(np.arange(4, dtype=np.float32))
    idx = wp.array(np.array([0, 1, 2, 3, 0, 1], dtype=np.int32))
    out = wp.zeros(4)
    try:
        wp.launch(gather, 6, inputs=[src, idx, out])
    except IndexError as e:
        assert "out" in str(e) and "index 4" in str(e)
    else:
        raise AssertionError("expected IndexError")
    np.testing.assert_array_equal(out.numpy(), [0, 1, 2, 3])


def _run(code: str, cache: str, tmp_path) -> str:
    env = dict(os.environ, WEFT_CACHE_DIR=cache)
    script = tmp_path / "program.py"  # kernels need a source file
    script.write_text(textwrap.dedent(code))
    result = subprocess.run([sys.executable, str(script)], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


PROGRAM = """
    import numpy as np
    import weft as wp
    from weft.codegen import cpu
    compiles = []
    original = cpu.compile_to_object
    def counting(text, **options):
        compiles.append(1)
        return original(text, **options)
    cpu.compile_to_object = counting

    @wp.kernel
    def add_one(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = x[i] + 1.0

    x = wp.zeros(16)
    wp.launch(add_one, 16, inputs=[x])
    assert x.numpy().sum() == 16.0
    print(len(compiles))
"""


def test_warm_cache_in_a_new_process_does_not_recompile(tmp_path):
    cache = str(tmp_path / "cache")
    assert _run(PROGRAM, cache, tmp_path).strip() == "1"  # cold: compiled once
    assert _run(PROGRAM, cache, tmp_path).strip() == "0"  # warm: loaded from disk
    assert any(name.endswith(".o") for _, _, files in os.walk(cache) for name in files)


def test_cache_dir_setting_moves_the_cache(tmp_path):
    moved = str(tmp_path / "moved")
    code = PROGRAM.replace("import weft as wp\n", f"import weft as wp\n    wp.config.kernel_cache_dir = {moved!r}\n")
    assert _run(code, str(tmp_path / "unused"), tmp_path).strip() == "1"
    assert (tmp_path / "moved").exists() and not (tmp_path / "unused").exists()


STRUCT_PROGRAM = """
    import os
    import numpy as np
    import weft as wp

    if os.environ["LAYOUT"] == "2":
        @wp.struct
        class Params:
            scale: float
            pad: wp.float64
    else:
        @wp.struct
        class Params:
            scale: float
            pad: float

    @wp.kernel
    def k(p: Params, x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * p.scale

    p = Params()
    p.scale = 2.0
    x = wp.array(np.arange(4, dtype=np.float32))
    y = wp.zeros(4)
    wp.launch(k, 4, inputs=[p, x, y])
    print(y.numpy().tolist())
"""


def test_a_changed_struct_layout_does_not_reuse_cached_code(tmp_path, monkeypatch):
    cache = str(tmp_path / "cache")
    for layout in ("1", "2"):
        monkeypatch.setenv("LAYOUT", layout)
        assert _run(STRUCT_PROGRAM, cache, tmp_path).strip() == "[0.0, 2.0, 4.0, 6.0]"


@wp.kernel
def reduce_sum(x: wp.array(dtype=float), out: wp.array(dtype=float), n: int):
    s = 0.0
    for j in range(n):
        s += x[j]
    out[0] = s


def test_fast_math_is_a_module_option():
    assert " fast " not in reduce_sum.llvm_ir()
    wp.set_module_options({"fast_math": True})
    try:
        assert wp.get_module_options()["fast_math"] is True
        assert "fadd fast" in reduce_sum.llvm_ir()
        x = wp.array(np.arange(100, dtype=np.float32))
        out = wp.zeros(1)
        wp.launch(reduce_sum, 1, inputs=[x, out, 100])
        assert out.numpy()[0] == 4950.0
    finally:
        wp.set_module_options({"fast_math": False})
    assert not wp.config.fast_math


@pytest.mark.parametrize("loader", ["elf", "mcjit"])
def test_kernels_of_one_name_share_the_jit_engine_without_clashing(loader, monkeypatch):
    """Compiled kernels load into one JIT engine (codegen/cpu.py) where LLVM loads them:
    each entry's name carries its variant's cache key, so two kernels named alike (two
    modules, or two specialisations of one kernel) keep their own code; elf_loader.py
    maps each object on its own."""
    import weft as wp
    from weft.codegen import cpu

    monkeypatch.setattr(cpu, "LOADER", loader)

    def make(value):
        def same_name(a: wp.array(dtype=float)):
            a[wp.tid()] = value
        return wp.kernel(same_name, module="unique")

    first = 1.0 if loader == "elf" else 3.0  # (a unique module's declaration seen before is reused)
    one, two = make(first), make(first + 1.0)
    a, b = wp.zeros(3), wp.zeros(3)
    wp.launch(one, 3, inputs=[a])
    wp.launch(two, 3, inputs=[b])
    strided = wp.zeros(6)[::2]  # (a non-contiguous specialisation of the first)
    wp.launch(one, 3, inputs=[strided])
    assert a.numpy().tolist() == [first] * 3 and b.numpy().tolist() == [first + 1.0] * 3
    assert strided.numpy().tolist() == [first] * 3
    addresses = {ck.address for k in (one, two) for ck in k._compiled.values()}
    assert len(addresses) == 3
    assert loader == "elf" or cpu._shared_engine is not None
