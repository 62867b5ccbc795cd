"""`weft.jax_experimental`: where Warp programs written for Warp < 1.10 import the JAX
wrappers from (`from warp.jax_experimental import jax_kernel`). The same objects as
`weft.jax_kernel`, `weft.jax_callable`, ... (see weft/interop/jax_kernel.py)."""

from ..interop.jax_callable import clear_jax_callable_graph_cache, jax_callable, register_ffi_callback
from ..interop.jax_ffi import GraphMode, JaxCallableGraphMode, JaxModulePreloadMode
from ..interop.jax_kernel import jax_kernel

__all__ = ["GraphMode", "JaxCallableGraphMode", "JaxModulePreloadMode", "clear_jax_callable_graph_cache",
           "jax_callable", "jax_kernel", "register_ffi_callback"]
