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
import sys
import threading
import typing
from pathlib import Path

from . import cache, elf_loader
from .host import host

# llvmlite's binding (LLVM itself) is imported where code is compiled: a process whose
# kernels all come from the disk cache loads them with elf_loader.py and never needs it.

_engines = []  # keep every execution engine (and so its code) alive
_shared_engine = None  # (see load_object)
_engine_lock = threading.Lock()


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
    if flags is not None and "-march=native" not in parse_flags(flags).march:
        return "generic", ""
    return _host_cpu()


def _host_cpu() -> tuple[str, str]:
    """This machine's CPU name and features, as LLVM names them (see host.py)."""
    h = host()
    return h.cpu, h.features


class Flags(typing.NamedTuple):
    """What weft reads from `cpu_compiler_flags` (a Clang command line in Warp)."""

    march: tuple  # "-march=native", if given
    llvm_options: tuple  # LLVM command-line options, from "-mllvm X" or "-mllvm=X"
    vectorize: bool  # False under -fno-vectorize: no loop or SLP vectoriser passes


@functools.cache
def parse_flags(flags: str | None) -> Flags:
    """Split `cpu_compiler_flags`. weft compiles with LLVM directly, without Clang: it reads
    -march=native, -mllvm options and -fno-vectorize, and says once which others it ignores."""
    words = (flags or "").split()
    march, options, unused, vectorize = [], [], [], True
    i = 0
    while i < len(words):
        word = words[i]
        if word == "-march=native":
            march.append(word)
        elif word == "-mllvm":
            if i + 1 == len(words):
                raise ValueError(f"cpu_compiler_flags {flags!r}: -mllvm needs an option after it")
            i += 1
            options.append(words[i])
        elif word.startswith("-mllvm="):
            options.append(word[len("-mllvm="):])
        elif word == "-fno-vectorize":
            vectorize = False
        elif word == "-fvectorize":
            vectorize = True
        else:
            unused.append(word)
        i += 1
    if unused:
        from ..logger import log_warning
        log_warning(f"cpu_compiler_flags: weft compiles with LLVM directly and does not use {' '.join(unused)} "
                    "(it reads -march=native, -mllvm options and -fno-vectorize)", once=True)
    return Flags(tuple(march), tuple(options), vectorize)


def current_flags() -> Flags:
    return parse_flags(_setting(0, "cpu_compiler_flags"))


def limited_float_precision() -> int:
    """The bits of precision `-mllvm -limit-float-precision=N` asks of float32 exp, exp2,
    log, log2 and log10 under the current flags (LLVM's low-precision inline sequences
    apply for N in 1 to 18), or 0: full precision."""
    bits = 0
    for option in current_flags().llvm_options:
        name, _, value = option.lstrip("-").partition("=")
        if name == "limit-float-precision":
            try:
                bits = int(value)
            except ValueError:
                bits = 0  # (LLVM itself refuses the value when it compiles)
    return bits if 1 <= bits <= 18 else 0


#: with `optimization_level` None, a module of more lines of LLVM IR than this gets O1, not
#: O3: LLVM's O3 time grows faster than the code. newton's MPR + GJK collision kernel (90,000
#: lines; 67,000 with its large funcs kept as calls, ir/outline.py) took 11 s at O3 and 2 s
#: at O1 and ran 3% slower; mujoco_warp's primitive collision kernel (53,000 lines, O3: 2.2 s;
#: O1: 0.8 s) ran 15% slower at O1, so it keeps O3.
LARGE_MODULE_LINES = 60_000


def opt_level(llvm_ir: str | None = None) -> int:
    """The LLVM optimisation level: `optimization_level` if set, else 3 (1 for `llvm_ir`
    of more than LARGE_MODULE_LINES lines)."""
    level = _setting(1, "optimization_level")
    if level is None:
        return 1 if llvm_ir is not None and llvm_ir.count("\n") > LARGE_MODULE_LINES else 3
    if level not in (0, 1, 2, 3):
        raise ValueError(f"optimization_level must be None or 0 to 3, got {level!r}")
    return level


@functools.cache
def _target_machine(cpu: str, features: str, opt: int):
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=opt, codemodel="jitdefault")


def target_machine():
    """The LLVM target machine of the current settings (CPU flags, optimisation level)."""
    return _target_machine(*target_cpu(), opt_level())


def target_description() -> str:
    """What the machine code depends on besides the IR: triple, CPU, features, options."""
    cpu, features = target_cpu()
    flags = current_flags()
    return f"{host().triple}|{cpu}|{features}|O{opt_level()}|{flags.llvm_options}|{flags.vectorize}"


def optimize(module_ref, vectorize: bool = True, level: int | None = None) -> None:
    """LLVM's pipeline for the current target and flags (at `level`, default opt_level());
    `vectorize=False` leaves the vectorisers out whatever the flags say."""
    level = opt_level() if level is None else level
    _run_pipeline(module_ref, _target_machine(*target_cpu(), level), level, current_flags().vectorize and vectorize)


def _run_pipeline(module_ref, tm, level: int, vectorize: bool) -> None:
    """LLVM's optimisation pipeline at `level` (the vectorisers only with `vectorize`).
    (cpu_child.py repeats these lines: it runs without weft.)"""
    import llvmlite.binding as llvm
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = vectorize and level >= 2
    pto.slp_vectorization = vectorize and level >= 2
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


def compile_to_object(llvm_ir: str, vectorize: bool = True) -> bytes:
    """Parse, verify, optimise and emit object code for an LLVM IR module (as text);
    `vectorize=False` leaves LLVM's vectorisers out (a kernel whose thread loop they would
    vectorise with gathers: KernelCodegen.wide_elements)."""
    message = getattr(_only_cached, "message", None)
    if message is not None:
        raise RuntimeError(message)
    flags = current_flags()
    level = opt_level(llvm_ir)
    if flags.llvm_options:
        return _compile_in_child(llvm_ir, flags._replace(vectorize=flags.vectorize and vectorize), level)
    import llvmlite.binding as llvm
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    optimize(mod, vectorize, level)
    return _target_machine(*target_cpu(), level).emit_object(mod)


_CHILD = Path(__file__).with_name("cpu_child.py")


def _python() -> list:
    """This interpreter, told not to put the script's folder (or the working directory) on
    its path where it can (Python 3.11+), so that no file there shadows a module."""
    return [sys.executable, "-P"] if sys.version_info >= (3, 11) else [sys.executable]


def _option_name(option: str) -> str:
    return option.lstrip("-").split("=", 1)[0]


@functools.cache
def known_llvm_options() -> frozenset:
    """The names of LLVM's command-line options (llvmlite sets an option LLVM does not know
    without a word, so weft checks names against LLVM's own list; LLVM prints it and exits,
    hence a child process)."""
    code = "import llvmlite.binding as llvm; llvm.set_option('weft', '-help-list-hidden')"
    import subprocess  # (here: most programs never start a compiler process)
    done = subprocess.run(_python() + ["-c", code], capture_output=True, check=False)
    names = set()
    for line in done.stdout.decode(errors="replace").splitlines():
        word = line.strip().split(" ", 1)[0]
        if word.startswith("-") and len(word) > 1:
            names.add(_option_name(word.split("<", 1)[0]))
    if not names:
        raise RuntimeError("CPU kernel build failed: could not read LLVM's list of options: "
                           + done.stderr.decode(errors="replace").strip())
    return frozenset(names)


def _compile_in_child(llvm_ir: str, flags: Flags, level: int) -> bytes:
    """Compile in a new process that sets `flags.llvm_options` first. LLVM's command-line
    options are process-wide and cannot be unset: a child keeps them away from this process
    and from kernels compiled without them (or concurrently, with others)."""
    known = known_llvm_options()
    unknown = [o for o in flags.llvm_options if not o.startswith("-") or _option_name(o) not in known]
    if unknown:
        raise RuntimeError(f"CPU kernel build failed: LLVM has no option {', '.join(unknown)} (from the -mllvm "
                           "options of cpu_compiler_flags)")
    cpu, features = target_cpu()
    import json
    import subprocess
    request = json.dumps({"ir": llvm_ir, "cpu": cpu, "features": features, "opt": level,
                          "options": list(flags.llvm_options), "vectorize": flags.vectorize})
    done = subprocess.run(_python() + [str(_CHILD)], input=request.encode(), capture_output=True, check=False)
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        raise RuntimeError(f"CPU kernel build failed with the LLVM option(s) {' '.join(flags.llvm_options)} "
                           f"(from cpu_compiler_flags): {detail}")
    return done.stdout


def optimized_ir(llvm_ir: str, vectorize: bool = True) -> str:
    """The optimised IR (in this process: without the -mllvm options of the flags)."""
    import llvmlite.binding as llvm
    mod = llvm.parse_assembly(llvm_ir)
    optimize(mod, vectorize, opt_level(llvm_ir))
    return str(mod)


def load_object(obj: bytes, *symbols: str, shared: bool = False):
    """Link object code into the process; the address of `symbol` (a tuple for several).
    elf_loader.py maps it where it can; otherwise LLVM's MCJIT does, with `shared`: into
    the process's one engine for kernels, whose global symbols are unique (a new engine
    costs about a millisecond, a kernel loaded into the shared one a tenth)."""
    if LOADER == "elf" and elf_loader.supported():
        try:
            addresses = elf_loader.load(obj, symbols)
            return addresses[0] if len(symbols) == 1 else addresses
        except elf_loader.Unsupported:
            pass  # (LLVM loads it)
    import llvmlite.binding as llvm
    global _shared_engine
    with _engine_lock:
        if shared and _shared_engine is not None:
            engine = _shared_engine
        else:
            engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), target_machine())
            _engines.append(engine)
            if shared:
                _shared_engine = engine
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        addresses = tuple(engine.get_function_address(s) for s in symbols)
    for symbol, addr in zip(symbols, addresses):
        if not addr:
            raise RuntimeError(f"symbol {symbol} missing from compiled code")
    return addresses[0] if len(symbols) == 1 else addresses


#: "elf": load object code with elf_loader.py where it can; "mcjit": always with LLVM.
LOADER = "elf"


def cache_dir():
    return cache.cache_dir()


@functools.cache
def compiler_fingerprint() -> str:
    """A hash of the sources that turn IR into machine code, so that a changed weft never
    loads object code an older weft compiled (see cache.source_stats)."""
    h = hashlib.sha256()
    for path, size, mtime in cache.source_stats():
        if path.startswith(("codegen/", "builtins/", "runtime/", "types/", "transforms/")):  # (builtins/tiles/ too)
            h.update(f"{path}|{size}|{mtime}\0".encode())
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
    cpu, features = target_cpu(cpu_compiler_flags)
    target = f"{host().llvm_version}|{host().triple}|{cpu}|{features}"
    return hashlib.sha256(target.encode()).hexdigest()[:8]


def get_cpu_kernel_cache_key(cpu_compiler_flags: str | None = None, architecture: str | None = None) -> str:
    """What compiled CPU code depends on outside the kernel: weft's version, the OS, the
    architecture, and the target hash (see `target_hash`)."""
    from .. import config
    arch = architecture or platform.machine().lower()
    return f"{config.version}-{platform.system()}-{arch}-{target_hash(cpu_compiler_flags)}"
