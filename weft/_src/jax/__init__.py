"""`warp._src.jax` as weft provides it: re-exports of weft/interop/jax.py."""

from ...interop.jax import (
    device_from_jax,
    device_to_jax,
    dtype_from_jax,
    dtype_to_jax,
    from_jax,
    get_jax_device,
    to_jax,
)

__all__ = ["device_from_jax", "device_to_jax", "dtype_from_jax", "dtype_to_jax", "from_jax", "get_jax_device",
           "to_jax"]
