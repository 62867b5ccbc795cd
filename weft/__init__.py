"""weft: differentiable compute kernels in Python, compiled through LLVM.

`import weft as wp` runs the common subset of NVIDIA Warp programs.
"""

__version__ = "0.1.0"

import threading as _threading  # noqa: E402 - (the lock of the lazy names below)

from . import (
    _src,  # noqa: E402 - Warp's internal module paths (thin re-exports)
    autograd,  # noqa: E402
    config,  # noqa: E402
    torch,  # noqa: E402 - weft.torch.wrap; imports PyTorch only when used
)
from ._src.context import get_cpu_kernel_cache_key  # noqa: E402
from .autograd.checkpoint import checkpoint  # noqa: E402
from .codegen.cache import clear_kernel_cache, clear_lto_cache  # noqa: E402
from .config import DeterministicMode  # noqa: E402
from .interop.dlpack import from_dlpack, to_dlpack  # noqa: E402
from .interop.torch import (  # noqa: E402
    device_from_torch,
    device_to_torch,
    dtype_from_torch,
    dtype_to_torch,
    from_torch,
    stream_from_torch,
    stream_to_torch,
    to_torch,
)
from .lang.aot import compile_aot_module, load_aot_module  # noqa: E402
from .lang.build_options import ModuleBuildOptions  # noqa: E402
from .lang.custom_grad import func_grad, func_replay  # noqa: E402
from .lang.decorators import constant, func, kernel, overload, struct  # noqa: E402
from .lang.errors import (  # noqa: E402
    CompileError,
    WarpCodegenAttributeError,
    WarpCodegenError,
    WarpCodegenIndexError,
    WarpCodegenKeyError,
    WarpCodegenTypeError,
    WarpCodegenValueError,
    WeftError,
)
from .lang.function import Func as Function  # noqa: E402 - Warp's class of @func objects
from .lang.grad import grad  # noqa: E402
from .lang.kernel import Kernel  # noqa: E402
from .lang.module import Module, force_load, get_module, load_module  # noqa: E402
from .lang.native import address_of, func_native  # noqa: E402
from .logger import (  # noqa: E402
    LOG_DEBUG,
    LOG_ERROR,
    LOG_INFO,
    LOG_WARNING,
    Logger,
    ScopedLogger,  # noqa: E402
    get_logger,
    set_logger,
)

# the allocation tracker (memory pools, peer access and kernel queries: device, memory, kernel_query)
from .runtime.alloc_tracker import ScopedMemoryTracker, print_memory_report  # noqa: E402
from .runtime.allocators import Allocator, CudaManagedAllocator, MemoryKind  # noqa: E402
from .runtime.array import (  # noqa: E402
    array,
    clone,
    copy,
    empty,
    empty_like,
    from_numpy,
    full,
    full_like,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from .runtime.array_create import from_ptr  # noqa: E402
from .runtime.capture import (  # noqa: E402
    CaptureMode,
    Graph,
    ScopedCapture,
    capture_begin,
    capture_debug_dot_print,
    capture_end,
    capture_if,
    capture_launch,
    capture_while,
    is_conditional_graph_supported,
)
from .runtime.device import (  # noqa: E402
    Device,
    DeviceLike,
    ScopedCudaProfiler,
    ScopedDevice,
    cuda_profiler_start,
    cuda_profiler_stop,
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
from .runtime.environment import print_diagnostics  # noqa: E402
from .runtime.fabric import (  # noqa: E402
    fabricarray,
    fabricarrayarray,
    indexedfabricarray,
    indexedfabricarrayarray,
)
from .runtime.fixed_array import fixedarray  # noqa: E402
from .runtime.indexed_array import indexedarray  # noqa: E402
from .runtime.kernel_query import (  # noqa: E402
    get_cuda_kernel_properties,
    get_cuda_max_cluster_dim,
    get_suggested_block_size,
)
from .runtime.launch import Launch, launch, launch_tiled  # noqa: E402
from .runtime.memory import (  # noqa: E402
    ScopedAllocator,
    ScopedMempool,
    ScopedMempoolAccess,
    ScopedPeerAccess,
    can_access,
    get_device_allocator,
    set_cuda_allocator,
    set_device_allocator,
)
from .runtime.stream import (  # noqa: E402
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
from .tape import Tape, no_grad  # noqa: E402
from .types import *  # noqa: E402,F403
from .types import AnyScalar as Scalar  # noqa: E402 - Warp's generic scalar annotation
from .types import (  # noqa: E402
    ArrayType,
    matrix,
    quaternion,
    transformation,
    vector,
)
from .types import bool_ as bool  # noqa: E402,A001 - Warp's name
from .types import float32 as float  # noqa: E402,A001
from .types import int32 as int  # noqa: E402,A001
from .utils import (  # noqa: E402
    TIMING_ALL,
    TIMING_GRAPH,
    TIMING_KERNEL,
    TIMING_KERNEL_BUILTIN,
    TIMING_MEMCPY,
    TIMING_MEMSET,
    ScopedLogLevel,
    ScopedTimer,
    TimingResult,
    get_module_options,
    set_module_options,
    timing_begin,
    timing_end,
    timing_print,
    transform_expand,
)

vec = vector
mat = matrix
types = __import__("weft.types", fromlist=["types"])

from .constants import *  # noqa: E402,F403 - pi, HALF_PI, e, inf, ... as in Warp

for _name in ("quat", "transform", "tile"):  # the type names double as constructors (tile(x): a builtin)
    globals()[_name] = getattr(types, _name)

class _ArrayND:
    """`array2d(dtype=float)` and `array2d[float]`: array annotations of a fixed ndim;
    with data, a shape or a pointer (`array2d(data, dtype=float)`), an array as
    `array(...)` makes it: as in Warp, the data's own dimensions win (`array3d` of nested
    2-D data is a 2-D array; a kernel expecting a 3-D one refuses it at launch)."""

    def __init__(self, ndim):
        self.ndim = ndim

    def __call__(self, data=None, dtype=float32, shape=None, *args, **kwargs):
        if data is None and shape is None and kwargs.get("ptr") is None:
            return ArrayType(dtype, self.ndim)
        return array(data, dtype, shape, *args, **kwargs)

    def __getitem__(self, dtype):
        if isinstance(dtype, tuple):
            raise TypeError(f"array{self.ndim}d[...] takes a single type parameter (the dtype), got {dtype!r}")
        return ArrayType(dtype, self.ndim)

    def __repr__(self):
        return f"weft.array{self.ndim}d"


array1d, array2d, array3d, array4d = (_ArrayND(n) for n in (1, 2, 3, 4))


class _IndexedArrayND:
    """`indexedarray2d(dtype=float)` / `indexedarray2d[float]` annotations; with data,
    `indexedarray1d(values, [indices])` makes an indexed array of that ndim."""

    def __init__(self, ndim):
        self.ndim = ndim

    def __call__(self, data=None, indices=None, dtype=float32, ndim=None):
        if data is None:
            return types.IndexedArrayType(dtype, self.ndim)
        a = indexedarray(data, indices)
        if a.ndim != self.ndim:
            raise ValueError(f"indexedarray{self.ndim}d: the data has {a.ndim} dimension(s)")
        return a

    def __getitem__(self, dtype):
        return types.IndexedArrayType(dtype, self.ndim)


indexedarray1d, indexedarray2d, indexedarray3d, indexedarray4d = (_IndexedArrayND(n) for n in (1, 2, 3, 4))


def init():
    """Accepted for Warp compatibility (weft initialises on first use). As Warp's, it sets
    `config.kernel_cache_dir` to the kernel cache's folder if it was not set."""
    if config.kernel_cache_dir is None:
        from .codegen.cache import default_cache_base
        config.kernel_cache_dir = default_cache_base()


#: Names whose modules `import weft` leaves until one is first read (see `__getattr__`).
_LAZY = {
    **dict.fromkeys(("Bvh", "BvhConstructor", "HashGrid", "Mesh", "is_cubql_available"), "weft.geometry"),
    "Volume": "weft.geometry.volume",
    # textures (experimental in Warp 1.19)
    **dict.fromkeys(("Texture", "Texture1D", "Texture2D", "Texture3D", "TextureFilterMode", "TextureAddressMode",
                     "TextureResourceFlags", "GLTextureResource"), "weft.runtime.texture"),
    **dict.fromkeys(("device_from_jax", "device_to_jax", "dtype_from_jax", "dtype_to_jax", "from_jax", "to_jax"),
                    "weft.interop.jax"),
    **dict.fromkeys(("clear_jax_callable_graph_cache", "jax_callable"), "weft.interop.jax_callable"),
    **dict.fromkeys(("JaxCallableGraphMode", "JaxModulePreloadMode"), "weft.interop.jax_ffi"),
    "jax_kernel": "weft.interop.jax_kernel",
    "map": "weft.lang.mapping",
    # deterministic mode's refusals; saved graphs
    "WarpDeterminismError": "weft.lang.errors",
    **dict.fromkeys(("capture_save", "capture_load", "capture_load_from_bytes"), "weft.runtime.capture_io"),
}

# deprecated names: (module, attribute, warning), looked up (and warned about) on every access
_DEPRECATED_LAZY = {
    "MarchingCubes": ("weft.geometry.marching_cubes", "IsoSurfaceMarchingCubes",
                      "wp.MarchingCubes is deprecated and will be removed in a future version of Warp. "
                      "Use wp.geometry.IsoSurfaceMarchingCubes instead."),
}


def _builtin_names() -> dict:
    """Every builtin as a module attribute (weft.sin, weft.dot, weft.atomic_add, ...), with
    weft.math's funcs and the query types. Their modules import the compiler, which a
    process that only launches kernels from the disk cache never needs: they are imported
    when one of these names is first read (PEP 562), not by `import weft`."""
    import importlib

    weft_math = importlib.import_module("weft.math")  # (not `from . import math`: that asks __getattr__)
    from .builtins import BUILTINS
    from .builtins.arith import STATIC
    from .builtins.bvh import BvhQuery
    from .builtins.hash_grid import HashGridQuery
    from .builtins.mesh import MeshQuery, MeshQueryAABB, MeshQueryPoint, MeshQueryRay
    from .builtins.tiles.queries import BvhQueryTiled, MeshQueryTiled
    names = dict(BUILTINS)
    names.update({name: getattr(weft_math, name) for name in weft_math.__all__})
    names.update(static=STATIC, BvhQuery=BvhQuery, HashGridQuery=HashGridQuery, MeshQuery=MeshQuery,
                 MeshQueryAABB=MeshQueryAABB, MeshQueryPoint=MeshQueryPoint, MeshQueryRay=MeshQueryRay,
                 BvhQueryTiled=BvhQueryTiled, MeshQueryTiled=MeshQueryTiled)
    return names


_builtins_lock = _threading.RLock()
_builtins_state = "absent"  # then "loading" (on the thread that imports them), then "loaded"


def _load_builtin_names() -> None:
    """Put the names of `_builtin_names` in the module (once; another thread asking
    meanwhile waits for them; an import inside the loading that asks again gets none)."""
    global _builtins_state
    if _builtins_state == "loaded":
        return
    with _builtins_lock:
        if _builtins_state != "absent":
            return
        _builtins_state = "loading"
        try:
            names = _builtin_names()
        except BaseException:
            _builtins_state = "absent"
            raise
        g = globals()
        for name, value in names.items():
            g.setdefault(name, value)  # (the names defined above stay: types, constants, ...)
        _builtins_state = "loaded"


def __getattr__(name: str):
    """The names `import weft` leaves for later: those of `_LAZY`, the builtins (with
    weft.math's funcs), weft's submodules, and `__all__` (every public name)."""
    import importlib
    import importlib.util

    if name.startswith("__") and name != "__all__":
        raise AttributeError(f"module 'weft' has no attribute {name!r}")
    if name in _LAZY:
        value = globals()[name] = getattr(importlib.import_module(_LAZY[name]), name)
        return value
    if name in _DEPRECATED_LAZY:
        module, attribute, message = _DEPRECATED_LAZY[name]
        from .logger import log_warning
        log_warning(message, category=DeprecationWarning)
        return getattr(importlib.import_module(module), attribute)
    if _builtins_state != "loaded":
        _load_builtin_names()
        if name in globals():
            return globals()[name]
    if name == "__all__":
        return sorted(n for n in __dir__() if not n.startswith("_"))
    if name.isidentifier() and importlib.util.find_spec(f"weft.{name}") is not None:
        return importlib.import_module(f"weft.{name}")  # (which sets the attribute)
    raise AttributeError(f"module 'weft' has no attribute {name!r}")


def __dir__():
    _load_builtin_names()
    return sorted({*globals(), *_LAZY})


def print_ir(kernel_or_func, file=None, adjoint=False):
    """Print a kernel's IR (after the pass pipeline), or its adjoint's."""
    import builtins

    from .ir.printer import format_function
    fn = kernel_or_func.adjoint_ir() if adjoint else kernel_or_func.ir()
    builtins.print(format_function(fn), file=file)
