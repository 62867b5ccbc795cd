"""`weft.jax_experimental.ffi`: Warp's older module path of the JAX wrappers (re-exports)."""

from ..interop.jax import get_jax_device
from ..interop.jax_callable import clear_jax_callable_graph_cache, jax_callable, register_ffi_callback
from ..interop.jax_ffi import GraphMode, JaxCallableGraphMode, JaxModulePreloadMode
from ..interop.jax_kernel import jax_kernel

__all__ = ["GraphMode", "JaxCallableGraphMode", "JaxModulePreloadMode", "clear_jax_callable_graph_cache",
           "get_jax_device", "jax_callable", "jax_kernel", "register_ffi_callback"]
