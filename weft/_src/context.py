"""Warp's `warp._src.context`: devices, streams, events, graph capture and launches, as
thin re-exports of weft's runtime modules, and the few helpers Warp programs reach here:
the `runtime` object (devices and the CPU compiler, without Warp's native library),
`type_str`, `machine_architecture`, `_get_caller_module_name`."""

import inspect  # noqa: F401 - a module attribute, as Warp's (tests patch inspect.getmodule through it)
import platform
import sys  # noqa: F401 - as Warp's (tests patch sys._getframe through it)
import typing

from ..codegen import cpu as _cpu
from ..lang.aot import compile_aot_module, load_aot_module  # noqa: F401
from ..lang.function import Func as Function  # noqa: F401
from ..lang.kernel import Kernel  # noqa: F401
from ..lang.module import _MODULES as user_modules  # noqa: F401 - modules by name, as Warp's
from ..lang.module import Module, force_load, get_module, load_module  # noqa: F401
from ..lang.module import caller_module_name as _get_caller_module_name  # noqa: F401
from ..logger import log_warning  # noqa: F401
from ..runtime import alloc_tracker as _alloc_tracker
from ..runtime.alloc_tracker import print_memory_report  # noqa: F401
from ..runtime.allocators import (  # noqa: F401
    Allocator,
    CpuDefaultAllocator,
    CpuPinnedAllocator,
    CudaManagedAllocator,
    MemoryKind,
)
from ..runtime.capture import (  # noqa: F401
    Graph,
    capture_begin,
    capture_end,
    capture_if,
    capture_launch,
    capture_pause,
    capture_resume,
    capture_while,
    is_conditional_graph_supported,
)
from ..runtime.device import (  # noqa: F401
    Device,
    DeviceLike,
    ScopedDevice,
    get_cuda_device,
    get_cuda_device_count,
    get_cuda_devices,
    get_cuda_driver_version,
    get_cuda_supported_archs,
    get_cuda_toolkit_version,
    get_device,
    get_devices,
    get_mempool_release_threshold,
    get_mempool_used_mem_current,
    get_mempool_used_mem_high,
    get_preferred_device,
    is_cpu_available,
    is_cuda_available,
    is_device_available,
    is_mempool_access_enabled,
    is_mempool_access_supported,
    is_mempool_enabled,
    is_mempool_supported,
    is_peer_access_enabled,
    is_peer_access_supported,
    map_cuda_device,
    set_device,
    set_mempool_access_enabled,
    set_mempool_enabled,
    set_mempool_release_threshold,
    set_peer_access_enabled,
    synchronize,
    synchronize_device,
    unmap_cuda_device,
)
from ..runtime.environment import (  # noqa: F401
    get_host_compiler_version,
    get_libmathdx_version,
    get_llvm_version,
    get_nanovdb_version,
    get_nvrtc_version,
    get_warp_clang_version,
    get_warp_version,
    print_diagnostics,
)
from ..runtime.environment import verify_library_version as _verify_library_version  # noqa: F401
from ..runtime.kernel_query import (  # noqa: F401
    get_cuda_kernel_properties,
    get_cuda_max_cluster_dim,
    get_suggested_block_size,
)
from ..runtime.launch import Launch, launch  # noqa: F401
from ..runtime.memory import (  # noqa: F401
    can_access,
    get_device_allocator,
    set_cuda_allocator,
    set_device_allocator,
)
from ..runtime.stream import (  # noqa: F401
    Event,
    ScopedStream,
    Stream,
    get_event_elapsed_time,
    get_stream,
    record_event,
    set_stream,
    synchronize_event,
    synchronize_stream,
    wait_event,
    wait_stream,
)
from ..utils import get_module_options, set_module_options  # noqa: F401

_ARCHITECTURES = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64"}


def machine_architecture() -> str:
    """This machine's CPU architecture under one name per kind: "x86_64" or "aarch64"
    (another machine's own name, lower case)."""
    machine = platform.machine().strip().lower()
    return _ARCHITECTURES.get(machine, machine)


def get_cpu_kernel_cache_key(*, cpu_compiler_flags: str | None = None) -> str:
    """A key naming the CPU target compiled code is for, for naming kernel cache archives:
    weft's version, the OS, the architecture and the target hash (LLVM version, triple,
    and the host CPU's features under -march=native). `cpu_compiler_flags` None: those of
    `weft.config`; "": a generic CPU. RuntimeError when no LLVM is available."""
    if runtime.llvm is None:
        raise RuntimeError("cannot identify the CPU cache target: the LLVM backend (llvmlite) is unavailable")
    return _cpu.get_cpu_kernel_cache_key(cpu_compiler_flags, machine_architecture())


class _NativeCore:
    """The queries Warp programs (and Warp's tests, at import) make of Warp's native library
    through `runtime.core`: weft has no MathDx and no CUDA toolkit."""

    @staticmethod
    def wp_is_mathdx_enabled() -> bool:
        return False

    @staticmethod
    def wp_cuda_toolkit_version() -> int:
        return 0

    # native error messages: weft's errors are Python exceptions, so this is only a setting
    _error_output = True

    def wp_is_error_output_enabled(self) -> bool:
        return self._error_output

    def wp_set_error_output_enabled(self, enabled) -> None:
        self._error_output = bool(enabled)

    # the last failure an entry point below reported (Warp's native error string)
    _error_string = ""

    def wp_get_error_string(self) -> bytes:
        return self._error_string.encode("utf-8")

    # graph coloring (weft/coloring.py): arrays as kernel descriptors, failures as -1 and an
    # error string
    def wp_graph_coloring(self, num_nodes, edges, algorithm, node_colors) -> int:
        from ..coloring import ColoringError, native_graph_coloring
        try:
            return native_graph_coloring(int(num_nodes), edges, int(algorithm), node_colors)
        except ColoringError as e:
            self._error_string = str(e)
            return -1

    def wp_balance_coloring(self, num_nodes, edges, num_colors, target_max_min_ratio, max_iterations, node_colors,
                            iteration_limit_reached=None) -> float:
        from ..coloring import ColoringError, native_balance_coloring
        try:
            return native_balance_coloring(int(num_nodes), edges, int(num_colors), float(target_max_min_ratio),
                                           int(max_iterations), node_colors, iteration_limit_reached)
        except ColoringError as e:
            self._error_string = str(e)
            return -1.0


    # the allocation tracker (weft/runtime/alloc_tracker.py), as Warp's native entry points
    @staticmethod
    def wp_alloc_tracker_enable(flag) -> None:
        _alloc_tracker.enable(bool(flag))

    @staticmethod
    def wp_alloc_tracker_is_enabled() -> bool:
        return _alloc_tracker.is_enabled()

    @staticmethod
    def wp_alloc_tracker_push_scope(name) -> None:
        _alloc_tracker.push_scope(name.decode("utf-8") if isinstance(name, bytes) else str(name))

    @staticmethod
    def wp_alloc_tracker_pop_scope() -> None:
        _alloc_tracker.pop_scope()

    @staticmethod
    def wp_alloc_tracker_reset() -> None:
        _alloc_tracker.reset()

    @staticmethod
    def wp_alloc_tracker_get_total_alloc_count() -> int:
        return _alloc_tracker.total_alloc_count()

    @staticmethod
    def wp_alloc_tracker_get_total_alloc_bytes() -> int:
        return _alloc_tracker.total_alloc_bytes()

    @staticmethod
    def wp_alloc_tracker_get_live_count() -> int:
        return _alloc_tracker.live_count()

    @staticmethod
    def wp_alloc_tracker_get_current_bytes() -> int:
        return _alloc_tracker.current_bytes()

    @staticmethod
    def wp_alloc_tracker_get_peak_bytes() -> int:
        return _alloc_tracker.peak_bytes()


class Runtime:
    """What Warp programs read from Warp's `runtime` object: the devices (`default_device`,
    `cpu_device`, `device_map`, `get_device`, `set_default_device`), the CUDA state of a
    CPU-only weft (no CUDA devices, no driver or toolkit) and `llvm`, the CPU compiler
    (llvmlite's binding). Warp's native library (`runtime.core`) has no counterpart."""

    def __init__(self):
        from ..runtime import device
        self._device = device
        self.cpu_device = device.CPU
        self.cuda_devices: list = []
        self.cuda_peer_access_enabled: dict = {}
        self.cuda_mempool_access_enabled: dict = {}
        self.context_map: dict = {}
        self.is_cuda_enabled = False
        self.driver_version = None
        self.toolkit_version = None
        self.core = _NativeCore()

    def get_error_string(self) -> str:
        """The message of the last failure a `core` entry point reported."""
        return self.core.wp_get_error_string().decode("utf-8")

    _llvm = None  # (None: not yet imported, or set to None where LLVM is to look unavailable)
    _llvm_set = False

    @property
    def llvm(self):
        """llvmlite's binding (imported when first asked for: loading cached kernels needs no LLVM)."""
        if not self._llvm_set:
            import llvmlite.binding
            return llvmlite.binding
        return self._llvm

    @llvm.setter
    def llvm(self, value):
        self._llvm, self._llvm_set = value, True

    @llvm.deleter
    def llvm(self):
        self._llvm, self._llvm_set = None, False

    @property
    def device_map(self) -> dict:
        """Devices by alias."""
        return {d.alias: d for d in self._device.get_devices()}

    @property
    def default_device(self):
        return self._device.get_device()

    def get_device(self, ident=None):
        return self._device.get_device(ident)

    def set_default_device(self, ident) -> None:
        self._device.set_device(ident)

    def get_current_cuda_device(self):
        raise RuntimeError("no CUDA device: weft runs on the CPU")

    def verify_cuda_device(self, device=None) -> None:
        """Check a CUDA device for errors: nothing to check on the CPU."""
        self._device.get_device(device)

    def unmap_cuda_device(self, alias: str) -> None:
        self._device.unmap_cuda_device(alias)


runtime = Runtime()


def _is_graph_capture_allocation_supported(device) -> bool:
    """Whether arrays can be allocated while a graph is captured on `device`: on the CPU
    they can (a captured graph keeps the arrays it uses alive)."""
    device = get_device(device)
    return True if device.is_cpu else device.is_mempool_supported


def _is_graph_capture_allocation_enabled(device) -> bool:
    device = get_device(device)
    return True if device.is_cpu else device.is_mempool_enabled


def _get_array_allocator(value):
    """The allocator behind `value`'s memory, following views to the array that owns it
    (None for memory weft did not allocate)."""
    from ..runtime.array import array
    while isinstance(value, array):
        if value._allocator is not None:
            return value._allocator
        value = value._ref
    return None


def _get_array_memory_kind(value):
    from ..types.introspect import is_array
    return getattr(value, "memory_kind", MemoryKind.UNKNOWN) if is_array(value) else MemoryKind.UNKNOWN


def alloc_tracker_report_text(sort_order: int, max_items: int) -> str:
    """The allocation tracker's report (`sort_order` 0: largest first, 1: oldest first)."""
    return _alloc_tracker.report_text(sort_order, max_items)


def type_str(t) -> str:
    """How an annotation reads in messages and signatures: `float32`, `vec3f`,
    `Array[float32]`, `tuple[int, float]`, `Any`, `Literal[3]` (an int), `None`."""
    from ..types import ArrayType
    from ..types.array_type import AnyArray
    from ..types.introspect import type_repr
    if t is None:
        return "None"
    if t is typing.Any:
        return "Any"
    if t is Ellipsis:
        return "..."
    if isinstance(t, bool):
        return repr(t)
    if isinstance(t, int):
        return f"Literal[{t}]"
    if isinstance(t, (list, tuple)):
        return "tuple[" + ", ".join(type_str(x) for x in t) + "]"
    origin = typing.get_origin(t)
    if origin in (list, tuple, dict):
        args = typing.get_args(t)
        return f"{origin.__name__}[{', '.join(type_str(a) for a in args)}]" if args else origin.__name__
    if isinstance(t, (ArrayType, AnyArray)):
        kind = "IndexedArray" if getattr(t, "indexed", False) else "Array"
        dtype = getattr(t, "dtype", typing.Any)
        return f"{kind}[{type_str(dtype)}]"
    if t in (int, float, bool):
        return t.__name__
    return type_repr(t)
