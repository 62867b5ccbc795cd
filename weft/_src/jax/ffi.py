"""`warp._src.jax.ffi` as weft provides it: re-exports of the JAX wrappers
(weft/interop/jax_kernel.py, jax_callable.py, jax_ffi.py)."""

from ...interop.jax import get_jax_device
from ...interop.jax_callable import (
    FfiCallable,
    clear_jax_callable_graph_cache,
    jax_callable,
    register_ffi_callback,
)
from ...interop.jax_ffi import (
    JAX_CALLABLE_DEFAULT_GRAPH_CACHE_MAX,
    GraphMode,
    JaxCallableGraphMode,
    JaxModulePreloadMode,
)
from ...interop.jax_kernel import FfiKernel, jax_kernel

__all__ = ["JAX_CALLABLE_DEFAULT_GRAPH_CACHE_MAX", "FfiCallable", "FfiKernel", "GraphMode", "JaxCallableGraphMode",
           "JaxModulePreloadMode", "clear_jax_callable_graph_cache", "get_jax_device", "jax_callable", "jax_kernel",
           "register_ffi_callback"]
