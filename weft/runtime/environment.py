"""What weft is built from and runs on (Warp's version queries and `print_diagnostics`).

weft has no separate native library: its runtime is this package and its kernels are
compiled by LLVM through llvmlite, so the "core" and "warp-clang" versions Warp programs ask
for are the package's own version (`config.version`), the compiler is LLVM, and the CUDA
entries (toolkit, driver, NVRTC, MathDx) are absent.
"""

from __future__ import annotations

import platform
import sys


def get_warp_version() -> str:
    """The version of the runtime that runs kernels: weft's own (`config.version`)."""
    from .. import config
    return config.version


def get_warp_clang_version() -> str:
    """The version of the CPU kernel compiler's front end: weft's own (it compiles its IR
    itself, through LLVM)."""
    from .. import config
    return config.version


def _llvm():
    import llvmlite.binding as llvm
    return llvm


def get_llvm_version() -> str:
    """The version of the LLVM that compiles CPU kernels ("major.minor.patch")."""
    try:
        return ".".join(str(v) for v in _llvm().llvm_version_info)
    except Exception:  # noqa: BLE001 - no LLVM: kernels load from the cache only
        return "unknown"


def get_host_compiler_version() -> str:
    """What compiles host code: LLVM through llvmlite (weft builds no C++)."""
    try:
        import llvmlite
        return f"LLVM {get_llvm_version()} (llvmlite {llvmlite.__version__})"
    except ImportError:
        return "unknown"


def get_nanovdb_version() -> str:
    """The NanoVDB format version weft reads and writes."""
    from ..geometry.nanovdb import VERSION
    return f"{VERSION >> 21}.{(VERSION >> 10) & 0x7FF}.{VERSION & 0x3FF}"


def get_nvrtc_version():
    """None: weft runs no CUDA compiler."""
    return None


def get_libmathdx_version() -> str:
    """"": weft has no MathDx."""
    return ""


def verify_library_version(lib, name: str, symbol: str, expected: str) -> None:
    """Raise RuntimeError unless `lib.<symbol>()` returns the version `expected` (bytes or
    str): Warp's check that a loaded native library belongs to the Python package."""
    function = getattr(lib, symbol, None)
    if function is None:
        raise RuntimeError(f"The {name} library does not export {symbol}(); it may come from another or a broken "
                           f"installation.")
    try:
        raw = function()
        found = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except Exception as e:
        raise RuntimeError(f"Failed to read the version of the {name} library through {symbol}(): {e}") from e
    if not found:
        raise RuntimeError(f"The {name} library reported an empty version through {symbol}().")
    if found != expected:
        raise RuntimeError(f"Version mismatch: the {name} library is version {found}, but the Python package expects "
                           f"{expected}. This usually means multiple Warp installations are mixed up in one "
                           f"environment; reinstall the package.")


def _cpu():
    try:
        llvm = _llvm()
        features = sorted(f[1:] for f in llvm.get_host_cpu_features().flatten().split(",") if f.startswith("+"))
        return llvm.get_host_cpu_name(), features
    except Exception:  # noqa: BLE001
        return platform.processor() or "unknown", []


def diagnostics() -> dict:
    """The facts `print_diagnostics` prints, by Warp's keys."""
    from .. import config
    from ..geometry.bvh import is_cubql_available
    from .device import CPU

    info = {"warp_python": config.version, "warp_native": get_warp_version()}
    llvm = get_llvm_version()
    info["warp_clang"] = f"{get_warp_clang_version()} (LLVM {llvm})" if llvm != "unknown" else get_warp_clang_version()
    info["llvm"] = llvm
    import numpy as np
    info["numpy"] = np.__version__
    import importlib.metadata  # (here: it imports the email package, which `import weft` need not)
    for package in ("torch", "jax", "jaxlib"):  # (their versions, without importing them)
        try:
            info[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    info["python"] = sys.version
    info["platform"] = platform.platform()
    info.update(cuda_enabled=False, cuda_toolkit=None, cuda_driver=None, nvrtc=None, cuda_compatibility=False,
                mathdx_enabled=False, libmathdx=None, cubql_enabled=bool(is_cubql_available()),
                nanovdb=get_nanovdb_version(), host_compiler=get_host_compiler_version())
    info["cpu_name"], info["cpu_features"] = _cpu()
    info.update(debug=config.mode == "debug", verify_fp=bool(config.verify_fp), fast_math=bool(config.fast_math),
                sanitizer=None)
    info["devices"] = [{"alias": CPU.alias, "name": CPU.name}]
    return info


def print_diagnostics() -> dict:
    """Print a report of the versions, settings, CPU and devices weft uses (for bug reports);
    returns it as a dict."""
    info = diagnostics()
    lines: list[str] = []

    def field(label, value, indent=2):
        lines.append(f"{' ' * indent}{label:<18}{value}")

    def section(title):
        if lines:
            lines.append("")
        lines.append(title)

    section("Software")
    field("weft (package):", info["warp_python"])
    field("weft (core):", info["warp_native"])
    field("compiler:", info["warp_clang"])
    field("NumPy:", info["numpy"])
    for key, label in (("torch", "PyTorch:"), ("jax", "JAX:"), ("jaxlib", "jaxlib:")):
        if key in info:
            field(label, info[key])
    field("Python:", info["python"])
    field("Platform:", info["platform"])
    section("CUDA")
    field("Enabled:", info["cuda_enabled"])
    section("Libraries")
    field("MathDx:", "not available")
    field("cuBQL:", "enabled" if info["cubql_enabled"] else "not available")
    field("NanoVDB:", info["nanovdb"])
    section("Build")
    field("Compiler:", info["host_compiler"])
    field("Debug:", info["debug"])
    field("Verify FP:", info["verify_fp"])
    field("Fast math:", info["fast_math"])
    section("CPU")
    field("Model:", info["cpu_name"])
    field("ISA features:", len(info["cpu_features"]))
    if info["cpu_features"]:
        field("", ", ".join(info["cpu_features"][:8]) + (", ..." if len(info["cpu_features"]) > 8 else ""), indent=4)
    section("Devices")
    for device in info["devices"]:
        lines.append(f"  {device['alias']}")
        field("Name:", device["name"], indent=4)
    lines.append("")
    print("\n".join(lines))
    return info
