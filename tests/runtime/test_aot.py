"""Ahead-of-time compilation: compile_aot_module writes a module's code to a folder,
load_aot_module loads it from there in another process without compiling."""

import os
import subprocess
import sys
import textwrap

PROGRAM = """
    import sys
    import numpy as np
    import weft as wp

    @wp.kernel
    def twice(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = 2.0 * x[i]

    wp.set_module_options({"cpu_compiler_flags": ""})
    if sys.argv[1] == "compile":
        paths = wp.compile_aot_module(__name__, module_dir=sys.argv[2])
        print(sum(p.suffix == ".o" for p in paths), sum(p.suffix == ".warm" for p in paths))
    else:
        from weft.codegen import cpu
        compiles = []
        original = cpu.compile_to_object
        cpu.compile_to_object = lambda text, **options: compiles.append(1) or original(text, **options)
        wp.load_aot_module(__name__, module_dir=sys.argv[2])
        x = wp.array(np.arange(4, dtype=np.float32), requires_grad=True)
        y = wp.zeros(4, requires_grad=True)
        with wp.Tape() as tape:
            wp.launch(twice, 4, inputs=[x, y])
        tape.backward(grads={y: wp.ones(4)})
        assert y.numpy().tolist() == [0, 2, 4, 6] and x.grad.numpy().tolist() == [2] * 4
        print(len(compiles))
"""


def _run(tmp_path, *args):
    script = tmp_path / "aot_program.py"
    script.write_text(textwrap.dedent(PROGRAM))
    env = dict(os.environ, WEFT_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, str(script), *args], env=env, capture_output=True, text=True,
                            timeout=120)
    return result


def test_compile_then_load_without_compiling(tmp_path):
    module_dir = tmp_path / "aot"
    missing = _run(tmp_path, "load", str(module_dir))
    assert missing.returncode != 0 and "load_aot_module: no compiled code for kernel" in missing.stderr
    compiled = _run(tmp_path, "compile", str(module_dir))
    assert compiled.returncode == 0, compiled.stderr
    # the kernel, its adjoint, and the adjoint a Tape runs; a warm-start record of each,
    # and one of the kernel's array analyses
    assert compiled.stdout.split() == ["3", "4"]
    loaded = _run(tmp_path, "load", str(module_dir))
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == "0"  # kernel and adjoint came from module_dir


def test_native_target_warns_about_portability(tmp_path, capsys):
    import weft as wp
    from weft import logger
    logger._warnings_seen.clear()
    wp.compile_aot_module(__name__, module_dir=tmp_path)  # no kernels here: nothing compiled
    err = capsys.readouterr().err
    assert "-march=native" in err and "cpu_compiler_flags=''" in err
