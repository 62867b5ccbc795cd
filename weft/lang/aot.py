"""Ahead-of-time compilation of a module's kernels (Warp's `compile_aot_module` and
`load_aot_module`), for the CPU.

`compile_aot_module` compiles every kernel of a module (and its adjoint, where the module
has backward passes) for contiguous arrays, and writes the object code to `module_dir` in
the kernel cache's format; `load_aot_module` loads it from there without compiling (an
error names the kernel whose code is missing). Kernels launched with strided arrays still
compile their own variants when first launched.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from .. import config
from ..codegen import cache, cpu
from .module import _resolve


@contextlib.contextmanager
def _cache_at(module_dir):
    saved = config.kernel_cache_dir, config.cache_kernels
    if module_dir is not None:
        config.kernel_cache_dir = str(module_dir)
    config.cache_kernels = True
    try:
        yield
    finally:
        config.kernel_cache_dir, config.cache_kernels = saved


def _variants(module):
    """(kernel, spec, adjoint, consume) for each compiled variant of the module's kernels
    for contiguous arrays: forward; adjoint as `launch(adjoint=True)` and as a Tape runs it;
    generic kernels through their overloads."""
    for kernel in list(module.kernels.values()):
        for k in kernel.overloads.values() if kernel.is_generic else [kernel]:
            spec = k.contiguous_spec()
            yield k, spec, False, False
            if k.enable_backward and k.adjoint_param_indices:
                adjoint_spec = spec + (True,) * len(k.adjoint_param_indices)
                yield k, adjoint_spec, True, False
                if k.write_only_params:
                    yield k, adjoint_spec, True, True


def compile_aot_module(module, device=None, arch=None, module_dir=None, use_ptx=None,
                       strip_hash=None) -> list[Path]:
    """Compile a module's kernels now and store their code in `module_dir` (the kernel
    cache if None); the paths of the entries written or found there."""
    from ..logger import log_warning
    target = _resolve(module, 1)
    flags = target.options["cpu_compiler_flags"]
    flags = config.cpu_compiler_flags if flags is None else flags
    if flags is None or "-march=native" in flags.split():
        log_warning("compile_aot_module: CPU module is being compiled with -march=native. The code uses this "
                    "machine's CPU features and may not run on other machines; set the module option "
                    "cpu_compiler_flags='' to compile for a generic CPU.", category=UserWarning, stacklevel=2,
                    once=True)
    with _cache_at(module_dir), cache.journal() as paths:
        for kernel, spec, adjoint, consume in _variants(target):
            with cpu.target(*kernel.target):
                kernel._compile(spec, adjoint, consume)  # (through the cache, even if loaded here)
    return paths


def load_aot_module(module, device=None, arch=None, module_dir=None, use_ptx=None, strip_hash=None) -> None:
    """Load the code `compile_aot_module` stored for a module's kernels, compiling nothing."""
    target = _resolve(module, 1)
    with _cache_at(module_dir):
        where = cache.cache_dir()
        for kernel, spec, adjoint, consume in _variants(target):
            what = f"the adjoint of kernel {kernel.key}" if adjoint else f"kernel {kernel.key}"
            with cpu.cached_only(f"load_aot_module: no compiled code for {what} in {where} "
                                 "(compile it with compile_aot_module, with the same weft and settings)"):
                kernel.compiled(spec, adjoint, consume)
