"""`Module.resolve_options`, `ModuleBuildOptions` and `kernel.adj.get_references()`."""

import pytest

import weft as wp

SCALE = wp.constant(2.5)


@wp.func
def twice(x: float):
    return 2.0 * x


@wp.struct
class Pair:
    a: float
    b: float


@wp.kernel(module="unique", module_options={"max_unroll": 3})
def uses_globals(out: wp.array[float], p: Pair):
    i = wp.tid()
    local = twice(SCALE)
    out[i] = local + p.a + float(Pair().b)


def test_get_references_lists_what_the_kernel_names():
    constants, types, functions = uses_globals.adj.get_references()
    assert constants == {"SCALE": 2.5}
    assert types == {Pair: "Pair"}
    assert list(functions.values()) == ["twice"] and twice in functions
    assert "local" not in constants and "out" not in constants


def test_resolve_options_fills_in_the_global_settings():
    options = uses_globals.module.resolve_options(wp.config)
    assert options["max_unroll"] == 3
    assert options["mode"] == wp.config.mode and options["fast_math"] == wp.config.fast_math
    assert options["lineinfo"] == wp.config.lineinfo  # (None on the module: the global setting)
    assert uses_globals.module.resolve_options(wp.config, block_dim=64)["block_dim"] == 64


def test_build_options_are_checked_merged_and_hashed(tmp_path):
    a = wp.ModuleBuildOptions(extra_cpu_preamble="#define A 1", extra_cpu_include_dirs=[str(tmp_path)])
    b = wp.ModuleBuildOptions(extra_cpu_preamble="#define B 1", extra_cpu_include_dirs=[str(tmp_path)])
    merged = a.merged(b)
    assert merged.extra_cpu_preamble == "#define A 1\n#define B 1"
    assert merged.extra_cpu_include_dirs == [str(tmp_path)]
    assert wp.ModuleBuildOptions(extra_cuda_preamble="x") == wp.ModuleBuildOptions(extra_cuda_preamble="x\n")
    with pytest.raises(TypeError, match="extra_cpu_preamble must be a str"):
        wp.ModuleBuildOptions(extra_cpu_preamble=1)
    with pytest.raises(TypeError, match="others must contain ModuleBuildOptions"):
        a.merged("x")

    module = uses_globals.module
    before = module.hash_module()
    dep = tmp_path / "dep.h"
    dep.write_text("1")
    try:
        module.options["extra_build_options"] = wp.ModuleBuildOptions(extra_build_dependencies=[str(dep)])
        first = module.hash_module()
        dep.write_text("2")
        module.mark_modified()
        assert first != before and module.hash_module() != first  # (a dependency's contents count)
        module.options["extra_build_options"] = wp.ModuleBuildOptions(extra_build_dependencies=["relative.h"])
        with pytest.raises(ValueError, match="absolute existing files"):
            module.hash_module()
    finally:
        module.options["extra_build_options"] = None
    out = wp.zeros(1)
    wp.launch(uses_globals, dim=1, inputs=[out, Pair()])
    assert out.numpy()[0] == 5.0


@wp.kernel(module="unique", module_options={"bounds_checks": False})
def unchecked_gather(src: wp.array[float], index: wp.array[int], out: wp.array[float]):
    i = wp.tid()
    out[i] = src[index[i]]


@wp.kernel(module="unique")
def checked_gather(src: wp.array[float], index: wp.array[int], out: wp.array[float]):
    i = wp.tid()
    out[i] = src[index[i]]


def test_bounds_checks_is_a_module_option_defaulting_to_the_config():
    # (weft's: library kernels whose indices are right by construction turn the checks off)
    assert checked_gather.module.options["bounds_checks"] is wp.config.bounds_checks is True
    assert unchecked_gather.module.options["bounds_checks"] is False
    calls = 'call void @"weft_record_error"('
    assert calls in checked_gather.llvm_ir() and calls not in unchecked_gather.llvm_ir()
    src, out = wp.array([1.0, 2.0, 3.0], dtype=float), wp.zeros(3)
    wp.launch(unchecked_gather, 3, inputs=[src, wp.array([2, 0, 1], dtype=int), out])
    assert out.numpy().tolist() == [3.0, 1.0, 2.0]
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        wp.launch(checked_gather, 3, inputs=[src, wp.array([2, 3, 1], dtype=int), out])
