"""The CPU backend: LLVM module -> optimised native object code -> callable address.

Object code is cached on disk under `config.kernel_cache_dir`, keyed by a hash of the
kernel IR, its specialisation, the options and the host CPU; a warm process loads the
object file instead of running LLVM's optimiser and code generator.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import platform
import threading
from pathlib import Path

import llvmlite.binding as llvm

from . import cache

_engines = []  # keep every execution engine (and so its code) alive


_override = threading.local()  # a kernel's module options, while it compiles (see `target`)


@contextlib.contextmanager
def target(cpu_compiler_flags=None, optimization_level=None):
    """Compile for these settings (a module's `cpu_compiler_flags` and `optimization_level`;
    None: the `weft.config` ones) inside the block, on this thread."""
    saved = getattr(_override, "value", None)
    _override.value = (cpu_compiler_flags, optimization_level)
    try:
        yield
    finally:
        _override.value = saved


def _setting(index: int, name: str):
    from .. import config
    override = getattr(_override, "value", None)
    if override is not None and override[index] is not None:
        return override[index]
    return getattr(config, name)


def target_cpu(flags: str | None = None) -> tuple[str, str]:
    """The CPU and features kernels are compiled for under `cpu_compiler_flags` (the
    setting if None): this machine's, or a generic CPU of its architecture for ""."""
    flags = _setting(0, "cpu_compiler_flags") if flags is None else flags
    if flags:
        _note_unused_flags(flags)
    if flags is not None and "-march=native" not in flags.split():
        return "generic", ""
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


@functools.cache
def _note_unused_flags(flags: str) -> None:
    """Say once per flag string which flags weft does not use (it has no Clang, and LLVM's
    command-line options are process-wide in llvmlite, so `-mllvm` ones are not applied)."""
    unused = [f for f in flags.split() if f != "-march=native"]
    if unused:
        from ..logger import log_warning
        log_warning(f"cpu_compiler_flags: weft compiles with LLVM directly and does not use {' '.join(unused)} "
                    "(only -march=native, or an empty string for a generic CPU, are read)", once=True)


def opt_level() -> int:
    level = _setting(1, "optimization_level")
    if level is None:
        return 3
    if level not in (0, 1, 2, 3):
        raise ValueError(f"optimization_level must be None or 0 to 3, got {level!r}")
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


_only_cached = threading.local()


@contextlib.contextmanager
def cached_only(message: str):
    """Inside the block, compiling is an error (RuntimeError: `message`): code must come
    from the cache (`load_aot_module`)."""
    saved = getattr(_only_cached, "message", None)
    _only_cached.message = message
    try:
        yield
    finally:
        _only_cached.message = saved


def compile_to_object(llvm_ir: str) -> bytes:
    """Parse, verify, optimise and emit object code for an LLVM IR module (as text)."""
    message = getattr(_only_cached, "message", None)
    if message is not None:
        raise RuntimeError(message)
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


def target_hash(cpu_compiler_flags: str | None = None) -> str:
    """8 hex digits naming the machine code target of these flags (the setting if None):
    the LLVM version, the triple, and the CPU and its features (the host's under
    -march=native, a generic CPU's under ""). `-mllvm` options do not change it: they tune
    how code is made, not which machines run it."""
    llvm.initialize_native_target()
    cpu, features = target_cpu(cpu_compiler_flags)
    target = f"{llvm.llvm_version_info}|{llvm.get_default_triple()}|{cpu}|{features}"
    return hashlib.sha256(target.encode()).hexdigest()[:8]


def get_cpu_kernel_cache_key(cpu_compiler_flags: str | None = None, architecture: str | None = None) -> str:
    """What compiled CPU code depends on outside the kernel: weft's version, the OS, the
    architecture, and the target hash (see `target_hash`)."""
    from .. import config
    arch = architecture or platform.machine().lower()
    return f"{config.version}-{platform.system()}-{arch}-{target_hash(cpu_compiler_flags)}"
