"""`weft.ModuleBuildOptions`: Warp's extra build inputs of a module (include directories,
preambles and dependency files for its C++/CUDA compilers).

weft compiles kernels from Python through LLVM; only C++ snippets (`func_native`) go
through a C++ compiler (codegen/native_cxx.py), which gets the CPU include directories
and preamble; the CUDA ones change no compiled code. The options are still accepted as the
module option `extra_build_options`, checked as Warp checks them, and take part in the
module's hash, so that programs written for Warp that set them run unchanged.
"""

from __future__ import annotations

import hashlib
import os


def _paths(name: str, values) -> list:
    if values is None:
        return []
    if isinstance(values, (str, bytes, os.PathLike)):
        raise TypeError(f"{name} must be a sequence of paths, got a single {type(values).__name__}")
    return list(values)


class ModuleBuildOptions:
    """Extra build inputs of a module (see the module docstring): `extra_cuda_include_dirs`,
    `extra_cpu_include_dirs`, `extra_cuda_preamble`, `extra_cpu_preamble`,
    `extra_build_dependencies` (files whose contents are part of the module's hash)."""

    def __init__(self, *, extra_cuda_include_dirs=None, extra_cpu_include_dirs=None,
                 extra_cuda_preamble: str = "", extra_cpu_preamble: str = "", extra_build_dependencies=None):
        for name, value in (("extra_cuda_preamble", extra_cuda_preamble), ("extra_cpu_preamble", extra_cpu_preamble)):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {type(value).__name__}")
        self.extra_cuda_include_dirs = _paths("extra_cuda_include_dirs", extra_cuda_include_dirs)
        self.extra_cpu_include_dirs = _paths("extra_cpu_include_dirs", extra_cpu_include_dirs)
        self.extra_cuda_preamble = extra_cuda_preamble
        self.extra_cpu_preamble = extra_cpu_preamble
        self.extra_build_dependencies = _paths("extra_build_dependencies", extra_build_dependencies)

    def merged(self, *others: ModuleBuildOptions) -> ModuleBuildOptions:
        """These options followed by `others`' (a new instance): directories and dependencies
        keep their first occurrence, preambles are joined by a newline."""
        fields = {k: list(v) if isinstance(v, list) else v for k, v in vars(self).items()}
        for other in others:
            if not isinstance(other, ModuleBuildOptions):
                raise TypeError(f"others must contain ModuleBuildOptions instances, got {type(other).__name__}")
            for key, value in vars(other).items():
                if isinstance(value, list):
                    seen = {os.fspath(v) for v in fields[key]}
                    fields[key] += [v for v in value if os.fspath(v) not in seen]
                elif value:
                    fields[key] = _normalized(fields[key]) + value if fields[key] else value
        return ModuleBuildOptions(**fields)

    def signature(self) -> str:
        """What these options contribute to a module's hash: preambles (normalised to end in
        a newline), directories, and each dependency file's path and content hash."""
        deps, bad = [], []
        for entry in self.extra_build_dependencies:
            path = os.fspath(entry)
            if not os.path.isabs(path) or not os.path.isfile(path):
                bad.append(f"{path!r} ({'not absolute' if not os.path.isabs(path) else 'not a file'})")
                continue
            with open(path, "rb") as f:
                deps.append((os.path.realpath(path), hashlib.sha256(f.read()).hexdigest()))
        if bad:
            raise ValueError("extra_build_dependencies entries must be absolute existing files: " + ", ".join(bad))
        return repr((_normalized(self.extra_cuda_preamble), _normalized(self.extra_cpu_preamble),
                     [os.fspath(p) for p in self.extra_cuda_include_dirs],
                     [os.fspath(p) for p in self.extra_cpu_include_dirs], deps))

    def __eq__(self, other):
        if not isinstance(other, ModuleBuildOptions):
            return NotImplemented
        return self.signature() == other.signature()

    __hash__ = None

    def __repr__(self):
        return f"ModuleBuildOptions({self.signature()})"


def _normalized(preamble: str) -> str:
    return preamble if not preamble or preamble.endswith("\n") else preamble + "\n"
