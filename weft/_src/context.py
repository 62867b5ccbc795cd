"""Warp's `warp._src.context`: devices, streams, events, graph capture and launches, as
thin re-exports of weft's runtime modules."""

from ..codegen.cpu import get_cpu_kernel_cache_key  # noqa: F401
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
from ..runtime.device import *  # noqa: F403
from ..runtime.launch import Launch, launch  # noqa: F401
from ..runtime.stream import *  # noqa: F403
