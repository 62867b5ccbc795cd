"""Utilities from Warp's API that ported programs use (`wp.utils`, Warp's `warp.utils`)."""

from __future__ import annotations

import sys
import threading
import time

from .logger import log_debug, warn  # noqa: F401 - wp.utils.warn
from .runtime.algorithms import (  # noqa: F401 - wp.utils.*
    array_cast,
    array_scan,
    radix_sort_pairs,
    runlength_encode,
    segmented_sort_pairs,
)
from .runtime.capture import ScopedCapture  # noqa: F401
from .runtime.device import ScopedDevice  # noqa: F401
from .runtime.reduce import array_inner, array_sum  # noqa: F401 - the arrays runtime owns these
from .runtime.stream import ScopedStream  # noqa: F401

# Flags of the CUDA activities `timing_begin` can time (none happen on the CPU).
TIMING_KERNEL = 1
TIMING_KERNEL_BUILTIN = 2
TIMING_MEMCPY = 4
TIMING_MEMSET = 8
TIMING_GRAPH = 16
TIMING_ALL = 0xFFFFFFFF


class TimingResult:
    """One timed CUDA activity (device, name, filter flag, elapsed ms)."""

    def __init__(self, device, name: str, filter: int, elapsed: float):  # noqa: A002 - Warp's name
        self.device = device
        self.name = name
        self.filter = filter
        self.elapsed = elapsed


def timing_begin(cuda_filter: int = TIMING_ALL, synchronize: bool = True) -> None:
    """Start timing CUDA activities. weft runs on the CPU, where there are none."""


def timing_end(synchronize: bool = True) -> list[TimingResult]:
    """The CUDA activities timed since `timing_begin`: none on the CPU."""
    return []


def timing_print(results: list[TimingResult], indent: str = "") -> None:
    """Print timing results, one line per activity."""
    import builtins
    for r in results:
        builtins.print(f"{indent}{r.name}: {r.elapsed:.6f} ms on {r.device}")


class ScopedTimer:
    """`with ScopedTimer("step"):` prints `step took 1.23 ms` when the block ends.

    `elapsed` holds the time afterwards (ms); `dict=d` appends it to `d[name]`; `print=False`
    keeps quiet; `active=False` does nothing; `detailed=True` profiles the block with cProfile
    and prints its statistics; `synchronize=True` waits for outstanding device work at both
    ends; nested timers indent their lines; `extra_msg` is added to the line. Inside a
    `Tape`, the block is recorded as a scope of the tape (unless `skip_tape=True`).
    """

    _thread_local = threading.local()

    def __init__(self, name: str = "", active: bool = True, print: bool = True, detailed: bool = False,  # noqa: A002
                 dict: dict | None = None, use_nvtx: bool = False, color: str = "rapids",  # noqa: A002
                 synchronize: bool = False, cuda_filter: int = 0, report_func=None, skip_tape: bool = False):
        self.name = name
        self.active = active
        self.print = print
        self.detailed = detailed
        self.dict = dict
        self.synchronize = synchronize
        self.cuda_filter = cuda_filter
        self.report_func = report_func or timing_print
        self.skip_tape = skip_tape
        self.elapsed = 0.0
        self.extra_msg = ""
        self.timing_results: list[TimingResult] = []
        self._profile = None
        self._tape = None
        if dict is not None:
            dict.setdefault(name, [])

    @classmethod
    def _depth(cls) -> int:
        return getattr(cls._thread_local, "depth", -1)

    @classmethod
    def _set_depth(cls, value: int) -> None:
        cls._thread_local.depth = value

    def __enter__(self):
        if self.active:
            from .runtime.device import synchronize
            if self.synchronize:
                synchronize()
            if self.cuda_filter:
                timing_begin(self.cuda_filter, synchronize=not self.synchronize)
            if self.detailed:
                import cProfile
                self._profile = cProfile.Profile()
                self._profile.enable()
            if self.print:
                self._set_depth(self._depth() + 1)
                log_debug(f"{'    ' * self._depth()}{self.name} ...")
            self._start = time.perf_counter_ns()
        if not self.skip_tape:
            from .tape import active_tapes
            if active_tapes and hasattr(active_tapes[-1], "record_scope_begin"):
                self._tape = active_tapes[-1]
                self._tape.record_scope_begin(self.name)
        return self

    def __exit__(self, *exc_info):
        if self._tape is not None:
            self._tape.record_scope_end()
            self._tape = None
        if not self.active:
            return False
        if self.synchronize:
            from .runtime.device import synchronize
            synchronize()
        self.elapsed = (time.perf_counter_ns() - self._start) / 1e6
        if self._profile is not None:
            self._profile.disable()
            import pstats
            pstats.Stats(self._profile, stream=sys.stdout).sort_stats("tottime").print_stats()
            self._profile = None
        if self.cuda_filter:
            self.timing_results = timing_end(synchronize=not self.synchronize)
        if self.dict is not None:
            self.dict[self.name].append(self.elapsed)
        if self.print:
            indent = "    " * self._depth()
            if self.timing_results:
                self.report_func(self.timing_results, indent=indent)
            from .logger import get_logger
            extra = f" {self.extra_msg}" if self.extra_msg else ""
            get_logger().info(f"{indent}{self.name} took {self.elapsed:.2f} ms{extra}")
            self._set_depth(self._depth() - 1)
        return False


class ScopedLogLevel:
    """`with ScopedLogLevel(wp.LOG_ERROR):` sets `config.log_level` inside the block."""

    def __init__(self, level: int):
        self.level = level

    def __enter__(self):
        from . import config
        self._saved, config.log_level = config.log_level, self.level
        return self

    def __exit__(self, *exc_info):
        from . import config
        config.log_level = self._saved


def check_p2p() -> bool:
    """Whether peer-to-peer copies between CUDA devices work: not on a CPU-only weft."""
    return False


def transform_expand(t):
    """A transform from 7 numbers: position (3), then rotation quaternion (x, y, z, w)."""
    from .types import transformf
    return transformf(tuple(t[0:3]), tuple(t[3:7]))


class MeshEdge:
    """An edge of a triangle mesh: its vertices, the vertex opposite it in each of its (up to
    two) triangles, and those triangles' indices (-1 where the edge is a boundary)."""

    def __init__(self, v0, v1, o0, o1, f0, f1):
        self.v0, self.v1 = v0, v1
        self.o0, self.o1 = o0, o1
        self.f0, self.f1 = f0, f1


class MeshAdjacency:
    """The edges of a triangle mesh, `edges[(lo, hi)]` -> MeshEdge, from its triangles
    (vertex index triples). An edge shared by more than two triangles is reported (printed)
    and keeps its first two."""

    def __init__(self, indices, num_tris=None):
        self.indices = indices
        self.edges: dict = {}
        for face, (a, b, c) in enumerate(indices):
            for v0, v1, opposite in ((a, b, c), (b, c, a), (c, a, b)):
                self._add(v0, v1, opposite, face)

    def _add(self, v0, v1, opposite, face):
        key = (min(v0, v1), max(v0, v1))
        edge = self.edges.get(key)
        if edge is None:
            self.edges[key] = MeshEdge(v0, v1, opposite, -1, face, -1)
        elif edge.f1 == -1:
            edge.o1, edge.f1 = opposite, face
        else:
            print("Detected non-manifold edge")


MODULE_OPTIONS: dict[str, dict] = {}
_KNOWN = ("fast_math", "enable_backward")
_IGNORED = ("max_unroll", "lineinfo", "cuda_output", "block_dim", "mode")


def _module_name(module, depth: int) -> str:
    if module is None:
        return sys._getframe(depth + 1).f_globals.get("__name__", "__main__")
    return module if isinstance(module, str) else module.__name__


def set_module_options(options: dict, module=None) -> None:
    """Options for the kernels of one Python module (the caller's by default), as Warp's:
    `fast_math` lets LLVM reassociate float math there; `enable_backward` as in Warp."""
    for key in options:
        if key not in _KNOWN + _IGNORED:
            raise ValueError(f"unknown module option {key!r}; known: {', '.join(_KNOWN)}")
    from . import config
    MODULE_OPTIONS.setdefault(_module_name(module, 1), {}).update(
        {k: v for k, v in options.items() if k in _KNOWN})
    config.changes += 1  # kernels of that module may compile differently now


def get_module_options(module=None) -> dict:
    from . import config
    options = {"fast_math": config.fast_math, "enable_backward": config.enable_backward}
    options.update(MODULE_OPTIONS.get(_module_name(module, 1), {}))
    return options
