"""Global settings, read when a kernel is compiled or launched (as `warp.config`)."""

from __future__ import annotations

import enum
import os
import sys
import types

#: Number of CPU threads a launch may use (None: all cores).
num_threads: int | None = None
#: Launches whose estimated work (threads x ops per thread) is below this run on one thread.
parallel_threshold: int = 1 << 20
#: Check every array index; an out-of-range index raises IndexError after the launch.
bounds_checks: bool = True
#: "release" or "debug" ("debug" compiles `assert` statements).
mode: str = "release"
#: Run the threads of kernels with loops on SIMD lanes (codegen/spmd.py); False: one
#: thread at a time (for comparisons: results are bit-identical).
vectorize_threads: bool = True
#: Allow LLVM to reassociate floating-point math (faster reductions, different rounding).
fast_math: bool = False
#: Where compiled kernels are cached (None: ~/.cache/weft).
kernel_cache_dir: str | None = os.environ.get("WEFT_CACHE_DIR") or None
#: Print compile times and cache hits.
verbose: bool = False
#: Accepted for Warp compatibility (weft prints nothing while loading modules).
quiet: bool = True
#: Build adjoint kernels (Warp's module option; kernels may override it).
enable_backward: bool = True
#: Bytes one thread's AD stack (loop-carried values saved by adjoint kernels) may grow to.
adstack_limit: int = 1 << 30
#: Warn when a recorded launch overwrites an array that an earlier recorded launch read (Warp's
#: check; weft's Tape keeps a copy for the kernels' adjoints, see weft/tape.py).
verify_autograd_array_access: bool = False
#: Also check `weft.verify` after every pass (slower compiles; for weft's own tests).
verify_ir: bool = False

# Warp's settings, as Warp programs set them (grouped here to keep merges easy) ---------------
#: The version string (part of every kernel cache key).
version: str = "0.1.0"
#: Keep compiled kernels in the disk cache (`kernel_cache_dir`) and load them from there.
cache_kernels: bool = True
#: After each launch (adjoint launches of `Tape.backward` too), check that the float arrays
#: passed hold no NaN or Inf; print a warning naming the kernel, the argument, the first bad
#: element and its value if one does (Warp prints and carries on; to raise, and to find the
#: operation that made the value, use `weft.autograd.detect_anomaly()`).
verify_fp: bool = False
#: How many `weft.autograd.detect_anomaly()` blocks are open (0: launches are not checked).
#: Set by those blocks, not by hand.
anomaly_depth: int = 0
#: Warp's experimental cooperative CPU blocks (block_dim > 1 on the CPU): not supported by
#: weft, where a CPU block is one thread (launch_tiled refuses block_dim > 1 when this is set).
enable_cpu_blocks: bool = False
#: Print each launch (kernel, dimensions, device) before it runs.
print_launches: bool = False
#: LLVM optimisation level for kernels, 0 to 3 (None: 3). Part of the cache key.
optimization_level: int | None = None
#: Target CPU of compiled kernels: None or a string with "-march=native" compiles for this
#: machine's CPU and features; "" for a generic CPU of this architecture. Other flags
#: (Clang's, `-mllvm` options) are not used by weft's LLVM pipeline.
cpu_compiler_flags: str | None = "-march=native"
#: Warp's limit for unrolling static loops; weft decides unrolling itself (results are exact
#: either way), so this setting changes nothing.
max_unroll: int = 16
#: Warp's CUDA line information and CUDA error checks: no effect on the CPU.
lineinfo: bool = False
verify_cuda: bool = False
#: Warp's settings of its CUDA compiler (NVRTC, libmathdx, PTX targets, graph capture,
#: memory pools), Warp's defaults: weft reads them once it has a CUDA backend; no effect now.
cuda_output: str | None = None
ptx_target_arch: int | None = None
cuda_arch_suffix: str | None = None
llvm_cuda: bool = False
compile_time_trace: bool = False
default_grid_stride: bool = True
enable_mathdx_gemm: bool = True
enable_mathdx_solver: bool = True
enable_mathdx_fft: bool = True
enable_graph_capture_module_load_by_default: bool = True
enable_mempools_at_init: bool = True
#: Warp's settings of how it builds C++ for the CPU (#line directives, precompiled headers,
#: its linker, where tiles live): weft generates LLVM IR itself, so these change nothing.
line_directives: bool = True
use_precompiled_headers: bool = True
legacy_cpu_linker: bool = False
enable_tiles_in_stack_memory: bool | None = True
#: Warp refuses a second write to a vector/matrix component unless this is set; weft always
#: accepts it (its adjoint is right either way), so this changes nothing.
enable_vector_component_overwrites: bool = False
#: Messages below this level are not printed (weft.logger.LOG_DEBUG ... LOG_ERROR).
log_level: int = 20
#: Add the source location to printed warnings.
verbose_warnings: bool = False
#: Python scope: an element of a vector or matrix (`v[0]`, `m[i, j]`) is a Python float/int
#: instead of a value of the component type (Warp's setting of the same name).
legacy_scalar_return_types: bool = False


class LaunchArrayAccessMode(enum.IntEnum):
    """Warp's check of arrays from other devices at launch: every array is on the CPU here."""

    RELAXED = 0
    CHECKED = 1
    STRICT = 2


launch_array_access_mode: LaunchArrayAccessMode = LaunchArrayAccessMode.RELAXED
#: Record every array allocation (size, call site, scope) from now on, under the scope
#: "global", for `weft.print_memory_report()`; False stops what True started. For a part
#: of a program, use `weft.ScopedMemoryTracker`. Costs a stack walk per allocation.
track_memory: bool = False


class DeterministicMode(enum.IntEnum):
    """Warp's deterministic execution of float atomics. On weft's CPU any mode but
    NOT_GUARANTEED runs a kernel whose float atomics make its result depend on the order
    of its threads (adjoint kernels usually do) on one thread, in thread order, so that its
    results repeat bit for bit; other kernels are unaffected. Kernels that Warp's mode
    refuses (weft/transforms/deterministic.py) raise `weft.WarpDeterminismError`."""

    NOT_GUARANTEED = 0
    RUN_TO_RUN = 1
    GPU_TO_GPU = 2


#: The default of the "deterministic" module option (see DeterministicMode); only
#: DeterministicMode values are accepted (a bool or a string is a ValueError, as in Warp).
deterministic: DeterministicMode = DeterministicMode.NOT_GUARANTEED
#: The default of the "deterministic_max_records" module option: Warp's per-thread bound on
#: the records of its GPU scatter buffers (0: its own estimate). A non-negative int; weft's
#: CPU needs no such buffers and only checks the value.
deterministic_max_records: int = 0
#: Warp's extra checks of deterministic GPU launches (accepted; nothing to check on the CPU).
deterministic_debug: bool = False
#: The `max_workers` of `load_module` and `force_load` when not given (Warp's setting): 0 loads
#: the modules one after the other, stopping at the first that fails; more (None: up to 4)
#: loads them all before a failure is raised, as Warp's parallel load. (weft compiles in the
#: calling thread either way.)
load_module_max_workers: int | None = 0


def check_deterministic_mode(value, what: str = "deterministic") -> DeterministicMode:
    """`value` if it is a DeterministicMode; a ValueError naming `what` otherwise (a bool or
    a string is refused, as in Warp)."""
    if not isinstance(value, DeterministicMode):
        raise ValueError(f"{what} must be a weft.DeterministicMode value, got {value!r}")
    return value


class _Settings(types.ModuleType):
    """This module: each assignment to a setting counts in `changes`, so that code keeping
    what it looked up under the current settings (a compiled kernel) knows to look again."""

    changes: int = 0
    #: functions called with the new value when a setting is assigned, by setting name
    #: (registered by the modules that act on them: the runtime's allocation tracker)
    _watchers: dict = {}

    def __setattr__(self, name, value):
        if name == "deterministic":
            check_deterministic_mode(value, "weft.config.deterministic")
        elif name == "launch_array_access_mode" and not isinstance(value, LaunchArrayAccessMode):
            raise ValueError("weft.config.launch_array_access_mode must be a weft.config.LaunchArrayAccessMode "
                             f"value, got {value!r}")
        super().__setattr__(name, value)
        watcher = self._watchers.get(name)
        if watcher is not None:
            watcher(value)
        if name != "changes":
            super().__setattr__("changes", self.changes + 1)


sys.modules[__name__].__class__ = _Settings
