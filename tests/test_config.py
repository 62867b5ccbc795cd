"""`weft.config`: Warp programs read and set Warp's settings by name, the CUDA compiler's and
the C++ builder's included; on weft's CPU those change nothing a kernel computes."""

import numpy as np

import weft as wp

# Warp 1.19's settings (warp/config.py) that concern its CUDA compiler or its C++ builder.
WARP_COMPILER_SETTINGS = {
    "cuda_output": None, "ptx_target_arch": None, "cuda_arch_suffix": None, "llvm_cuda": False,
    "compile_time_trace": False, "default_grid_stride": True, "enable_mathdx_gemm": True,
    "enable_mathdx_solver": True, "enable_mathdx_fft": True,
    "enable_graph_capture_module_load_by_default": True, "enable_mempools_at_init": True,
    "line_directives": True, "use_precompiled_headers": True, "legacy_cpu_linker": False,
    "enable_tiles_in_stack_memory": True, "enable_vector_component_overwrites": False,
}


@wp.kernel
def _overwrite_component(x: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v = x[i]
    v[0] = 2.0 * v[0]
    v[0] = v[0] + 1.0  # a second write to the same component
    y[i] = v


def test_warp_compiler_settings_exist_with_warps_defaults():
    for name, default in WARP_COMPILER_SETTINGS.items():
        assert getattr(wp.config, name) == default, name


def test_setting_them_changes_no_result():
    x = wp.array(np.arange(6.0).reshape(2, 3), dtype=wp.vec3)
    want = x.numpy().copy()
    want[:, 0] = 2.0 * want[:, 0] + 1.0
    saved = {name: getattr(wp.config, name) for name in WARP_COMPILER_SETTINGS}
    try:
        wp.config.line_directives = False
        wp.config.enable_mathdx_gemm = False
        wp.config.enable_vector_component_overwrites = True
        wp.config.ptx_target_arch = 75
        y = wp.zeros_like(x)
        wp.launch(_overwrite_component, 2, inputs=[x, y])
        np.testing.assert_array_equal(y.numpy(), want)
    finally:
        for name, value in saved.items():
            setattr(wp.config, name, value)


def test_init_sets_the_kernel_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setattr(wp.config, "kernel_cache_dir", None)
    monkeypatch.setenv("WEFT_CACHE_DIR", str(tmp_path))
    wp.init()  # (Warp programs join paths to it after init)
    assert wp.config.kernel_cache_dir == str(tmp_path)
    wp.init()
    assert wp.config.kernel_cache_dir == str(tmp_path)
