"""The CPU backend: LLVM module -> optimised native object code -> callable address.

Object code is cached on disk under `config.kernel_cache_dir`, keyed by a hash of the
kernel IR, its specialisation, the options and the host CPU; a warm process loads the
object file instead of running LLVM's optimiser and code generator.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm

_engines = []  # keep every execution engine (and so its code) alive


@functools.cache
def target_machine():
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
        opt=3, codemodel="jitdefault")


def target_description() -> str:
    tm = target_machine()
    return f"{tm.triple}|{llvm.get_host_cpu_name()}|{llvm.get_host_cpu_features().flatten()}"


def optimize(module_ref) -> None:
    tm = target_machine()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = True
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


def cache_dir() -> Path:
    from .. import __version__, config
    base = config.kernel_cache_dir or os.path.join(os.path.expanduser("~"), ".cache", "weft")
    return Path(base) / f"{__version__}-llvmlite{llvmlite.__version__}"


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
    path = cache_dir() / f"{key}.o"
    try:
        return path.read_bytes()
    except OSError:
        return None


def store_object(key: str, obj: bytes) -> None:
    """Write atomically (rename), so concurrent processes never read a partial file."""
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(obj)
        os.replace(tmp, directory / f"{key}.o")
    except OSError:
        pass  # a read-only cache is not an error: the kernel still runs
