"""weft.runtime.environment: version queries, the library-version check, print_diagnostics."""

import importlib.metadata
import re
import types

import pytest

import weft as wp
from weft._src import context
from weft.runtime import environment


def test_versions():
    assert context.get_warp_version() == wp.config.version == context.get_warp_clang_version()
    import llvmlite.binding as llvm
    assert context.get_llvm_version() == ".".join(map(str, llvm.llvm_version_info))
    assert re.fullmatch(r"\d+\.\d+\.\d+", context.get_nanovdb_version())
    assert context.get_nvrtc_version() is None and context.get_libmathdx_version() == ""
    assert "LLVM" in context.get_host_compiler_version()


def test_verify_library_version():
    lib = types.SimpleNamespace(v=lambda: b"1.2.3", bad=lambda: b"9.9", empty=lambda: None, boom=lambda: 1 / 0)
    environment.verify_library_version(lib, "core", "v", "1.2.3")
    with pytest.raises(RuntimeError, match=r"Version mismatch.*9\.9.*1\.2\.3"):
        environment.verify_library_version(lib, "core", "bad", "1.2.3")
    with pytest.raises(RuntimeError, match="does not export missing"):
        environment.verify_library_version(lib, "core", "missing", "1.2.3")
    with pytest.raises(RuntimeError, match="empty version"):
        environment.verify_library_version(lib, "core", "empty", "1.2.3")
    with pytest.raises(RuntimeError, match="Failed to read") as caught:
        environment.verify_library_version(lib, "core", "boom", "1.2.3")
    assert isinstance(caught.value.__cause__, ZeroDivisionError)


def test_print_diagnostics(capsys):
    info = wp.print_diagnostics()
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Software"
    assert info["warp_python"] == wp.config.version and info["devices"][0]["alias"] == "cpu"
    assert info["cuda_enabled"] is False and info["fast_math"] == wp.config.fast_math
    for package in ("torch", "jax"):
        try:
            expected = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            assert package not in info  # (CI installs neither)
        else:
            assert info[package] == expected
    assert f"NanoVDB:          {info['nanovdb']}" in out and "  cpu\n" in out
