"""C++ for `@wp.func_native` snippets: the translation unit around a snippet, and the
system's C++ compiler that turns it into a shared library loaded into the process.

weft compiles kernels through LLVM and has no C++ front end of its own, so a snippet is
compiled by the C++ compiler on the machine (`$CXX`, else `c++`, `g++` or `clang++`) into a
shared library in the kernel cache, once per snippet and parameter types. The library is
loaded with RTLD_GLOBAL, so the kernel's object code finds its entry points by name (the
ELF loader and LLVM's MCJIT both resolve undefined symbols through the process).

Each entry point takes a pointer to each argument (laid out as weft lays values out in
memory, which is the C layout weft_native.h declares) and a pointer to the result:

    extern "C" void weft_native_<digest>(void* a0, ..., void* result);
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from ..types import ArrayType, Matrix, Scalar, StructType, Vector
from ..types.layout import ctype_of

HEADER_DIR = Path(__file__).resolve().parent.parent / "native"

_SCALARS = {"float32": "wp::float32", "float64": "wp::float64", "int8": "wp::int8", "uint8": "wp::uint8",
            "int16": "wp::int16", "uint16": "wp::uint16", "int32": "wp::int32", "uint32": "wp::uint32",
            "int64": "wp::int64", "uint64": "wp::uint64", "bool": "bool"}


class NativeError(Exception):
    """A snippet that cannot be compiled (no compiler, a C++ error, an unsupported type)."""


def cxx_type(t, structs: dict) -> str:
    """The C++ spelling of weft type `t` (structs it uses are added to `structs`: name -> C++)."""
    if isinstance(t, Scalar):
        if t.name not in _SCALARS:
            raise NativeError(f"{t!r} values cannot be passed to C++ snippets")
        return _SCALARS[t.name]
    if isinstance(t, Vector):
        if t.flavor == "quat":
            return f"wp::quat_t<{cxx_type(t.dtype, structs)}>"
        if t.flavor == "transform":
            return f"wp::transform_t<{cxx_type(t.dtype, structs)}>"
        return f"wp::vec_t<{t.length}, {cxx_type(t.dtype, structs)}>"
    if isinstance(t, Matrix):
        return f"wp::mat_t<{t.shape[0]}, {t.shape[1]}, {cxx_type(t.dtype, structs)}>"
    if isinstance(t, ArrayType) and not (t.indexed or t.fabric):
        return f"wp::array_t<{cxx_type(t.dtype, structs)}, {t.ndim}>"
    if isinstance(t, StructType):
        name = "".join(ch if ch.isalnum() else "_" for ch in t.name)
        if name not in structs:
            fields = [f"    {cxx_type(ft, structs)} {fname};" for fname, ft in t.fields.items()]
            structs[name] = f"struct {name} {{\n" + "\n".join(fields) + "\n};"
        return f"wp::{name}"
    raise NativeError(f"{t!r} values cannot be passed to C++ snippets")


def value_size(t) -> tuple[int, int]:
    """(size, alignment) in bytes of a value of type `t` in memory."""
    ct = ctype_of(t)  # (an array: its descriptor)
    return ctypes.sizeof(ct), ctypes.alignment(ct)


def translation_unit(functions: list[tuple[str, str, str]], structs: dict, entries: list[str],
                     preamble: str = "") -> str:
    """The C++ source: the header, the module's CPU preamble, the structs, each snippet as a
    function (`(signature, body, name)`), and the `extern "C"` entry points."""
    parts = ['#include "weft_native.h"', preamble, "namespace wp {", *structs.values()]
    for signature, body, _name in functions:
        parts += [f"static inline {signature} {{", body, "}", ""]
    parts += ["}  // namespace wp", "", *entries, ""]
    return "\n".join(parts)


def compiler() -> str:
    """The C++ compiler to use: `$CXX`, else the first of c++, g++, clang++ on the PATH."""
    for candidate in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if candidate and shutil.which(candidate.split()[0]):
            return candidate
    raise NativeError("no C++ compiler found (set $CXX, or install g++ or clang++): weft compiles "
                      "@func_native snippets with the system's C++ compiler")


_loaded: dict[str, ctypes.CDLL] = {}
_lock = threading.Lock()


def load_library(source: str, what: str, include_dirs=(), dependencies: str = "") -> None:
    """Compile `source` into a shared library (kept in the kernel cache, keyed by its text,
    the include directories and `dependencies`, a digest of the files it includes) and load
    it into the process, once."""
    from .cache import cache_dir
    cxx = compiler()
    include_dirs = [os.fspath(d) for d in include_dirs]
    digest = hashlib.sha256("\0".join([cxx, source, *include_dirs, dependencies]).encode()).hexdigest()[:24]
    with _lock:
        if digest in _loaded:
            return
        folder = cache_dir() / "native"
        folder.mkdir(parents=True, exist_ok=True)
        lib = folder / f"{digest}.so"
        if not lib.exists():
            _compile(cxx, source, lib, what, include_dirs)
        _loaded[digest] = ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)


def _compile(cxx: str, source: str, lib: Path, what: str, include_dirs: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="weft-native-") as tmp:
        src = Path(tmp) / "snippet.cpp"
        src.write_text(source)
        out = Path(tmp) / lib.name
        cmd = [*cxx.split(), "-std=c++17", "-O2", "-fPIC", "-shared", "-fno-exceptions", "-w",
               f"-I{HEADER_DIR}", *(f"-I{d}" for d in include_dirs), str(src), "-o", str(out)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise NativeError(f"{what}: running the C++ compiler failed: {e}") from None
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if "error" in line][:5] or \
                done.stderr.splitlines()[-5:]
            raise NativeError(f"{what}: the C++ snippet does not compile:\n" + "\n".join(errors))
        os.replace(out, lib)  # (atomic: another process may be writing the same entry)
