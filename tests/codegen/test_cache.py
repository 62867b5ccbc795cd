"""The kernel cache: damaged, truncated or foreign entries are recompiled, never loaded;
processes compiling the same kernel at once all succeed; clear_kernel_cache, cache_kernels
and init_kernel_cache behave as Warp's do."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import weft as wp
from weft.codegen import cache

PROGRAM = """
    import numpy as np
    import weft as wp
    from weft.codegen import cpu
    compiles = []
    original = cpu.compile_to_object
    def counting(text, **options):
        compiles.append(1)
        return original(text, **options)
    cpu.compile_to_object = counting

    @wp.kernel
    def add_one(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = x[i] + 1.0

    x = wp.zeros(1 << 21)  # large enough for the thread pool (compiled too)
    wp.launch(add_one, x.shape[0], inputs=[x])
    assert x.numpy().sum() == x.shape[0]
    print(len(compiles))
"""


def _start(cache_dir: Path, tmp_path: Path) -> subprocess.Popen:
    script = tmp_path / "program.py"  # kernels need a source file
    if not script.exists():
        script.write_text(textwrap.dedent(PROGRAM))
    env = dict(os.environ, WEFT_CACHE_DIR=str(cache_dir))
    return subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _run(cache_dir: Path, tmp_path: Path) -> int:
    """Run the program in a new process; the number of objects it compiled."""
    proc = _start(cache_dir, tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err  # a crash (segfault) gives a negative return code
    return int(out.strip())


def _entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.rglob("*.o"))


DAMAGE = {
    "empty": lambda data: b"",
    "truncated header": lambda data: data[:20],
    "truncated payload": lambda data: data[: len(data) // 2],
    "foreign bytes": lambda data: os.urandom(len(data)),
    "flipped payload byte": lambda data: data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:],
    "raw object file (old format)": lambda data: data[cache._HEADER.size:],
    "text": lambda data: b"not an object file\n" * 10,
}


def test_damaged_entries_are_recompiled_not_loaded(tmp_path):
    cache_dir = tmp_path / "cache"
    cold = _run(cache_dir, tmp_path)
    assert cold >= 1 and _run(cache_dir, tmp_path) == 0  # warm: all loaded
    for damage, spoil in DAMAGE.items():
        entries = _entries(cache_dir)
        assert len(entries) == cold
        for path in entries:
            path.write_bytes(spoil(path.read_bytes()))
        assert _run(cache_dir, tmp_path) == cold, damage  # every damaged entry compiled again
        assert all(cache.decode(p.stem, p.read_bytes()) is not None for p in _entries(cache_dir))
    assert _run(cache_dir, tmp_path) == 0  # the repaired cache is used again


def test_an_entry_stored_under_another_key_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))
    cache.store("a" * 32, b"object code of a")
    other = cache.cache_dir() / ("b" * 32 + ".o")
    other.write_bytes((cache.cache_dir() / ("a" * 32 + ".o")).read_bytes())
    assert cache.load("a" * 32) == b"object code of a"
    assert cache.load("b" * 32) is None and not other.exists()  # a miss, and removed


def test_processes_compiling_the_same_kernel_at_once(tmp_path):
    cache_dir = tmp_path / "cache"
    procs = [_start(cache_dir, tmp_path) for _ in range(6)]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    assert _run(cache_dir, tmp_path) == 0  # one of them left complete entries
    assert not list(cache_dir.rglob("*.tmp"))  # and no temporary files


def test_clear_kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))
    cache.store("c" * 32, b"code")
    keep = tmp_path / "not-ours.txt"
    keep.write_text("a user's file")
    wp.clear_kernel_cache()
    assert cache.load("c" * 32) is None and keep.exists()


def test_cache_kernels_off_reads_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))
    cache.store("d" * 32, b"code")
    monkeypatch.setattr(wp.config, "cache_kernels", False)
    assert cache.load("d" * 32) is None
    cache.store("e" * 32, b"code")
    assert not (cache.cache_dir() / ("e" * 32 + ".o")).exists()


def test_unwritable_cache_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would be")
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(blocker))
    cache.store("f" * 32, b"code")  # no exception
    assert cache.load("f" * 32) is None


def test_init_kernel_cache_adds_the_version_once(tmp_path, monkeypatch):
    monkeypatch.setattr(wp.config, "kernel_cache_dir", wp.config.kernel_cache_dir)
    monkeypatch.setattr(cache, "_resolved_kernel_cache_dir", None)
    resolved = cache.init_kernel_cache(str(tmp_path))
    assert resolved == os.path.join(os.path.realpath(tmp_path), wp.config.version)
    assert wp.config.kernel_cache_dir == resolved and os.path.isdir(resolved)
    assert cache.init_kernel_cache(resolved) == resolved  # not versioned twice


def test_windows_long_path_prefix():
    add = cache._add_long_path_prefix
    assert add("C:\\Users\\foo\\cache") == "\\\\?\\C:\\Users\\foo\\cache"
    assert add("\\\\server\\share\\cache") == "\\\\?\\UNC\\server\\share\\cache"
    assert add("\\\\?\\C:\\Users\\foo\\cache") == "\\\\?\\C:\\Users\\foo\\cache"
    assert add("cache\\subdir") == "cache\\subdir"
