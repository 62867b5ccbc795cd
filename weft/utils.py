"""Utilities from Warp's API that ported programs use (`wp.utils`, Warp's `warp.utils`)."""

from __future__ import annotations

import sys
import threading
import time
import typing

from .coloring import (  # noqa: F401 - wp.utils.*
    GraphColoringAlgorithm,
    graph_coloring_assign,
    graph_coloring_balance,
    graph_coloring_get_groups,
)
from .logger import ScopedLogger, log_debug, warn  # noqa: F401 - wp.utils.warn
from .runtime.algorithms import (  # noqa: F401 - wp.utils.*
    array_cast,
    array_scan,
    radix_sort_pairs,
    runlength_encode,
    segmented_sort_pairs,
)
from .runtime.alloc_tracker import ScopedMemoryTracker  # noqa: F401
from .runtime.allocators import AllocatorRmm  # noqa: F401
from .runtime.capture import ScopedCapture  # noqa: F401
from .runtime.device import ScopedDevice  # noqa: F401
from .runtime.device import synchronize as _synchronize
from .runtime.memory import ScopedAllocator, ScopedMempool, ScopedMempoolAccess, ScopedPeerAccess  # noqa: F401
from .runtime.reduce import array_inner, array_sum  # noqa: F401 - the arrays runtime owns these
from .runtime.stream import ScopedStream  # noqa: F401
from .tape import recording_tape as _recording_tape

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
    """Print timing results, one line per activity ("No activity" for none, as Warp)."""
    import builtins
    if not results:
        builtins.print("No activity")
        return
    for r in results:
        builtins.print(f"{indent}{r.name}: {r.elapsed:.6f} ms on {r.device}")


class ScopedTimer:
    """`with ScopedTimer("step"):` prints `step took 1.23 ms` when the block ends.

    `elapsed` holds the time afterwards (ms); `dict=d` appends it to `d[name]`; `print=False`
    keeps quiet; `active=False` does nothing; `detailed=True` profiles the block with cProfile
    and prints its statistics; `synchronize=True` waits for outstanding device work at both
    ends; nested timers indent their lines; `extra_msg` is added to the line. Inside a
    `Tape`, the block is recorded as a scope of the tape (unless `skip_tape=True`).
    Setting the class attribute `ScopedTimer.enabled = False` makes timers created
    afterwards inactive, as `active=False` does.
    """

    _thread_local = threading.local()
    enabled = True

    def __init__(self, name: str = "", active: bool = True, print: bool = True, detailed: bool = False,  # noqa: A002
                 dict: dict | None = None, use_nvtx: bool = False, color: str = "rapids",  # noqa: A002
                 synchronize: bool = False, cuda_filter: int = 0, report_func=None, skip_tape: bool = False):
        self.name = name
        self.active = active and self.enabled
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
            if self.synchronize:
                _synchronize()
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
            tape = _recording_tape()
            if tape is not None:
                self._tape = tape
                self._tape.record_scope_begin(self.name)
        return self

    def __exit__(self, *exc_info):
        if self._tape is not None:
            self._tape.record_scope_end()
            self._tape = None
        if not self.active:
            return False
        if self.synchronize:
            _synchronize()
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


MODULE_OPTIONS: dict[str, dict] = {}  # module name -> options set on it (see lang/module.py)


def set_module_options(options: dict, module=None) -> None:
    """Set options of a module's kernels (the caller's Python module by default; a name, a
    Python module or a weft Module), Warp's keys: `enable_backward`, `fast_math`, `mode`,
    `optimization_level`, `cpu_compiler_flags`, ... (an unknown key is a ValueError)."""
    from .lang.module import _resolve
    target = _resolve(module, 1)
    for key, value in options.items():
        target.options[key] = value


def get_module_options(module=None):
    """The options of a module (the caller's by default), a dict: those set on it, else the
    defaults (most follow weft.config). Change them with `set_module_options`."""
    from .lang.module import _resolve
    return dict(_resolve(module, 1).options)


def create_warp_function(func):
    """A weft func made from a Python function or lambda, its parameters generic (`Any`);
    returns `(func, module)`. A lambda becomes `def func_<hash>(<its parameters>): return
    <its body>`, the hash taken from the body's text (the same name in every process)."""
    import hashlib
    import inspect

    from .lang.function import Func
    from .lang.module import get_module

    params = list(inspect.signature(func).parameters)
    namespace = dict(func.__globals__)
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        namespace[name] = cell.cell_contents  # the lambda's closure, as the func sees it
    if func.__name__ == "<lambda>":
        body = _lambda_body(func)
        key = f"func_{hashlib.sha256(body.encode()).hexdigest()[:16]}"
        source = f"def {key}({', '.join(params)}):\n    return {body}\n"
    else:
        key = func.__qualname__.replace(".", "_").replace(" ", "_").replace("<", "").replace(">", "_")
        source = inspect.getsource(func)
        import textwrap
        source = textwrap.dedent(source).replace(f"def {func.__name__}(", f"def {key}(", 1)
    exec(compile(source, f"<weft func {key}>", "exec"), namespace)  # noqa: S102 - the user's own code
    pyfunc = namespace[key]
    pyfunc.__annotations__ = dict.fromkeys(params, typing.Any)
    return Func(pyfunc, key=key, source=source), get_module(f"map_{key}")


def _lambda_body(func) -> str:
    """The text of a lambda's body, found in the source lines that hold the lambda."""
    import ast
    import inspect
    import textwrap
    lines, _ = inspect.getsourcelines(func)
    text = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(text)
    except SyntaxError:  # a lambda inside a bigger expression: parse from its own line on
        tree = ast.parse("(" + text.strip().rstrip(",") + ")")
    names = list(inspect.signature(func).parameters)
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and [a.arg for a in node.args.args] == names:
            return ast.unparse(node.body)
    raise ValueError("could not find the source of the lambda")


def __getattr__(name: str):
    """`map_cache` and `broadcast_shapes` (weft.map's kernel cache and shape rule), and
    `quat_between_vectors` (a func of weft.math), imported on first use: they live in the
    frontend, which imports this module."""
    if name in ("map_cache", "broadcast_shapes", "map"):
        from .lang import mapping
        return getattr(mapping, name)
    if name == "quat_between_vectors":
        from .math import quat_between_vectors
        return quat_between_vectors
    raise AttributeError(f"module 'weft.utils' has no attribute {name!r}")
