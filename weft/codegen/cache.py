"""The disk cache of compiled kernels: safe against damaged, truncated and foreign files.

Each entry is one file, `<key>.o`, written whole to a temporary file and renamed into place
(a reader sees a complete entry or none, whatever other processes do). The file starts with
a record that is checked before a byte of it reaches LLVM:

    magic (8 bytes) | payload length (8, little-endian) | SHA-256 of key + payload (32) | payload

An entry that fails the check (a process killed mid-write on a file system without atomic
rename, a full disk, another program's bytes, an older format) is removed and reported as a
miss, so the kernel is compiled again: loading object code that is not what was compiled
could crash the interpreter.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import struct
import tempfile
import threading
from pathlib import Path

MAGIC = b"WEFTOBJ\x01"
_HEADER = struct.Struct("<8sQ32s")


@functools.cache
def source_stats() -> tuple:
    """(path relative to the package, size, modification time in ns) of each of weft's
    Python files, sorted: what the fingerprints of compiled code are made of (an edit
    changes them, as make judges files; reading every file would slow a warm start)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = []

    def scan(folder, prefix):
        for entry in os.scandir(folder):
            if entry.is_dir():
                if entry.name != "__pycache__":
                    scan(entry.path, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".py"):
                st = entry.stat()
                found.append((prefix + entry.name, st.st_size, st.st_mtime_ns))

    scan(root, "")
    return tuple(sorted(found))


def _base_dir() -> str:
    from .. import config
    return config.kernel_cache_dir or default_cache_base()


def default_cache_base(prefer_warp: bool = False) -> str:
    """`$WEFT_CACHE_DIR` or `$WARP_CACHE_PATH` (that one first with `prefer_warp`), else
    `$XDG_CACHE_HOME/weft`, else `~/.cache/weft`."""
    names = ("WARP_CACHE_PATH", "WEFT_CACHE_DIR") if prefer_warp else ("WEFT_CACHE_DIR", "WARP_CACHE_PATH")
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "weft")


def cache_dir() -> Path:
    """The folder of this weft and llvmlite version's entries."""
    import llvmlite

    from .. import config
    return Path(_base_dir()) / f"{config.version}-llvmlite{llvmlite.__version__}"


def _digest(key: str, payload: bytes) -> bytes:
    h = hashlib.sha256(key.encode())
    h.update(b"\0")
    h.update(payload)
    return h.digest()


def encode(key: str, payload: bytes) -> bytes:
    return _HEADER.pack(MAGIC, len(payload), _digest(key, payload)) + payload


def decode(key: str, data: bytes) -> bytes | None:
    """The payload of an entry, or None if `data` is not a complete, intact entry for `key`."""
    if len(data) < _HEADER.size:
        return None
    magic, length, digest = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    if magic != MAGIC or length != len(payload) or digest != _digest(key, payload):
        return None
    return payload


_journal = threading.local()


@contextlib.contextmanager
def journal():
    """Inside the block, the paths of the entries loaded or stored (on this thread)."""
    saved = getattr(_journal, "paths", None)
    _journal.paths = paths = []
    try:
        yield paths
    finally:
        _journal.paths = saved


def _note(path: Path) -> None:
    paths = getattr(_journal, "paths", None)
    if paths is not None and path not in paths:
        paths.append(path)


def enabled() -> bool:
    from .. import config
    return bool(config.cache_kernels)


def load(key: str, suffix: str = ".o") -> bytes | None:
    """The cached payload for `key`, or None (no entry, caching off, or a bad entry).
    `suffix`: the kind of entry (".o" object code; lang/warm_start.py's records)."""
    if not enabled():
        return None
    path = cache_dir() / f"{key}{suffix}"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    payload = decode(key, data)
    if payload is None:
        _discard(path)
    else:
        _note(path)
    return payload


def _discard(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass  # another process replaced or removed it first, or the cache is read-only


def store(key: str, payload: bytes, suffix: str = ".o") -> None:
    """Write an entry atomically; a cache that cannot be written is not an error."""
    if not enabled():
        return
    directory = cache_dir()
    tmp = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{key}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(encode(key, payload))
        os.replace(tmp, directory / f"{key}{suffix}")
        tmp = None
        _note(directory / f"{key}{suffix}")
    except OSError:
        pass  # a read-only or full cache: the kernel still runs
    finally:
        if tmp is not None:
            _discard(Path(tmp))


def clear_kernel_cache() -> None:
    """Remove every compiled kernel from the disk cache (kernels already loaded by this
    process keep running; new compiles fill the cache again)."""
    base = Path(_base_dir())
    if not base.is_dir():
        return
    for entry in base.iterdir():
        if entry.is_dir() and "-llvmlite" in entry.name:
            shutil.rmtree(entry, ignore_errors=True)


def clear_lto_cache() -> None:
    """Warp's cache of link-time-optimised CUDA libraries (cuBLASDx and friends): weft links
    none, so there is nothing to clear."""


_resolved_kernel_cache_dir: str | None = None


def _add_long_path_prefix(path: str) -> str:
    """A Windows path with the `\\\\?\\` prefix that lifts the 260-character limit (drive-letter
    and UNC paths; prefixed and relative paths are returned as they are)."""
    if path.startswith("\\\\?\\"):
        return path
    if path.startswith("\\\\"):
        return "\\\\?\\UNC\\" + path[2:]
    if len(path) > 2 and path[1] == ":" and path[2] in "\\/":
        return "\\\\?\\" + path
    return path


def init_kernel_cache(path: str | None = None) -> str:
    """Set `config.kernel_cache_dir` as Warp does: `path` (or `$WARP_CACHE_PATH`, or
    `$WEFT_CACHE_DIR`, or the default) with a folder of this version below it, created;
    a path this function already resolved is kept as it is."""
    global _resolved_kernel_cache_dir
    from .. import config
    from ..logger import log_warning

    base = path if path is not None else default_cache_base(prefer_warp=True)
    base = os.path.realpath(base)
    if os.name == "nt":
        base = _add_long_path_prefix(base)
    resolved_before = _resolved_kernel_cache_dir
    if resolved_before is not None and base.removeprefix("\\\\?\\") == resolved_before.removeprefix("\\\\?\\"):
        resolved = resolved_before
    else:
        resolved = os.path.join(base, config.version)
        if os.path.isdir(base) and any(name.startswith("wp_") for name in os.listdir(base)):
            log_warning(f"the kernel cache folder {base} holds kernels of a previous Warp version "
                        f"(wp_* entries); weft uses {resolved} and leaves them alone")
    os.makedirs(resolved, exist_ok=True)
    config.kernel_cache_dir = _resolved_kernel_cache_dir = resolved
    return resolved
