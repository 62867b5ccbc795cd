"""The CPU backend: LLVM module -> optimised native object code -> callable address.

Object code is cached on disk under `config.kernel_cache_dir`, keyed by a hash of the
kernel IR, its specialisation, the options and the host CPU; a warm process loads the
object file instead of running LLVM's optimiser and code generator.
"""

from __future__ import annotations

import functools
import hashlib
import platform
from pathlib import Path

import llvmlite.binding as llvm

from . import cache

_engines = []  # keep every execution engine (and so its code) alive


def target_cpu(flags: str | None = None) -> tuple[str, str]:
    """The CPU and features kernels are compiled for under `cpu_compiler_flags` (the
    setting if None): this machine's, or a generic CPU of its architecture for ""."""
    from .. import config
    flags = config.cpu_compiler_flags if flags is None else flags
    if flags is not None and "-march=native" not in flags.split():
        return "generic", ""
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def opt_level() -> int:
    from .. import config
    level = config.optimization_level
    if level is None:
        return 3
    if level not in (0, 1, 2, 3):
        raise ValueError(f"weft.config.optimization_level must be None or 0 to 3, got {level!r}")
    return level


@functools.cache
def _target_machine(cpu: str, features: str, opt: int):
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=opt, codemodel="jitdefault")


def target_machine():
    """The LLVM target machine of the current settings (CPU flags, optimisation level)."""
    return _target_machine(*target_cpu(), opt_level())


def target_description() -> str:
    tm = target_machine()
    cpu, features = target_cpu()
    return f"{tm.triple}|{cpu}|{features}|O{opt_level()}"


def optimize(module_ref) -> None:
    tm = target_machine()
    level = opt_level()
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = level >= 2
    pto.slp_vectorization = level >= 2
    pto.loop_unrolling = level >= 2
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(module_ref, pb)


def compile_to_object(llvm_ir: str) -> bytes:
    """Parse, verify, optimise and emit object code for an LLVM IR module (as text)."""
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    optimize(mod)
    return target_machine().emit_object(mod)


def optimized_ir(llvm_ir: str) -> str:
    mod = llvm.parse_assembly(llvm_ir)
    optimize(mod)
    return str(mod)


def load_object(obj: bytes, *symbols: str):
    """Link object code into the process; the address of `symbol` (a tuple for several)."""
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), target_machine())
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    _engines.append(engine)
    addresses = tuple(engine.get_function_address(s) for s in symbols)
    for symbol, addr in zip(symbols, addresses):
        if not addr:
            raise RuntimeError(f"symbol {symbol} missing from compiled code")
    return addresses[0] if len(symbols) == 1 else addresses


def cache_dir():
    return cache.cache_dir()


@functools.cache
def compiler_fingerprint() -> str:
    """A hash of the sources that turn IR into machine code, so that a changed weft never
    loads object code an older weft compiled."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for folder in ("codegen", "builtins", "runtime", "types"):
        for path in sorted((root / folder).glob("*.py")):
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def cache_key(*parts: str) -> str:
    h = hashlib.sha256(compiler_fingerprint().encode())
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    h.update(target_description().encode())
    return h.hexdigest()[:32]


def cached_object(key: str) -> bytes | None:
    """Object code cached under `key`, or None (see cache.py: bad entries are misses)."""
    return cache.load(key)


def store_object(key: str, obj: bytes) -> None:
    cache.store(key, obj)


def get_cpu_kernel_cache_key(cpu_compiler_flags: str | None = None) -> str:
    """What compiled CPU code depends on outside the kernel: weft's version, the OS, the
    architecture, and a hash of the target (LLVM version, triple, CPU and features)."""
    from .. import config
    llvm.initialize_native_target()
    cpu, features = target_cpu(cpu_compiler_flags)
    target = f"{llvm.llvm_version_info}|{llvm.get_default_triple()}|{cpu}|{features}"
    digest = hashlib.sha256(target.encode()).hexdigest()[:8]
    return f"{config.version}-{platform.system().lower()}-{platform.machine().lower()}-{digest}"
