"""Warp's `warp._src.context`: devices, streams, events, graph capture and launches, as
thin re-exports of weft's runtime modules."""

from ..codegen.cpu import get_cpu_kernel_cache_key  # noqa: F401
from ..lang.aot import compile_aot_module, load_aot_module  # noqa: F401
from ..lang.kernel import Kernel  # noqa: F401
from ..lang.module import _MODULES as user_modules  # noqa: F401 - modules by name, as Warp's
from ..lang.module import Module, force_load, get_module, load_module  # noqa: F401
from ..logger import log_warning  # noqa: F401
from ..runtime.capture import (  # noqa: F401
    Graph,
    capture_begin,
    capture_end,
    capture_if,
    capture_launch,
    capture_while,
    is_conditional_graph_supported,
)
from ..runtime.device import (  # noqa: F401
    Device,
    DeviceLike,
    ScopedDevice,
    can_access,
    get_cuda_device,
    get_cuda_device_count,
    get_cuda_devices,
    get_cuda_driver_version,
    get_cuda_supported_archs,
    get_cuda_toolkit_version,
    get_device,
    get_devices,
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
    set_peer_access_enabled,
    synchronize,
    synchronize_device,
    unmap_cuda_device,
)
from ..runtime.launch import Launch, launch  # noqa: F401
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
