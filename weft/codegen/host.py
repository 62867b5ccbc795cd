"""This machine as LLVM describes it: target triple, CPU name and features, LLVM's version.

Cache keys name the CPU that code is compiled for, but asking LLVM means importing
llvmlite's binding, the LLVM library itself: most of what a warm process that loads all
its kernels from the disk cache would spend on LLVM. The answer is kept in the kernel cache
(one small entry per machine), keyed by what the operating system says of the processor
(Linux: the first processor's vendor, family, model, stepping and feature flags in
/proc/cpuinfo) and llvmlite's version. Where the system says nothing, LLVM is asked.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import typing

from . import cache

_SUFFIX = ".host"
_FIELDS = ("vendor_id", "cpu family", "model", "model name", "stepping", "flags")


class Host(typing.NamedTuple):
    triple: str
    cpu: str
    features: str
    llvm_version: str


@functools.cache
def host() -> Host:
    """This machine's description (from the cache when the processor is known there)."""
    key = _processor_key()
    if key is not None:
        payload = cache.load(key, _SUFFIX)
        if payload is not None:
            try:
                return Host(*json.loads(payload))
            except (TypeError, ValueError):
                pass  # (an entry of another layout: asked again, and replaced)
    found = ask_llvm()
    if key is not None:
        cache.store(key, json.dumps(list(found)).encode(), _SUFFIX)
    return found


@functools.cache
def is_x86_64_linux() -> bool:
    """Whether this is Linux on x86-64: what the native thread pool's futex calls and
    elf_loader.py's relocations are written for."""
    return platform.system() == "Linux" and platform.machine().lower() in ("x86_64", "amd64")


def ask_llvm() -> Host:
    import llvmlite.binding as llvm
    return Host(llvm.get_default_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten(),
                ".".join(map(str, llvm.llvm_version_info)))


def _processor_key() -> str | None:
    """A hash of what Linux says of the first processor and of llvmlite's version, or None."""
    import llvmlite
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 16)
    except OSError:
        return None
    first = text.split("\n\n", 1)[0]
    fields = {}
    for line in first.splitlines():
        name, _, value = line.partition(":")
        fields[name.strip()] = value.strip()
    if not fields.get("flags"):
        return None
    described = "|".join(f"{name}={fields.get(name, '')}" for name in _FIELDS)
    return "host-" + hashlib.sha256(f"{described}|{llvmlite.__version__}".encode()).hexdigest()[:32]
