"""weft._src.context (Warp's `warp._src.context`): the runtime object, type_str, the CPU
cache key, the caller's module name; and the error texts of weft.utils reductions."""

import platform
import types
import typing
from unittest import mock

import pytest

import weft as wp
from weft._src import context


def test_runtime_reports_the_cpu_and_no_cuda():
    rt = context.runtime
    assert rt.default_device == wp.get_device()
    assert rt.cpu_device == wp.get_device("cpu")
    assert rt.device_map == {"cpu": wp.get_device("cpu")}
    assert rt.get_device("cpu") is wp.get_device("cpu")
    assert rt.cuda_devices == [] and rt.is_cuda_enabled is False
    assert rt.driver_version is None and rt.toolkit_version is None
    rt.verify_cuda_device("cpu")  # nothing to check on the CPU
    with pytest.raises(RuntimeError, match="CUDA"):
        rt.unmap_cuda_device("cuda:7")
    # Warp's native library: only the queries Warp programs make at import (no MathDx, no CUDA)
    assert rt.core.wp_is_mathdx_enabled() is False and rt.core.wp_cuda_toolkit_version() == 0


def test_runtime_set_default_device():
    rt = context.runtime
    rt.set_default_device("cpu")
    assert wp.get_device() == "cpu"
    with pytest.raises(ValueError, match="CUDA"):
        rt.set_default_device("cuda:0")


def test_type_str():
    ts = context.type_str
    assert ts(list[int]) == "list[int]"
    assert ts(tuple[int, float]) == "tuple[int, float]"
    assert ts(tuple[int, ...]) == "tuple[int, ...]"
    assert ts(typing.Any) == "Any" and ts(None) == "None" and ts(3) == "Literal[3]"
    assert ts(wp.vec3) == "vec3f" and ts(wp.float64) == "float64"
    assert ts(wp.array(dtype=wp.vec3)) == "Array[vec3f]"
    assert ts((int, wp.float32)) == "tuple[int, float32]"


def test_machine_architecture_is_normalised():
    with mock.patch("platform.machine", return_value="AMD64"):
        assert context.machine_architecture() == "x86_64"
    with mock.patch("platform.machine", return_value="arm64"):
        assert context.machine_architecture() == "aarch64"
    with mock.patch("platform.machine", return_value="riscv64"):
        assert context.machine_architecture() == "riscv64"


def test_cpu_kernel_cache_key_follows_target_version_os_and_arch():
    native = wp.get_cpu_kernel_cache_key(cpu_compiler_flags="-march=native")
    generic = wp.get_cpu_kernel_cache_key(cpu_compiler_flags="")
    assert native != generic
    assert native.startswith(f"{wp.config.version}-{platform.system()}-")
    # -mllvm options tune code generation, not the machines that run it
    assert wp.get_cpu_kernel_cache_key(cpu_compiler_flags="-march=native -mllvm=-inline-threshold=300") == native
    with mock.patch.object(context, "machine_architecture", return_value="riscv64"):
        assert wp.get_cpu_kernel_cache_key(cpu_compiler_flags="-march=native") != native
    with mock.patch.object(wp.config, "version", "0.0.0"):
        assert wp.get_cpu_kernel_cache_key(cpu_compiler_flags="-march=native") != native
    with mock.patch.object(context.runtime, "llvm", None), pytest.raises(RuntimeError, match="LLVM"):
        wp.get_cpu_kernel_cache_key()


def test_caller_module_name():
    assert context._get_caller_module_name() == __name__
    fake = types.SimpleNamespace(f_globals={"__name__": None, "__spec__": types.SimpleNamespace(name="pkg.mod")},
                                 f_code=types.SimpleNamespace(co_filename="<x>"), f_back=None)
    with mock.patch("sys._getframe", return_value=fake):
        assert context._get_caller_module_name() == "pkg.mod"
    fake.f_globals["__spec__"] = None
    with mock.patch("sys._getframe", return_value=fake), \
            mock.patch.object(context.inspect, "getmodule", return_value=None), \
            pytest.raises(RuntimeError, match="Could not determine the calling module"):
        context._get_caller_module_name()


def test_reduction_error_texts():
    values = wp.array((1.0, 2.0), dtype=wp.float32)
    with pytest.raises(RuntimeError, match=r"Unsupported data type: int32$"):
        wp.utils.array_sum(wp.zeros(3, dtype=wp.int32))
    with pytest.raises(RuntimeError, match=r"out array should have type float32$"):
        wp.utils.array_sum(values, out=wp.empty(1, dtype=wp.float64))
    with pytest.raises(RuntimeError, match=r"out array should have shape \(1,\)$"):
        wp.utils.array_sum(values, out=wp.empty(2, dtype=wp.float32))
    with pytest.raises(RuntimeError, match=r"A and b array data types do not match \(float32 vs float64\)$"):
        wp.utils.array_inner(values, wp.array((1.0, 2.0), dtype=wp.float64))
